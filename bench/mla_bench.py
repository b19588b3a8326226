#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DeepSeek-V3 MLA's RoPE + cache append (rope_mlir.apply_mla, issue 18): one compiled call vs the unfused steps.

    python3 bench/mla_bench.py                           # every row, single thread
    python3 bench/mla_bench.py --repeat 3 --write-docs FILE   # medians of 3 runs, into FILE's mla_bench region
    python3 bench/mla_bench.py --prefetch-rows 0         # fused raw without rope-prefetch-strided-rows

DeepSeek-V3 shapes: q [T, 128, 192] (nope 128 | rope 64, rotated in place), c_kv [T, 512], k_pe [T, 64],
one concatenated cache [4096 + T slots, 576] (vLLM's concat_and_cache_mla layout), interleaved pairs,
DeepSeek-V3's YaRN (factor 40), i64 positions, vLLM slot mapping, one thread:
  decode   T = 64 tokens (one per sequence), positions and slots random in [0, 4096)
  prefill  T = 4096 tokens, positions 0..4095, slots 0..4095

Columns (per row, interleaved rounds of cpu_bench.measure_interleaved, medians):
  fused raw      the apply_mla kernel through ctypes with prebuilt descriptors (compiled with
                 MLAConfig.prefetch_rows = --prefetch-rows, 16 by default as apply_mla)
  fused call     rope_mlir.apply_mla(..., out=q): every argument checked (slots unique, in range)
  unfused        our own rope.apply kernels on contiguous temporaries plus numpy copies: q's rope channels
                 gathered into a temp, rotated by our kernel, copied back; k_pe rotated by our kernel into a
                 temp, scattered into the cache's channels [512, 576); c_kv scattered into [0, 512)
  numpy          the same in numpy float32 (interleaved rotation, then the copies)
  copy           a STREAM-style copy (bench/cpp/rope_baseline.cpp) of the bytes the fused form must move:
                 read and write q's rope channels, read c_kv and k_pe, write their cache rows; (in + out) / 2
  slices         the fused form's own access pattern with no arithmetic (rope_baseline.cpp's slices_*
                 baselines, on arrays of its own): q's rope channels, 64 of every 192, read and written back
                 in place, c_kv and k_pe copied into the cache rows at the slots. q's slices cost the cache
                 lines they touch, not their bytes; this is the ceiling for that layout
and the ratios unfused / fused raw, copy / fused raw and slices / fused raw, warm (the batches above) and
cold (_fused_report.measure: fused raw, unfused, copy and slices each called alone after a read of twice
the last-level cache, cpu_bench.measure_cold). Every output is checked against float64 first.
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import sys
import tempfile

import ml_dtypes
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))

import cpu_bench  # noqa: E402
import _fused_report  # noqa: E402
from _source import replace_region  # noqa: E402
import rope_mlir  # noqa: E402
from rope_mlir import _jit, mla, reference  # noqa: E402

H, NOPE, ROPE, LORA, SLOTS = 128, 128, 64, 512, 4096
YARN = {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32,
        "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0, "max_position_embeddings": 163840}
SHAPES = {"decode": 64, "prefill": 4096}
DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}
BEGIN_MARK, END_MARK = "<!-- BEGIN mla_bench -->", "<!-- END mla_bench -->"
PEERS = ("copy", "slices")


def _raw(function, arrays):
    descriptors = [_jit.memref_descriptor(a) for a in arrays]
    addresses = [ctypes.addressof(d) for d in descriptors]

    def run(function=function, addresses=addresses, keep=(arrays, descriptors)):
        function(*addresses)
    return run


def inputs(shape, dtype, seed=0):
    t = SHAPES[shape]
    rng = np.random.default_rng(seed)
    d = DTYPES[dtype]
    q = rng.standard_normal((t, H, NOPE + ROPE)).astype(d)
    c_kv = rng.standard_normal((t, LORA)).astype(d)
    k_pe = rng.standard_normal((t, ROPE)).astype(d)
    cache = np.zeros((SLOTS + t, LORA + ROPE), d)
    if shape == "decode":
        pos = rng.integers(0, 4096, t).astype(np.int64)
        slots = rng.permutation(SLOTS)[:t].astype(np.int64)
    else:
        pos = np.arange(t, dtype=np.int64)
        slots = np.arange(t, dtype=np.int64)
    return q, c_kv, k_pe, cache, pos, slots


def check(q_before, q, c_kv, k_pe, cache, pos, slots, tol=None):
    """The rotated q and the written cache rows against float64 (relative to the largest value; numpy's float32
    angles get a looser tol)."""
    if tol is None:
        tol = 1e-5 if q.dtype == np.float32 else 1e-2
    y = reference.apply(q_before[..., NOPE:].astype(np.float64), pos, layout="interleaved", scaling=YARN)
    assert np.array_equal(q[..., :NOPE].view(np.uint8), q_before[..., :NOPE].view(np.uint8)), "nope changed"
    err = np.abs(q[..., NOPE:].astype(np.float64) - y).max() / np.abs(y).max()
    assert err < tol, f"q: relative error {err:.3g}"
    k = reference.apply(k_pe.astype(np.float64)[:, None], pos, layout="interleaved", scaling=YARN)[:, 0]
    err = np.abs(cache[slots, LORA:].astype(np.float64) - k).max() / np.abs(k).max()
    assert err < tol, f"k_pe: relative error {err:.3g}"
    assert np.array_equal(cache[slots, :LORA], c_kv), "c_kv rows differ"


def numpy_mla(q, c_kv, k_pe, cache, pos, slots, inv_freq):
    """The unfused sequence in numpy float32: DeepSeek's interleaved rotation, then the copies."""
    ang = pos[:, None].astype(np.float32) * inv_freq
    cos, sin = np.cos(ang), np.sin(ang)

    def rotate(x, c, s):
        x = x.astype(np.float32)
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = b * c + a * s
        return out

    q[..., NOPE:] = rotate(q[..., NOPE:], cos[:, None], sin[:, None])
    cache[slots, LORA:] = rotate(k_pe, cos, sin)
    cache[slots, :LORA] = c_kv


def run_row(lib, shape, dtype, timing, prefetch_rows=16):
    q, c_kv, k_pe, cache, pos, slots = inputs(shape, dtype)
    q_before = q.copy()
    kw = dict(slots=slots, layout="interleaved", scaling=YARN, rope_dim=ROPE)
    # Correctness first: the public call, then the unfused sequence and numpy on copies.
    rope_mlir.apply_mla(q, c_kv, k_pe, cache, pos, out=q, **kw)
    check(q_before, q, c_kv, k_pe, cache, pos, slots)

    t = SHAPES[shape]
    rows3 = cache.reshape(-1, 1, LORA + ROPE)
    attrs = rope_mlir.scaling_attributes(YARN, head_dim=ROPE)
    config = mla.MLAConfig(dtype=dtype, freqs=attrs.freqs, magnitude=attrs.magnitude,
                           prefetch_rows=prefetch_rows)
    kernel = mla.compile_mla(config)
    fns = {"fused raw": _raw(kernel._function, [q, c_kv.reshape(t, 1, LORA), k_pe.reshape(t, 1, ROPE),
                                                rows3, pos, slots])}
    fns["fused call"] = lambda: rope_mlir.apply_mla(q, c_kv, k_pe, cache, pos, out=q, **kw)

    # Unfused: our own plain rotation kernel, contiguous temporaries, numpy copies.
    k_rope = rope_mlir.compile(dtype=dtype, rank=3, head_dim=ROPE, layout="interleaved", rotary_dim=None,
                               freqs=attrs.freqs, magnitude=attrs.magnitude, positions="explicit")
    q_tmp, q_rot = np.empty((t, H, ROPE), q.dtype), np.empty((t, H, ROPE), q.dtype)
    k_in, k_rot = k_pe.reshape(t, 1, ROPE), np.empty((t, 1, ROPE), q.dtype)
    rotate_q = _raw(k_rope._function, [q_tmp, pos, q_rot])
    rotate_k = _raw(k_rope._function, [k_in, pos, k_rot])

    def unfused():
        q_tmp[...] = q[..., NOPE:]
        rotate_q()
        q[..., NOPE:] = q_rot
        rotate_k()
        cache[slots, LORA:] = k_rot[:, 0]
        cache[slots, :LORA] = c_kv
    fns["unfused"] = unfused

    # The unfused sequence and numpy, checked the same way (on fresh copies).
    q_save = q.copy()
    q[...] = q_before
    unfused()
    check(q_before, q, c_kv, k_pe, cache, pos, slots)
    q[...] = q_save
    qc, cc = q_before.copy(), np.zeros_like(cache)
    inv_freq = np.asarray(reference.inv_frequencies(ROPE, 10000.0, YARN)[0], np.float32)
    numpy_mla(qc, c_kv, k_pe, cc, pos, slots, inv_freq)
    check(q_before, qc, c_kv, k_pe, cc, pos, slots, tol=1e-2)
    fns["numpy"] = lambda: numpy_mla(qc, c_kv, k_pe, cc, pos, slots, inv_freq)

    item = q.dtype.itemsize
    moved_in = (t * H * ROPE + t * (LORA + ROPE)) * item
    moved_out = (t * H * ROPE + t * (LORA + ROPE)) * item
    moved = (moved_in + moved_out) // 2
    fns["copy"] = _fused_report.copy_peer(lib, moved)

    q_peer, cache_peer = q_before.copy(), np.zeros_like(cache)
    c_kv_peer, k_pe_peer = c_kv.copy(), k_pe.copy()
    slot_rows = np.ascontiguousarray(slots, np.int64)
    cache_row = (LORA + ROPE) * item

    def slices():
        lib.slices_in_place_baseline(q_peer.ctypes.data + NOPE * item, t * H, ROPE * item,
                                     (NOPE + ROPE) * item, 0)
        lib.slices_copy_baseline(c_kv_peer.ctypes.data, cache_peer.ctypes.data, t, LORA * item, LORA * item,
                                 cache_row, slot_rows.ctypes.data)
        lib.slices_copy_baseline(k_pe_peer.ctypes.data, cache_peer.ctypes.data + LORA * item, t, ROPE * item,
                                 ROPE * item, cache_row, slot_rows.ctypes.data)
    slices()
    assert (q_peer.view(np.uint8) == q_before.view(np.uint8)).all(), "slices peer changed q"
    peer_rows = cache_peer[slot_rows]
    assert (peer_rows[:, :LORA].view(np.uint8) == c_kv.view(np.uint8)).all() and \
        (peer_rows[:, LORA:].view(np.uint8) == k_pe.view(np.uint8)).all(), "slices peer wrote the wrong rows"
    fns["slices"] = slices
    return _fused_report.measure(fns, timing, unfused="unfused", peers=PEERS)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--dtypes", default="bf16,f32")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--samples", type=int, default=11)
    parser.add_argument("--write-docs", default=None, metavar="FILE")
    parser.add_argument("--prefetch-rows", type=int, default=16,
                        help="MLAConfig.prefetch_rows of the fused raw kernel (0: no prefetch)")
    args = parser.parse_args(argv)
    timing = cpu_bench.Timing(samples=args.samples, min_seconds=0.15, max_seconds=3.0, quiesce=0.0)
    names = ["fused raw", "fused call", "unfused", "numpy", *PEERS]
    rows = {}
    with tempfile.TemporaryDirectory() as workdir:
        lib = cpu_bench.build_baseline(pathlib.Path(workdir))
        for _ in range(args.repeat):
            for dtype in args.dtypes.split(","):
                for shape in args.shapes.split(","):
                    r = run_row(lib, shape, dtype, timing, args.prefetch_rows)
                    rows.setdefault((shape, dtype), []).append(r)
                    print(f"  {shape:8} {dtype:4} " + " ".join(f"{n} {r[n] * 1e6:9.1f}" for n in names),
                          file=sys.stderr, flush=True)
    lines = _fused_report.report("mla_bench", argv, args.repeat, args.samples, ("shape", "dtype"), rows, names,
                                 unfused="unfused", verdicts=False, peers=PEERS)
    print("\n".join(lines))
    if args.write_docs:
        replace_region(pathlib.Path(args.write_docs), lines, BEGIN_MARK, END_MARK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
