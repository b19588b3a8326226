#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Thread CPU time per call of the Hugging Face Llama-3-8B attention layer
of `attention_bench.py --sections hf`, compiled by `rope_mlir.jit`: for
measuring one kernel change at a time on a machine that is not quiet (the
CPU time of the calling thread moves far less with other load than the wall
time; it still shares caches and, with SMT, execution units).

    /work/peers/bin/python bench/hf_module_time.py prefill 1024
    /work/peers/bin/python bench/hf_module_time.py decode 4096 --calls 41
    ... --pipeline 'builtin.module(rope-optimize, rope-to-llvm-cpu{...})'
    ... --bf16      the layer as the (hf-bf16) section runs it (bf16 model)

Needs the peers (torch, transformers, torch-mlir) to export the module.
Prints the compile time, the median and minimum thread CPU time and wall time
per call, and the largest difference to the float64 reference where the
bench computes one.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("prefill", "decode"))
    parser.add_argument("length", type=int, help="S (prefill) or L (decode)")
    parser.add_argument("--calls", type=int, default=7)
    parser.add_argument("--pipeline", default=None,
                        help="rope_mlir.jit's pipeline (default: its own)")
    parser.add_argument("--bf16", action="store_true",
                        help="the bf16 layer of the (hf-bf16) section")
    args = parser.parse_args()
    if args.length < 1 or args.calls < 1:
        parser.error("length and --calls must be positive")
    gen = attention_bench.load_generator()
    if args.bf16:
        case = attention_bench.HfBf16Case(gen, args.kind, args.length)
        text = case.export(True)
    else:
        case = attention_bench.HfCase(gen, args.kind, args.length)
        text = case.export()
    start = time.perf_counter()
    program = rope_mlir.jit(text, pipeline=args.pipeline)
    main_fn = program.function("main")
    out = np.asarray(main_fn(*case.args))
    compile_s = time.perf_counter() - start
    cpu, wall = [], []
    for _ in range(args.calls):
        t0, c0 = time.perf_counter(), time.thread_time()
        main_fn(*case.args)
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - t0)
    if args.bf16:
        reference, name = case.reference()
        reference = reference if name == "float64" else None
    else:
        reference = case.float64_reference()
    error = ("n/a" if reference is None else
             f"{np.abs(out.astype(np.float64) - reference).max():.1e}")
    print(f"{case.label}: compile {compile_s:.1f} s; CPU time per call "
          f"median {1e3 * np.median(cpu):.2f} ms, min {1e3 * min(cpu):.2f} "
          f"ms; wall median {1e3 * np.median(wall):.2f} ms; max error vs "
          f"float64 {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
