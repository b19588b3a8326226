#!/usr/bin/env python3
"""Attention scores with RoPE, S = R(q)·R(k)ᵀ: the rotations fused into the
contraction's tile loops (`--rope-fuse-into-attention`) against rotating Q
and K whole first, all measured in the same run (one thread, f32).

    python3 bench/attention_bench.py            # the tables (a few minutes)
    python3 bench/attention_bench.py --quick    # small shapes, few samples
    python3 bench/attention_bench.py --smoke    # tiny shapes (the pytest)

(a) decode: S_q = 1 at a per-row offset, GQA (32 query heads, 8 KV heads,
    D = 128), a K cache of 1K-16K keys stored un-rotated: fused (each key
    tile rotated in the key loop; fuse-key=auto does this when the query
    dim is one tile) vs rope-then-matmul, and vs fusing Q only.
(b) prefill: S_q = S_k = 512-4096, 2 heads, D = 64: fused Q only
    (fuse-key=auto), fused Q and K (fuse-key=always: each key rotated once
    per query tile), unfused, and plain Q·Kᵀ without any rotation.
(c) whole attention softmax(scale·R(q)·R(k)ᵀ + mask)·V: fused into one loop
    nest with an online softmax (whole-attention, the default) vs the same
    IR compiled unfused (whole scores, linalg.softmax decomposed); decode as
    in (a), and causal prefill as in (b).
Times are medians of repeated calls (warm-up excluded) of the compiled
function through ctypes; every output is checked against the unfused one
first. Ratios > 1 mean the fused form is faster.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from rope_mlir.attention import (AttentionConfig, AttentionKernel,  # noqa
                                 ScoresConfig, ScoresKernel)

QUERY_TILE, KEY_TILE = 32, 64


def median_ms(fn, samples: int, min_time: float = 0.2) -> float:
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < samples or (time.perf_counter() - start < min_time
                                   and len(times) < 200):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e6


def measure(config: ScoresConfig, variants: dict, samples: int, rng):
    q = rng.standard_normal(config.q_shape()).astype(np.float32)
    k = rng.standard_normal(config.k_shape()).astype(np.float32)
    offsets = rng.integers(0, 1 << 16, config.batch)
    out = np.empty(config.scores_shape(), np.float32)
    results, reference = {}, None
    for name, (cfg, fuse, options) in variants.items():
        kernel = ScoresKernel(cfg, fuse, query_tile=QUERY_TILE,
                              key_tile=KEY_TILE, **options)
        got = kernel(q, k, offsets).copy()
        if cfg.rotate:
            if reference is None:
                reference = got
            elif np.abs(got - reference).max() > 1e-5 * np.abs(
                    reference).max():
                sys.exit(f"{name}: output differs from the unfused one")
        results[name] = median_ms(lambda: kernel(q, k, offsets, out=out),
                                  samples)
    return results


def measure_attention(config: AttentionConfig, samples: int, rng,
                      fuse_key: str = "auto"):
    q = rng.standard_normal(config.q_shape()).astype(np.float32)
    k = rng.standard_normal(config.k_shape()).astype(np.float32)
    v = rng.standard_normal(config.v_shape()).astype(np.float32)
    offsets = rng.integers(0, 1 << 16, config.batch)
    extra = {}
    if config.mask:
        m = np.arange(config.q_len)[:, None] + (config.kv_len - config.q_len)
        extra["mask"] = np.where(np.arange(config.kv_len)[None, :] <= m, 0.0,
                                 -np.inf).astype(np.float32)
    out = np.empty(config.out_shape(), np.float32)
    kernels = {"fused": AttentionKernel(config, True, query_tile=QUERY_TILE,
                                        key_tile=KEY_TILE, fuse_key=fuse_key),
               "unfused": AttentionKernel(config, False)}
    got = {name: kernel(q, k, v, offsets, **extra).copy()
           for name, kernel in kernels.items()}
    if np.abs(got["fused"] - got["unfused"]).max() > 1e-5 * max(
            np.abs(got["unfused"]).max(), 1.0):
        sys.exit("whole attention: fused output differs from the unfused one")
    return {name: median_ms(lambda: kernel(q, k, v, offsets, out=out,
                                           **extra), samples)
            for name, kernel in kernels.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    samples = 3 if args.quick or args.smoke else 9

    decode_lens = [1024, 4096] if args.quick else [1024, 4096, 16384]
    prefill_lens = [256, 512] if args.quick else [512, 1024, 2048, 4096]
    if args.smoke:
        decode_lens, prefill_lens = [100], [40]
    rows = []

    print(f"# attention_bench: {platform.machine()}, one thread, f32, "
          f"query tile {QUERY_TILE}, key tile {KEY_TILE}")
    header = ("(a) decode, B=1, Hq=32, Hkv=8, D=128 | S_k | fused ms | "
              "Q-only ms | unfused ms | unfused/fused | Q-only/fused")
    print(header)
    for kv in decode_lens:
        c = ScoresConfig(1, 32, 8, 1, kv, 128, layout="bhsd")
        r = measure(c, {
            "fused": (c, True, dict(fuse_key="auto")),
            "qonly": (c, True, dict(fuse_key="never")),
            "unfused": (c, False, {}),
        }, samples, rng)
        line = (f"decode | {kv} | {r['fused']:.3f} | {r['qonly']:.3f} | "
                f"{r['unfused']:.3f} | {r['unfused'] / r['fused']:.2f} | "
                f"{r['qonly'] / r['fused']:.2f}")
        print(line, flush=True)
        rows.append(line)

    print("(b) prefill, B=1, H=2, D=64 | S | fused Q ms | fused Q+K ms | "
          "unfused ms | plain QK^T ms | unfused/fused Q | unfused/fused Q+K | "
          "plain/fused Q")
    for s in prefill_lens:
        c = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd")
        plain = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd", rotate=False)
        r = measure(c, {
            "fused_q": (c, True, dict(fuse_key="auto")),
            "fused_qk": (c, True, dict(fuse_key="always")),
            "unfused": (c, False, {}),
            "plain": (plain, False, {}),
        }, max(3, samples // 3), rng)
        line = (f"prefill | {s} | {r['fused_q']:.2f} | {r['fused_qk']:.2f} | "
                f"{r['unfused']:.2f} | {r['plain']:.2f} | "
                f"{r['unfused'] / r['fused_q']:.2f} | "
                f"{r['unfused'] / r['fused_qk']:.2f} | "
                f"{r['plain'] / r['fused_q']:.2f}")
        print(line, flush=True)
        rows.append(line)

    print("(c) whole attention, fused (online softmax) vs unfused | case | "
          "fused ms | unfused ms | unfused/fused")
    for kv in decode_lens:
        c = AttentionConfig(1, 32, 8, 1, kv, 128, layout="bhsd",
                            scale=128 ** -0.5)
        r = measure_attention(c, samples, rng)
        line = (f"attention decode Hq=32 Hkv=8 D=128 | S_k={kv} | "
                f"{r['fused']:.3f} | {r['unfused']:.3f} | "
                f"{r['unfused'] / r['fused']:.2f}")
        print(line, flush=True)
        rows.append(line)
    for s in prefill_lens[:3]:
        c = AttentionConfig(1, 2, 2, s, s, 64, layout="bhsd",
                            scale=64 ** -0.5, mask=True)
        r = measure_attention(c, max(3, samples // 3), rng)
        line = (f"attention prefill causal H=2 D=64 | S={s} | "
                f"{r['fused']:.2f} | {r['unfused']:.2f} | "
                f"{r['unfused'] / r['fused']:.2f}")
        print(line, flush=True)
        rows.append(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
