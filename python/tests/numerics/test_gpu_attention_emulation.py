# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope.attention through rope-to-nvvm's GPU mapping, executed on the CPU
against the float64 reference of test_attention_op.py.

There is no GPU here, so the launch is emulated: the module is lowered as
rope-to-nvvm lowers it up to the kernel (rope-tile-attention with one query
row per iteration, rope-decompose-in-forall, convert-rope-to-gpu for
rotations left whole, bufferization, rope-map-forall-to-gpu,
convert-parallel-loops-to-gpu, deallocation, linalg to loops), every
gpu.launch is rewritten into nested scf.parallel loops over blocks and
threads (test/GPU/Inputs/emulate_launch.py) and the result is JIT-compiled
for the CPU. That is exact for these kernels: a thread owns one query row
and its whole online softmax, nothing is shared between threads (no
barrier, no shared memory), so any execution order computes the same
values. It runs the mapping's indexing (rows collapsed into blocks x
threads, the tail guard), the per-thread buffers, the fused rotations and
the online softmax; not NVPTX code generation, and libm's exp instead of
libdevice's.

Cases: test_attention_op's random configurations (GQA, both layouts, Dv !=
D, float and i1 masks, causal/windows with offsets or query positions,
score regions, f16/bf16/f32/f64, mixed output types, dynamic sizes, fully
masked rows) with the pipeline's launch and with a tiny one (3 threads per
block, 3 keys per step: several blocks, a tail, partial key tiles); and
named cases where rope.apply produces Q and K (f32): decode on an
un-rotated cache at explicit positions (K rotated per key tile inside the
thread), causal prefill (K rotated whole by its own kernel), GQA, [B, S, H,
D]; and the same modules after rope-optimize (already tiled by query
tiles: one tile per thread). Tolerance: test_attention_op.check (2e-6 of
max|reference| with an f32 accumulator, plus one ulp of a narrower output
type).
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib.util

import numpy as np
import pytest

from rope_mlir import _jit
from rope_mlir import reference as rope_reference

import test_attention_op as attention
from test_attention_op import Config, check, emit, inputs, random_config

import _paths

ROOT = _paths.ROOT
_spec = importlib.util.spec_from_file_location(
    "emulate_launch", ROOT / "test" / "GPU" / "Inputs" / "emulate_launch.py")
emulate_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(emulate_launch)

#: (attention-block-size, attention-key-tile) of rope-to-nvvm.
LAUNCHES = {"default": (128, 16), "tiny": (3, 3)}

# rope-to-nvvm up to the launch (lib/Pipelines/Pipelines.cpp).
TO_LAUNCH = (
    "builtin.module(rope-tile-attention{{query-tile-size=1 "
    "key-tile-size={key_tile} fuse-key=auto tile-groups=true}}, "
    "rope-decompose-in-forall, convert-rope-to-gpu, rope-approximate-trig, "
    "canonicalize, cse, func.func(convert-elementwise-to-linalg), "
    "one-shot-bufferize{{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}}, canonicalize, "
    "cse, rope-map-forall-to-gpu{{block-size={block}}}, "
    "convert-parallel-loops-to-gpu, buffer-deallocation-pipeline, "
    "convert-bufferization-to-memref, func.func(convert-linalg-to-loops))")
# The emulated launches to LLVM on the CPU, with C interfaces.
TO_LLVM = (
    "builtin.module(convert-vector-to-scf, convert-scf-to-cf, "
    "expand-strided-metadata, lower-affine, "
    "func.func(llvm-request-c-wrappers), finalize-memref-to-llvm, "
    "convert-vector-to-llvm, convert-math-to-llvm, convert-math-to-libm, "
    "convert-arith-to-llvm, convert-index-to-llvm, convert-cf-to-llvm, "
    "convert-func-to-llvm, reconcile-unrealized-casts)")

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def lower_to_launch(text: str, launch: str = "default") -> str:
    block, key_tile = LAUNCHES[launch]
    return _jit.lower(text, TO_LAUNCH.format(block=block, key_tile=key_tile))


def run_emulated(text: str, args: list, out_shape: tuple, out_dtype,
                 launch: str = "default", launches: int = 1) -> np.ndarray:
    """Runs @f of `text` (tensors in, one tensor out) through the GPU
    lowering with its launches emulated; `launches`: how many there must be
    (the attention kernel, plus one per rope.apply left whole)."""
    gpu = lower_to_launch(text, launch)
    emulated, count = emulate_launch.emulate(gpu)
    assert count == launches, gpu
    # Everything the attention computes is inside the launches.
    assert "gpu." not in emulated and "rope." not in gpu, gpu
    module = _jit.compile_module(emulated, TO_LLVM, 3)
    result = _jit._descriptor_type(len(out_shape))()
    # Kept alive until the call returns (the descriptors point into them).
    arrays = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a
              for a in args]
    call_args = [ctypes.byref(result)]
    argtypes = [ctypes.c_void_p]
    for a in arrays:
        if isinstance(a, np.ndarray):
            desc = _jit.memref_descriptor(a)
            call_args.append(ctypes.byref(desc))
            argtypes.append(ctypes.c_void_p)
        else:  # an index scalar
            call_args.append(ctypes.c_int64(int(a)))
            argtypes.append(ctypes.c_int64)
    function = ctypes.CFUNCTYPE(None, *argtypes)(module.lookup("f"))
    function(*call_args)
    assert tuple(result.sizes) == tuple(out_shape)
    dtype = np.dtype(out_dtype)
    count = int(np.prod(out_shape))
    data = ctypes.string_at(result.aligned + result.offset * dtype.itemsize,
                            count * dtype.itemsize)
    out = np.frombuffer(data, dtype).reshape(out_shape).copy()
    _libc.free(result.allocated)
    del arrays, module
    return out


def run_config(cfg: Config, seed: int, launch: str) -> None:
    args, kw = inputs(cfg, seed)
    expected = attention.reference(cfg, *args[:3], **kw)
    got = run_emulated(emit(cfg), args, cfg.shape("out"),
                       attention.DTYPES[cfg.out], launch)
    # Fails on an output the kernel never wrote, whatever the reference.
    assert np.any(got.astype(np.float64) != 0)
    check(got, expected, cfg)


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("seed", range(0, 44, 3))
def test_random_configuration_on_emulated_gpu(seed, launch):
    run_config(random_config(seed), seed, launch)


NAMED = {
    "gqa_causal_bhsd": Config(group=4, queries=7, keys=11, causal=True),
    "bshd_window_i1_mask": Config(layout="bshd", group=2, kv_heads=3,
                                  queries=5, keys=9, causal=True, window=3,
                                  mask="i1"),
    "dv_ne_d_float_mask": Config(head_dim=16, value_dim=4, mask="float",
                                 mask_dims="qk"),
    "f16_decode_positions": Config(dtype="f16", queries=1, keys=13,
                                   group=4, causal=True, positions=True,
                                   key_offset=2),
    "bf16_gqa": Config(dtype="bf16", group=2, queries=6, keys=10,
                       causal=True, query_offset=4),
    "masked_rows": Config(mask="i1", masked_rows=True, queries=5),
    "dynamic": Config(dynamic=True, causal=True, queries=5, keys=7),
    # Attention sinks: the per-row state starts from the sink in each
    # thread, then the key loop.
    "sinks_gqa_causal": Config(sinks="head", group=4, queries=7, keys=11,
                               causal=True),
    "sinks_decode_positions": Config(sinks="batch_head", batch=2, queries=1,
                                     keys=13, group=2, causal=True,
                                     positions=True),
}


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("name", NAMED)
def test_named_configuration_on_emulated_gpu(name, launch):
    run_config(NAMED[name], 11, launch)


# -- rope.apply producing Q and K --------------------------------------------

@dataclasses.dataclass(frozen=True)
class Rotated:
    """An attention whose Q and K are rope.apply of the arguments: Q at
    its query positions (explicit, or the causal offset + index), K at
    key_offset + index (an un-rotated cache)."""
    cfg: Config
    launches: int  # 1: K fused into the kernel (decode); 2: its own kernel


def _query_base(cfg: Config) -> int:
    if cfg.query_offset is not None:
        return cfg.query_offset
    return cfg.keys - cfg.queries


def emit_rotated(cfg: Config) -> str:
    """emit(cfg) with %q and %k rotated by rope.apply before the attention
    (f32, static shapes)."""
    text = emit(cfg)
    q_type = attention._tensor(cfg, "query", cfg.dtype)
    k_type = attention._tensor(cfg, "key", cfg.dtype)
    q_tokens = [cfg.dims("query").index(d) for d in ("b", "m")]
    k_tokens = [cfg.dims("key").index(d) for d in ("b", "k2")]
    if cfg.positions:
        pos_type = attention._tensor(cfg, "positions", "i32")
        q_source = f"positions(%pos : {pos_type})"
        q_offset = ""
    else:
        q_source = "offset(%qo : i64)"
        q_offset = f"  %qo = arith.constant {_query_base(cfg)} : i64\n"
    rotations = (
        q_offset +
        f"  %ko = arith.constant {cfg.key_offset or 0} : i64\n"
        f"  %qe = tensor.empty() : {q_type}\n"
        f"  %qr = rope.apply ins(%q : {q_type}) {q_source} "
        f"outs(%qe : {q_type}) {{token_dims = array<i64: "
        f"{q_tokens[0]}, {q_tokens[1]}>}} -> {q_type}\n"
        f"  %ke = tensor.empty() : {k_type}\n"
        f"  %kr = rope.apply ins(%k : {k_type}) offset(%ko : i64) "
        f"outs(%ke : {k_type}) {{token_dims = array<i64: "
        f"{k_tokens[0]}, {k_tokens[1]}>}} -> {k_type}\n")
    head, body = text.split("{\n", 1)
    body = body.replace("rope.attention ins(%q, %k, %v",
                        "rope.attention ins(%qr, %kr, %v")
    return head + "{\n" + rotations + body


def reference_rotated(cfg: Config, args: list, kw: dict) -> np.ndarray:
    q, k = args[0], args[1]
    q_tokens = tuple(cfg.dims("query").index(d) for d in ("b", "m"))
    k_tokens = tuple(cfg.dims("key").index(d) for d in ("b", "k2"))
    if cfg.positions:
        qr = rope_reference.apply(q, np.asarray(kw["pos"], np.int64),
                                  token_dims=q_tokens)
    else:
        qr = rope_reference.apply(
            q, np.arange(cfg.queries)[None] + _query_base(cfg),
            token_dims=q_tokens)
    kr = rope_reference.apply(
        k, np.arange(cfg.keys)[None] + (cfg.key_offset or 0),
        token_dims=k_tokens)
    # The kernel rotates into f32 tensors: so does the reference.
    return attention.reference(cfg, qr.astype(np.float32),
                               kr.astype(np.float32), *args[2:3], **kw)


ROTATED = {
    # Decode on a cache longer than the valid length: one query per row of
    # K/V, so K is rotated per key tile inside each thread.
    "decode_gqa_positions": Rotated(
        Config(queries=1, keys=40, group=4, kv_heads=2, batch=2,
               head_dim=16, value_dim=8, causal=True, positions=True), 1),
    "decode_bshd_key_offset": Rotated(
        Config(layout="bshd", queries=1, keys=21, group=2, head_dim=8,
               causal=True, positions=True, key_offset=3, mask="float",
               mask_dims="qk"), 1),
    # Prefill: several queries, so K is rotated whole by its own kernel.
    "prefill_causal_bhsd": Rotated(
        Config(queries=9, keys=9, group=2, head_dim=16, value_dim=12,
               causal=True), 2),
    "prefill_bshd_offsets": Rotated(
        Config(layout="bshd", queries=6, keys=10, kv_heads=3, causal=True,
               window=4, query_offset=4, key_offset=0), 2),
}


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("name", ROTATED)
def test_rotated_producers_on_emulated_gpu(name, launch):
    cfg, launches = ROTATED[name].cfg, ROTATED[name].launches
    args, kw = inputs(cfg, 5)
    got = run_emulated(emit_rotated(cfg), args, cfg.shape("out"),
                       np.float32, launch, launches=launches)
    assert np.any(got != 0)
    check(got, reference_rotated(cfg, args, kw), cfg)


def test_rotations_fused_in_decode_only():
    """In decode the K rotation is inside the attention kernel's key loop
    (one launch, nothing rotated whole); in prefill it is its own launch
    before the attention kernel."""
    decode = lower_to_launch(emit_rotated(ROTATED["decode_gqa_positions"].cfg))
    assert decode.count("gpu.launch") == 1
    prefill = lower_to_launch(emit_rotated(ROTATED["prefill_causal_bhsd"].cfg))
    assert prefill.count("gpu.launch") == 2


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("name", ROTATED)
def test_rope_optimize_output_on_emulated_gpu(name, launch):
    """A module rope-optimize has already tiled (query tiles of 32, here
    one tile: K fused too, so one launch): rope-to-nvvm finds no
    rope.attention left and maps that forall, one query tile per thread."""
    cfg = ROTATED[name].cfg
    args, kw = inputs(cfg, 5)
    optimized = _jit.lower(emit_rotated(cfg), "builtin.module(rope-optimize)")
    assert "rope.attention" not in optimized and "scf.forall" in optimized
    got = run_emulated(optimized, args, cfg.shape("out"), np.float32, launch)
    check(got, reference_rotated(cfg, args, kw), cfg)
