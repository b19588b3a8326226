#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A/B of one decode step's attention under several rope-to-llvm-cpu option
sets, in the same process and interleaved round by round: for measuring one
codegen change on a machine whose neighbours move the memory bandwidth from
minute to minute (issue 35).

    python3 bench/decode_ab.py 4096 --options contraction-prefetch-rows=0 \\
        --options contraction-prefetch-rows=32
    python3 bench/decode_ab.py 16384 --bf16 --options ... --options ...
    /work/peers/bin/python bench/decode_ab.py 4096 --hf --options ...

With `--hf`, the step is the (hf) section's Hugging Face Llama-3-8B decode
module instead (a cache of keys before RoPE, rotated by the module each
step), exported by torch-mlir: it needs the peers. `--hf --bf16` is that
layer as the (hf-bf16) section runs it (a bf16 model).

The step is `rope.attention` on Llama-3-8B's shapes as the (bf16) section of
attention_bench.py builds it (Hq 32, Hkv 8, D 128, one query per head against
a cache of L keys already rotated: what a cache of rotated keys, as Hugging
Face's own, hands the kernel), compiled by `rope_mlir.jit`'s default pipeline
with each `--options` appended to its rope-to-llvm-cpu options. Prints per
option set the median and minimum thread CPU time per call and the GB/s of K
and V read, and checks that every set gives the same bits as the first.
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


def kernel_step(length: int, bf16: bool, element: str):
    """The rope.attention decode step on a cache of rotated keys and its
    inputs (q, k, v): Llama-3-8B's heads, random normal values."""
    heads, groups, dim = (attention_bench.HF_KV_HEADS,
                          attention_bench.HF_HEADS // attention_bench.HF_KV_HEADS,
                          attention_bench.HF_DIM)
    text = attention_bench.BF16_MODULE.format(
        q=f"tensor<1x{heads}x{groups}x1x{dim}x{element}>",
        kv=f"tensor<1x{heads}x{length}x{dim}x{element}>",
        scale=dim ** -0.5, causal="")
    rng = np.random.default_rng(0)
    dtype = np.float32
    if bf16:
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    q = rng.standard_normal((1, heads, groups, 1, dim)).astype(dtype)
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
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    if args.length < 1 or args.rounds < 1 or len(args.options) < 2:
        parser.error("a positive length and rounds, and two --options")
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
        text, inputs = kernel_step(args.length, args.bf16, element)
        k, v = inputs[1], inputs[2]
    functions = [rope_mlir.jit(text, pipeline=pipeline_with(o)).function("main")
                 for o in args.options]
    outputs = [np.asarray(f(*inputs)) for f in functions]
    for options, out in zip(args.options[1:], outputs[1:]):
        if not np.array_equal(out.view(np.uint8), outputs[0].view(np.uint8)):
            print(f"FAIL: {options} gives other bits than {args.options[0]}")
            return 1
    times = [[] for _ in functions]
    for _ in range(args.rounds):
        for f, samples in zip(functions, times):
            start = time.thread_time()
            f(*inputs)
            samples.append(time.thread_time() - start)
    nbytes = k.nbytes + v.nbytes
    print(f"decode L={args.length} {'(hf module) ' if args.hf else ''}"
          f"{element}, K and V {nbytes / 1e6:.1f} MB, "
          f"{args.rounds} interleaved rounds, thread CPU time per call:")
    for options, samples in zip(args.options, times):
        median = float(np.median(samples))
        print(f"  {1e3 * median:8.3f} ms (min {1e3 * min(samples):.3f}), "
              f"{nbytes / median / 1e9:5.1f} GB/s  {options}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
