#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Rewrites every `gpu.launch` of an MLIR file into two nested `scf.parallel`
loops (blocks, then threads) so that the kernel body runs on the CPU. Valid
for kernels without barriers or shared memory, which is what
convert-rope-to-gpu emits: every thread is independent, so any order of
execution computes the same result. Used to execute the GPU lowering's
indexing and arithmetic where there is no GPU
(python/tests/numerics/test_gpu_emulation.py imports `emulate`).

usage: emulate_launch.py < in.mlir > out.mlir"""

import re
import sys

LAUNCH = re.compile(
    r"gpu\.launch blocks\((%\w+), (%\w+), (%\w+)\) in \((%\w+) = (%\w+), (%\w+) = (%\w+), (%\w+) = (%\w+)\) "
    r"threads\((%\w+), (%\w+), (%\w+)\) in \((%\w+) = (%\w+), (%\w+) = (%\w+), (%\w+) = (%\w+)\) \{"
)


def emulate(text: str) -> tuple:
    """Returns (the rewritten module, how many launches were rewritten)."""
    out = []
    count = 0
    pos = 0
    for m in LAUNCH.finditer(text):
        g = m.groups()
        blocks, grid_args, grid = g[0:3], g[3:9:2], g[4:9:2]
        threads, block_args, block = g[9:12], g[12:18:2], g[13:18:2]
        # The body runs until the matching gpu.terminator.
        end = text.index("gpu.terminator", m.end())
        body = text[m.end():end]
        for arg, value in zip(grid_args + block_args, grid + block):
            body = re.sub(re.escape(arg) + r"\b", value, body)
        zero, one = f"%emu_c0_{count}", f"%emu_c1_{count}"
        count += 1
        out.append(text[pos:m.start()])
        out.append(
            f"{zero} = arith.constant 0 : index\n{one} = arith.constant 1 : index\n"
            f"scf.parallel ({', '.join(blocks)}) = ({zero}, {zero}, {zero}) to ({', '.join(grid)}) step ({one}, {one}, {one}) {{\n"
            f"scf.parallel ({', '.join(threads)}) = ({zero}, {zero}, {zero}) to ({', '.join(block)}) step ({one}, {one}, {one}) {{"
        )
        out.append(body)
        out.append("}\n")  # closes the thread loop; the launch's `}` closes the block loop
        pos = end + len("gpu.terminator")
    out.append(text[pos:])
    return "".join(out), count


if __name__ == "__main__":
    sys.stdout.write(emulate(sys.stdin.read())[0])
