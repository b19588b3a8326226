#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope.apply with its fused neighbours (issue 18): QK-norm before, fp8/int8 output after, Q and K together.

    python3 bench/neighbours_bench.py                      # every row, f32, single thread
    python3 bench/neighbours_bench.py --repeat 3 --write-docs   # medians of 3 runs, into docs/PERFORMANCE.md

Llama-3-8B-like shapes (32 query heads, 8 KV heads, D = 128), explicit i64 positions around 4K, half
layout, base 500000, one thread:
  decode   x [64, 1, H, 128]      (B = 64 rows of one token each, positions in [4096, 8192))
  prefill  x [1, 4096, H, 128]

Forms (H = 32 unless said; fp8 = f8E4M3FN with one scale per head, i8 with one scale per tensor):
  norm+rope        QK-norm (RMSNorm over D, f32 weight) then the rotation; output in x's dtype
  rope+fp8         the rotation, output quantized to fp8
  rope+i8          the rotation, output quantized to int8
  norm+rope+fp8    all three (Qwen3's K path with an fp8 KV cache)
  qk norm+rope+fp8 q [.., 32, 128] and k [.., 8, 128] through apply_qk: both normalized, rotated with one
                   cos/sin per token and quantized

Columns (per row, interleaved rounds of cpu_bench.measure_interleaved, medians):
  fused raw      the fused kernel through ctypes with prebuilt descriptors
  fused call     the public call (rope_mlir.apply / apply_qk with out=), every argument checked
  unfused raw    the unfused sequence of our own kernels, one memory pass each: a norm pass (rope.apply with
                 norm at position 0: cos = 1, sin = 0 exactly, so it is the norm alone), the plain rotation,
                 a quantization pass (rope.apply with quant_scale at position 0), through ctypes
  numpy          the same sequence in numpy float32 (ml_dtypes for the fp8 cast)
  copy           a STREAM-style copy (bench/cpp/rope_baseline.cpp) of the bytes the fused form must move:
                 read x (+ weight) and write the output, (in + out) / 2 bytes copied
and the ratios unfused raw / fused raw (target >= 1.3) and copy / fused raw (the fraction of the copy
bandwidth; target >= 0.85), warm (the batches above) and cold (_fused_report.measure: fused raw, unfused
raw and copy each called alone after a read of twice the last-level cache, cpu_bench.measure_cold). Every output is checked against the float64 reference first (quantized ones
within one step of the fp8/int8 grid).
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import sys
import tempfile

import ml_dtypes
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))

import cpu_bench  # noqa: E402
import _fused_report  # noqa: E402
from _source import replace_region  # noqa: E402
import rope_mlir  # noqa: E402
from rope_mlir import _jit, fused, reference  # noqa: E402

HQ, HKV, D, BASE, EPS = 32, 8, 128, 500000.0, 1e-6
SHAPES = {"decode": (64, 1), "prefill": (1, 4096)}
FORMS = ("norm+rope", "rope+fp8", "rope+i8", "norm+rope+fp8", "qk norm+rope+fp8")
DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}
QUANT = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "i8": np.int8}
DOC = ROOT / "docs" / "PERFORMANCE.md"
BEGIN_MARK, END_MARK = "<!-- BEGIN neighbours_bench -->", "<!-- END neighbours_bench -->"


def _raw(function, arrays):
    descriptors = [a if isinstance(a, int) else _jit.memref_descriptor(a) for a in arrays]
    addresses = [d if isinstance(d, int) else ctypes.addressof(d) for d in descriptors]

    def run(function=function, addresses=addresses, keep=(arrays, descriptors)):
        function(*addresses)
    return run


def _form(name):
    norm = "norm" in name
    quant = "f8e4m3fn" if "fp8" in name else "i8" if "i8" in name else None
    return norm, quant, name.startswith("qk")


def _numpy(x, pos, w, scale, quant, inv_freq):
    """The unfused sequence in numpy float32: norm, HF's rotate_half rotation, quantization."""
    xf = x.astype(np.float32)
    if w is not None:
        xf = w * (xf * (1.0 / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(EPS))))
    freqs = pos[..., None].astype(np.float32) * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)[:, :, None, :]
    half = D // 2
    rotated = np.concatenate([-xf[..., half:], xf[..., :half]], axis=-1)
    y = xf * np.cos(emb) + rotated * np.sin(emb)
    if quant is None:
        return y.astype(x.dtype)
    s = scale if np.ndim(scale) == 0 else scale[:, None]
    v = y * s
    if quant == "i8":
        return np.clip(np.rint(v), -128, 127).astype(np.int8)
    return np.clip(v, -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn)


def _check(name, got, x, pos, w, scale, quant):
    x64 = x.astype(np.float64)
    if w is not None:
        x64 = reference.rms_norm(x64, w, EPS)
    y = reference.apply(x64, pos, base=BASE)
    if quant is None:
        err = np.abs(got.astype(np.float64) - y).max() / np.abs(y).max()
        assert err < 1e-2 if x.dtype != np.float32 else err < 1e-5, f"{name}: relative error {err:.3g}"
        return
    want = reference.quantize(y, quant, scale, head_axis=2)
    g = got.astype(np.float64)
    if quant == "i8":
        step = 1.0
    else:  # E4M3: 3 mantissa bits, smallest normal exponent -6
        top = np.maximum(np.abs(g), np.abs(want))
        step = 2.0 ** (np.maximum(np.floor(np.log2(np.maximum(top, 2.0 ** -9))), -6) - 3)
    bad = np.abs(g - want) > step
    assert not bad.any(), f"{name}: {int(bad.sum())} quantized values more than one step off"


def run_row(lib, shape, form, dtype, timing):
    b, s = SHAPES[shape]
    norm, quant, qk = _form(form)
    rng = np.random.default_rng(0)
    t = DTYPES[dtype]
    heads = (HQ, HKV) if qk else (HQ,)
    xs = [rng.standard_normal((b, s, h, D)).astype(t) for h in heads]
    pos = (rng.integers(4096, 8192, (b, 1)) if shape == "decode" else np.arange(s)[None]).astype(np.int64)
    ws = [(rng.standard_normal(D) * 0.2 + 1.0).astype(np.float32) if norm else None for _ in heads]
    scales = [(rng.uniform(20.0, 60.0, h) if quant == "f8e4m3fn" else np.asarray(30.0)).astype(np.float32)
              if quant else None for h in heads]
    out_dtype = QUANT[quant] if quant else t
    outs = [np.empty(x.shape, out_dtype) for x in xs]
    kw = dict(base=BASE, threads=1)

    # Correctness first.
    if qk:
        got = rope_mlir.apply_qk(xs[0], xs[1], pos, out_q=outs[0], out_k=outs[1], q_norm_weight=ws[0],
                                 k_norm_weight=ws[1], norm_eps=EPS, quant_dtype=quant, q_scale=scales[0],
                                 k_scale=scales[1], **kw)
    else:
        got = [rope_mlir.apply(xs[0], pos, out=outs[0], norm_weight=ws[0], norm_eps=EPS, quant_dtype=quant,
                               quant_scale=scales[0], **kw)]
    for x, g, w, sc in zip(xs, got, ws, scales):
        _check(form, g, x, pos, w, sc, quant)

    scale_form = "head" if quant == "f8e4m3fn" else "tensor"
    fields = dict(dtype=dtype, rank=4, head_dim=D, base=BASE, positions="explicit", threads=1)
    neighbours = dict(norm=norm, norm_epsilon=EPS, quant=quant, quant_scale=scale_form)
    fns = {}
    if qk:
        kernel = fused.compile_qk(**fields, **neighbours)
        args = [xs[0], pos] + [a for a in (ws[0], scales[0]) if a is not None] + [outs[0], xs[1]] + \
            [a for a in (ws[1], scales[1]) if a is not None] + [outs[1]]
        fns["fused raw"] = _raw(kernel._pair, args)
        fns["fused call"] = lambda: rope_mlir.apply_qk(
            xs[0], xs[1], pos, out_q=outs[0], out_k=outs[1], q_norm_weight=ws[0], k_norm_weight=ws[1],
            norm_eps=EPS, quant_dtype=quant, q_scale=scales[0], k_scale=scales[1], **kw)
    else:
        kernel = rope_mlir.compile(**fields, **neighbours)
        args = [xs[0], pos] + [a for a in (ws[0], scales[0]) if a is not None] + [outs[0]]
        fns["fused raw"] = _raw(kernel._function, args)
        fns["fused call"] = lambda: rope_mlir.apply(
            xs[0], pos, out=outs[0], norm_weight=ws[0], norm_eps=EPS, quant_dtype=quant,
            quant_scale=scales[0], **kw)

    # The unfused sequence of our own kernels, one pass each (see the module docstring).
    zeros = np.zeros_like(pos)
    steps = []
    for x, w, sc, out in zip(xs, ws, scales, outs):
        current = x
        if norm:
            normed = np.empty(x.shape, t)
            k_norm = rope_mlir.compile(**fields, norm=True, norm_epsilon=EPS)
            steps.append(_raw(k_norm._function, [current, zeros, w, normed]))
            current = normed
        # The rotation writes x's dtype; the quantization pass reads it.
        rotated = out if not quant else np.empty(x.shape, t)
        k_rope = rope_mlir.compile(**fields)
        steps.append(_raw(k_rope._function, [current, pos, rotated]))
        if quant:
            k_quant = rope_mlir.compile(**fields, quant=quant, quant_scale=scale_form)
            steps.append(_raw(k_quant._function, [rotated, zeros, sc, out]))
    fns["unfused raw"] = lambda: [step() for step in steps]
    inv_freq = (1.0 / BASE ** (np.arange(0, D, 2) / D)).astype(np.float32)
    fns["numpy"] = lambda: [_numpy(x, pos, w, sc, quant, inv_freq) for x, w, sc in zip(xs, ws, scales)]

    moved = sum(x.nbytes + o.nbytes for x, o in zip(xs, outs)) // 2
    fns["copy"] = _fused_report.copy_peer(lib, moved)
    return _fused_report.measure(fns, timing, unfused="unfused raw")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--forms", default=",".join(FORMS))
    parser.add_argument("--dtypes", default="f32")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--samples", type=int, default=11)
    parser.add_argument("--write-docs", nargs="?", const=str(DOC), default=None, metavar="FILE")
    args = parser.parse_args(argv)
    timing = cpu_bench.Timing(samples=args.samples, min_seconds=0.15, max_seconds=3.0, quiesce=0.0)
    names = ["fused raw", "fused call", "unfused raw", "numpy", "copy"]
    rows = {}
    with tempfile.TemporaryDirectory() as workdir:
        lib = cpu_bench.build_baseline(pathlib.Path(workdir))
        for _ in range(args.repeat):
            for dtype in args.dtypes.split(","):
                for shape in args.shapes.split(","):
                    for form in args.forms.split(","):
                        r = run_row(lib, shape, form, dtype, timing)
                        rows.setdefault((shape, form, dtype), []).append(r)
                        print(f"  {shape:8} {form:17} {dtype:4} " +
                              " ".join(f"{n} {r[n] * 1e6:9.1f}" for n in names), file=sys.stderr, flush=True)
    lines = _fused_report.report("neighbours_bench", argv, args.repeat, args.samples, ("shape", "form", "dtype"),
                                 rows, names, unfused="unfused raw")
    print("\n".join(lines))
    if args.write_docs:
        replace_region(pathlib.Path(args.write_docs), lines, BEGIN_MARK, END_MARK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
