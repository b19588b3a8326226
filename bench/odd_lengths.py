# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Causal prefill at sequence lengths that are not multiples of the tiles.

    python3 bench/odd_lengths.py 512 511 500 496 480 [--calls 7]

rope.attention on Llama-3-8B's shapes (Hq 32, Hkv 8, D 128, [B, Hkv, G, S, D]),
causal, f32 and bf16 Q, K, V, one thread, `rope_mlir.jit`'s default pipeline.
For each length: the median thread CPU time of `--calls` calls, and that time
per S² relative to the first length's (the work grows as S², so 1.00 means
a length costs what its work says; above 1.00 is what the partial query and
key tiles cost beyond their work). Every output is checked against float64
on one KV head before timing. Results: docs/PERFORMANCE.md, "Sequence lengths
that are not multiples of the tiles".
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# The (bf16) section's module and Llama-3-8B's attention shapes.
from attention_bench import BF16_MODULE as MODULE  # noqa: E402
from attention_bench import HF_DIM as DIM  # noqa: E402
from attention_bench import HF_HEADS as HEADS  # noqa: E402
from attention_bench import HF_KV_HEADS as KV_HEADS  # noqa: E402


def reference(q, k, v):
    """float64 causal attention of KV head 0."""
    q, k, v = (np.asarray(x[0, 0], np.float64) for x in (q, k, v))
    tokens = k.shape[0]
    scores = np.einsum("gmd,nd->gmn", q, k) * DIM ** -0.5
    scores += np.triu(np.full((tokens, tokens), -np.inf), 1)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    return np.einsum("gmn,nd->gmd", p / p.sum(-1, keepdims=True), v)


def time_length(tokens: int, dtype, element: str, calls: int) -> float:
    import rope_mlir
    group = HEADS // KV_HEADS
    text = MODULE.format(
        q=f"tensor<1x{KV_HEADS}x{group}x{tokens}x{DIM}x{element}>",
        kv=f"tensor<1x{KV_HEADS}x{tokens}x{DIM}x{element}>",
        scale=DIM ** -0.5, causal="causal, ")
    f = rope_mlir.jit(text).function("main")
    rng = np.random.default_rng(tokens)
    q = rng.standard_normal((1, KV_HEADS, group, tokens, DIM)).astype(dtype)
    k, v = (rng.standard_normal((1, KV_HEADS, tokens, DIM)).astype(dtype)
            for _ in range(2))
    got = np.asarray(f(q, k, v), np.float64)[0, 0]
    want = reference(q, k, v)
    # f32: accumulation error; bf16: half an ulp of the bf16 output.
    bound = 1e-5 if element == "f32" else 2.0 ** -8 * np.abs(want) + 1e-5
    if not (np.abs(got - want) <= bound).all():
        raise SystemExit(f"wrong output: {element} S={tokens}")
    times = []
    for _ in range(calls):
        start = time.thread_time()
        f(q, k, v)
        times.append(time.thread_time() - start)
    return float(np.median(times)) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lengths", nargs="+", type=int)
    parser.add_argument("--calls", type=int, default=7)
    args = parser.parse_args()
    if any(n < 1 for n in args.lengths) or args.calls < 1:
        parser.error("lengths and --calls must be positive")
    import ml_dtypes
    print("| S | f32 ms | f32 per S² (vs first) | bf16 ms | bf16 per S² "
          "(vs first) |")
    print("|---|---|---|---|---|")
    first = {}
    for tokens in args.lengths:
        cells = [str(tokens)]
        for dtype, element in ((np.float32, "f32"),
                               (ml_dtypes.bfloat16, "bf16")):
            ms = time_length(tokens, dtype, element, args.calls)
            per = ms / tokens ** 2
            first.setdefault(element, per)
            cells += [f"{ms:.1f}", f"{per / first[element]:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
