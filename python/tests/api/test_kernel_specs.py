# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The one kernel path (python/rope_mlir/_kernel_path.py): declarative
argument specs, the checks that read them, the compiled function whose
argument types come from the module's own signature and must agree with the
specs, and the one compile cache every entry point uses.

Each rule is tested where it can fail: a spec with an overlap rule refuses
an aliasing destination, a wrong dtype names the argument, a spec list that
disagrees with the compiled signature is refused, a member of a fused call
is named by its own names without rewording, and the C++ fast call derives
its checks from the specs (a changed spec changes what it takes, and a
refusal names the argument by its spec)."""

import dataclasses
import re

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _kernel_path as path
from rope_mlir import attention, cache, fused, kernel, mla, onnx
from rope_mlir._kernel_path import EVERY_INPUT, ArgSpec

F32 = np.dtype(np.float32)


# -- specs and their checks (no compiler needed) -------------------------------

def test_overlap_rule_refuses_an_aliasing_destination():
    buffer = np.zeros(64, np.float32)
    x, out = buffer[:32], buffer[16:48]
    spec = ArgSpec("out", F32, (32,), writeable=True,
                   apart_from=(EVERY_INPUT,))
    with pytest.raises(ValueError, match="out overlaps x: the kernel reads "
                                         "x while it writes out"):
        path.check_apart(spec, out, [("x", x)])
    path.check_apart(spec, buffer[32:], [("x", x)])  # apart: fine
    path.check_apart(spec, out, [("x", 3)])  # not an array: nothing read


def test_overlap_rule_names_only_the_arguments_it_lists():
    buffer = np.zeros(64, np.float32)
    out, w = buffer[:32], buffer[:8]
    only_x = ArgSpec("out", F32, writeable=True, apart_from=("x",))
    path.check_apart(only_x, out, [("w", w)])  # w not listed
    listed = dataclasses.replace(only_x, apart_from=("x", "w"))
    with pytest.raises(ValueError, match="out overlaps w"):
        path.check_apart(listed, out, [("w", w)])


def test_destinations_must_be_apart_from_each_other():
    buffer = np.zeros(64, np.float32)
    spec = ArgSpec("v_cache", F32, writeable=True, apart_from=(EVERY_INPUT,))
    with pytest.raises(ValueError, match="^v_cache overlaps k_cache$"):
        path.check_apart(spec, buffer[8:], [], [("k_cache", buffer[:16])])


def test_in_place_effect_says_how_the_argument_is_written():
    buffer = np.zeros(64, np.float32)
    spec = ArgSpec("q", F32, writeable=True, apart_from=(EVERY_INPUT,),
                   effect="rotates q in place (out_q=q)")
    with pytest.raises(ValueError, match=r"q overlaps positions: the kernel "
                       r"reads positions while it rotates q in place "
                       r"\(out_q=q\)"):
        path.check_apart(spec, buffer, [("positions", buffer[:4])])


@pytest.mark.parametrize("value, error, message", [
    (np.zeros((2, 3), np.float64), TypeError,
     "k_cache has dtype float64, expected float32"),
    (np.zeros((3, 2), np.float32), ValueError,
     r"k_cache has shape \(3, 2\), expected \(2, 3\)"),
    ([[0.0] * 3] * 2, TypeError, "k_cache must be a numpy array, got list"),
    (np.zeros((2, 6), np.float32)[:, ::2], ValueError,
     "k_cache must be C-contiguous"),
    # Undersized: one row short of what the kernel writes.
    (np.zeros((1, 3), np.float32), ValueError,
     r"k_cache has shape \(1, 3\), expected \(2, 3\)"),
    (np.float32(0.0), TypeError, "k_cache must be a numpy array"),
])
def test_destination_checks_name_the_argument(value, error, message):
    spec = ArgSpec("k_cache", F32, (2, 3), writeable=True)
    with pytest.raises(error, match=message):
        path.check_destination(spec, value, (2, 3))


def test_read_only_destination_is_refused():
    out = np.zeros((2, 3), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"out_q is read-only"):
        path.check_destination(ArgSpec("out_q", F32, writeable=True), out,
                               (2, 3))


def test_spec_feeds_the_plan_its_element_and_static_shape():
    spec = ArgSpec("x", F32, (4, None, 8))
    assert spec.element() == (F32, 4)
    assert spec.static_shape() is None
    assert dataclasses.replace(spec, shape=(4, 2, 8)).static_shape() == \
        (4, 2, 8)
    assert ArgSpec("offset", scalar=True).element() is None


def test_rotation_specs_follow_the_configuration_and_the_names():
    config = rope_mlir.KernelConfig(dtype="f16", rank=4, head_dim=16,
                                    positions="explicit", norm=True,
                                    quant="i8", quant_scale="head")
    specs = kernel.arg_specs(config, kernel.Names.member("q"))
    assert list(specs) == ["x", "positions", "norm_weight", "quant_scale",
                           "out"]
    assert [s.name for s in specs.values()] == [
        "q", "positions", "q_norm_weight", "q_scale", "out_q"]
    assert specs["x"].dtype == np.float16 and not specs["x"].writeable
    assert specs["out"].dtype == np.int8  # the quantized destination
    assert specs["out"].writeable and specs["out"].apart_from == (
        EVERY_INPUT,)
    assert specs["positions"].shape == (None, None)
    inplace = kernel.arg_specs(dataclasses.replace(
        config, quant=None, inplace=True))
    assert "out" not in inplace and inplace["x"].writeable
    assert inplace["x"].effect == "rotates x in place (out=x)"
    offset = kernel.arg_specs(rope_mlir.KernelConfig(
        dtype="f32", rank=3, head_dim=8))
    assert offset["offset"].scalar


def test_kernel_cache_builds_each_key_once():
    built = []
    cache_ = path.KernelCache(lambda key: built.append(key) or object())
    first = cache_.get("a")
    assert cache_.get("a") is first and built == ["a"]
    cache_.get("b")
    assert cache_.info() == {"compiled": 2, "hits": 1, "cached": 2}


def test_memo_never_keeps_an_unhashable_key_or_a_failure():
    memo = {}
    assert path.memoized(memo, ([1],), lambda: 5, None) == 5
    assert memo == {}

    def fail():
        raise ValueError("refused")
    with pytest.raises(ValueError):
        path.memoized(memo, ("bad",), fail, None)
    assert memo == {}
    assert path.memoized(memo, ("good",), lambda: 7, None) == 7
    assert path.memoized(memo, ("good",), lambda: 8, None) == 7


def test_every_entry_point_compiles_through_the_one_cache():
    for module in (kernel, fused, cache, mla, onnx):
        assert isinstance(module._cache, path.KernelCache), module.__name__


def test_no_entry_point_imports_another_ones_private_names():
    """cache, fused, mla and attention use kernel.py's interface
    (RotationChecks, Names, apply_fields, cached_kernel, NO_DESTINATION)
    and _kernel_path's, never an underscored name of another module."""
    import ast
    import pathlib
    package = pathlib.Path(rope_mlir.__file__).parent
    for name in ("cache", "fused", "mla", "attention", "onnx"):
        tree = ast.parse((package / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.lstrip(".") in ("kernel", "cache", "fused",
                                                "mla"):
                private = [a.name for a in node.names
                           if a.name.startswith("_")]
                assert not private, (name, private)
            if isinstance(node, ast.Attribute) and \
                    isinstance(node.value, ast.Name) and \
                    node.value.id in ("_kernel", "kernel") and \
                    node.attr.startswith("_"):
                raise AssertionError(f"{name}.py uses kernel.{node.attr}")


# -- the compiled signature (needs the library) ---------------------------------

def test_argtypes_come_from_the_compiled_signature():
    config = rope_mlir.KernelConfig(dtype="f32", rank=3, head_dim=8)
    compiled = path.CompiledKernel(kernel.emit(config),
                                   kernel.pipeline(config), "rope_kernel")
    import ctypes
    # x, the scalar offset, out.
    assert compiled.argtypes == [ctypes.c_void_p, ctypes.c_int64,
                                 ctypes.c_void_p]


def test_specs_that_disagree_with_the_signature_are_refused():
    config = rope_mlir.KernelConfig(dtype="f32", rank=3, head_dim=8,
                                    positions="explicit")
    specs = tuple(kernel.arg_specs(config).values())
    ir, pipeline = kernel.emit(config), kernel.pipeline(config)
    path.CompiledKernel(ir, pipeline, "rope_kernel", specs)  # agrees
    with pytest.raises(RuntimeError, match="disagree with its signature"):
        path.CompiledKernel(ir, pipeline, "rope_kernel", specs[:-1])
    scalar = (specs[0], ArgSpec("positions", scalar=True), specs[2])
    with pytest.raises(RuntimeError, match="disagree with its signature"):
        path.CompiledKernel(ir, pipeline, "rope_kernel", scalar)
    # An element type or a static size the IR does not have.
    wrong_dtype = (specs[0], dataclasses.replace(
        specs[1], dtype=np.dtype(np.int32))) + specs[2:]
    with pytest.raises(RuntimeError, match=r"positions is declared int32 of "
                       r"sizes \(None,\), the function takes "
                       r"memref<\?xi64>"):
        path.CompiledKernel(ir, pipeline, "rope_kernel", wrong_dtype)
    wrong_size = specs[:2] + (dataclasses.replace(specs[2],
                                                  shape=(None, 4, 8)),)
    with pytest.raises(RuntimeError, match="out is declared float32"):
        path.CompiledKernel(ir, pipeline, "rope_kernel", wrong_size)


def test_every_kernel_s_specs_match_the_ir_it_emits():
    """arg_specs and emit are written apart; every configuration compiled
    below checks them against each other (CompiledKernel), so a drift
    fails here."""
    for fields in (dict(positions="explicit", mrope="#rope.mrope<section = "
                        "[2, 1, 1]>"),
                   dict(positions="row_offset", cache="gathered",
                        cache_dtype="f64", inplace=True),
                   dict(positions="none", cache="pregathered", norm=True,
                        norm_dtype="bf16", quant="f8e4m3fn",
                        quant_scale="head"),
                   dict(positions="explicit", static_shape=(2, 3, 2, 8),
                        static_positions_shape=(2, 3))):
        rope_mlir.compile(dtype="f16", rank=4, head_dim=8, **fields)
    mla.compile_mla(dtype="bf16", kv_lora_rank=16, rope_dim=8, nope_dim=8,
                    cache_form="separate", quant="i8", positions_dtype="i32")
    attention.AttentionKernel(attention.AttentionConfig(
        batch=1, q_heads=2, kv_heads=1, q_len=3, kv_len=4, head_dim=8,
        positions="explicit", mask=True, value_dim=4), fuse=False)


def test_compiled_kernels_hold_their_specs():
    pair = rope_mlir.compile_qk(dtype="f32", rank=4, head_dim=8,
                                positions="explicit", norm=True)
    assert [s.name for s in pair._compiled.specs] == [
        "q", "positions", "q_norm_weight", "out_q", "k", "k_norm_weight",
        "out_k"]
    append = rope_mlir.compile_append(
        dtype="f32", rank=3, head_dim=8, positions="explicit", slots=True,
        cache_write=True, query=True, quant="i8")
    assert [s.name for s in append._compiled.specs] == [
        "k", "positions", "k_scale", "slots", "k_cache", "v", "v_scale",
        "v_cache", "q", "out_q"]
    scores = attention.ScoresKernel(attention.ScoresConfig(
        batch=1, q_heads=2, kv_heads=1, q_len=3, kv_len=4, head_dim=8),
        fuse=False)
    assert [s.name for s in scores._compiled.specs] == [
        "q", "k", "offsets", "out"]


# -- members of fused calls, named by their own names ---------------------------

def test_pair_members_are_checked_under_their_own_names():
    q = np.zeros((2, 4, 2, 16), np.float32)
    k = np.zeros((2, 4, 1, 16), np.float32)
    pos = np.zeros((2, 4), np.int64)
    with pytest.raises(ValueError, match=r"out_k has shape \(2, 4, 3, 16\), "
                                         r"expected \(2, 4, 1, 16\)"):
        rope_mlir.apply_qk(q, k, pos, out_k=np.empty((2, 4, 3, 16),
                                                     np.float32))
    with pytest.raises(TypeError, match="q has the unsupported data type"):
        rope_mlir.apply_qk(q.astype(np.int32), k, pos)
    weight = np.ones(16, np.float32)
    with pytest.raises(TypeError, match="k_norm_weight has dtype float64"):
        rope_mlir.apply_qk(q, k, pos, q_norm_weight=weight,
                           k_norm_weight=weight.astype(np.float64))


def test_pair_in_place_is_apart_from_the_other_members_weight():
    """q rotated in place must not overlap k's norm weight (the kernel reads
    it while it writes q): a rule the per-member checks could not see."""
    buffer = np.zeros(2 * 4 * 2 * 16, np.float32)
    q = buffer.reshape(2, 4, 2, 16)
    k = np.zeros((2, 4, 1, 16), np.float32)
    pos = np.zeros((2, 4), np.int64)
    with pytest.raises(ValueError, match=r"q overlaps k_norm_weight: the "
                       r"kernel reads k_norm_weight while it rotates q in "
                       r"place \(out_q=q\)"):
        rope_mlir.apply_qk(q, k, pos, out_q=q, out_k=k,
                           q_norm_weight=np.ones(16, np.float32),
                           k_norm_weight=buffer[:16])


def test_append_members_are_checked_under_their_own_names():
    k = np.zeros((1, 2, 1, 8), np.float32)
    k_cache = np.zeros((1, 4, 1, 8), np.float32)
    pos = np.array([[0, 1]], np.int64)
    with pytest.raises(TypeError, match="k has the unsupported data type"):
        rope_mlir.append_kv(k.astype(np.int16), None, k_cache, None, pos)
    q = np.zeros((1, 2, 2, 8), np.float32)
    with pytest.raises(ValueError, match=r"out_q has shape"):
        rope_mlir.append_kv(k, None, k_cache, None, pos, q=q,
                            out_q=np.empty((1, 2, 3, 8), np.float32))


# The value checks every entry point's arguments go through
# (rope_mlir._kernel_path): bad values raise, naming the argument, before
# any kernel is compiled or called.
@pytest.mark.parametrize("value,error", [
    (True, TypeError), (1.0, TypeError), ("3", TypeError), (None, TypeError),
    (np.float32(2), TypeError), (np.array([1]), TypeError)])
def test_integer_refuses(value, error):
    from rope_mlir import _kernel_path as kp
    with pytest.raises(error, match="offset must be an integer"):
        kp.integer(value, "offset")
    assert kp.integer(np.int64(7), "offset") == 7


@pytest.mark.parametrize("value,error,words", [
    (False, TypeError, "must be a real number"),
    ("1.5", TypeError, "must be a real number"),
    (None, TypeError, "must be a real number"),
    (float("nan"), ValueError, "must be finite"),
    (float("inf"), ValueError, "must be finite"),
    (np.float32("-inf"), ValueError, "must be finite")])
def test_real_refuses(value, error, words):
    from rope_mlir import _kernel_path as kp
    with pytest.raises(error, match=f"scale {words}"):
        kp.real(value, "scale")
    assert kp.real(np.int32(2), "scale") == 2.0


@pytest.mark.parametrize("value", ["false", 0, 1, None, np.array([True])])
def test_flag_refuses(value):
    from rope_mlir import _kernel_path as kp
    with pytest.raises(TypeError, match="interleaved must be a bool"):
        kp.flag(value, "interleaved")
    assert kp.flag(np.bool_(True), "interleaved") is True


@pytest.mark.parametrize("value,error,words", [
    ("128", TypeError, "must be a sequence of integers"),
    (128, TypeError, "must be a sequence of integers"),
    ((1, 2.0), TypeError, "entry must be an integer"),
    ((1, True), TypeError, "entry must be an integer"),
    ((4, -1), ValueError, "has a negative size")])
def test_shape_refuses(value, error, words):
    from rope_mlir import _kernel_path as kp
    with pytest.raises(error, match=f"x_shape {words}"):
        kp.shape(value, "x_shape")
    assert kp.shape([2, np.int64(3)], "x_shape") == (2, 3)


@pytest.mark.parametrize("value", [0.0, False, "0", None, np.array(0),
                                   np.float64(0)])
def test_is_zero_only_for_integer_zero(value):
    """Only the integer 0 means "no offset": a float, bool or array zero is
    not taken for it (it goes on to scalar_offset's checks instead)."""
    from rope_mlir import _kernel_path as kp
    assert not kp.is_zero(value)
    assert kp.is_zero(0) and kp.is_zero(np.int32(0)) and not kp.is_zero(1)


# -- the C++ plan reads the specs (lib/Runtime/KernelCall.cpp) ------------------
# The fast call's checks are derived from the ArgSpecs it is given, not
# written per argument in C++: a plan built from a changed spec checks the
# change, and every refusal names the argument by its spec's name (the name
# the Python path's error says). `plan.refusal(*call)` runs nothing.

def _fast():
    module = rope_mlir._jit.kernel_call_module()
    if module is None:
        pytest.skip("built without the _kernel_call extension")
    return module


GATHERED = dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
                cache="gathered")


def _gathered_call():
    x = np.ones((1, 2, 3, 16), np.float32)
    positions = np.zeros((1, 2), np.int64)
    cos = np.ones((8, 8), np.float32)
    sin = np.zeros((8, 8), np.float32)
    return [x, positions, 0, cos, sin, np.empty_like(x)]


def _replan(kern, **changes):
    """kern's plan from its specs, with the spec of each named argument
    replaced by dataclasses.replace(spec, **fields)."""
    specs = tuple(dataclasses.replace(s, **changes[s.name])
                  if s.name in changes else s for s in kern._parameters())
    return kern.make_plan(kern._compiled.address, specs)


def test_plan_is_built_from_the_specs():
    _fast()
    kern = rope_mlir.compile(**GATHERED)
    call = _gathered_call()
    assert _replan(kern).refusal(*call) is None
    assert _replan(kern)(*call) is call[5]  # and runs it


def test_plan_reads_writeable_from_the_spec():
    _fast()
    kern = rope_mlir.compile(**GATHERED)
    call = _gathered_call()
    call[0].flags.writeable = False  # x is only read: taken
    assert kern._plan.refusal(*call) is None
    plan = _replan(kern, x=dict(writeable=True))
    assert plan.refusal(*call) == ("x", "is not writeable")
    assert plan(*call) is None  # declined: the Python path takes it
    call[0] = call[0].copy()
    call[5].flags.writeable = False
    assert kern._plan.refusal(*call) == ("out", "is not writeable")
    assert _replan(kern, out=dict(writeable=False, apart_from=())).refusal(
        *call) is None
    with pytest.raises(ValueError, match="out is read-only"):
        kern(*call[:2], cos_cache=call[3], sin_cache=call[4], out=call[5])


def test_plan_reads_static_sizes_and_dtype_from_the_spec():
    _fast()
    kern = rope_mlir.compile(**GATHERED)
    call = _gathered_call()
    plan = _replan(kern, x=dict(shape=(1, 2, 4, 16)))
    assert plan.refusal(*call) == ("x", "is not of the static shape")
    assert _replan(kern, x=dict(shape=(1, 2, 3, 16))).refusal(*call) is None
    assert _replan(kern, cos_cache=dict(shape=(9, 8))).refusal(*call) == (
        "cos_cache", "is not of the static shape")
    assert _replan(kern, positions=dict(shape=(None,), like=())).refusal(
        *call) == ("positions", "has another rank")
    for dtype in (np.float64, np.int32):  # another size; the same size
        assert _replan(kern, sin_cache=dict(dtype=np.dtype(dtype))).refusal(
            *call) == ("sin_cache", "has another dtype")
    # A kernel compiled for a static shape: its spec's, refused by name on
    # the fast path, raised by name on the Python path.
    static = rope_mlir.compile(static_shape=(1, 2, 4, 16), **GATHERED)
    assert static._plan.refusal(*call) == ("x", "is not of the static shape")
    with pytest.raises(ValueError, match=r"x has shape \(1, 2, 3, 16\), the "
                       r"kernel was compiled for the static shape"):
        static(*call[:2], cos_cache=call[3], sin_cache=call[4], out=call[5])


def test_plan_reads_the_shape_rules_from_the_spec():
    _fast()
    kern = rope_mlir.compile(**GATHERED)
    call = _gathered_call()
    call[1] = np.zeros((1, 3), np.int64)  # x's token dims are (1, 2)
    assert kern._plan.refusal(*call) == (
        "positions", "has another size: dim 1 is not x's dim 1")
    assert _replan(kern, positions=dict(like=())).refusal(*call) is None
    call = _gathered_call()
    call[5] = np.empty((1, 2, 2, 16), np.float32)
    assert kern._plan.refusal(*call) == (
        "out", "has another size: dim 2 is not x's dim 2")
    call = _gathered_call()
    call[4] = call[4][:5]
    assert kern._plan.refusal(*call) == (
        "sin_cache", "has another size: dim 0 is not cos_cache's dim 0")


def test_plan_reads_the_overlaps_from_the_spec():
    _fast()
    kern = rope_mlir.compile(**GATHERED)
    call = _gathered_call()
    buffer = np.zeros(56 + 2 * 3 * 16, np.float32)
    call[3] = buffer[:64].reshape(8, 8)
    call[5] = buffer[56:].reshape(1, 2, 3, 16)  # over cos's last row
    assert kern._plan.refusal(*call) == ("out", "overlaps cos_cache")
    assert _replan(kern, out=dict(apart_from=("x",))).refusal(*call) is None
    assert _replan(kern, out=dict(apart_from=("x", "cos_cache"))).refusal(
        *call) == ("out", "overlaps cos_cache")
    with pytest.raises(ValueError, match="out overlaps cos_cache: the kernel "
                                         "reads cos_cache while it writes "
                                         "out"):
        kern(*call[:2], cos_cache=call[3], sin_cache=call[4], out=call[5])


def test_pair_plan_names_each_member_by_its_specs():
    _fast()
    pair = rope_mlir.compile_qk(dtype="f32", rank=4, head_dim=16,
                                positions="offset")
    q = np.ones((1, 2, 4, 16), np.float32)
    k = np.ones((1, 3, 1, 16), np.float32)  # k's token dims must be q's
    call = (q, k, None, 3, None, None, np.empty_like(q), np.empty_like(k))
    assert pair._pair_plan.refusal(*call) == (
        "k", "has another size: dim 1 is not q's dim 1")
    k = np.ones((1, 2, 1, 16), np.float32)
    out_k = np.empty_like(k)
    out_k.flags.writeable = False
    call = (q, k, None, 3, None, None, np.empty_like(q), out_k)
    assert pair._pair_plan.refusal(*call) == ("out_k", "is not writeable")
    with pytest.raises(ValueError, match="out_k is read-only"):
        pair(q, k, offset=3, out_q=call[6], out_k=out_k)
    both = np.empty((2,) + q.shape, np.float32)
    call = (q, q.copy(), None, 2**63 - 2, None, None, both[0], both[0])
    assert pair._pair_plan.refusal(*call) == ("out_q", "overlaps out_k")
    call = (q, k, None, 2**63 - 1, None, None, np.empty_like(q),
            np.empty_like(k))
    assert pair._pair_plan.refusal(*call) == ("offset", "wraps int64")


def test_in_place_plan_takes_out_as_x_only():
    _fast()
    kern = rope_mlir.compile(inplace=True, **GATHERED)
    call = _gathered_call()
    call[5] = call[0]
    assert kern._plan.refusal(*call) is None
    call[5] = call[0].copy()
    assert kern._plan.refusal(*call) == ("out", "is not x")
    call[5] = call[0]
    call[1] = np.array([[0, 8]], np.int64)  # row 8 of an 8-row cache
    assert kern._plan.refusal(*call) == (
        "positions", "reads rows outside cos_cache")


def test_make_plan_refuses_specs_it_cannot_resolve():
    fast = _fast()
    kern = rope_mlir.compile(**GATHERED)
    specs = kern._parameters()
    with pytest.raises(ValueError, match="apart_from names no parameter: "
                                         "'norm_weight'"):
        kern.make_plan(kern._compiled.address, specs[:-1] + (
            dataclasses.replace(specs[-1], apart_from=("norm_weight",)),))
    with pytest.raises(ValueError, match="like names no parameter"):
        kern.make_plan(kern._compiled.address, (dataclasses.replace(
            specs[0], like=(("y", 0),) + (None,) * 3),) + specs[1:])
    with pytest.raises(ValueError, match="the call has no argument named "
                                         "'out_q'"):
        kern.make_plan(kern._compiled.address, specs[:-1] + (
            dataclasses.replace(specs[-1], name="out_q"),))
    # A spec whose shape the entry point checks: beyond the fast path.
    assert kern.make_plan(kern._compiled.address, (dataclasses.replace(
        specs[0], shape=None),) + specs[1:]) is None
    assert fast is not None



# -- the Python checks read the same shape rules (ShapeRule) -------------------
# The Python path's shape relations between arguments are not written per
# entry point: RotationChecks, the q/k pair and the cache append read each
# spec's `like` (and its rank and static sizes) through ShapeRule, as the C++
# plan does. A changed spec changes what the Python path accepts, and each
# message names the argument and the one its rule reads.

def test_shape_rule_reads_rank_static_sizes_and_like():
    spec = ArgSpec("positions", shape=(3, None, None),
                   like=(None, ("x", 0), ("x", 2)), why="one per token")
    rule = path.ShapeRule(spec)
    shapes = {"x": (2, 8, 5, 16)}
    assert rule.holds((3, 2, 5), shapes)
    for bad in ((4, 2, 5), (3, 2, 8), (3, 8, 5), (2, 5), (3, 2, 5, 1)):
        assert not rule.holds(bad, shapes), bad
    with pytest.raises(ValueError, match=re.escape(
            "positions has shape (3, 2, 8), expected (3, 2, 5) (dims (1, 2) "
            "are x's dims (0, 2); one per token)")):
        rule.check((3, 2, 8), shapes)
    out = path.ShapeRule(ArgSpec("out", F32, (None, 16),
                                 like=(("x", 0), ("x", 1))))
    assert out.holds((4, 16), {"x": (4, 16)})
    assert not out.holds((4, 16), {"x": (3, 16)})
    assert not out.holds((4,), {"x": (4,)})
    assert out.message((3, 16), {"x": (4, 16)}) == (
        "out has shape (3, 16), expected (4, 16) (x's shape)")
    # Without a rule: the spec's rank and static sizes only.
    free = path.ShapeRule(ArgSpec("w", F32, (None, 8)))
    assert free.holds((5, 8), {}) and not free.holds((5, 7), {})
    assert free.message((5, 7), {}) == (
        "w has shape (5, 7), expected ('?', 8) ('?' is any size)")


def _rotation_checks(monkeypatch, config, **likes):
    """RotationChecks of `config` whose specs are arg_specs' with the
    `like` of each named role replaced."""
    made = kernel.arg_specs

    def changed(config, names=kernel.Names()):
        specs = made(config, names)
        for role, like in likes.items():
            specs[role] = dataclasses.replace(specs[role], like=like)
        return specs
    monkeypatch.setattr(kernel, "arg_specs", changed)
    return kernel.RotationChecks(config)


def test_python_checks_read_the_shape_rules_from_the_spec(monkeypatch):
    config = rope_mlir.KernelConfig(**GATHERED)
    x, positions, _, cos, sin, out = _gathered_call()  # x (1, 2, 3, 16)
    wide = np.zeros((1, 3), np.int64)  # x's token dims are (1, 2)
    checks = kernel.RotationChecks(config)
    checks._checked_args([], x, positions, 0, cos, sin, out)
    with pytest.raises(ValueError, match=re.escape(
            "positions has shape (1, 3), expected (1, 2) (dims (0, 1) are "
            "x's dims (0, 1); one per token)")):
        checks._checked_args([], x, wide, 0, cos, sin, out)
    # The spec says positions' dim 1 is x's dim 2 (3): the Python path
    # takes (1, 3) and refuses (1, 2), naming the rule's dims.
    checks = _rotation_checks(monkeypatch, config,
                              positions=(("x", 0), ("x", 2)))
    checks._checked_args([], x, wide, 0, cos, sin, out)
    with pytest.raises(ValueError, match=re.escape(
            "positions has shape (1, 2), expected (1, 3) (dims (0, 1) are "
            "x's dims (0, 2)")):
        checks._checked_args([], x, positions, 0, cos, sin, out)
    # No rule at all: any sizes of the spec's rank.
    checks = _rotation_checks(monkeypatch, config, positions=())
    checks._checked_args([], x, wide, 0, cos, sin, out)
    # out: x's shape, dim by dim; a rule without dim 2 takes another size.
    narrow = np.empty((1, 2, 2, 16), np.float32)
    with pytest.raises(ValueError, match=re.escape(
            "out has shape (1, 2, 2, 16), expected (1, 2, 3, 16) "
            "(x's shape)")):
        kernel.RotationChecks(config)._checked_args([], x, positions, 0, cos,
                                                    sin, narrow)
    checks = _rotation_checks(monkeypatch, config, out=(
        ("x", 0), ("x", 1), None, ("x", 3)))
    checks._checked_args([], x, positions, 0, cos, sin, narrow)
    # sin_cache: cos_cache's shape.
    with pytest.raises(ValueError, match=re.escape(
            "sin_cache has shape (5, 8), expected (8, 8) (cos_cache's "
            "shape)")):
        checks._checked_args([], x, positions, 0, cos, sin[:5], out)
    checks = _rotation_checks(monkeypatch, config,
                              sin_cache=(None, ("cos_cache", 1)))
    checks._checked_args([], x, positions, 0, cos, sin[:5], out)


def test_pair_and_append_check_their_members_rules_in_python():
    pair = rope_mlir.compile_qk(dtype="f32", rank=4, head_dim=16,
                                positions="offset")
    q = np.ones((1, 2, 4, 16), np.float32)
    k = np.ones((1, 3, 1, 16), np.float32)
    assert pair._k.specs["x"].like == (("q", 0), ("q", 1), None, None)
    with pytest.raises(ValueError, match=re.escape(
            "k has shape (1, 3, 1, 16), expected (1, 2, '?', 16) (dims "
            "(0, 1) are q's dims (0, 1)")):
        pair._checked_pair(q, k, None, 3, None, None, None, None)
    append = rope_mlir.compile_append(dtype="f32", rank=4, head_dim=8,
                                      positions="explicit", slots=True,
                                      cache_write=True)
    specs = append._specs
    assert specs["slots"].like == (("k", 0), ("k", 1))
    assert specs["k_cache"].like == (None, None, ("k", 2), ("k", 3))
    assert specs["v"].like == (("k", 0), ("k", 1), None, None)
    assert specs["v_cache"].like == (None, None, ("v", 2), ("v", 3))
    k = np.ones((1, 2, 1, 8), np.float32)
    cache = np.zeros((1, 4, 1, 8), np.float32)
    call = dict(positions=np.array([[0, 1]]), v=k.copy(),
                v_cache=cache.copy())
    with pytest.raises(ValueError, match=re.escape(
            "slots has shape (1, 3), expected (1, 2) (dims (0, 1) are k's "
            "dims (0, 1); one slot per token of k)")):
        append(k, np.zeros((1, 3), np.int64), cache, **call)
    with pytest.raises(ValueError, match=re.escape(
            "k_cache has shape (1, 4, 2, 8), expected ('?', '?', 1, 8) "
            "(dims (2, 3) are k's dims (2, 3); only the token dims may "
            "differ")):
        append(k, np.zeros((1, 2), np.int64), np.zeros((1, 4, 2, 8),
                                                       np.float32), **call)
    call["v"] = np.ones((1, 2, 3, 8), np.float32)  # v has its own heads
    with pytest.raises(ValueError, match=re.escape(
            "v_cache has shape (1, 4, 1, 8), expected ('?', '?', 3, 8) "
            "(dims (2, 3) are v's dims (2, 3)")):
        append(k, np.zeros((1, 2), np.int64), cache, **call)



def test_mla_checks_positions_slots_and_out_by_their_specs_rules():
    """apply_mla's positions and slots are one per c_kv row, out is q's
    shape: rules of the specs (the kernel's positions and slots specs are
    the same ones), checked by ShapeRule."""
    specs = {s.name: s for s in mla.arg_specs(mla.MLAConfig(
        dtype="f32", kv_lora_rank=16, rope_dim=8, nope_dim=None))}
    assert specs["positions"].like == specs["slots"].like == (("c_kv", 0),)
    rng = np.random.default_rng(0)
    call = dict(c_kv=rng.standard_normal((4, 16)).astype(np.float32),
                k_pe=rng.standard_normal((4, 8)).astype(np.float32),
                kv_cache=np.zeros((32, 24), np.float32),
                positions=np.arange(4), slots=np.arange(4), rope_dim=8)
    rope_mlir.apply_mla(None, **call)
    for name in ("positions", "slots"):
        with pytest.raises(ValueError, match=re.escape(
                f"{name} has shape (5,), expected (4,) (dim 0 is c_kv's dim "
                f"0; one per token)")):
            rope_mlir.apply_mla(None, **dict(call, **{name: np.arange(5)}))
    q = np.zeros((4, 2, 24), np.float32)
    with pytest.raises(ValueError, match=re.escape(
            "out has shape (4, 3, 24), expected (4, 2, 24) (q's shape)")):
        rope_mlir.apply_mla(q, out=np.zeros((4, 3, 24), np.float32),
                            **call)


# -- rope_mlir.jit on the one path ------------------------------------------------
# A jit function's arguments are ArgSpecs read from its signature, checked by
# _kernel_path.check_input, and the function is a CompiledKernel with results
# (called through its packed wrapper): not a call path of its own.

JIT = """
func.func @f(%x: tensor<?x4xf32>, %s: f32, %n: index) -> (tensor<?x4xf32>, f32) {
  return %x, %s : tensor<?x4xf32>, f32
}
func.func @g(%x: tensor<2xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<2xi32>
  return %v : i32
}
"""


def test_jit_functions_are_compiled_kernels_of_specs():
    module = rope_mlir.jit(JIT)
    f = module.function("f")
    assert isinstance(f._kernel, path.CompiledKernel)
    assert [(s.name, s.dtype, s.shape, s.scalar, s.declared)
            for s in f.specs] == [
        ("@f argument 0 (tensor<?x4xf32>)", F32, (None, 4), False,
         "tensor<?x4xf32>"),
        ("@f argument 1 (f32)", F32, None, True, "f32"),
        ("@f argument 2 (index)", np.dtype(np.int64), None, True, "index")]
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y, s = f(x, 2.5, 3)
    np.testing.assert_array_equal(y, x)
    assert s == np.float32(2.5) and not np.shares_memory(y, x)
    assert module.function("g")(np.array([7, 9], np.int32)) == 7


def test_jit_checks_are_the_specs():
    f = rope_mlir.jit(JIT).function("f")
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError, match=r"@f argument 0 \(tensor<\?x4xf32>\)"
                       r" has shape \(2, 5\), expected \('\?', 4\)"):
        f(np.zeros((2, 5), np.float32), 1.0, 0)
    with pytest.raises(ValueError, match=r"@f argument 2 \(index\) = "
                                         r"9223372036854775808 does not fit "
                                         r"index"):
        f(x, 1.0, 2**63)
    # A spec changed: the check changes with it.
    static = dataclasses.replace(f.specs[0], shape=(3, 4))
    with pytest.raises(ValueError, match=r"has shape \(2, 4\), expected "
                                         r"\(3, 4\)"):
        path.check_input(static, x)
    with pytest.raises(TypeError, match="must be a bool"):
        path.check_input(dataclasses.replace(
            f.specs[1], dtype=np.dtype(np.bool_)), 1.0)


def test_jit_specs_must_agree_with_the_signature():
    module = rope_mlir.jit(JIT)
    f = module.function("f")
    handle = module._handle
    path.CompiledKernel(None, None, "f", f.specs, module=handle,
                        results=True)  # agrees
    for changed in (
            dataclasses.replace(f.specs[0], shape=(None, 5)),
            dataclasses.replace(f.specs[0], declared="tensor<?x5xf32>"),
            dataclasses.replace(f.specs[1], dtype=np.dtype(np.float64))):
        specs = tuple(changed if s.name == changed.name else s
                      for s in f.specs)
        with pytest.raises(RuntimeError, match="disagree with its "
                                               "signature"):
            path.CompiledKernel(None, None, "f", specs, module=handle,
                                results=True)


@pytest.mark.parametrize("value, error, message", [
    ([1.0, 2.0], TypeError, r"a must be a numpy array, got list"),
    (np.zeros(2, np.float64), TypeError,
     r"a has dtype float64, expected float32"),
    (np.zeros((1, 2), np.float32), ValueError,
     r"a has rank 2 \(shape \(1, 2\)\), expected rank 1"),
    (np.zeros(3, np.float32), ValueError,
     r"a has shape \(3,\), expected \(2,\) \('\?' is any size\)"),
])
def test_check_input_names_the_spec(value, error, message):
    spec = ArgSpec("a", F32, (2,))
    with pytest.raises(error, match=message):
        path.check_input(spec, value)
    strided = np.zeros(4, np.float32)[::2]
    checked = path.check_input(spec, strided)
    assert checked.flags.c_contiguous and checked.shape == (2,)


def _signature(c_interface, results=({"kind": "tensor", "shape": [2],
                                       "element": "f32"},)):
    return {"arguments": [{"kind": "tensor", "shape": [2],
                           "element": "f32"}],
            "results": list(results), "c_interface": c_interface}


def test_result_types_read_the_signature():
    # One memref result: written through a descriptor the first parameter
    # points to; nothing returned by value.
    arguments, struct, returned = path.result_types(
        _signature({"parameters": 2, "returns_value": False}), "f")
    assert struct is not None and returned is None


@pytest.mark.parametrize("interface, message", [
    (None, r"emitted no C interface for @f"),
    # A parameter missing (the result struct not passed) or a value
    # returned where the signature says memref: never called.
    ({"parameters": 1, "returns_value": False}, r"lowered @f to a C "
                                                r"interface with"),
    ({"parameters": 2, "returns_value": True}, r"lowered @f to a C "
                                               r"interface with"),
])
def test_result_types_refuse_an_interface_the_signature_does_not_have(
        interface, message):
    with pytest.raises(ValueError, match=message):
        path.result_types(_signature(interface), "f")


# -- The host's vector widths: one source for the jit and the kernels --------

def test_host_vector_options_are_options_rope_to_llvm_cpu_accepts():
    options = path.host_vector_options()
    assert set(options) <= {"contraction_vector_bits", "elementwise_max_lanes",
                            "contraction_bf16_products"}
    # The same text in the jit's default pipeline and the attention kernels'.
    text = path.option_text(**options)
    assert text in rope_mlir.compiled.default_pipeline()
    assert text in attention.pipeline(True)
    # The pass parses them: a kernel compiles under them (and a misspelt
    # option is refused naming it, so the check above is not vacuous).
    ir = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  return %x : tensor<4xf32>\n}")
    assert "llvm.func" in rope_mlir._jit.lower(ir, path.cpu_pipeline(**options))
    with pytest.raises(rope_mlir.CompileError, match="contraction-vector-bitz"):
        rope_mlir._jit.lower(ir, path.cpu_pipeline(contraction_vector_bitz=512))


def test_host_vector_options_takes_no_arguments_and_gives_a_fresh_dict():
    with pytest.raises(TypeError):
        path.host_vector_options("avx512f")
    first = path.host_vector_options()
    first["contraction_vector_bits"] = 4096  # the caller's copy only
    assert path.host_vector_options().get("contraction_vector_bits") != 4096


@pytest.mark.parametrize("options,text", [
    (dict(num_threads=2, vectorize=True, angle=None),
     " num-threads=2 vectorize=true"),
    (dict(), ""),
])
def test_option_text_writes_pass_options(options, text):
    assert path.option_text(**options) == text


# -- option_text and cpu_pipeline: nothing but options reaches the pipeline ---

def test_option_text_writes_options_in_order():
    assert path.option_text(num_threads=2, vectorize=True, angle=None,
                            bf16_truncation="target",
                            prefetch_rows=np.int64(8)) == (
        " num-threads=2 vectorize=true bf16-truncation=target "
        "prefetch-rows=8")
    assert path.option_text() == ""


@pytest.mark.parametrize("options,error,message", [
    (dict(angle="f64} builtin.module(canonicalize"), ValueError,
     "pass option angle"),
    (dict(angle="f64 num-threads=0"), ValueError, "pass option angle"),
    (dict(angle="a,b"), ValueError, "pass option angle"),
    (dict(angle=""), ValueError, "pass option angle"),
    (dict(num_threads=2.5), TypeError, "pass option num_threads"),
    (dict(num_threads=[2]), TypeError, "pass option num_threads"),
    (dict(num_threads=np.ones(2)), TypeError, "pass option num_threads"),
    (dict(num_threads=b"2"), TypeError, "pass option num_threads"),
    ({"Num_threads": 2}, ValueError, "lower-case Python identifiers"),
    ({"num-threads": 2}, ValueError, "lower-case Python identifiers"),
    ({"x} y": 1}, ValueError, "lower-case Python identifiers"),
])
def test_option_text_refuses_what_is_not_an_option(options, error, message):
    with pytest.raises(error, match=message):
        path.option_text(**options)
    with pytest.raises(error, match=message):
        path.cpu_pipeline(**options)


@pytest.mark.parametrize("before,error", [
    (None, TypeError), (b"canonicalize, ", TypeError), (3, TypeError),
    ("canonicalize", ValueError),                 # no ", " after it
    ("canonicalize}, ", ValueError),              # closes the option list
    ("rope-optimize{x=1, ", ValueError),          # leaves a brace open
    ("cse), builtin.module(cse, ", ValueError),   # closes the module first
    ("cse\0, ", ValueError),
])
def test_cpu_pipeline_refuses_bad_passes_before(before, error):
    with pytest.raises(error, match="before must be"):
        path.cpu_pipeline(before, vectorize=True)


def test_cpu_pipeline_accepts_passes_before_and_they_parse():
    text = path.cpu_pipeline("rope-optimize{share-key-rotation=true}, ",
                             num_threads=1)
    assert text == ("builtin.module(rope-optimize{share-key-rotation=true}, "
                    "rope-to-llvm-cpu{emit-c-interface=true num-threads=1})")
    ir = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  return %x : tensor<4xf32>\n}")
    assert "llvm.func" in rope_mlir._jit.lower(ir, text)
