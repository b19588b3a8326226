#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every token layout against the copy bandwidth, single thread (issue 18).

    python3 bench/layout_bench.py                  # f32, every layout and position form (~1 min)
    python3 bench/layout_bench.py --dtypes f32,bf16 --layouts BHSD --forms positions,cache
    python3 bench/layout_bench.py --repeat 3       # the whole table three times, then the medians
    python3 bench/layout_bench.py --repeat 3 --write-docs   # also rewrite its region of docs/PERFORMANCE.md
    python3 bench/layout_bench.py --smoke --dtypes f32,bf16 # 96 tokens of 3 heads: every row checked (the pytest)
    python3 bench/layout_bench.py --llc --repeat 3 # RoPE on arrays the last-level cache holds, vs copy and ORT

One large shape, 4096 tokens of 32 heads of D = 128, in three memory layouts:
  BSHD  [1, 4096, 32, 128]  token dims (0, 1): a token's heads are contiguous (the default);
  BHSD  [1, 32, 4096, 128]  token dims (0, 2): Hugging Face's layout, a token's heads S·D apart;
  flat  [4096, 32·128]      vLLM's flat q/k: a zero-copy view [4096, 32, 128] (token dim 0) is what the
                            kernel sees (rope.apply's head dim is the last dim);
and four position/cos-sin forms: explicit positions [B, S] (i64), a scalar offset, a per-row offset
[B] (two token dims only: not flat), and f32 cos/sin caches [8192, 64] gathered by explicit positions.

Per row it times, in interleaved rounds (bench/cpu_bench.py's measure_interleaved), the compiled kernel
called through ctypes with prebuilt descriptors (cpu_bench's `raw`; the scalar offset, an i64 argument,
through Kernel.__call__, a few µs more) and the same-bytes STREAM copy of bench/cpp/rope_baseline.cpp
(the ceiling). It prints `of copy` = best copy time / median kernel time (cpu_bench's convention and
target: >= 0.85 on large shapes) and `best of copy` = best copy / best kernel time (each as undisturbed
as the run saw it: less sensitive to another process taking the memory bus on a shared machine).
Outputs are checked against the float64 reference first.

Each row is measured twice in the same rounds: on numpy's own arrays (`numpy`: arrays of 1 MiB or more
come from mmap and start 16 bytes into a page, so every 64-byte vector access of x and out splits two
cache lines) and on copies of x and out placed on 64-byte boundaries (`64 B`: what torch's and JAX's
allocators give, and rope_mlir's own fresh outputs), each against the copy of the same placement.

And every row is measured cold as well (`cold` columns, cpu_bench.measure_cold): one call at a time, each
after reading a buffer twice the size of the last-level cache, so x and out come from memory. The warm
columns time batches of back-to-back calls: on a machine whose last-level cache holds much of the
working set (the Intel VM: 480 MiB of L3 against 64-128 MiB here) they measure a partly cache-resident
kernel against a partly cache-resident copy, which is not the bandwidth limit the target is about.

--llc (issue 35, item 6: RoPE itself when its arrays sit in the last-level cache) measures instead one
shape whose x and out together fit half of the last-level cache that sysfs reports (the highest cache
level of cpu0, /sys/devices/system/cpu/cpu0/cache/index*/{level,size}): [1, S, 32, 128] and HF's
[1, 32, S, 128], S the largest power of two <= 4096 with 2·S·32·128·itemsize <= --llc-fraction of it
(Intel's 300-480 MiB L3: S = 4096, the issue's shape; the AMD EPYC's 32 MiB: S = 512 in f32), rotate_half
pairs, f32 / f16 / bf16, explicit positions with cos/sin computed and with f32 caches gathered. Per row
and placement (numpy's own arrays, 64-byte-aligned copies), in the same interleaved rounds on the same x
and out: ours `raw` (cpu_bench.raw_call), ours `call` (Kernel.__call__, out= preallocated: the public
API), the copy of the same bytes, and onnxruntime's RotaryEmbedding (com.microsoft and opset 23,
intra_op_num_threads=1, run_with_iobinding into the same out; caches in x's dtype, as ORT requires; n/a
for bf16, which ORT's CPU kernels lack). Warm: batches of back-to-back calls (the arrays stay in the
cache, as a decode step's q and k are); cold: each call alone after cpu_bench.CacheFlusher. Every
output is checked against the float64 reference, and ORT's against ours, before anything is timed.
Probes of what bounds a row, in the same rounds: --variant NAME='OPTIONS' (raw kernels built with other
rope-to-llvm-cpu options, e.g. tile-heads=1, vector-bytes=64, or `static` for KernelConfig.static_shape),
--shapes BxS,... (the same bytes in per-head blocks of other lengths), --out-shift BYTES (out's offset in
a page against x's).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import pathlib
import shlex
import statistics
import sys
import tempfile
import zlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))

import cpu_bench  # noqa: E402
from _source import replace_region, source_line  # noqa: E402
import rope_mlir  # noqa: E402
from rope_mlir import reference  # noqa: E402

SEQ, HEADS, D, CACHE_ROWS, BASE = 4096, 32, 128, 8192, 10000.0
LAYOUTS = ("BSHD", "BHSD", "flat")
DOC = ROOT / "docs" / "PERFORMANCE.md"
BEGIN_MARK, END_MARK = "<!-- BEGIN layout_bench -->", "<!-- END layout_bench -->"
FORMS = ("positions", "offset", "row_offset", "cache")
LLC_BEGIN_MARK, LLC_END_MARK = "<!-- BEGIN layout_bench llc -->", "<!-- END layout_bench llc -->"
#: The longest sequence --llc takes (the large shape of the other rows and of issue 35).
LLC_MAX_SEQ = 4096
#: dtypes --llc knows, and the relative errors accepted (cpu_bench.TOLERANCE's measure): f16 rounds once
#: (2^-11 of the largest output at worst) for ours; ORT rounds its f16 cos/sin caches as well.
LLC_DTYPES = {"f32": np.dtype(np.float32), "bf16": cpu_bench.NP_DTYPES["bf16"], "f16": np.dtype(np.float16)}
LLC_TOLERANCE = {**cpu_bench.TOLERANCE, ("f16", "ours"): 2.0 ** -10, ("f16", "peer"): 2.0 ** -8}


def kernel_shape(layout: str):
    """The array the kernel sees and its token dims."""
    if layout == "BSHD":
        return (1, SEQ, HEADS, D), None
    if layout == "BHSD":
        return (1, HEADS, SEQ, D), (0, 2)
    return (SEQ, HEADS, D), None


#: KernelConfig.angle of every kernel (--angle).
ANGLE = "f64"

def run_row(lib, layout: str, form: str, dtype: str, pair_layout: str, timing, flush) -> dict:
    shape, token_dims = kernel_shape(layout)
    rng = np.random.default_rng(zlib.crc32(f"{layout} {form} {dtype} {pair_layout}".encode()))
    np_dtype = cpu_bench.NP_DTYPES[dtype]
    if layout == "flat":
        x = rng.standard_normal((SEQ, HEADS * D), dtype=np.float32).astype(np_dtype).reshape(shape)
        pos = np.arange(SEQ, dtype=np.int64)
    else:
        x = rng.standard_normal(shape, dtype=np.float32).astype(np_dtype)
        pos = np.arange(SEQ, dtype=np.int64)[None, :]
    out = np.empty_like(x)
    x64, out64 = aligned_copy(x), aligned_copy(out)
    theta, _ = reference.inv_frequencies(D, BASE, None, head_dim=D, seq_len=CACHE_ROWS)
    cos64, sin64 = reference.cos_sin(np.arange(CACHE_ROWS), theta)
    cos, sin = cos64.astype(np.float32), sin64.astype(np.float32)

    config = dict(dtype=dtype, rank=len(shape), head_dim=D, layout=pair_layout, threads=1, angle=ANGLE)
    if token_dims is not None:
        config["token_dims"] = token_dims
    ref_kw = dict(layout=pair_layout, base=BASE, token_dims=token_dims)
    offset = 7
    if form == "positions":
        kernel = rope_mlir.compile(positions="explicit", **config)
        arrays, ref = [x, pos, out], reference.apply(x, pos, **ref_kw)
    elif form == "offset":
        kernel = rope_mlir.compile(positions="offset", **config)
        arrays = [x, offset, out]
        ref = reference.apply(x, np.arange(SEQ, dtype=np.int64) + offset
                              if layout == "flat" else pos + offset, **ref_kw)
    elif form == "row_offset":
        kernel = rope_mlir.compile(positions="row_offset", **config)
        row_off = np.array([offset], dtype=np.int64)
        arrays, ref = [x, row_off, out], reference.apply(x, pos + offset, **ref_kw)
    else:
        kernel = rope_mlir.compile(positions="explicit", cache="gathered", cache_dtype="f32", **config)
        arrays = [x, pos, cos, sin, out]
        ref = reference.apply(x, pos, cos_cache=cos, sin_cache=sin, **ref_kw)

    def placed(xa, outa):
        """The call on (xa, outa) in place of (x, out), and a check of outa."""
        args = [xa if a is x else outa if a is out else a for a in arrays]
        if form == "offset":
            # A scalar offset is an i64 argument, not a memref: through Kernel.__call__.
            def fn():
                kernel(xa, offset=offset, out=outa)
        else:
            fn = cpu_bench.raw_call(kernel, args)
        outa.fill(0)
        fn()
        scale = float(np.max(np.abs(ref)))
        error = cpu_bench.relative_error(outa, ref, scale)
        if error > cpu_bench.TOLERANCE[(dtype, "ours")]:
            raise SystemExit(f"WRONG OUTPUT: {layout} {form} {dtype} {pair_layout}: {error:.2g}")
        xp, yp = xa.ctypes.data, outa.ctypes.data
        return fn, lambda: lib.copy_baseline(xp, yp, xa.nbytes, 1)

    ours, copy = placed(x, out)
    ours64, copy64 = placed(x64, out64)
    fns = {"ours": ours, "copy": copy, "ours64": ours64, "copy64": copy64}
    stats = cpu_bench.measure_interleaved(fns, timing)
    cold = cpu_bench.measure_cold(fns, timing.samples, flush)
    return dict(ours=stats["ours"].median, copy=stats["copy"].best, ours_best=stats["ours"].best,
                ours64=stats["ours64"].median, copy64=stats["copy64"].best,
                cold_ours=cold["ours"].median, cold_copy=cold["copy"].best,
                cold_ours64=cold["ours64"].median, cold_copy64=cold["copy64"].best)


def placed_copy(a: np.ndarray, page_offset: int) -> np.ndarray:
    """A copy of `a` starting `page_offset` bytes into a 4 KiB page."""
    raw = np.empty(a.nbytes + 8192, np.uint8)
    start = (page_offset - raw.ctypes.data) % 4096
    b = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    b[...] = a
    return b


#: --out-shift: the page offset of out in a third placement (x at offset 0), or None.
OUT_SHIFT = None


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of `a` starting on a 64-byte boundary."""
    raw = np.empty(a.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    b = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    b[...] = a
    return b


def last_level_cache() -> tuple:
    """(level, bytes) of the highest-level data or unified cache of cpu0 in sysfs, or (0, 0)."""
    best = (0, 0)
    for index in pathlib.Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind not in ("Data", "Unified"):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if text[-1:] in "KMG" else text
        if digits.isdigit():
            best = max(best, (level, int(digits) * scale))
    return best


def llc_seq(itemsize: int, llc_bytes: int, fraction: float, batch: int = 1) -> int:
    """The largest power of two S <= LLC_MAX_SEQ (at least 16) whose x and out, [batch, S, HEADS, D] each,
    fill at most `fraction` of the last-level cache."""
    seq = LLC_MAX_SEQ
    while seq > 16 and 2 * batch * seq * HEADS * D * itemsize > fraction * llc_bytes:
        seq //= 2
    return seq


def compile_with_options(config: dict, options: str, x_shape=None, positions_shape=None):
    """rope_mlir.compile(**config) with `options` (e.g. "vector-bytes=64 tile-heads=4") appended to its
    rope-to-llvm-cpu pipeline: --variant's kernels (what the pipeline's options, not exposed by
    KernelConfig, do to the same rows). The word `static` among them is no pipeline option but
    KernelConfig's static_shape and static_positions_shape: the row's own shapes compiled in."""
    from rope_mlir import kernel as kernel_module
    words = options.split()
    if "static" in words:
        words.remove("static")
        config = dict(config, static_shape=tuple(x_shape), static_positions_shape=tuple(positions_shape))
    options = " ".join(words)
    original = kernel_module.pipeline

    def pipeline(cfg):
        text = original(cfg)
        assert text.endswith("})"), text
        return text[:-2] + (" " + options if options else "") + "})"
    kernel_module.pipeline = pipeline
    try:
        return kernel_module.Kernel(rope_mlir.KernelConfig(**config))
    finally:
        kernel_module.pipeline = original


#: --variant NAME=OPTIONS: extra raw kernels timed in the same rounds as the --llc rows' own.
VARIANTS: dict = {}


def run_llc_row(lib, layout: str, form: str, dtype: str, seq: int, timing, flush, batch: int = 1) -> dict:
    """One --llc row: per placement, warm and cold stats of raw, call, copy and the ORT peers."""
    heads_outer = layout == "BHSD"
    shape = (batch, HEADS, seq, D) if heads_outer else (batch, seq, HEADS, D)
    token_dims = (0, 2) if heads_outer else None
    rng = np.random.default_rng(zlib.crc32(f"llc {layout} {form} {dtype} {batch} {seq}".encode()))
    x = rng.standard_normal(shape, dtype=np.float32).astype(LLC_DTYPES[dtype])
    pos = np.ascontiguousarray(np.broadcast_to(np.arange(seq, dtype=np.int64), (batch, seq)))
    theta, _ = reference.inv_frequencies(D, BASE, None, head_dim=D, seq_len=CACHE_ROWS)
    cos64, sin64 = reference.cos_sin(np.arange(CACHE_ROWS), theta)
    cos, sin = cos64.astype(np.float32), sin64.astype(np.float32)
    config = dict(dtype=dtype, rank=4, head_dim=D, layout="half", threads=1, angle=ANGLE, positions="explicit")
    if token_dims is not None:
        config["token_dims"] = token_dims
    caches = {}
    if form == "cache":
        config.update(cache="gathered", cache_dtype="f32")
        caches = dict(cos_cache=cos, sin_cache=sin)
    kernel = rope_mlir.compile(**config)
    variants = {name: compile_with_options(config, options, x.shape, pos.shape)
                for name, options in VARIANTS.items()}
    ref = reference.apply(x, pos, layout="half", base=BASE, token_dims=token_dims, **caches)
    scale = float(np.max(np.abs(ref)))
    where = f"--llc {layout} {form} {dtype} B={batch} S={seq}"

    def check(who, kind, actual):
        error = cpu_bench.relative_error(actual, ref, scale)
        if not error <= LLC_TOLERANCE[(dtype, kind)]:
            raise SystemExit(f"WRONG OUTPUT: {who} on {where}: relative error {error:.3g} against float64")

    peers = {}
    for domain, label in (("com.microsoft", "ortms"), ("", "ort23")):
        peer = cpu_bench.OrtPeer(domain, dtype, HEADS, False, 1, heads_outer)
        if peer.session is not None:
            peers[label] = peer
    result = {}
    placements = [("numpy", (x, np.empty_like(x))), ("64B", (aligned_copy(x), aligned_copy(x)))]
    if OUT_SHIFT is not None:
        # x at page offset 0, out OUT_SHIFT bytes into a page: how far apart x's and out's bytes of one
        # element are modulo 4 KiB (numpy's and the 64 B placements: 0).
        placements.append(("shift", (placed_copy(x, 0), placed_copy(x, OUT_SHIFT))))
    for placement, (xa, outa) in placements:
        fns = {"raw": cpu_bench.raw_call(kernel, [xa, pos] + ([cos, sin] if caches else []) + [outa]),
               "call": lambda xa=xa, outa=outa: kernel(xa, pos, out=outa, **caches)}
        for name, variant in variants.items():
            fns[f"v:{name}"] = cpu_bench.raw_call(variant, [xa, pos] + ([cos, sin] if caches else []) + [outa])
        for name in fns:
            outa.fill(0)
            fns[name]()
            check(f"ours {name}", "ours", outa)
        ours = outa.astype(np.float64)
        xp, yp = xa.ctypes.data, outa.ctypes.data
        outa.fill(0)
        lib.copy_baseline(xp, yp, xa.nbytes, 1)
        if not np.array_equal(outa.view(np.uint8), xa.view(np.uint8)):
            raise SystemExit(f"WRONG OUTPUT: copy_baseline on {where}")
        fns["copy"] = lambda xp=xp, yp=yp, n=xa.nbytes: lib.copy_baseline(xp, yp, n, 1)
        outa.fill(0)
        np.copyto(outa, xa)
        if not np.array_equal(outa.view(np.uint8), xa.view(np.uint8)):
            raise SystemExit(f"WRONG OUTPUT: np.copyto on {where}")
        fns["npcopy"] = lambda xa=xa, outa=outa: np.copyto(outa, xa)
        for label, peer in peers.items():
            outa.fill(0)
            fn = peer.bind(xa, pos, cos.astype(x.dtype), sin.astype(x.dtype), outa)
            if fn is None:
                continue
            check(f"ORT {label}", "peer", outa)
            # The same computation: ORT's rotation against ours, not only each against float64.
            error = cpu_bench.relative_error(outa, ours, scale)
            if not error <= LLC_TOLERANCE[(dtype, "peer")]:
                raise SystemExit(f"WRONG OUTPUT: ORT {label} differs from ours on {where}: {error:.3g}")
            fns[label] = fn
        warm = cpu_bench.measure_interleaved(fns, timing)
        cold = cpu_bench.measure_cold(fns, timing.samples, flush)
        for name in fns:
            result[f"{placement} warm {name}"] = warm[name]
            result[f"{placement} cold {name}"] = cold[name]
    result["bytes"] = 2 * x.nbytes
    return result


def llc_ratios(r: dict, placement: str, regime: str) -> dict:
    """`of copy` (best copy / median ours, cpu_bench's convention) of raw and call; ORT's median over
    ours' (> 1: ours faster) against call and raw; None where ORT did not run."""
    get = lambda name: r.get(f"{placement} {regime} {name}")  # noqa: E731
    copy = get("copy").best
    out = {"raw us": get("raw").median, "call us": get("call").median, "copy us": copy,
           "raw of copy": copy / get("raw").median, "call of copy": copy / get("call").median,
           "raw best of copy": copy / get("raw").best,
           "npcopy us": get("npcopy").best, "raw of npcopy": get("npcopy").best / get("raw").median,
           "call of npcopy": get("npcopy").best / get("call").median}
    for label in ("ortms", "ort23"):
        peer = get(label)
        out[f"{label} us"] = None if peer is None else peer.median
        out[f"{label}/call"] = None if peer is None else peer.median / get("call").median
        out[f"{label}/raw"] = None if peer is None else peer.median / get("raw").median
    return out


def llc_main(args, argv) -> int:
    level, llc_bytes = last_level_cache()
    if args.smoke:
        llc_bytes, level = 4 * (2 * 96 * HEADS * D * 4), level
    if not llc_bytes:
        raise SystemExit("--llc: no cache size in /sys/devices/system/cpu/cpu0/cache")
    flush = cpu_bench.CacheFlusher(1 << 20 if args.smoke else None)
    timing = cpu_bench.Timing(samples=args.samples, min_seconds=0.01 if args.smoke else 0.15, max_seconds=3.0,
                              quiesce=0.0)
    dtypes = args.dtypes.split(",") if args.dtypes_given else list(LLC_DTYPES)
    layouts = [l for l in args.layouts.split(",") if l != "flat"]
    forms = [f for f in (args.forms.split(",") if args.forms_given else ("positions", "cache"))
             if f in ("positions", "cache")]
    rows = {}
    with tempfile.TemporaryDirectory() as workdir:
        lib = cpu_bench.build_baseline(pathlib.Path(workdir))
        for _ in range(args.repeat):
            for dtype in dtypes:
                if args.shapes:
                    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
                else:
                    shapes = [(args.batch, args.seq or llc_seq(LLC_DTYPES[dtype].itemsize, llc_bytes,
                                                               args.llc_fraction, args.batch))]
                for (batch, seq), layout, form in itertools.product(shapes, layouts, forms):
                    r = run_llc_row(lib, layout, form, dtype, seq, timing, flush, batch)
                    rows.setdefault((layout, form, dtype, batch, seq), []).append(r)
                    w, c = llc_ratios(r, "numpy", "warm"), llc_ratios(r, "numpy", "cold")
                    w64 = llc_ratios(r, "64B", "warm")
                    ort = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
                    print(f"  {layout} {form:9} {dtype:4} B={batch} S={seq:<5} warm: raw {w['raw us'] * 1e6:7.0f} µs "
                          f"copy {w['copy us'] * 1e6:7.0f} µs  raw/call of copy {w['raw of copy']:.2f}/"
                          f"{w['call of copy']:.2f}  call of np.copyto {w['call of npcopy']:.2f}  "
                          f"64 B {w64['raw of copy']:.2f}  ORTms/call "
                          f"{ort(w['ortms/call'])}  cold: of copy {c['raw of copy']:.2f}/"
                          f"{c['call of copy']:.2f}  ORTms/call {ort(c['ortms/call'])}",
                          file=sys.stderr, flush=True)
                    for name in VARIANTS:
                        wv = r["numpy warm copy"].best / r[f"numpy warm v:{name}"].median
                        cv = r["numpy cold copy"].best / r[f"numpy cold v:{name}"].median
                        print(f"      variant {name} ({VARIANTS[name]}): warm of copy {wv:.2f}  cold {cv:.2f}",
                              file=sys.stderr, flush=True)
    load = os.getloadavg()[0]
    med = lambda rs, placement, regime, key: statistics.median(  # noqa: E731
        llc_ratios(r, placement, regime)[key] for r in rs)

    def med_opt(rs, placement, regime, key):
        values = [llc_ratios(r, placement, regime)[key] for r in rs]
        return None if any(v is None for v in values) else statistics.median(values)
    fmt = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    us = lambda v: "n/a" if v is None else f"{v * 1e6:.0f}"  # noqa: E731
    lines = [f"layout_bench --llc, {datetime.date.today().isoformat()}: "
             f"`python3 bench/layout_bench.py {shlex.join(argv if argv is not None else sys.argv[1:])}`"
             + (" (smoke mode: numbers meaningless)" if args.smoke else ""),
             "",
             f"- machine: {cpu_bench.machine_line()}",
             (f"- last-level cache (sysfs, cpu0): L{level} {llc_bytes >> 20} MiB; S chosen so that x and out "
             f"fill at most {args.llc_fraction:g} of it" + (f" (--seq {args.seq})" if args.seq else "")
             + (f"; B = {args.batch}" if args.batch != 1 else "")
             if not args.smoke else
             "- smoke: S from a pretend last-level cache of four times a 96-token f32 x and out"),
             f"- {source_line()}; onnxruntime {_ort_version()}",
             f"- single thread (ours threads=1, ORT intra_op_num_threads=1); per row the median over "
             f"{args.repeat} run(s), each of {args.samples} interleaved rounds of every column's function; "
             f"1-minute load average {load:.2f} at the end (this run keeps one CPU busy)",
             "- `copy`: bench/cpp/rope_baseline.cpp's STREAM copy of the same bytes (the ceiling of the other "
             "layout_bench tables); `np.copyto`: numpy's copy (memcpy) of the same bytes, issue 35's yardstick; "
             "both timed in the same rounds",
             "- `of copy`: best copy time / median time (cpu_bench's convention; target 0.85), `best of copy`: "
             "best copy / best time (both as undisturbed as the run saw them), `raw`: the "
             "compiled kernel through ctypes, `call`: Kernel.__call__ with out= preallocated; `ORTms/call`: "
             "onnxruntime com.microsoft RotaryEmbedding's median time / call's (target 1.5; `ORT23`: the "
             "opset-23 op); numpy's own arrays, the `64 B` column on 64-byte-aligned copies",
             f"- warm: batches of back-to-back calls on the same x and out; cold: each call alone after reading "
             f"a {flush.nbytes >> 20} MiB buffer",
             "",
             "| layout | positions | dtype | B×S | in+out MiB | warm: raw µs | call µs | copy µs | np.copyto µs "
             "| ORTms µs | raw of copy | raw best of copy | call of copy | call of np.copyto | 64 B: raw of copy "
             "| ORTms/call | ORT23/call | cold: raw µs | copy µs | np.copyto µs | raw of copy | raw best of copy "
             "| call of copy | call of np.copyto | 64 B: raw of copy | ORTms/call | ORT23/call |",
             "|---|---|---|---:|---:" + "|---:" * 22 + "|"]
    for (layout, form, dtype, batch, seq), rs in rows.items():
        cells = [layout, form, dtype, f"{batch}×{seq}", f"{rs[0]['bytes'] / (1 << 20):g}"]
        for regime in ("warm", "cold"):
            m = lambda key: med(rs, "numpy", regime, key)  # noqa: E731
            o = lambda key: med_opt(rs, "numpy", regime, key)  # noqa: E731
            if regime == "warm":
                cells += [us(m("raw us")), us(m("call us")), us(m("copy us")), us(m("npcopy us")),
                          us(o("ortms us"))]
            else:
                cells += [us(m("raw us")), us(m("copy us")), us(m("npcopy us"))]
            cells += [fmt(m("raw of copy")), fmt(m("raw best of copy")), fmt(m("call of copy")),
                      fmt(m("call of npcopy")),
                      fmt(med(rs, "64B", regime, "raw of copy")), fmt(o("ortms/call")), fmt(o("ort23/call"))]
        lines.append("| " + " | ".join(cells) + " |")
    if VARIANTS:
        lines += ["", "Variants (`--variant`: the raw kernel with these rope-to-llvm-cpu options, timed in the same "
                  "rounds; `raw of copy` of each, numpy placement, then 64 B"
                  + (f", then x page-aligned and out {OUT_SHIFT} bytes into a page" if OUT_SHIFT is not None else "")
                  + "):", "",
                  "| layout | positions | dtype | B×S | kernel | options | warm | cold | warm 64 B | cold 64 B |"
                  + (f" warm shift {OUT_SHIFT} | cold shift {OUT_SHIFT} |" if OUT_SHIFT is not None else ""),
                  "|---|---|---|---|---|---|---:|---:|---:|---:|" + ("---:|---:|" if OUT_SHIFT is not None else "")]
        for (layout, form, dtype, batch, seq), rs in rows.items():
            for name, options in [("default", "")] + list(VARIANTS.items()):
                key = "raw" if name == "default" else f"v:{name}"
                vals = [statistics.median(r[f"{pl} {regime} copy"].best / r[f"{pl} {regime} {key}"].median
                                          for r in rs)
                        for pl in ("numpy", "64B") + (("shift",) if OUT_SHIFT is not None else ())
                        for regime in ("warm", "cold")]
                lines.append(f"| {layout} | {form} | {dtype} | {batch}×{seq} | {name} | {options} | "
                             + " | ".join(f"{v:.2f}" for v in vals) + " |")
    print("\n".join(lines))
    if args.write_docs:
        replace_region(pathlib.Path(args.write_docs), lines, LLC_BEGIN_MARK, LLC_END_MARK)
    return 0


def _ort_version() -> str:
    try:
        import onnxruntime
        return onnxruntime.__version__
    except ImportError:
        return "not installed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="f32")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--forms", default=",".join(FORMS))
    parser.add_argument("--pairs", default="half,interleaved", help="pair layouts")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--angle", choices=("f64", "turns"), default="f64",
                        help="KernelConfig.angle of the computed forms (turns: no float wider than f32)")
    parser.add_argument("--samples", type=int, default=11)
    parser.add_argument("--smoke", action="store_true",
                        help="96 tokens of 3 heads, 3 samples: every row checked and timed, numbers meaningless "
                             "(the pytest)")
    parser.add_argument("--write-docs", nargs="?", const=str(DOC), default=None, metavar="FILE",
                        help=f"also write the report between {BEGIN_MARK} and {END_MARK} in FILE "
                             "(default: docs/PERFORMANCE.md)")
    parser.add_argument("--llc", action="store_true",
                        help="RoPE on arrays the last-level cache holds (issue 35, item 6): ours (raw and "
                             "Kernel.__call__) vs the copy vs onnxruntime, warm and cold; BSHD and BHSD, "
                             "half pairs, dtypes f32,f16,bf16 unless --dtypes is given")
    parser.add_argument("--llc-fraction", type=float, default=0.5,
                        help="--llc: the share of the last-level cache x and out may fill (default 0.5)")
    parser.add_argument("--seq", type=int, default=0, help="--llc: this S instead of the one from the cache size")
    parser.add_argument("--batch", type=int, default=1, help="--llc: B of [B, S, H, D] (default 1)")
    parser.add_argument("--shapes", default="", metavar="BxS,...",
                        help="--llc: these (B, S) instead of --batch and the S from the cache size, e.g. "
                             "1x512,64x8 (the same bytes in per-head blocks of 512 and 8 tokens)")
    parser.add_argument("--out-shift", type=int, default=None, metavar="BYTES",
                        help="--llc: also a placement with x page-aligned and out BYTES into a page (the "
                             "`shift` columns of the variants table)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=OPTIONS",
                        help="--llc: also time the raw kernel built with these rope-to-llvm-cpu options "
                             "(e.g. vb64='vector-bytes=64 tile-heads=4') in the same rounds; repeatable")
    args = parser.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    args.dtypes_given = any(a.startswith("--dtypes") for a in given)
    args.forms_given = any(a.startswith("--forms") for a in given)
    global ANGLE
    ANGLE = args.angle
    if args.smoke:
        global SEQ, HEADS
        SEQ, HEADS, args.samples = 96, 3, 3
    if args.llc:
        global OUT_SHIFT
        OUT_SHIFT = args.out_shift
        for spec in args.variant:
            name, _, options = spec.partition("=")
            VARIANTS[name] = options
        return llc_main(args, argv)
    timing = cpu_bench.Timing(samples=args.samples, min_seconds=0.01 if args.smoke else 0.15, max_seconds=3.0,
                              quiesce=0.0)
    flush = cpu_bench.CacheFlusher(1 << 20 if args.smoke else None)
    with tempfile.TemporaryDirectory() as workdir:
        lib = cpu_bench.build_baseline(pathlib.Path(workdir))
        rows = {}
        for _ in range(args.repeat):
            for dtype in args.dtypes.split(","):
                for layout in args.layouts.split(","):
                    for form in args.forms.split(","):
                        if form == "row_offset" and layout == "flat":
                            continue
                        for pair in args.pairs.split(","):
                            r = run_row(lib, layout, form, dtype, pair, timing, flush)
                            rows.setdefault((layout, form, dtype, pair), []).append(r)
                            print(f"  {layout:5} {form:10} {dtype:4} {pair:11} "
                                  f"ours {r['ours'] * 1e6:8.0f} µs  copy {r['copy'] * 1e6:8.0f} µs  "
                                  f"of copy {r['copy'] / r['ours']:.2f}"
                                  f"  best/best {r['copy'] / r['ours_best']:.2f}"
                                  f"  64 B: ours {r['ours64'] * 1e6:8.0f} µs  of copy "
                                  f"{r['copy64'] / r['ours64']:.2f}"
                                  f"  cold: of copy {r['cold_copy'] / r['cold_ours']:.2f}"
                                  f"  cold 64 B: {r['cold_copy64'] / r['cold_ours64']:.2f}",
                                  file=sys.stderr, flush=True)
    load = os.getloadavg()[0]
    lines = [f"layout_bench, {datetime.date.today().isoformat()}: "
             f"`python3 bench/layout_bench.py {shlex.join(argv if argv is not None else sys.argv[1:])}`"
             + (" (smoke mode: numbers meaningless)" if args.smoke else ""),
             "",
             f"- machine: {cpu_bench.machine_line()}",
             f"- {source_line()}",
             f"- single thread; per row the median over {args.repeat} run(s), each of {args.samples} "
             f"interleaved rounds of ours and the copy; 1-minute load average {load:.2f} at the end "
             f"(this run keeps one CPU busy)",
             "",
             "- arrays: `numpy` columns on numpy's own x and out (16 bytes into a page), `64 B` columns on "
             "copies placed on 64-byte boundaries, measured in the same rounds",
             f"- `cold` columns: each call alone after reading a {flush.nbytes >> 20} MiB buffer (twice the "
             f"last-level cache, cpu_bench.CacheFlusher), {args.samples} rounds: x and out come from "
             "memory; the other columns time batches of back-to-back calls, whose arrays a large "
             "last-level cache partly keeps",
             "",
             "| layout | positions | dtype | pairs | ours µs | copy µs | of copy | best of copy "
             "| 64 B: ours µs | 64 B: copy µs | 64 B: of copy "
             "| cold: ours µs | cold: copy µs | cold: of copy | cold 64 B: of copy |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (layout, form, dtype, pair), rs in rows.items():
        ours = statistics.median(r["ours"] for r in rs)
        copy = statistics.median(r["copy"] for r in rs)
        ratio = statistics.median(r["copy"] / r["ours"] for r in rs)
        best = statistics.median(r["copy"] / r["ours_best"] for r in rs)
        ours64 = statistics.median(r["ours64"] for r in rs)
        copy64 = statistics.median(r["copy64"] for r in rs)
        ratio64 = statistics.median(r["copy64"] / r["ours64"] for r in rs)
        cold_ours = statistics.median(r["cold_ours"] for r in rs)
        cold_copy = statistics.median(r["cold_copy"] for r in rs)
        cold_ratio = statistics.median(r["cold_copy"] / r["cold_ours"] for r in rs)
        cold_ratio64 = statistics.median(r["cold_copy64"] / r["cold_ours64"] for r in rs)
        lines.append(f"| {layout} | {form} | {dtype} | {pair} | {ours * 1e6:.0f} | {copy * 1e6:.0f} | "
                     f"{ratio:.2f} | {best:.2f} | {ours64 * 1e6:.0f} | {copy64 * 1e6:.0f} | "
                     f"{ratio64:.2f} | {cold_ours * 1e6:.0f} | {cold_copy * 1e6:.0f} | {cold_ratio:.2f} | "
                     f"{cold_ratio64:.2f} |")
    print("\n".join(lines))
    if args.write_docs:
        replace_region(pathlib.Path(args.write_docs), lines, BEGIN_MARK, END_MARK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
