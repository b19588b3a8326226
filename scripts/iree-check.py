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
The fused neighbours (issue 18) are checked the same way (NEIGHBOUR_CASES:
QK-norm, i8 per head, fp8 per tensor, both together with partial rotary):
the reference is reference.rms_norm -> reference.apply -> reference.quantize
in float64; a float output within its tolerance, a quantized one equal to
the quantized reference except within 2^-17 of the largest value of a
rounding boundary, where either neighbour is accepted (at least 99% equal).
fp8 results come back bit-cast to i8 (numpy has no fp8 dtype).
The KV-cache append (CACHE_CASES: rope.apply with slots into HF and
contiguous caches, with QK-norm and i8 per head; rope.cache_write into
collapsed pages, f16 and fp8 per tensor; slots with -1 padding and past
the end) is checked the same way on the written rows, and every other cache
row must come back bit-identical. FIXTURE_CASES: the frontend fixtures of
the append (JAX dynamic_update_slice, torch slice_scatter) raised by
rope-raise to rope.apply with slots, lowered and run the same way.
IREE flags: `--iree-input-demote-f64-to-f32=false` (the angle is formed in
f64 on purpose, SEMANTICS.md §5; IREE's default demotion costs f32 results three
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


# name, dtype, shape, attributes, norm, quantized type, scale ("tensor" or
# "head"); explicit positions over the token dims [B, S].
NEIGHBOUR_CASES = [
    ("norm_half_f32", "f32", (2, 8, 4, 64), "{norm_epsilon = 1.0e-06}",
     True, None, None),
    ("norm_i8_head_interleaved_partial_f32", "f32", (2, 8, 4, 64),
     "{layout = #rope.layout<interleaved>, rotary_dim = 32 : i64, "
     "norm_epsilon = 1.0e-06}", True, "i8", "head"),
    ("f8e4m3fn_tensor_f16", "f16", (1, 8, 2, 64), "", False, "f8e4m3fn",
     "tensor"),
    ("norm_f8e5m2_head_partial_f32", "f32", (2, 4, 4, 64),
     "{rotary_dim = 16 : i64, norm_epsilon = 1.0e-05}", True, "f8e5m2",
     "head"),
]
MLIR_QUANT = {"i8": "i8", "f8e4m3fn": "f8E4M3FN", "f8e5m2": "f8E5M2"}


def neighbour_module_for(case):
    name, dtype, shape, attrs, norm, quant, scale = case
    t = tensor(shape, dtype)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = (rng.standard_normal(shape) * 2).astype(NP[dtype])
    tokens = shape[:2]
    p = rng.integers(0, 4000, tokens).astype(np.int64)
    pt = tensor(tokens, "i64")
    args = [f"%x: {t}", f"%p: {pt}"]
    operands = [f"positions(%p : {pt})"]
    inputs = [x, p]
    ref = x.astype(np.float64)
    eps = float(attrs.split("norm_epsilon = ")[1].split("}")[0]) if norm \
        else None
    if norm:
        w = rng.uniform(0.5, 1.5, shape[-1]).astype(NP[dtype])
        wt = tensor(w.shape, dtype)
        args.append(f"%w: {wt}")
        operands.append(f"norm(%w : {wt})")
        inputs.append(w)
        ref = reference.rms_norm(ref, w, eps)
    ref_kw = {"positions": p}
    if "interleaved>" in attrs:
        ref_kw["layout"] = "interleaved"
    if "rotary_dim" in attrs:
        ref_kw["rotary_dim"] = int(
            attrs.split("rotary_dim = ")[1].split(" ")[0])
    ref = reference.apply(ref, **ref_kw)
    out = t
    if quant:
        limit = reference.QUANT_LIMITS[quant]
        if scale == "head":
            s = (limit / 4 / rng.uniform(1, 4, shape[2])).astype(np.float32)
        else:
            s = np.array(limit / 6, np.float32)
        st = tensor(s.shape, "f32") if s.ndim else "tensor<f32>"
        args.append(f"%s: {st}")
        operands.append(f"quant_scale(%s : {st})")
        inputs.append(s)
        out = tensor(shape, MLIR_QUANT[quant])
    result = tensor(shape, "i8") if quant else t
    body = (f"  %init = tensor.empty() : {out}\n"
            f"  %y = rope.apply ins(%x : {t}) {' '.join(operands)} "
            f"outs(%init : {out}) {attrs} -> {out}\n")
    r = "%y"
    if quant and quant != "i8":
        body += f"  %r = arith.bitcast %y : {out} to {result}\n"
        r = "%r"
    text = (f"func.func @{name}({', '.join(args)}) -> {result} {{\n"
            f"{body}  return {r} : {result}\n}}\n")
    return text, inputs, ref, (quant, s if quant else None)


def neighbour_error(case, got, ref, quant, s):
    """Whether `got` matches the float64 reference `ref`, and a summary."""
    dtype = case[1]
    if not quant:
        err = float(np.max(np.abs(got.astype(np.float64) - ref)) /
                    np.max(np.abs(ref)))
        return err <= TOL[dtype], f"max rel err {err:.2e}"
    import ml_dtypes
    head = 2 if s.ndim else None
    if quant != "i8":
        fp8 = {"f8e4m3fn": ml_dtypes.float8_e4m3fn,
               "f8e5m2": ml_dtypes.float8_e5m2}[quant]
        got = got.view(fp8)
    got = got.astype(np.float64)
    e = 2.0 ** -17 * np.max(np.abs(ref))
    exact = reference.quantize(ref, quant, s, head)
    lo = reference.quantize(ref - e, quant, s, head)
    hi = reference.quantize(ref + e, quant, s, head)
    inside = bool(((got >= np.minimum(lo, hi)) &
                   (got <= np.maximum(lo, hi))).all())
    same = float((got == exact).mean())
    return inside and same >= 0.99, f"{same:.4f} equal, bracketed: {inside}"


# The KV-cache append (issue 18): name, op ("apply" with slots or
# "cache_write"), input dtype, input shape, cache shape, token dims, norm,
# quantized type, scale ("tensor" or "head"). Slots include -1 padding and
# slots past the end (nothing written); the cache comes back whole.
CACHE_CASES = [
    ("cache_apply_bhsd_f32", "apply", "f32", (2, 4, 5, 64), (2, 4, 16, 64),
     (0, 2), False, None, None),
    ("cache_apply_bshd_norm_i8_head_f32", "apply", "f32", (2, 3, 4, 64),
     (2, 16, 4, 64), (0, 1), True, "i8", "head"),
    ("cache_write_paged_f16", "cache_write", "f16", (6, 4, 64), (32, 4, 64),
     (0,), False, None, None),
    ("cache_write_paged_f8e4m3fn_tensor_f32", "cache_write", "f32",
     (6, 4, 64), (32, 4, 64), (0,), False, "f8e4m3fn", "tensor"),
]


def cache_module_for(case):
    """The function (x, slots, cache[, positions][, weight][, scale]) ->
    cache; fp8 caches cross the boundary bit-cast to i8. Returns the text,
    the inputs, the float64 values written per cache row (NaN where not
    written), the input cache, and (quant, scale, head axis)."""
    name, op, dtype, shape, cshape, tdims, norm, quant, scale = case
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    rank = len(shape)
    tokens = tuple(shape[d] for d in tdims)
    ctoks = tuple(cshape[d] for d in tdims)
    rows = int(np.prod(ctoks))
    n = int(np.prod(tokens))
    slots = rng.permutation(rows)[:n].astype(np.int64)
    slots[0] = -1
    slots[-1] = rows + 3
    slots = slots.reshape(tokens)
    x = (rng.standard_normal(shape) * 2).astype(NP[dtype])
    t, st = tensor(shape, dtype), tensor(tokens, "i64")
    storage = MLIR_QUANT[quant] if quant else dtype
    boundary = "i8" if quant else dtype
    ct, cbt = tensor(cshape, storage), tensor(cshape, boundary)
    if quant:
        cache = rng.integers(-100, 100, cshape).astype(np.int8)
    else:
        cache = rng.standard_normal(cshape).astype(NP[dtype])
    args = [f"%x: {t}", f"%slots: {st}", f"%cache: {cbt}"]
    inputs = [x, slots, cache]
    operands = []
    values = x.astype(np.float64)
    head = [d for d in range(rank - 1) if d not in tdims][0]
    if op == "apply":
        p = rng.integers(0, 4000, tokens).astype(np.int64)
        args.append(f"%p: {st}")
        operands.append(f"positions(%p : {st})")
        inputs.append(p)
        if norm:
            w = rng.uniform(0.5, 1.5, shape[-1]).astype(NP[dtype])
            args.append(f"%w: {tensor(w.shape, dtype)}")
            operands.append(f"norm(%w : {tensor(w.shape, dtype)})")
            inputs.append(w)
            values = reference.rms_norm(values, w, 1e-6)
        values = reference.apply(values, p, token_dims=tdims)
    s = None
    if quant:
        limit = reference.QUANT_LIMITS[quant]
        if scale == "head":
            s = (limit / 4 / rng.uniform(1, 4, shape[head])).astype(
                np.float32)
        else:
            s = np.array(limit / 6, np.float32)
        sst = tensor(s.shape, "f32") if s.ndim else "tensor<f32>"
        args.append(f"%s: {sst}")
        operands.append(f"quant_scale(%s : {sst})")
        inputs.append(s)
    body = ""
    c = "%cache"
    if quant and quant != "i8":
        body += f"  %c = arith.bitcast %cache : {cbt} to {ct}\n"
        c = "%c"
    attrs = f"token_dims = array<i64: {', '.join(map(str, tdims))}>"
    if op == "apply":
        if norm:
            attrs += ", norm_epsilon = 1.0e-06"
        body += (f"  %y = rope.apply ins(%x : {t}) {' '.join(operands)} "
                 f"slots(%slots : {st}) outs({c} : {ct}) {{{attrs}}} "
                 f"-> {ct}\n")
    else:
        body += (f"  %y = rope.cache_write ins(%x : {t}) slots(%slots : "
                 f"{st}) {' '.join(operands)} outs({c} : {ct}) {{{attrs}}} "
                 f"-> {ct}\n")
    r = "%y"
    if quant and quant != "i8":
        body += f"  %r = arith.bitcast %y : {ct} to {cbt}\n"
        r = "%r"
    text = (f"func.func @{name}({', '.join(args)}) -> {cbt} {{\n"
            f"{body}  return {r} : {cbt}\n}}\n")
    written = np.full(cshape, np.nan)
    for tok in np.ndindex(*tokens):
        slot = int(slots[tok])
        if not 0 <= slot < rows:
            continue
        where = np.unravel_index(slot, ctoks)
        src, dst = [slice(None)] * rank, [slice(None)] * rank
        for i, d in enumerate(tdims):
            src[d], dst[d] = tok[i], where[i]
        written[tuple(dst)] = values[tuple(src)]
    return text, inputs, written, cache, (quant, s, head)


def cache_error(case, got, written, cache, quant, s, head):
    """Untouched rows bit-identical; written rows as neighbour_error."""
    mask = ~np.isnan(written)
    if not np.array_equal(got[~mask], cache[~mask]):
        return False, "an untouched cache row changed"
    dtype = case[2]
    ref = written[mask]
    if not quant:
        err = float(np.max(np.abs(got[mask].astype(np.float64) - ref)) /
                    np.max(np.abs(ref)))
        return err <= TOL[dtype], f"max rel err {err:.2e}, rest unchanged"
    import ml_dtypes
    g = got
    if quant != "i8":
        g = got.view({"f8e4m3fn": ml_dtypes.float8_e4m3fn,
                      "f8e5m2": ml_dtypes.float8_e5m2}[quant])
    g = g.astype(np.float64)
    sfull = np.broadcast_to(
        s.reshape([-1 if d == head else 1 for d in range(got.ndim)])
        if s.ndim else s, got.shape)[mask].astype(np.float64)
    e = 2.0 ** -17 * np.max(np.abs(ref))
    exact = reference.quantize(ref * sfull, quant, 1.0)
    lo = reference.quantize((ref - e) * sfull, quant, 1.0)
    hi = reference.quantize((ref + e) * sfull, quant, 1.0)
    gm = g[mask]
    inside = bool(((gm >= np.minimum(lo, hi)) & (gm <= np.maximum(lo, hi))
                   ).all())
    same = float((gm == exact).mean())
    return inside and same >= 0.99, \
        f"{same:.4f} equal, bracketed: {inside}, rest unchanged"


# Frontend fixtures of the cache append (scripts/gen-cache-fixtures.py):
# the frontend's IR raised by rope-raise (one rope.apply with slots), then
# lowered as above; the whole cache against the float64 reference (ref0).
FIXTURE_CASES = ["jax_dynamic_update_slice", "torch_slice_scatter"]


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
            # f64 on purpose (SEMANTICS.md §5), so keep it.
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
    for case in NEIGHBOUR_CASES:
        name = case[0]
        text, inputs, ref, (quant, s) = neighbour_module_for(case)
        linalg = subprocess.run(
            [args.rope_opt, "--convert-rope-to-linalg", "--canonicalize",
             "--cse"], input=text, capture_output=True, text=True)
        if linalg.returncode != 0 or "rope." in linalg.stdout:
            print(f"FAIL {name}: rope-opt: {linalg.stderr.strip()[:300]}")
            failures += 1
            continue
        try:
            vmfb = ireec.compile_str(
                linalg.stdout, target_backends=["llvm-cpu"],
                extra_args=["--iree-input-demote-f64-to-f32=false",
                            "--iree-llvmcpu-target-cpu=generic"])
        except Exception as error:
            print(f"FAIL {name}: iree-compile: {str(error)[-1500:]}")
            failures += 1
            continue
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
        got = np.asarray(getattr(ctx.modules.module, name)(*inputs))
        ok, summary = neighbour_error(case, got, ref, quant, s)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {summary}")
    for case in CACHE_CASES:
        name = case[0]
        text, inputs, written, cache, (quant, s, head) = \
            cache_module_for(case)
        linalg = subprocess.run(
            [args.rope_opt, "--convert-rope-to-linalg", "--canonicalize",
             "--cse"], input=text, capture_output=True, text=True)
        if linalg.returncode != 0 or "rope." in linalg.stdout:
            print(f"FAIL {name}: rope-opt: {linalg.stderr.strip()[:300]}")
            failures += 1
            continue
        try:
            vmfb = ireec.compile_str(
                linalg.stdout, target_backends=["llvm-cpu"],
                extra_args=["--iree-input-demote-f64-to-f32=false",
                            "--iree-llvmcpu-target-cpu=generic"])
        except Exception as error:
            print(f"FAIL {name}: iree-compile: {str(error)[-1500:]}")
            failures += 1
            continue
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
        got = np.asarray(getattr(ctx.modules.module, name)(*inputs))
        ok, summary = cache_error(case, got, written, cache, quant, s, head)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {summary}")
    for name in FIXTURE_CASES:
        base = ROOT / "test" / "Frontends" / "Inputs" / "cache" / name
        data = np.load(f"{base}.npz")
        raised = subprocess.run(
            [args.rope_opt, "--rope-raise", f"{base}.mlir"],
            capture_output=True, text=True)
        linalg = subprocess.run(
            [args.rope_opt, "--convert-rope-to-linalg", "--canonicalize",
             "--cse"], input=raised.stdout, capture_output=True, text=True)
        if raised.returncode != 0 or "slots(" not in raised.stdout or \
                linalg.returncode != 0 or "rope." in linalg.stdout:
            print(f"FAIL {name}: rope-opt: not raised, or "
                  f"{(raised.stderr + linalg.stderr).strip()[:300]}")
            failures += 1
            continue
        try:
            vmfb = ireec.compile_str(
                linalg.stdout, target_backends=["llvm-cpu"],
                extra_args=["--iree-input-demote-f64-to-f32=false",
                            "--iree-llvmcpu-target-cpu=generic"])
        except Exception as error:
            print(f"FAIL {name}: iree-compile: {str(error)[-1500:]}")
            failures += 1
            continue
        config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        vm_module = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm_module)
        inputs = [data[f"arg{i}"] for i in range(4)]
        # The module keeps its frontend name (JAX: @jit_append).
        got = np.asarray(ctx.modules[vm_module.name].main(*inputs))
        ref = data["ref0"]
        err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
        ok = err <= 1e-5
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name} (raised): max rel err "
              f"{err:.2e} (tol 1.0e-05)")
    total = (len(CASES) + len(NEIGHBOUR_CASES) + len(CACHE_CASES) +
             len(FIXTURE_CASES))
    print(f"iree-check: {total - failures} of {total} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
