#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The attention kernels of rope_mlir.attention (AttentionKernel, the public
kernel path) under their pipeline, attention.pipeline(), against the
pipeline they had before 5986b50 (rope-fuse-into-attention without
share-key-rotation, peel-key-tiles and decode-key-splits, rope-to-llvm-cpu
without this CPU's vector widths): the same process, interleaved round by
round, wall time per call (the threads' work included), the outputs
checked against each other.

    python3 bench/attention_kernel_ab.py [--rounds N] [--quick]

Shapes: Llama-3-8B's heads (Hq 32, Hkv 8, D 128), one batch; decode (one
query against L rotated-at-call keys) on 1 and 2 threads; prefill (S
queries, a causal [S, S] mask argument) on 1 thread.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from rope_mlir import _kernel_path, attention  # noqa: E402
from rope_mlir.attention import AttentionConfig, AttentionKernel  # noqa: E402


def before_pipeline(threads: int) -> str:
    """attention.pipeline(True, threads=threads) as it was before 5986b50."""
    return _kernel_path.cpu_pipeline(
        "rope-fuse-into-attention{query-tile-size=32 key-tile-size=64 "
        "fuse-key=auto parallel-loops=true}, ", vectorize=True,
        num_threads=threads)


class PipelineKernel(AttentionKernel):
    """AttentionKernel compiled by another pipeline (its checks and call)."""

    def __init__(self, config: AttentionConfig, pipeline: str):
        self.config = config
        self._specs = attention.arg_specs(config)
        self._compiled = _kernel_path.CompiledKernel(
            attention.emit_attention(config), pipeline, "attention",
            self._specs)


def case(kind: str, length: int, threads: int, rounds: int):
    queries = 1 if kind == "decode" else length
    config = AttentionConfig(batch=1, q_heads=32, kv_heads=8, q_len=queries,
                             kv_len=length, head_dim=128,
                             scale=128 ** -0.5, mask=kind == "prefill")
    rng = np.random.default_rng(length)
    q = rng.standard_normal((1, 32, queries, 128)).astype(np.float32)
    k, v = (rng.standard_normal((1, 8, length, 128)).astype(np.float32)
            for _ in range(2))
    extra = {}
    if kind == "prefill":
        extra["mask"] = np.triu(np.full((queries, length), -np.inf,
                                        np.float32), 1)
    offsets = np.array([length - queries], np.int64)
    kernels = {"before": PipelineKernel(config, before_pipeline(threads)),
               "now": AttentionKernel(config, True, threads=threads)}
    outs = {n: f(q, k, v, offsets, **extra) for n, f in kernels.items()}
    scale = max(float(np.abs(outs["before"]).max()), 1e-30)
    difference = float(np.abs(outs["now"] - outs["before"]).max()) / scale
    if not difference <= 1e-5:
        raise SystemExit(f"FAIL: {kind} {length} T={threads}: outputs differ "
                         f"by {difference:.3g} (relative)")
    times = {n: [] for n in kernels}
    for _ in range(rounds):
        for n, f in kernels.items():
            start = time.perf_counter()
            f(q, k, v, offsets, **extra)
            times[n].append(time.perf_counter() - start)
    before, now = (float(np.median(times[n])) for n in ("before", "now"))
    print(f"| {kind} {'L' if kind == 'decode' else 'S'}={length} | {threads} "
          f"| {before * 1e3:.3f} ms | {now * 1e3:.3f} ms | "
          f"{before / now:.2f}x | {difference:.1e} |", flush=True)


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--quick", action="store_true",
                        help="one decode and one prefill row, 5 rounds")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    rows = [("decode", 1024, 1), ("decode", 4096, 1), ("decode", 16384, 1),
            ("decode", 4096, 2), ("decode", 16384, 2), ("prefill", 512, 1),
            ("prefill", 1024, 1)]
    rounds = args.rounds
    if args.quick:
        rows, rounds = [("decode", 1024, 1), ("prefill", 128, 1)], 5
    print(f"machine: {cpu_name()}, "
          f"{rounds} interleaved rounds, median wall time per call")
    print("| case | threads | before 5986b50 | now | speedup | "
          "max difference (relative) |")
    print("|---|---|---|---|---|---|")
    for kind, length, threads in rows:
        case(kind, length, threads, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
