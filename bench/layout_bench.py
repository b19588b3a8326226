#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every token layout against the copy bandwidth, single thread (issue 18).

    python3 bench/layout_bench.py                  # f32, every layout and position form (~1 min)
    python3 bench/layout_bench.py --dtypes f32,bf16 --layouts BHSD --forms positions,cache
    python3 bench/layout_bench.py --repeat 3       # the whole table three times, then the medians
    python3 bench/layout_bench.py --repeat 3 --write-docs   # also rewrite its region of docs/PERFORMANCE.md
    python3 bench/layout_bench.py --smoke --dtypes f32,bf16 # 96 tokens of 3 heads: every row checked (the pytest)

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
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
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


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of `a` starting on a 64-byte boundary."""
    raw = np.empty(a.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    b = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    b[...] = a
    return b


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
    args = parser.parse_args(argv)
    global ANGLE
    ANGLE = args.angle
    if args.smoke:
        global SEQ, HEADS
        SEQ, HEADS, args.samples = 96, 3, 3
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
             f"`python3 bench/layout_bench.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
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
