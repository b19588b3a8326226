#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generates the kernels bench/gpu/run.sh times on a GPU machine.

Runs here (where rope-opt and LLVM/MLIR 22 are): for every configuration
below, writes a function with one rope.apply, lowers it with
`rope-opt --rope-to-nvvm="chip=sm_90 kernel-bare-ptr=true"`, extracts the
PTX, and records in bench/gpu/artifacts/manifest.txt how to launch it: the
kernel's name, its grid and block (the outlined gpu.func's known sizes) and
the role of each parameter in order (bare pointers, plus the i64 offset).

usage: python3 bench/gpu/prepare.py [--rope-opt build/bin/rope-opt]
                                    [--shape B,S,H,D] [--chip sm_90]
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from extract_ptx import binaries  # noqa: E402

# name, dtype, layout, rotary dim (0: D), form
#   pos:    positions [B, S] i64, x [B, S, H, D]
#   cache:  positions [B, S] i64, cos/sin caches [M, P/2] f32, x [B, S, H, D]
#   bhsd:   scalar i64 offset (pos = offset + s), x [B, H, S, D]
CONFIGS = [
    ("half_f32", "f32", "half", 0, "pos"),
    ("half_f16", "f16", "half", 0, "pos"),
    ("half_bf16", "bf16", "half", 0, "pos"),
    ("inter_f32", "f32", "interleaved", 0, "pos"),
    ("inter_f16", "f16", "interleaved", 0, "pos"),
    ("inter_bf16", "bf16", "interleaved", 0, "pos"),
    ("half_bf16_p50", "bf16", "half", 64, "pos"),
    ("half_f16_cache", "f16", "half", 0, "cache"),
    ("half_bf16_bhsd_off", "bf16", "half", 0, "bhsd"),
]
CACHE_ROWS = 8192


def mlir_for(name, dtype, layout, rotary, form, b, s, h, d):
    p = rotary or d
    if form == "bhsd":
        xt = f"tensor<{b}x{h}x{s}x{d}x{dtype}>"
    else:
        xt = f"tensor<{b}x{s}x{h}x{d}x{dtype}>"
    attrs = [f"layout = #rope.layout<{layout}>"]
    if rotary:
        attrs.append(f"rotary_dim = {rotary} : i64")
    args = [f"%x: {xt}"]
    operands = ""
    if form in ("pos", "cache"):
        args.append(f"%p: tensor<{b}x{s}xi64>")
        operands += f" positions(%p : tensor<{b}x{s}xi64>)"
    if form == "cache":
        ct = f"tensor<{CACHE_ROWS}x{p // 2}xf32>"
        args += [f"%cos: {ct}", f"%sin: {ct}"]
        operands += f" cache(%cos, %sin : {ct}, {ct})"
    if form == "bhsd":
        args.append("%o: i64")
        operands += " offset(%o : i64)"
        attrs.append("token_dims = array<i64: 0, 2>")
    args.append(f"%init: {xt}")
    return f"""func.func @{name}({", ".join(args)}) -> {xt} {{
  %y = rope.apply ins(%x : {xt}){operands} outs(%init : {xt}) {{{", ".join(attrs)}}} -> {xt}
  return %y : {xt}
}}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--rope-opt", default=os.path.join(HERE, "..", "..", "build", "bin", "rope-opt")
    )
    parser.add_argument("--shape", default="4,4096,32,128")
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("--out", default=os.path.join(HERE, "artifacts"))
    args = parser.parse_args()
    b, s, h, d = (int(v) for v in args.shape.split(","))
    os.makedirs(args.out, exist_ok=True)
    lines = []
    for name, dtype, layout, rotary, form in CONFIGS:
        src = mlir_for(name, dtype, layout, rotary, form, b, s, h, d)
        with open(os.path.join(args.out, name + ".mlir"), "w") as f:
            f.write(src)
        proc = subprocess.run(
            [
                args.rope_opt,
                "-",
                f"--rope-to-nvvm=chip={args.chip} kernel-bare-ptr=true",
                "--mlir-print-ir-after=gpu-kernel-outlining",
            ],
            input=src,
            capture_output=True,
            text=True,
            check=True,
        )
        ptx = binaries(proc.stdout)[name + "_kernel"]
        with open(os.path.join(args.out, name + ".ptx"), "wb") as f:
            f.write(ptx)
        # The outlined IR (stderr) names the launch's operands in the order of
        # the kernel's parameters, and the kernel's static grid and block.
        outlined = proc.stderr
        fargs = re.search(r"func\.func @%s\(([^)]*)\)" % name, outlined).group(1)
        arg_names = [a.split(":")[0].strip() for a in fargs.split(", %")]
        arg_names = ["%" + a.lstrip("%") for a in arg_names]
        roles_of_func = [a.split(":")[0].strip().lstrip("%") for a in args_of(src)]
        role = {arg_names[i]: roles_of_func[i] for i in range(len(arg_names))}
        launch = re.search(r"gpu\.launch_func\s+@\w+::@\w+.*?args\(([^)]*)\)", outlined)
        params = [p.split(":")[0].strip() for p in launch.group(1).split(",")]
        roles = [role[p] for p in params]
        block = re.search(r"known_block_size = array<i32: (\d+), (\d+), (\d+)>", outlined)
        grid = re.search(r"known_grid_size = array<i32: (\d+), (\d+), (\d+)>", outlined)
        lines.append(
            " ".join(
                [name, name + "_kernel", dtype, layout, str(rotary or d), form]
                + [str(v) for v in (b, s, h, d, CACHE_ROWS)]
                + list(grid.groups())
                + list(block.groups())
                + [",".join(roles)]
            )
        )
        print(lines[-1])
    with open(os.path.join(args.out, "manifest.txt"), "w") as f:
        f.write(
            "# name kernel dtype layout P form B S H D M grid.xyz block.xyz params\n"
        )
        f.write("\n".join(lines) + "\n")


def args_of(src):
    sig = re.search(r"func\.func @\w+\(([^)]*)\)", src).group(1)
    return [a.strip() for a in sig.split(", %")]


if __name__ == "__main__":
    main()
