#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A/B of one decode step's attention under several rope-to-llvm-cpu option
sets, in the same process and interleaved round by round: for measuring one
codegen change on a machine whose neighbours move the memory bandwidth from
minute to minute (issue 35).

    python3 bench/decode_ab.py 4096 --options contraction-prefetch-rows=0 \\
        --options contraction-prefetch-rows=32
    python3 bench/decode_ab.py 16384 --bf16 --options ... --options ...
    python3 bench/decode_ab.py 4096 --keys-before-rope --queries 4 \\
        --tolerance 1e-5 --options rotate-keys-in-scores=false \\
        --options rotate-keys-in-scores=true
    /work/peers/bin/python bench/decode_ab.py 4096 --hf --options ...

With `--hf`, the step is the (hf) section's Hugging Face Llama-3-8B decode
module instead (a cache of keys before RoPE, rotated by the module each
step), exported by torch-mlir: it needs the peers. `--hf --bf16` is that
layer as the (hf-bf16) section runs it (a bf16 model).

The step is `rope.attention` on Llama-3-8B's shapes as the (bf16) section of
attention_bench.py builds it (Hq 32, Hkv 8, D 128, one query per head against
a cache of L keys already rotated: what a cache of rotated keys, as Hugging
Face's own, hands the kernel; `--queries N` query tokens per head instead of
one; `--keys-before-rope`: a cache of keys before RoPE, which the step
rotates with rope.apply, as the HF module does), compiled by `rope_mlir.jit`'s default pipeline
with each `--options` appended to its rope-to-llvm-cpu options. Prints per
option set the median and minimum thread CPU time per call and the GB/s of K
and V read, and checks that every set gives the same bits as the first (or,
with `--tolerance`, the same output within that relative difference).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import attention_bench  # noqa: E402
import rope_mlir  # noqa: E402
from rope_mlir.compiled import default_pipeline  # noqa: E402


def pipeline_with(options: str) -> str:
    """The default pipeline with `options` after rope-to-llvm-cpu's own (an
    option given twice takes the later value)."""
    base = default_pipeline()
    marker = "rope-to-llvm-cpu{"
    start = base.find(marker)
    end = base.find("}", start)
    if start < 0 or end < 0:
        raise SystemExit(f"default pipeline has no {marker}...}}: {base}")
    return f"{base[:end]} {options}{base[end:]}"


# The step over a cache of keys before RoPE (--keys-before-rope): K rotated
# at positions 0 .. L-1 and the queries at the last ones, by rope.apply, then
# rope.attention ([B, Hkv, G, S, D] queries).
KEYS_BEFORE_ROPE_MODULE = """
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %first = arith.constant {first} : i64
  %qe = tensor.empty() : {q}
  %qr = rope.apply ins(%q : {q}) offset(%first : i64) outs(%qe : {q})
          {{freqs = #rope.default<base = 500000.0>,
           token_dims = array<i64: 0, 3>}} -> {q}
  %ke = tensor.empty() : {kv}
  %kr = rope.apply ins(%k : {kv}) outs(%ke : {kv})
          {{freqs = #rope.default<base = 500000.0>,
           token_dims = array<i64: 0, 2>}} -> {kv}
  %o = tensor.empty() : {q}
  %r = rope.attention ins(%qr, %kr, %v : {q}, {kv}, {kv}) outs(%o : {q})
         attributes {{indexing_maps = [#q, #k, #v, #o], scale = {scale} : f64,
                      query_dim = 3}} -> {q}
  return %r : {q}
}}
"""


def kernel_step(length: int, bf16: bool, element: str, queries: int = 1,
                keys_before_rope: bool = False):
    """The rope.attention decode step on a cache of rotated keys (or, with
    `keys_before_rope`, of keys rotated by the step) and its inputs (q, k,
    v): Llama-3-8B's heads, `queries` query tokens per head, random normal
    values."""
    heads, groups, dim = (attention_bench.HF_KV_HEADS,
                          attention_bench.HF_HEADS // attention_bench.HF_KV_HEADS,
                          attention_bench.HF_DIM)
    q_type = f"tensor<1x{heads}x{groups}x{queries}x{dim}x{element}>"
    kv_type = f"tensor<1x{heads}x{length}x{dim}x{element}>"
    if keys_before_rope:
        text = KEYS_BEFORE_ROPE_MODULE.format(
            q=q_type, kv=kv_type, scale=dim ** -0.5,
            first=max(length - queries, 0))
    else:
        text = attention_bench.BF16_MODULE.format(
            q=q_type, kv=kv_type, scale=dim ** -0.5, causal="")
    rng = np.random.default_rng(0)
    dtype = np.float32
    if bf16:
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    q = rng.standard_normal((1, heads, groups, queries, dim)).astype(dtype)
    k, v = (rng.standard_normal((1, heads, length, dim)).astype(dtype)
            for _ in range(2))
    return text, [q, k, v]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("length", type=int, help="L, the cached keys")
    parser.add_argument("--options", action="append", required=True,
                        help="rope-to-llvm-cpu options of one variant "
                        "(repeat: at least two)")
    parser.add_argument("--bf16", action="store_true", help="bf16 Q, K, V")
    parser.add_argument("--hf", action="store_true",
                        help="the (hf) section's decode module (needs the "
                        "peers: torch, transformers, torch-mlir)")
    parser.add_argument("--keys-before-rope", action="store_true",
                        help="the step rotates a cache of keys before RoPE "
                        "(rope.apply on K and Q, then rope.attention)")
    parser.add_argument("--queries", type=int, default=1,
                        help="query tokens per step (not with --hf)")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="largest difference to the first set's output, "
                        "relative to its largest magnitude, for changes that "
                        "reorder a sum (rotate-keys-in-scores=false against "
                        "the default); 0 (the default): the same bits")
    args = parser.parse_args()
    if args.length < 1 or args.rounds < 1 or len(args.options) < 2:
        parser.error("a positive length and rounds, and two --options")
    if args.queries < 1 or (args.hf and (args.queries != 1 or
                                         args.keys_before_rope)):
        parser.error("--queries must be positive; --hf takes neither it nor "
                     "--keys-before-rope (its module is what it is)")
    if not np.isfinite(args.tolerance) or args.tolerance < 0:
        parser.error("--tolerance must be a finite number >= 0")
    element = "bf16" if args.bf16 else "f32"
    if args.hf:
        missing = attention_bench.hf_missing()
        if missing:
            raise SystemExit(f"--hf needs the peers: {missing}")
        gen = attention_bench.load_generator()
        if args.bf16:
            case = attention_bench.HfBf16Case(gen, "decode", args.length)
            text = case.export(True)
        else:
            case = attention_bench.HfCase(gen, "decode", args.length)
            text = case.export()
        inputs = case.args
        k, v = inputs[1], inputs[2]
    else:
        text, inputs = kernel_step(args.length, args.bf16, element,
                                   args.queries, args.keys_before_rope)
        k, v = inputs[1], inputs[2]
    functions = [rope_mlir.jit(text, pipeline=pipeline_with(o)).function("main")
                 for o in args.options]
    outputs = [np.asarray(f(*inputs)) for f in functions]
    first = outputs[0].astype(np.float64)
    scale = max(float(np.abs(first).max()), 1e-30)
    for options, out in zip(args.options[1:], outputs[1:]):
        if args.tolerance == 0:
            if not np.array_equal(out.view(np.uint8),
                                  outputs[0].view(np.uint8)):
                print(f"FAIL: {options} gives other bits than "
                      f"{args.options[0]}")
                return 1
            continue
        difference = float(np.abs(out.astype(np.float64) - first).max())
        if not difference <= args.tolerance * scale:
            print(f"FAIL: {options} differs from {args.options[0]} by "
                  f"{difference:.3g}, more than {args.tolerance:g} x "
                  f"{scale:.3g}")
            return 1
        print(f"{options}: within {difference / scale:.2g} of "
              f"{args.options[0]} (relative to its largest output)")
    times = [[] for _ in functions]
    for _ in range(args.rounds):
        for f, samples in zip(functions, times):
            start = time.thread_time()
            f(*inputs)
            samples.append(time.thread_time() - start)
    nbytes = k.nbytes + v.nbytes
    kind = ("(hf module) " if args.hf else
            "(keys before RoPE) " if args.keys_before_rope else "")
    queries = f"{args.queries} queries/head, " if args.queries != 1 else ""
    print(f"decode L={args.length} {kind}"
          f"{element}, {queries}K and V {nbytes / 1e6:.1f} MB, "
          f"{args.rounds} interleaved rounds, thread CPU time per call:")
    for options, samples in zip(args.options, times):
        median = float(np.median(samples))
        print(f"  {1e3 * median:8.3f} ms (min {1e3 * min(samples):.3f}), "
              f"{nbytes / median / 1e9:5.1f} GB/s  {options}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
