#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Q and K rotated together (issue 18): rope_mlir.apply_qk's fused kernel vs the unfused sequence.

    python3 bench/fused_bench.py                 # every row, f32, single thread (~1.5 min)
    python3 bench/fused_bench.py --repeat 3      # three runs, then the medians

Llama-3-8B-like shapes, f32, explicit i64 positions, half layout, base 500000, 1 thread:
  decode   q [64, 1, 32, 128], k [64, 1, 8, 128]     (B = 64 rows, one token each)
  prefill  q [1, 4096, 32, 128], k [1, 4096, 8, 128]
  prefill-BHSD  q [1, 32, 4096, 128], k [1, 8, 4096, 128] (Hugging Face's order, token dims (0, 2): the tiled
           form, one cos/sin table per tile for both)

Per row, in interleaved rounds (bench/cpu_bench.py's measure_interleaved), medians of:
  qk call      rope_mlir.apply_qk(q, k, pos, out_q=, out_k=)      (public, every argument checked)
  qk raw       its compiled function through ctypes, prebuilt descriptors (one token loop, one cos/sin
               per token for both)
  2x call      rope_mlir.apply(q, ...) then rope_mlir.apply(k, ...)   (the unfused public sequence)
  2x raw       the two compiled single-tensor kernels through ctypes (cos/sin computed twice per token)
  numpy        Hugging Face's formula: cos/sin from positions once, q*cos + rotate_half(q)*sin and the
               same for k (float32, numpy)
and the ratio unfused/fused for raw kernels (target >= 1.3) and for the public calls; then `cold qk`, `cold 2x`
and their ratio: the two raw forms each called alone after a read of twice the last-level cache
(cpu_bench.measure_cold), so q and k come from memory. Outputs are checked
bitwise against each other and against the float64 reference first.
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import statistics
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))

import cpu_bench  # noqa: E402
import rope_mlir  # noqa: E402
from rope_mlir import _jit, reference  # noqa: E402

HQ, HKV, D, BASE = 32, 8, 128, 500000.0
SHAPES = {"decode": (64, 1), "prefill": (1, 4096), "prefill-BHSD": (1, 4096)}


def _raw(function, arrays):
    descriptors = [_jit.memref_descriptor(a) for a in arrays]
    addresses = [ctypes.addressof(d) for d in descriptors]

    def run(function=function, addresses=addresses, keep=(arrays, descriptors)):
        function(*addresses)
    return run


def _numpy_hf(q, k, pos, inv_freq, oq, ok, bhsd=False):
    """transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb in numpy f32."""
    freqs = pos[..., None].astype(np.float32) * inv_freq          # [B, S, D/2]
    emb = np.concatenate([freqs, freqs], axis=-1)
    axis = 1 if bhsd else 2  # the heads' axis, broadcast
    cos, sin = np.expand_dims(np.cos(emb), axis), np.expand_dims(np.sin(emb), axis)
    half = D // 2

    def rotate_half(x):
        return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    np.add(q * cos, rotate_half(q) * sin, out=oq)
    np.add(k * cos, rotate_half(k) * sin, out=ok)


def run_row(name: str, timing) -> dict:
    b, s = SHAPES[name]
    bhsd = name.endswith("BHSD")
    rng = np.random.default_rng(0)
    q = rng.standard_normal((b, HQ, s, D) if bhsd else (b, s, HQ, D)).astype(np.float32)
    k = rng.standard_normal((b, HKV, s, D) if bhsd else (b, s, HKV, D)).astype(np.float32)
    pos = (rng.integers(0, 8192, (b, 1)) if name == "decode" else np.arange(s)[None]).astype(np.int64)
    oq, ok, oq2, ok2 = (np.empty_like(a) for a in (q, k, q, k))
    kw = dict(base=BASE, threads=1, token_dims=(0, 2) if bhsd else None)

    # Correctness first: fused == unfused bitwise, both near the float64 reference.
    rq, rk = rope_mlir.apply_qk(q, k, pos, out_q=oq, out_k=ok, **kw)
    np.testing.assert_array_equal(rq, rope_mlir.apply(q, pos, out=oq2, **kw))
    np.testing.assert_array_equal(rk, rope_mlir.apply(k, pos, out=ok2, **kw))
    for x, got in ((q, rq), (k, rk)):
        ref = reference.apply(x, pos, base=BASE, token_dims=kw["token_dims"])
        err = np.abs(got - ref).max() / np.abs(ref).max()
        assert err < 1e-6, f"{name}: relative error {err:.3g}"

    config = rope_mlir.KernelConfig(dtype="f32", rank=4, head_dim=D, base=BASE, positions="explicit",
                                    threads=1, token_dims=kw["token_dims"])
    single = rope_mlir.compile(config)
    pair = rope_mlir.compile_qk(config)
    inv_freq = (1.0 / BASE ** (np.arange(0, D, 2) / D)).astype(np.float32)
    raw_q, raw_k = _raw(single._function, (q, pos, oq2)), _raw(single._function, (k, pos, ok2))
    fns = {
        "qk call": lambda: rope_mlir.apply_qk(q, k, pos, out_q=oq, out_k=ok, **kw),
        "qk raw": _raw(pair._pair, (q, pos, oq, k, ok)),
        "2x call": lambda: (rope_mlir.apply(q, pos, out=oq2, **kw), rope_mlir.apply(k, pos, out=ok2, **kw)),
        "2x raw": lambda: (raw_q(), raw_k()),
        "numpy": lambda: _numpy_hf(q, k, pos, inv_freq, oq2, ok2, bhsd),
    }
    result = {name: stat.median for name, stat in cpu_bench.measure_interleaved(fns, timing).items()}
    global _flusher
    if _flusher is None:
        _flusher = cpu_bench.CacheFlusher()
    cold = cpu_bench.measure_cold({"qk raw": fns["qk raw"], "2x raw": fns["2x raw"]}, timing.samples, _flusher)
    result.update({f"cold {name}": stat.median for name, stat in cold.items()})
    return result


_flusher = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default=",".join(SHAPES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--samples", type=int, default=21)
    args = parser.parse_args()
    timing = cpu_bench.Timing(samples=args.samples, min_seconds=0.3, max_seconds=3.0, quiesce=0.0)
    cpu = cpu_bench.lscpu_fields().get("Model name", "unknown CPU")
    print(f"CPU: {cpu}; single thread; median of {args.repeat} run(s) of {args.samples} interleaved rounds")
    print(f"q [B, S, {HQ}, {D}] + k [B, S, {HKV}, {D}] f32, explicit positions, half, base {BASE:g}")
    names = ["qk call", "qk raw", "2x call", "2x raw", "numpy"]
    print(f"{'row':12} " + " ".join(f"{n:>10}" for n in names) + f" {'2x/qk raw':>10} {'2x/qk call':>10}"
          f" {'cold qk':>10} {'cold 2x':>10} {'cold 2x/qk':>10}")
    for row in args.rows.split(","):
        runs = [run_row(row, timing) for _ in range(args.repeat)]
        med = {n: statistics.median(r[n] for r in runs) for n in names}
        raw_ratio = statistics.median(r["2x raw"] / r["qk raw"] for r in runs)
        call_ratio = statistics.median(r["2x call"] / r["qk call"] for r in runs)
        cold = {n: statistics.median(r[f"cold {n}"] for r in runs) for n in ("qk raw", "2x raw")}
        cold_ratio = statistics.median(r["cold 2x raw"] / r["cold qk raw"] for r in runs)
        print(f"{row:12} " + " ".join(f"{med[n] * 1e6:8.1f}us" for n in names) +
              f" {raw_ratio:10.2f} {call_ratio:10.2f} {cold['qk raw'] * 1e6:8.1f}us {cold['2x raw'] * 1e6:8.1f}us"
              f" {cold_ratio:10.2f}")


if __name__ == "__main__":
    main()
