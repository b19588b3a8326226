#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""KV-cache append (issue 18): K rotated straight into its cache, V beside it (rope_mlir.append_kv).

    python3 bench/kv_cache_bench.py                         # every row, bf16 and f32, single thread
    python3 bench/kv_cache_bench.py --repeat 3 --write-docs # medians of 3 runs, into docs/PERFORMANCE.md

Llama-3-8B-like shapes (8 KV heads, 32 query heads, D = 128), half layout, base 500000, one thread:
  decode   64 rows of one token each, positions in [0, 4096) (a 4K context per row)
  prefill  4096 tokens of one sequence (positions 0..4095) into an 8K-slot cache

Forms:
  bshd       k, v [B, S, 8, 128] into contiguous caches [B, max_len, 8, 128] at per-row positions
  bhsd       Hugging Face's k, v [B, 8, S, 128] into [B, 8, max_len, 128] (token dims (0, 2))
  paged      flat tokens k, v [T, 8, 128] into pages [num_pages, 16, 8, 128] through a block table
  paged+q    the same, and q [T, 32, 128] rotated in the same call (vLLM's decode step: fused_qk_rope +
             reshape_and_cache)

Columns (per row, interleaved rounds of cpu_bench.measure_interleaved, medians):
  fused raw    the compiled append (rope.apply slots + rope.cache_write [+ q's rope.apply]) through ctypes
               with prebuilt descriptors
  fused call   the public call rope_mlir.append_kv: slots computed and every argument checked in numpy
  unfused raw  our own kernels one after the other: the rope kernel rotates k (and q: apply_qk's pair
               kernel) into a temporary, then our rope.cache_write kernel writes that temporary and v into
               the caches, through ctypes
  numpy        the rotation in numpy float32 (HF's rotate_half) and the scatter by fancy indexing
  copy         a STREAM-style copy (bench/cpp/rope_baseline.cpp) of the bytes the fused form must move:
               read k, v (and q), write their rows (and q's output), (in + out) / 2 bytes copied
and the ratios unfused raw / fused raw (target >= 1.3) and copy / fused raw (target >= 0.85), warm (the
batches above) and cold (_fused_report.measure: fused raw, unfused raw and copy each called alone after a
read of twice the last-level cache, cpu_bench.measure_cold). Every
form's caches and q are checked against the float64 reference first (the written rows; the v rows
bit-exact; the rest of the caches unchanged).
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
from rope_mlir import _ir, _jit, cache, fused, kernel, reference  # noqa: E402

HQ, HKV, D, BASE, PAGE = 32, 8, 128, 500000.0, 16
SHAPES = {"decode": (64, 1, 4096), "prefill": (1, 4096, 8192)}  # rows, tokens per row, slots per row
FORMS = ("bshd", "bhsd", "paged", "paged+q")
DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}
DOC = ROOT / "docs" / "PERFORMANCE.md"
BEGIN_MARK, END_MARK = "<!-- BEGIN kv_cache_bench -->", "<!-- END kv_cache_bench -->"


def _raw(function, arrays):
    descriptors = [a if isinstance(a, int) else _jit.memref_descriptor(a) for a in arrays]
    addresses = [d if isinstance(d, int) else ctypes.addressof(d) for d in descriptors]

    def run(function=function, addresses=addresses, keep=(arrays, descriptors)):
        function(*addresses)
    return run


_writers: dict = {}


def cache_writer(dtype: str, rank: int, token_dims):
    """Our own rope.cache_write kernel alone (the unfused sequence's second step): @cw(v, slots, cache)."""
    key = (dtype, rank, token_dims)
    if key in _writers:
        return _writers[key][1]
    body = _ir.Body()
    vt = _ir.Type(dtype, (None,) * (rank - 1) + (D,))
    st = _ir.Type("i64", (None,) * len(token_dims))
    v, s, c = body.fresh("v"), body.fresh("s"), body.fresh("c")
    v_t = body.assign("vt", _ir.to_tensor(v, vt))
    s_t = body.assign("st", _ir.to_tensor(s, st))
    c_t = body.assign("ct", _ir.to_tensor(c, vt, writable=True))
    explicit = None if token_dims == tuple(range(rank - 2)) or (rank == 3 and token_dims == (0,)) else token_dims
    y = body.assign("y", _ir.cache_write(v_t, vt, (s_t, st), c_t, vt, token_dims=explicit))
    body.emit(_ir.materialize(y, vt, c))
    body.ret()
    text = _ir.function("cw", [(v, vt.memref()), (s, st.memref()), (c, vt.memref())], body, c_interface=True)
    config = kernel.KernelConfig(dtype=dtype, rank=rank, head_dim=D)
    module = _jit.compile_module(text, kernel.pipeline(config))
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3)(module.lookup("cw"))
    _writers[key] = (module, function)
    return function


def _setup(shape, form, dtype):
    rows, seq, per_row = SHAPES[shape]
    rng = np.random.default_rng(0)
    t = DTYPES[dtype]
    if shape == "decode":
        pos = rng.integers(0, per_row, (rows, seq)).astype(np.int64)
    else:
        pos = np.arange(seq, dtype=np.int64)[None].repeat(rows, 0)
    kw = dict(base=BASE, threads=1)
    if form in ("bshd", "bhsd"):
        if form == "bshd":
            kshape, cshape = (rows, seq, HKV, D), (rows, per_row, HKV, D)
        else:
            kshape, cshape = (rows, HKV, seq, D), (rows, HKV, per_row, D)
            kw["cache_layout"] = "bhsd"
        qshape, positions = None, pos
    else:
        tokens = rows * seq
        kshape, qshape = (tokens, HKV, D), ((tokens, HQ, D) if form == "paged+q" else None)
        blocks = per_row // PAGE
        table = rng.permutation(rows * blocks).reshape(rows, blocks)
        cshape = (rows * blocks, PAGE, HKV, D)
        positions = pos.reshape(-1)
        kw.update(cache_layout="paged", block_table=table,
                  batch_indices=np.repeat(np.arange(rows), seq))
    k = rng.standard_normal(kshape).astype(t)
    v = rng.standard_normal(kshape).astype(t)
    q = rng.standard_normal(qshape).astype(t) if qshape else None
    # Zeroed (calloc'ed) caches: only the pages the appends write become resident.
    kc, vc = np.zeros(cshape, t), np.zeros(cshape, t)
    return k, v, q, kc, vc, positions, kw


def _check(form, k, v, q, kc, vc, positions, kw, q_rot, slots):
    token_dims = (0, 2) if form == "bhsd" else None
    dims = token_dims or tuple(range(k.ndim - 2))
    y = reference.apply(k.astype(np.float64), positions, base=BASE, token_dims=token_dims)
    tol = 1e-5 if k.dtype == np.float32 else 1e-2

    def rows(array, cache_layout):
        if cache_layout == "paged":
            return array.reshape((-1,) + array.shape[2:])
        moved = np.moveaxis(array, dims, range(len(dims)))
        return moved.reshape((-1,) + moved.shape[len(dims):])

    layout = kw.get("cache_layout", "bshd")
    flat = slots.reshape(-1)
    got_k, got_v = rows(kc, layout)[flat], rows(vc, layout)[flat]
    want_k = np.moveaxis(y, dims, range(len(dims))).reshape(got_k.shape)
    err = np.abs(got_k.astype(np.float64) - want_k).max() / np.abs(want_k).max()
    assert err < tol, f"{form}: k rows relative error {err:.3g}"
    want_v = np.moveaxis(v, dims, range(len(dims))).reshape(got_v.shape)
    assert (got_v.view(np.uint8) == want_v.view(np.uint8)).all(), f"{form}: v rows not copied exactly"
    untouched = np.ones(rows(kc, layout).shape[0], bool)
    untouched[flat] = False
    assert not rows(kc, layout)[untouched].any() and not rows(vc, layout)[untouched].any(), \
        f"{form}: a row outside the slots was written"
    if q is not None:
        want = reference.apply(q.astype(np.float64), positions, base=BASE)
        err = np.abs(q_rot.astype(np.float64) - want).max() / np.abs(want).max()
        assert err < tol, f"{form}: q relative error {err:.3g}"


def _slots(form, positions, kc, kw):
    if form in ("bshd", "bhsd"):
        max_len = kc.shape[1] if form == "bshd" else kc.shape[2]
        return np.arange(positions.shape[0])[:, None] * max_len + positions
    table = kw["block_table"]
    return table[kw["batch_indices"], positions // PAGE] * PAGE + positions % PAGE


def _numpy_rotate(x, pos, inv_freq, head_axis):
    xf = x.astype(np.float32)
    freqs = pos[..., None].astype(np.float32) * inv_freq
    emb = np.expand_dims(np.concatenate([freqs, freqs], axis=-1), head_axis)
    half = D // 2
    rotated = np.concatenate([-xf[..., half:], xf[..., :half]], axis=-1)
    return (xf * np.cos(emb) + rotated * np.sin(emb)).astype(x.dtype)


def run_row(lib, shape, form, dtype, timing):
    k, v, q, kc, vc, positions, kw = _setup(shape, form, dtype)
    slots = _slots(form, positions, kc, kw)
    q_out = np.empty(q.shape, q.dtype) if q is not None else None
    q_rot = rope_mlir.append_kv(k, v, kc, vc, positions, q=q, out_q=q_out, **kw)
    _check(form, k, v, q, kc, vc, positions, kw, q_rot, slots)

    token_dims = (0, 2) if form == "bhsd" else None
    resolved = token_dims or tuple(range(k.ndim - 2))
    fields = dict(dtype=dtype, rank=k.ndim, head_dim=D, base=BASE, positions="explicit", threads=1,
                  token_dims=token_dims)
    append = cache.compile_append(**fields, slots=True, cache_write=True, query=q is not None)
    paged = form.startswith("paged")
    kc_view = kc.reshape((-1,) + kc.shape[2:]) if paged else kc
    vc_view = vc.reshape((-1,) + vc.shape[2:]) if paged else vc
    args = [k, positions, slots, kc_view, v, vc_view] + ([q, q_out] if q is not None else [])
    fns = {"fused raw": _raw(append._function, args)}
    fns["fused call"] = lambda: rope_mlir.append_kv(k, v, kc, vc, positions, q=q, out_q=q_out, **kw)

    # Unfused: our rope kernel into a temporary, then our cache_write kernel for it and for v.
    k_tmp = np.empty_like(k)
    if q is not None:
        pair = fused.compile_qk(**fields)
        rotate = _raw(pair._pair, [q, positions, q_out, k, k_tmp])
    else:
        rotate = _raw(rope_mlir.compile(**fields)._function, [k, positions, k_tmp])
    writer = cache_writer(dtype, k.ndim, resolved)
    write_k = _raw(writer, [k_tmp, slots, kc_view])
    write_v = _raw(writer, [v, slots, vc_view])

    def unfused():
        rotate()
        write_k()
        write_v()
    fns["unfused raw"] = unfused

    inv_freq = (1.0 / BASE ** (np.arange(0, D, 2) / D)).astype(np.float32)
    head_axis = 1 if form == "bhsd" else -2
    if paged:
        kc_rows, vc_rows = kc_view, vc_view
        index = (slots,)
    else:
        kc_rows = kc if form == "bshd" else kc.transpose(0, 2, 1, 3)
        vc_rows = vc if form == "bshd" else vc.transpose(0, 2, 1, 3)
        index = (np.arange(positions.shape[0])[:, None], positions)

    def numpy_form():
        k_rot = _numpy_rotate(k, positions, inv_freq, head_axis)
        if form == "bhsd":
            kc_rows[index] = k_rot.transpose(0, 2, 1, 3)
            vc_rows[index] = v.transpose(0, 2, 1, 3)
        else:
            kc_rows[index] = k_rot
            vc_rows[index] = v
        if q is not None:
            q_out[...] = _numpy_rotate(q, positions, inv_freq, head_axis)
    fns["numpy"] = numpy_form

    moved = (k.nbytes * 2 + v.nbytes * 2 + (q.nbytes * 2 if q is not None else 0)) // 2
    fns["copy"] = _fused_report.copy_peer(lib, moved)
    return _fused_report.measure(fns, timing, unfused="unfused raw")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--forms", default=",".join(FORMS))
    parser.add_argument("--dtypes", default="bf16,f32")
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
                        print(f"  {shape:8} {form:8} {dtype:4} " +
                              " ".join(f"{n} {r[n] * 1e6:9.1f}" for n in names), file=sys.stderr, flush=True)
    lines = _fused_report.report("kv_cache_bench", argv, args.repeat, args.samples, ("shape", "form", "dtype"),
                                 rows, names, unfused="unfused raw")
    print("\n".join(lines))
    if args.write_docs:
        replace_region(pathlib.Path(args.write_docs), lines, BEGIN_MARK, END_MARK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
