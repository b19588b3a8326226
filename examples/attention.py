#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""RoPE fused into attention, end to end on the CPU.

Builds softmax(scale·R(q)·R(k)ᵀ + mask)·V as MLIR (rope.apply on Q and K,
a Q·Kᵀ contraction, a causal mask, linalg.softmax, ·V), compiles it twice
through the JIT — with `rope-fuse-into-attention` (one loop nest, online
softmax, each K tile rotated just before use, masked tiles skipped) and
without — runs both on random inputs, and checks them against a float64
numpy reference. Prints the fused loop nest's shape and the timings.

    python3 examples/attention.py            # GQA decode + causal prefill
    python3 examples/attention.py --small    # tiny shapes (the pytest)
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from rope_mlir import _jit  # noqa: E402
from rope_mlir.attention import (AttentionConfig, AttentionKernel,  # noqa: E402
                                 attention_reference)


def best_ms(fn, repeats: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def run(name: str, config: AttentionConfig, rng) -> float:
    q = rng.standard_normal(config.q_shape()).astype(np.float32)
    k = rng.standard_normal(config.k_shape()).astype(np.float32)
    v = rng.standard_normal(config.v_shape()).astype(np.float32)
    offsets = np.full(config.batch, config.kv_len - config.q_len)
    extra = {}
    if config.mask:  # causal, the queries being the last q_len tokens
        last = np.arange(config.q_len)[:, None] + config.kv_len - config.q_len
        extra["mask"] = np.where(np.arange(config.kv_len)[None, :] <= last,
                                 0.0, -np.inf).astype(np.float32)

    fused = AttentionKernel(config, True)
    unfused = AttentionKernel(config, False)
    ref = attention_reference(config, q, k, v, offsets, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    error = {}
    for label, kernel in (("fused", fused), ("unfused", unfused)):
        got = kernel(q, k, v, offsets, **extra)
        error[label] = np.abs(got - ref).max() / scale

    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention, "
                    "canonicalize)")
    ops = [line.strip().split(" = ", 1)[-1].split(" ")[0]
           for line in ir.splitlines()]
    ops = [op for op in ops
           if op in ("scf.forall", "scf.for", "scf.if", "rope.apply")]
    print(f"== {name}: q {config.q_shape()}, k {config.k_shape()}")
    print(f"   fused IR, in order: {', '.join(ops)}")
    print(f"   max error vs float64 (relative to max |out|): fused "
          f"{error['fused']:.1e}, unfused {error['unfused']:.1e}")
    t_fused = best_ms(lambda: fused(q, k, v, offsets, **extra))
    t_unfused = best_ms(lambda: unfused(q, k, v, offsets, **extra))
    print(f"   one thread: fused {t_fused:.3f} ms, unfused {t_unfused:.3f} ms"
          f" ({t_unfused / t_fused:.2f}x)")
    return max(error.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    # The small decode has several key tiles of decode-key-tile-size (256).
    kv, s = (600, 100) if args.small else (4096, 1024)
    cases = [
        ("decode, GQA 32/8 heads, un-rotated K cache",
         AttentionConfig(1, 32, 8, 1, kv, 128, layout="bhsd",
                         scale=128 ** -0.5)),
        ("causal prefill, 2 heads",
         AttentionConfig(1, 2, 2, s, s, 64, layout="bhsd", scale=64 ** -0.5,
                         mask=True)),
    ]
    worst = max(run(name, config, rng) for name, config in cases)
    ok = worst <= 1e-5
    print("ATTENTION OK" if ok else f"ATTENTION FAILED: error {worst:.1e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
