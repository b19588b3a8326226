#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""IREE consumes our linalg: compile `--convert-rope-to-linalg`'s output with
iree-compile (llvm-cpu), run it with iree.runtime, compare with the float64
reference.

Not run by CI (iree-base-compiler is ~100 MB): run it where IREE is
installed, e.g. the peers environment (docs/PERFORMANCE.md, "Peers"):

    PYTHONPATH=python ../peers/bin/python scripts/iree-check.py [--rope-opt build/bin/rope-opt]

Each configuration (both layouts, partial rotary, f32/f16/f64, explicit
positions / scalar offset / per-row offsets, a scaled scheme, M-RoPE,
gathered and pre-gathered caches) is written as a `rope.apply` function,
lowered by rope-opt to plain linalg (no rope op left), compiled by IREE
and run on random inputs. Prints one line per case with the max error
relative to the largest reference value, and exits non-zero when a case
fails to compile or exceeds its tolerance (f32/f64: 2^-20; f16: 2^-9).
IREE flags: `--iree-input-demote-f64-to-f32=false` (the angle is formed in
f64 on purpose, ROPE.md §5; IREE's default demotion costs f32 results three
orders of magnitude: 1.8e-4 instead of 1.7e-7 at positions < 4000), and for
f64 data `--iree-llvmcpu-link-embedded=false` (f64 sin/cos are libm calls
IREE's embedded linker does not resolve).
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import zlib

import numpy as np

from rope_mlir import reference

ROOT = pathlib.Path(__file__).resolve().parents[1]

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
TOL = {"f16": 2.0 ** -9, "f32": 2.0 ** -20, "f64": 2.0 ** -20}

# name, dtype, shape, attributes, positions form, cache form
CASES = [
    ("half_positions_f32", "f32", (2, 16, 4, 64), "", "explicit", None),
    ("interleaved_offset_f32", "f32", (1, 8, 2, 32),
     "{layout = #rope.layout<interleaved>}", "offset", None),
    ("half_partial_rows_f16", "f16", (2, 8, 4, 64),
     "{rotary_dim = 32 : i64}", "row_offset", None),
    ("interleaved_partial_f64", "f64", (8, 4, 64),
     "{layout = #rope.layout<interleaved>, rotary_dim = 16 : i64}",
     "explicit", None),
    ("llama3_positions_f32", "f32", (1, 16, 4, 128),
     "{freqs = #rope.llama3<factor = 8.0, low_freq_factor = 1.0, "
     "high_freq_factor = 4.0, original_max_position_embeddings = 8192, "
     "base = 500000.0>}", "explicit", None),
    ("mrope_f32", "f32", (8, 4, 32),
     "{mrope = #rope.mrope<section = [6, 5, 5]>}", "mrope", None),
    ("gathered_cache_f32", "f32", (2, 8, 4, 64), "", "explicit", "gathered"),
    ("pregathered_cache_f32", "f32", (2, 8, 4, 64), "", None, "pregathered"),
]


def tensor(shape, dtype):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def module_for(case):
    name, dtype, shape, attrs, positions, cache = case
    t = tensor(shape, dtype)
    args, operands, inputs = [f"%x: {t}"], [], []
    tokens = shape[:-2] if len(shape) >= 3 else shape[:1]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(shape).astype(NP[dtype])
    inputs.append(x)
    ref_kw = {}
    if positions == "explicit":
        p = rng.integers(0, 4000, tokens).astype(np.int64)
        args.append(f"%p: {tensor(tokens, 'i64')}")
        operands.append(f"positions(%p : {tensor(tokens, 'i64')})")
        inputs.append(p)
        ref_kw["positions"] = p
    elif positions == "mrope":
        p = rng.integers(0, 4000, (3,) + tuple(tokens)).astype(np.int64)
        pt = tensor((3,) + tuple(tokens), "i64")
        args.append(f"%p: {pt}")
        operands.append(f"positions(%p : {pt})")
        inputs.append(p)
        ref_kw.update(positions=p, mrope_section=[6, 5, 5])
    elif positions == "offset":
        o = np.array(37, np.int64)
        args.append("%o: tensor<i64>")
        operands.append("offset(%o : tensor<i64>)")
        inputs.append(o)
        ref_kw["offset"] = 37
    elif positions == "row_offset":
        o = rng.integers(0, 3000, tokens[:1]).astype(np.int64)
        args.append(f"%o: {tensor(tokens[:1], 'i64')}")
        operands.append(f"offset(%o : {tensor(tokens[:1], 'i64')})")
        inputs.append(o)
        ref_kw["offset"] = o
    rotary = shape[-1]
    if "rotary_dim" in attrs:
        rotary = int(attrs.split("rotary_dim = ")[1].split(" ")[0])
    if cache == "gathered":
        theta, _ = reference.inv_frequencies(rotary, 10000.0)
        c, s = reference.cos_sin(np.arange(4096), theta)
        c, s = c.astype(np.float32), s.astype(np.float32)
    elif cache == "pregathered":
        c = rng.uniform(-1, 1, tuple(tokens) + (rotary // 2,)).astype(
            np.float32)
        s = rng.uniform(-1, 1, c.shape).astype(np.float32)
    if cache:
        ct = tensor(c.shape, "f32")
        args += [f"%c: {ct}", f"%s: {ct}"]
        operands.append(f"cache(%c, %s : {ct}, {ct})")
        inputs += [c, s]
        ref_kw.update(cos_cache=c, sin_cache=s)
    if "llama3" in attrs:
        ref_kw.update(base=500000.0, scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192})
    if "interleaved>" in attrs:
        ref_kw["layout"] = "interleaved"
    if "rotary_dim" in attrs:
        ref_kw["rotary_dim"] = rotary
    text = (f"func.func @{name}({', '.join(args)}) -> {t} {{\n"
            f"  %init = tensor.empty() : {t}\n"
            f"  %y = rope.apply ins(%x : {t}) {' '.join(operands)} "
            f"outs(%init : {t}) {attrs} -> {t}\n"
            f"  return %y : {t}\n}}\n")
    return text, inputs, reference.apply(x, **ref_kw)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rope-opt", default=str(ROOT / "build/bin/rope-opt"))
    args = parser.parse_args()
    import iree.compiler as ireec
    import iree.runtime as ireert

    failures = 0
    for case in CASES:
        name, dtype = case[0], case[1]
        text, inputs, ref = module_for(case)
        linalg = subprocess.run(
            [args.rope_opt, "--convert-rope-to-linalg", "--canonicalize",
             "--cse"], input=text, capture_output=True, text=True)
        if linalg.returncode != 0 or "rope." in linalg.stdout:
            print(f"FAIL {name}: rope-opt: {linalg.stderr.strip()[:300]}")
            failures += 1
            continue
        try:
            # IREE demotes f64 to f32 by default; the angle is formed in
            # f64 on purpose (ROPE.md §5), so keep it.
            vmfb = ireec.compile_str(
                linalg.stdout, target_backends=["llvm-cpu"],
                extra_args=["--iree-input-demote-f64-to-f32=false"] + (
                    # f64 sin/cos are libm calls: the system linker.
                    ["--iree-llvmcpu-link-embedded=false"] if dtype == "f64"
                    else []))
        except Exception as error:  # the compiler's diagnostics
            print(f"FAIL {name}: iree-compile: {str(error)[-1500:]}")
            failures += 1
            continue
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
        got = np.asarray(getattr(ctx.modules.module, name)(*inputs))
        err = float(np.max(np.abs(got.astype(np.float64) - ref)) /
                    (np.max(np.abs(ref)) or 1.0))
        ok = err <= TOL[dtype]
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: max rel err {err:.2e} "
              f"(tol {TOL[dtype]:.1e})")
    print(f"iree-check: {len(CASES) - failures} of {len(CASES)} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
