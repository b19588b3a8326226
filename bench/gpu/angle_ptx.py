#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The PTX cost of the angle without f64 (issue 34): a [T, 32, 128] f32
rope.apply (default and LongRoPE frequencies) through `rope-to-nvvm` with
angle=f64 and angle=turns, for sm_89 (1/64-rate f64) and sm_90; prints
ptxas -v's registers, the PTX instruction count and the f64 instructions.
No GPU needed (ptxas only). Run from the repository root:

    python3 bench/gpu/angle_ptx.py
"""
import pathlib
import re, subprocess, sys, tempfile, os

ROOT = pathlib.Path(__file__).resolve().parents[2]
src = '''func.func @f(%x: tensor<?x32x128xf32>, %p: tensor<?xi64>) -> tensor<?x32x128xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x32x128xf32>
  %e = tensor.empty(%n) : tensor<?x32x128xf32>
  %y = rope.apply ins(%x : tensor<?x32x128xf32>) positions(%p : tensor<?xi64>) outs(%e : tensor<?x32x128xf32>) {freqs = FREQS} -> tensor<?x32x128xf32>
  return %y : tensor<?x32x128xf32>
}'''
for freqs in ("#rope.default<base = 10000.0>", "#rope.longrope<base = 10000.0, short_factor = [" + ", ".join(["1.0"]*64) + "], long_factor = [" + ", ".join(["2.0"]*64) + "], original_max_position_embeddings = 4096>",
              "#rope.dynamic_ntk<base = 10000.0, factor = 2.0, max_position_embeddings = 4096>"):
  for chip in ("sm_89", "sm_90"):
    for angle in ("f64", "turns"):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write(src.replace("FREQS", freqs)); name = f.name
        out = subprocess.run([str(ROOT / "build/bin/rope-opt"), name, f"--rope-to-nvvm=chip={chip} format=isa angle={angle}"], capture_output=True, text=True).stdout
        import importlib.util
        spec = importlib.util.spec_from_file_location("x", str(ROOT / "bench/gpu/extract_ptx.py")); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
        m = mod.OBJECT.search(out)
        ptx = mod.unescape(m.group(2)).decode()
        pf = name + ".ptx"; open(pf, "w").write(ptx)
        r = subprocess.run(["/usr/local/cuda/bin/ptxas", "-v", f"-arch={chip}", pf, "-o", "/dev/null"], capture_output=True, text=True)
        regs = re.findall(r"Used (\d+) registers", r.stderr)
        f64 = len(re.findall(r"\.f64", ptx)); ninst = sum(1 for l in ptx.splitlines() if l.strip().endswith(";") and not l.strip().startswith("."))
        print(f"{freqs[:14]:14} {chip} angle={angle:5}: registers {regs} ptx instructions {ninst} f64 ops {f64}")
