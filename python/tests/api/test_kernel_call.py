# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The C++ fast call of compiled kernels (lib/Runtime/KernelCall.cpp).

`Kernel.__call__` first offers the call to the kernel's plan, which checks
and runs it in C++, and takes the Python path (`Kernel._checked_call`) when
the plan answers None. The plan must never accept what the Python path
would refuse or convert, and must compute exactly what the Python path
computes: every case below runs both on the same arguments (fresh copies)
and compares outcome and bytes. The valid calls must be taken by the plan
(else the speed is lost without a failing test)."""

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, kernel as K

MROPE = "#rope.mrope<section = [4, 2, 2]>"

# (configuration fields, x shape)
CONFIGS = [
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit"),
     (2, 3, 4, 16)),
    (dict(dtype="f64", rank=3, head_dim=8, positions="offset",
          layout="interleaved"), (5, 2, 8)),
    (dict(dtype="f16", rank=4, head_dim=16, positions="row_offset"),
     (2, 3, 2, 16)),
    (dict(dtype="f32", rank=3, head_dim=16, positions="none", rotary_dim=8),
     (4, 2, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
          cache="gathered"), (2, 3, 4, 16)),
    (dict(dtype="f32", rank=3, head_dim=16, positions="offset",
          cache="gathered", cache_dtype="f64"), (5, 2, 16)),
    (dict(dtype="f64", rank=4, head_dim=16, positions="row_offset",
          cache="gathered"), (2, 3, 2, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="none",
          cache="pregathered"), (2, 3, 2, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
          inplace=True), (2, 3, 4, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
          token_dims=(0, 2)), (2, 4, 3, 16)),  # [B, H, S, D]
    (dict(dtype="f32", rank=3, head_dim=16, positions="explicit",
          mrope=MROPE), (4, 2, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
          static_shape=(2, 3, 4, 16), static_positions_shape=(2, 3)),
     (2, 3, 4, 16)),
    (dict(dtype="f32", rank=3, head_dim=16, positions="explicit",
          cache="gathered", positions_dtype="i32",
          static_cache_shape=(40, 8)), (5, 2, 16)),
    (dict(dtype="bf16", rank=4, head_dim=16, positions="explicit",
          cache="gathered", cache_dtype="bf16"), (2, 3, 2, 16)),
]
CACHE_ROWS = 40


def _kernel(fields):
    return rope_mlir.compile(**fields)


def _valid_arguments(kernel, shape, rng):
    """Arguments the kernel was compiled for, as a dict of call keywords."""
    c = kernel.config
    x = rng.standard_normal(shape).astype(K._DTYPES[c.dtype])
    token_sizes = tuple(shape[d] for d in c.resolved_token_dims())
    args = dict(x=x, positions=None, offset=0, cos_cache=None,
                sin_cache=None, out=None)
    seq = token_sizes[-1]
    if c.positions == "explicit":
        pshape = ((3,) if c.mrope else ()) + token_sizes
        args["positions"] = rng.integers(
            0, CACHE_ROWS, pshape).astype(K._INT_DTYPES[c.positions_dtype])
    elif c.positions == "offset":
        args["offset"] = int(rng.integers(0, CACHE_ROWS - seq))
    elif c.positions == "row_offset":
        args["offset"] = rng.integers(0, CACHE_ROWS - seq,
                                      token_sizes[:1]).astype(np.int64)
    pairs = (c.rotary_dim or c.head_dim) // 2
    if c.cache is not None:
        cshape = ((CACHE_ROWS, pairs) if c.cache == "gathered"
                  else token_sizes + (pairs,))
        angle = rng.uniform(0, 6.3, cshape)
        dtype = K._DTYPES[c.cache_dtype]
        args["cos_cache"] = np.cos(angle).astype(dtype)
        args["sin_cache"] = np.sin(angle).astype(dtype)
    args["out"] = x if c.inplace else np.empty_like(x)
    return args


def _misaligned(array):
    """A copy of `array` at an address one byte past an aligned one."""
    raw = np.empty(array.nbytes + 1, np.uint8)
    view = raw[1:].view(array.dtype).reshape(array.shape)
    view[...] = array
    return view


class Sub(np.ndarray):
    pass


def _variants(kernel, args, rng):
    """(name, arguments) pairs: the valid call, then one change each."""
    c = kernel.config
    x = args["x"]
    yield "valid", dict(args)
    yield "out None", dict(args, out=None)
    other = np.float64 if x.dtype != np.float64 else np.float32
    yield "x dtype", dict(args, x=x.astype(other))
    yield "x same-size dtype", dict(args, x=x.view(f"u{x.itemsize}"))
    if x.dtype.kind == "f":  # (bfloat16 has no byte-swapped form)
        yield "x byte-swapped", dict(
            args, x=x.astype(x.dtype.newbyteorder()))
    yield "x list", dict(args, x=x.tolist())
    yield "x subclass", dict(args, x=x.view(Sub))
    yield "x rank", dict(args, x=x[None])
    yield "x head dim", dict(args, x=x[..., :-2])
    yield "x fortran", dict(args, x=np.asfortranarray(x))
    yield "x strided", dict(args, x=np.repeat(x, 2, axis=-1)[..., ::2])
    yield "x misaligned", dict(args, x=_misaligned(x))
    yield "x read-only", dict(args, x=_read_only(x))
    yield "x empty", dict(args, x=x[:0])
    odd = np.lib.stride_tricks.as_strided(
        x[:1].copy(), strides=(12345 * x.itemsize,) + x.strides[1:])
    yield "x size-1 dim odd stride", dict(args, x=odd)
    out = args["out"]
    if not c.inplace:
        yield "out read-only", dict(args, out=_read_only(out))
        yield "out is x", dict(args, out=x)
        yield "out dtype", dict(args, out=out.astype(other))
        yield "out shape", dict(args, out=out[..., :-2].copy())
        yield "out strided", dict(
            args, out=np.empty(out.shape[:-1] + (2 * out.shape[-1],),
                               out.dtype)[..., ::2])
        yield "out misaligned", dict(args, out=_misaligned(out))
        yield "out subclass", dict(args, out=out.view(Sub))
        shared = np.empty((2,) + x.shape, x.dtype)
        shared[0] = x
        both = shared.reshape(-1)[x.size // 2:][:x.size].reshape(x.shape)
        yield "out overlaps x", dict(args, x=shared[0], out=both)
    else:
        yield "in place out copy", dict(args, out=x.copy())
        yield "in place out None", dict(args, out=None)
    positions = args["positions"]
    if c.positions == "explicit":
        other_int = np.int32 if positions.dtype == np.int64 else np.int64
        yield "positions other int", dict(
            args, positions=positions.astype(other_int))
        yield "positions list", dict(args, positions=positions.tolist())
        yield "positions float", dict(
            args, positions=positions.astype(np.float64))
        yield "positions shape", dict(args, positions=positions[..., :-1])
        yield "positions extra dim", dict(args, positions=positions[None])
        yield "positions strided", dict(
            args, positions=np.repeat(positions, 2, axis=-1)[..., ::2])
        yield "positions None", dict(args, positions=None)
        yield "positions and offset", dict(args, offset=1)
        yield "positions and offset 0 array", dict(
            args, offset=np.int64(0))
        yield "positions and bool offset", dict(args, offset=False)
        yield "positions negative", dict(args, positions=positions - 50)
        yield "positions past cache", dict(
            args, positions=positions + CACHE_ROWS)
    elif c.positions == "offset":
        yield "offset numpy", dict(args, offset=np.int64(args["offset"]))
        yield "offset bool", dict(args, offset=True)
        yield "offset float", dict(args, offset=1.0)
        yield "offset huge", dict(args, offset=2**63)
        yield "offset max", dict(args, offset=2**63 - 1)
        yield "offset negative", dict(args, offset=-3)
        yield "offset past cache", dict(args, offset=CACHE_ROWS)
        yield "offset with positions", dict(
            args, positions=np.zeros(x.shape[:2], np.int64))
    elif c.positions == "row_offset":
        offset = args["offset"]
        yield "row offset int32", dict(args, offset=offset.astype(np.int32))
        yield "row offset list", dict(args, offset=offset.tolist())
        yield "row offset scalar", dict(args, offset=3)
        yield "row offset shape", dict(args, offset=offset[:-1])
        yield "row offset negative", dict(args, offset=offset - 50)
        yield "row offset past cache", dict(args, offset=offset + CACHE_ROWS)
        yield "row offset max", dict(
            args, offset=np.full_like(offset, 2**63 - 1))
    else:
        yield "none with offset", dict(args, offset=1)
        yield "none with positions", dict(
            args, positions=np.zeros(x.shape[:1], np.int64))
    if c.cache is not None:
        cos, sin = args["cos_cache"], args["sin_cache"]
        other_float = np.float64 if cos.dtype != np.float64 else np.float32
        yield "cos dtype", dict(args, cos_cache=cos.astype(other_float))
        yield "sin dtype", dict(args, sin_cache=sin.astype(other_float))
        yield "cos None", dict(args, cos_cache=None)
        yield "cache short", dict(args, cos_cache=cos[:-1].copy(),
                                  sin_cache=sin[:-1].copy())
        yield "cache narrow", dict(args, cos_cache=cos[..., :-1].copy(),
                                   sin_cache=sin[..., :-1].copy())
        yield "sin shape", dict(args, sin_cache=sin[:-1].copy())
        yield "cos strided", dict(
            args, cos_cache=np.repeat(cos, 2, axis=-1)[..., ::2])
        yield "cos misaligned", dict(args, cos_cache=_misaligned(cos))
        if c.cache == "gathered" and positions is not None and \
                positions.dtype.itemsize == x.itemsize and \
                x.dtype != np.float16 and not c.inplace:
            # out's memory holds the positions (reinterpreted): the check
            # must see the indices unchanged while the kernel writes out.
            raw = np.zeros(max(x.nbytes, positions.nbytes), np.uint8)
            index = raw[:positions.nbytes].view(positions.dtype).reshape(
                positions.shape)
            index[...] = positions
            dest = raw[:x.nbytes].view(x.dtype).reshape(x.shape)
            yield "out holds the positions", dict(args, positions=index,
                                                  out=dest)
    else:
        yield "cache given", dict(
            args, cos_cache=np.zeros((CACHE_ROWS, 4), np.float32),
            sin_cache=np.zeros((CACHE_ROWS, 4), np.float32))


def _read_only(array):
    copy = array.copy()
    copy.flags.writeable = False
    return copy


def _snapshot(args):
    """What restores every writeable array argument to its contents now
    (a call writes out, or x in place; aliased arguments were saved from
    the same memory, so the order of the restores does not matter)."""
    saved = [(a, a.copy()) for a in args.values()
             if isinstance(a, np.ndarray) and a.flags.writeable]

    def restore():
        for array, contents in saved:
            array[...] = contents
    return restore


def _outcome(fn):
    try:
        result = fn()
    except Exception as error:  # noqa: BLE001 - compared below
        return ("error", type(error), str(error))
    return ("ok", np.array(result, copy=True))


def _run_plan(kernel, args):
    return kernel._plan(args["x"], args["positions"], args["offset"],
                        args["cos_cache"], args["sin_cache"], args["out"])


def _run_checked(kernel, args):
    return kernel._checked_call(args["x"], args["positions"], args["offset"],
                                args["cos_cache"], args["sin_cache"],
                                args["out"])


def _run_public(kernel, args):
    a = dict(args)
    x = a.pop("x")
    return kernel(x, **a)


def test_extension_is_built_and_loaded():
    module = _jit.kernel_call_module()
    assert module is not None, (
        "_kernel_call.abi3.so was not found next to libRopeJit.so: build "
        "with the Python headers (python3-dev)")
    with pytest.raises(TypeError):
        module.Plan()  # no unplanned instance (it would call address 0)


@pytest.mark.parametrize("fields,shape", CONFIGS,
                         ids=[str(i) for i in range(len(CONFIGS))])
def test_plan_agrees_with_the_python_path(fields, shape):
    kernel = _kernel(fields)
    assert kernel._plan is not None
    rng = np.random.default_rng(len(str(fields)))
    taken = []
    for name, args in _variants(kernel, _valid_arguments(kernel, shape, rng),
                                rng):
        # The Python path alone, the plan alone, then the public call, each
        # on the arguments as they were.
        restore = _snapshot(args)
        checked = _outcome(lambda: _run_checked(kernel, args))
        if args["out"] is not None:  # (__call__ allocates out=None first)
            restore()
            planned = _outcome(lambda: _run_plan(kernel, args))
            assert planned[0] == "ok", (name, planned)
            if planned[1].dtype != object:  # None: declined
                taken.append(name)
                assert checked[0] == "ok", (
                    f"{name}: the plan ran a call the Python path refuses: "
                    f"{checked}")
                np.testing.assert_array_equal(
                    planned[1].view(np.uint8), checked[1].view(np.uint8),
                    err_msg=name)
        restore()
        public = _outcome(lambda: _run_public(kernel, args))
        assert public[0] == checked[0], (name, public, checked)
        if public[0] == "error":
            assert public[1:] == checked[1:], name
        else:
            np.testing.assert_array_equal(
                public[1].view(np.uint8), checked[1].view(np.uint8),
                err_msg=name)
    assert "valid" in taken, "the plan declined the valid call"
    refused = {"x dtype", "x same-size dtype", "x byte-swapped", "x list", "x subclass", "x fortran", "x strided",
               "x misaligned", "x empty", "out read-only", "out is x",
               "out overlaps x", "positions other int", "positions list",
               "positions negative", "positions past cache", "offset numpy",
               "offset past cache", "row offset past cache",
               "out holds the positions", "cos misaligned"}
    wrongly = refused & set(taken)
    # Negative or past-the-cache positions are only refused with a
    # gathered cache (computed angles take any position).
    if kernel.config.cache != "gathered":
        wrongly -= {"positions negative", "positions past cache",
                    "offset past cache", "row offset past cache"}
    assert not wrongly, f"the plan took {sorted(wrongly)}"


def test_out_none_allocates_a_fresh_result():
    kernel = _kernel(CONFIGS[0][0])
    args = _valid_arguments(kernel, CONFIGS[0][1], np.random.default_rng(1))
    first = kernel(args["x"], args["positions"])
    second = kernel(args["x"], args["positions"])
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, second)
    expected = kernel._checked_call(args["x"], args["positions"], 0, None,
                                    None, None)
    np.testing.assert_array_equal(first, expected)


def test_bfloat16_kernels_take_the_fast_path():
    # numpy exports no buffer format for bfloat16: the plan asks for none
    # and compares the dtype object.
    kernel = _kernel(dict(dtype="bf16", rank=3, head_dim=8,
                          positions="offset"))
    x = np.ones((2, 2, 8), K._DTYPES["bf16"])
    out = np.empty_like(x)
    assert kernel._plan(x, None, 1, None, None, out) is out
    np.testing.assert_array_equal(
        out.view(np.uint16),
        kernel._checked_call(x, None, 1, None, None, None).view(np.uint16))
    # A float16 or uint16 array of the same bytes is not taken for one.
    for other in (x.view(np.float16), x.view(np.uint16)):
        assert kernel._plan(other, None, 1, None, None, out) is None


def test_plan_rejects_malformed_calls():
    kernel = _kernel(CONFIGS[0][0])
    with pytest.raises(TypeError, match="takes"):
        kernel._plan(1, 2, 3)
    with pytest.raises(TypeError, match="takes"):
        kernel._plan(1, 2, 3, 4, 5, out=6)


def test_fast_call_can_be_disabled(monkeypatch):
    monkeypatch.setattr(_jit, "_kernel_call_loaded", False)
    monkeypatch.setattr(_jit, "_kernel_call", None)
    monkeypatch.setenv("ROPE_MLIR_FAST_CALL", "0")
    assert _jit.kernel_call_module() is None
    kernel = K.Kernel(K.KernelConfig(dtype="f32", rank=3, head_dim=8,
                                     positions="offset"))
    assert kernel._plan is None
    x = np.ones((2, 2, 8), np.float32)
    np.testing.assert_array_equal(kernel(x, offset=1),
                                  kernel._checked_call(x, None, 1, None,
                                                       None, None))


def test_apply_remembers_only_kernels_that_compiled():
    x = np.ones((3, 2, 8), np.float32)
    for _ in range(2):  # refused each time, never remembered
        with pytest.raises(ValueError, match="rotary_dim"):
            rope_mlir.apply(x, offset=2, rotary_dim=3)
    before = dict(K._apply_kernels)
    first = rope_mlir.apply(x, offset=2, base=1234.5)
    added = set(K._apply_kernels) - set(before)
    assert len(added) == 1
    stats = K.cache_info()
    second = rope_mlir.apply(x, offset=2, base=1234.5)
    # Counted as a reuse (cache_info's "hits"), compiled nothing.
    assert K.cache_info() == dict(stats, hits=stats["hits"] + 1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, rope_mlir.compile(
        dtype="f32", rank=3, head_dim=8, positions="offset",
        base=1234.5)(x, offset=2))
    # A different value of any field is another kernel.
    third = rope_mlir.apply(x, offset=2, base=1234.5, inverse=True)
    assert len(set(K._apply_kernels) - set(before)) == 2
    assert not np.array_equal(first, third)


# -- q/k pairs (fused.apply_qk) ------------------------------------------------

PAIR_CONFIGS = [
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit"),
     (2, 3, 4, 16), (2, 3, 2, 16)),
    (dict(dtype="f32", rank=4, head_dim=16, positions="explicit",
          cache="gathered"), (2, 3, 4, 16), (2, 3, 1, 16)),
    (dict(dtype="bf16", rank=3, head_dim=8, positions="offset",
          layout="interleaved"), (5, 4, 8), (5, 2, 8)),
    (dict(dtype="f64", rank=4, head_dim=16, positions="row_offset",
          cache="gathered", token_dims=(0, 2)), (2, 4, 3, 16),
     (2, 1, 3, 16)),
    (dict(dtype="f32", rank=3, head_dim=16, positions="explicit",
          inplace=True), (5, 4, 16), (5, 2, 16)),
]


def _pair_variants(kernel, args, k_shape, rng):
    c = kernel.config
    q = args["x"]
    k = rng.standard_normal(k_shape).astype(q.dtype)
    base = dict(q=q, k=k, positions=args["positions"], offset=args["offset"],
                cos_cache=args["cos_cache"], sin_cache=args["sin_cache"],
                out_q=args["out"], out_k=k if c.inplace else np.empty_like(k))
    yield "valid", dict(base)
    yield "outs None", dict(base, out_q=None, out_k=None)
    other = np.float64 if q.dtype != np.float64 else np.float32
    yield "k dtype", dict(base, k=k.astype(other))
    yield "k subclass", dict(base, k=k.view(Sub))
    yield "k rank", dict(base, k=k[None])
    yield "k head dim", dict(base, k=k[..., :-2].copy())
    token = c.resolved_token_dims()[-1]
    yield "k token sizes", dict(base, k=np.take(k, [0], axis=token).copy())
    yield "k strided", dict(base, k=np.repeat(k, 2, axis=-1)[..., ::2])
    yield "k misaligned", dict(base, k=_misaligned(k))
    # q and k as two views of one buffer (apart, then overlapping).
    both = np.empty(q.size + k.size, q.dtype)
    qv = both[:q.size].reshape(q.shape)
    kv = both[q.size:].reshape(k.shape)
    qv[...], kv[...] = q, k
    yield "q, k adjacent views", dict(
        base, q=qv, k=kv, out_q=qv if c.inplace else base["out_q"],
        out_k=kv if c.inplace else base["out_k"])
    kover = both[q.size - k.size // 2:][:k.size].reshape(k.shape)
    yield "q, k overlapping views", dict(
        base, q=qv, k=kover, out_q=qv if c.inplace else base["out_q"],
        out_k=kover if c.inplace else base["out_k"])
    if c.inplace:
        yield "in place out_k copy", dict(base, out_k=k.copy())
        yield "in place out_q None", dict(base, out_q=None)
    else:
        yield "out_k read-only", dict(base, out_k=_read_only(base["out_k"]))
        yield "out_k is q", dict(base, out_k=q)
        yield "out_q is k", dict(base, out_q=k)
        yield "out_k is out_q", dict(base, out_k=base["out_q"])
        yield "out_k shape", dict(base, out_k=np.empty_like(q))
        yield "out_k dtype", dict(base, out_k=base["out_k"].astype(other))
        yield "out_k None", dict(base, out_k=None)
        if c.cache == "gathered" and c.positions == "explicit":
            pos = args["positions"]
            raw = np.zeros(max(k.nbytes, pos.nbytes), np.uint8)
            index = raw[:pos.nbytes].view(pos.dtype).reshape(pos.shape)
            index[...] = pos
            dest = raw[:k.nbytes].view(k.dtype).reshape(k.shape)
            yield "out_k holds the positions", dict(base, positions=index,
                                                    out_k=dest)
            yield "positions past cache", dict(
                base, positions=pos + CACHE_ROWS)


def _pair_outcome(fn):
    try:
        result = fn()
    except Exception as error:  # noqa: BLE001 - compared below
        return ("error", type(error), str(error))
    if result is None:
        return ("declined",)
    return ("ok", tuple(np.array(r, copy=True) for r in result))


@pytest.mark.parametrize("fields,q_shape,k_shape", PAIR_CONFIGS,
                         ids=[str(i) for i in range(len(PAIR_CONFIGS))])
def test_pair_plan_agrees_with_the_python_path(fields, q_shape, k_shape):
    kernel = rope_mlir.compile_qk(**fields)
    assert kernel._pair_plan is not None
    rng = np.random.default_rng(len(str(fields)) + 7)
    taken = []
    args = _valid_arguments(kernel, q_shape, rng)
    for name, a in _pair_variants(kernel, args, k_shape, rng):
        order = ("q", "k", "positions", "offset", "cos_cache", "sin_cache",
                 "out_q", "out_k")
        call = tuple(a[n] for n in order)
        restore = _snapshot(a)
        checked = _pair_outcome(lambda: kernel._checked_pair(*call))
        if a["out_q"] is not None and a["out_k"] is not None:
            restore()
            planned = _pair_outcome(lambda: kernel._pair_plan(*call))
            assert planned[0] != "error", (name, planned)
            if planned[0] == "ok":
                taken.append(name)
                assert checked[0] == "ok", (
                    f"{name}: the plan ran a call the Python path refuses: "
                    f"{checked}")
                for got, want in zip(planned[1], checked[1]):
                    np.testing.assert_array_equal(
                        got.view(np.uint8), want.view(np.uint8), err_msg=name)
        restore()
        public = _pair_outcome(lambda: kernel(
            a["q"], a["k"], a["positions"], offset=a["offset"],
            cos_cache=a["cos_cache"], sin_cache=a["sin_cache"],
            out_q=a["out_q"], out_k=a["out_k"]))
        assert public[0] == checked[0], (name, public, checked)
        if public[0] == "error":
            assert public[1:] == checked[1:], name
        else:
            for got, want in zip(public[1], checked[1]):
                np.testing.assert_array_equal(
                    got.view(np.uint8), want.view(np.uint8), err_msg=name)
    assert "valid" in taken and "q, k adjacent views" in taken, taken
    wrongly = set(taken) & {
        "k dtype", "k subclass", "k rank", "k head dim", "k token sizes",
        "k strided", "k misaligned", "q, k overlapping views",
        "out_k read-only", "out_k is q", "out_q is k", "out_k is out_q",
        "out_k holds the positions", "positions past cache",
        "in place out_k copy"}
    if not kernel.config.inplace:  # two inputs may share memory
        wrongly.discard("q, k overlapping views")
    assert not wrongly, f"the plan took {sorted(wrongly)}"


def test_pair_plan_rejects_malformed_calls():
    kernel = rope_mlir.compile_qk(**PAIR_CONFIGS[0][0])
    with pytest.raises(TypeError, match="q/k plan takes"):
        kernel._pair_plan(1, 2, 3, 4, 5, 6)


def test_large_fresh_results_are_64_byte_aligned():
    # Fresh outputs of 1 MiB or more start on a 64-byte boundary (numpy's
    # own start 16 bytes into a page: every vector store would split two
    # lines), whichever path allocates them; smaller ones are plain
    # np.empty. The bytes are those of a call into a caller's misaligned
    # out=.
    from rope_mlir import _arrays
    rng = np.random.default_rng(7)
    shape = (1, 1024, 4, 128)                       # 2 MiB of f32
    x = rng.standard_normal(shape).astype(np.float32)
    k = rng.standard_normal((1, 1024, 2, 128)).astype(np.float32)  # 1 MiB
    positions = rng.integers(0, 4096, (1, 1024)).astype(np.int64)
    kernel = K.Kernel(K.KernelConfig(dtype="f32", rank=4, head_dim=128,
                                     positions="explicit"))
    raw = np.empty(x.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data % 64) + 16
    misaligned = raw[start:start + x.nbytes].view(np.float32).reshape(shape)
    kernel(x, positions, out=misaligned)
    fast = kernel(x, positions)                      # the C++ plan's call
    checked = kernel._checked_call(x, positions, 0, None, None, None)
    qk = rope_mlir.apply_qk(x, k, positions)
    for result in (fast, checked, rope_mlir.apply(x, positions), qk[0], qk[1]):
        assert result.ctypes.data % 64 == 0
        assert result.flags.c_contiguous and result.flags.writeable
    for result in (fast, checked, rope_mlir.apply(x, positions), qk[0]):
        np.testing.assert_array_equal(result, misaligned)
    small = _arrays.empty((3, 5), np.float32)
    assert small.shape == (3, 5) and small.flags.owndata
    assert _arrays.empty((0, 1 << 22), np.float64).shape == (0, 1 << 22)
    big = _arrays.empty((1 << 18,), np.float32)
    assert big.shape == (1 << 18,) and big.ctypes.data % 64 == 0


def test_aligned_empty_refuses_what_numpy_refuses():
    # _arrays.empty takes what np.empty takes and fails as it does, large
    # or small: a negative size or a non-dtype never yields a buffer.
    from rope_mlir import _arrays
    for shape in ((-1, 4), (1 << 21, -2), (-(1 << 30),)):
        with pytest.raises(ValueError, match="negative"):
            _arrays.empty(shape, np.float32)
    with pytest.raises(TypeError):
        _arrays.empty((4, 4), "not-a-dtype")
    with pytest.raises(TypeError):
        _arrays.empty((1 << 20, 4), object())
