#!/usr/bin/env python3
"""CPU performance of `rope.apply` against its peers, all measured in the same run.

    python3 bench/cpu_bench.py                 # full table (< 10 min on a 2-core x86 CPU)
    python3 bench/cpu_bench.py --quick         # fewer shapes and repetitions (< 60 s)
    python3 bench/cpu_bench.py --markdown      # the tables as markdown (docs/PERFORMANCE.md)
    python3 bench/cpu_bench.py --threads 4     # the "all threads" count (default: all cores)
    python3 bench/cpu_bench.py --quick --smoke # one tiny shape, a few repetitions (the pytest)

Per (shape, dtype, layout, cos/sin form, threads) it times, as medians of repeated samples (warm-up
excluded, `time.perf_counter_ns`):
  ours    the compiled `rope.apply` kernel (out of place, explicit int64 positions), called through ctypes
          with prebuilt memref descriptors (the kernel itself, as the C++ peers are called); `API` is the
          same kernel through `Kernel.__call__` (argument checks and descriptor building in Python);
  copy    a STREAM-style copy of the same bytes (read x, write y) by the C++ helper: the bandwidth ceiling;
  ORT     onnxruntime CPU `RotaryEmbedding`, opset 23 and com.microsoft, through IOBinding into a
          preallocated output (no output allocation or copy in the timed call);
  numpy   Hugging Face's apply_rotary_pos_emb (rotate_half) or GPT-J's rotate_every_two written in numpy,
          cos/sin gathered from the cache by position and cast to x's dtype, as HF does; single-threaded;
  C++     bench/cpp/rope_baseline.cpp: a hand-written loop over the same f32 cos/sin cache, compiled here
          with clang++-22 -O3 -march=native -fopenmp, `omp parallel for` over tokens.
Every output is checked against the float64 reference (`rope_mlir.reference.apply`) on the benchmarked
inputs before it is timed; a wrong output aborts the run (exit status 2).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import datetime
import hashlib
import math
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Callable, Dict, List, Optional

import ml_dtypes
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import rope_mlir  # noqa: E402
from rope_mlir import reference  # noqa: E402

CXX = "/usr/bin/clang++-22"
CXX_FLAGS = ["-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17"]
BASELINE_SRC = ROOT / "bench" / "cpp" / "rope_baseline.cpp"

NP_DTYPES = {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16)}
HEAD_DIM = 128
CACHE_ROWS = 8192          # covers positions up to 8191 (decode positions are near 4096)
BASE = 10000.0

# Targets (docs/PERFORMANCE.md): large shapes
TARGET_BW_FRACTION = 0.85  # of the in-run copy bandwidth
TARGET_VS_ORT = 1.5
TARGET_VS_CXX = 1.0
TARGET_COMPUTED_VS_CACHE = 1.10
# decode shapes
TARGET_DECODE_OVERHEAD_US = 2.0

# Accepted relative error (reference.relative_error's measure: max|y - r| / max|r|) before a peer counts
# as wrong. f32: ours meets ROPE.md §5's 1e-6; peers compute in f32 with an f32 cache. bf16: ours rounds
# once (2^-8 of the largest output at worst); peers that compute in bf16 (numpy HF) round three times.
TOLERANCE = {
    ("f32", "ours"): 1e-6,
    ("f32", "peer"): 1e-5,
    ("bf16", "ours"): 2.0 ** -8,
    ("bf16", "peer"): 2.0 ** -6,
}


# -- shapes -------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    batch: int
    seq: int
    heads: int
    decode: bool

    @property
    def x_shape(self):
        return (self.batch, self.seq, self.heads, HEAD_DIM)

    @property
    def tokens(self) -> int:
        return self.batch * self.seq

    def positions(self, rng) -> np.ndarray:
        if self.decode:
            # T sequences of a decode batch, one new token each, at lengths near 4096.
            return rng.integers(4000, 4200, size=(self.batch, self.seq), dtype=np.int64)
        return np.broadcast_to(np.arange(self.seq, dtype=np.int64), (self.batch, self.seq)).copy()


def shapes_for(args) -> List[Shape]:
    decode = {t: Shape(f"decode T={t}", t, 1, 32, True) for t in (1, 8, 64)}
    prefill = Shape("prefill Q", 1, 4096, 32, False)
    gqa = Shape("GQA K", 1, 4096, 8, False)
    if args.smoke:
        return [Shape("smoke", 1, 64, 8, False)]
    if args.quick:
        return [decode[1], decode[64], gqa]
    return [decode[1], decode[8], decode[64], prefill, gqa]


# -- timing -------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Timing:
    samples: int          # samples taken (median over them)
    min_seconds: float    # each measurement runs at least this long in total (where max allows)
    max_seconds: float    # cap for slow peers (fewer samples, at least 3)
    quiesce: float        # sleep after a multi-threaded peer so its spinning workers go idle


def measure(fn: Callable[[], object], timing: Timing, best: bool = False) -> float:
    """Median (`best`: minimum, STREAM's convention for a ceiling) seconds per call of fn: calibration doubles the calls per sample until a batch takes
    >= 0.2 ms (these calls are the warm-up), then `samples` batches are timed."""
    fn()
    calls = 1
    while True:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter_ns() - start
        if elapsed >= 200_000 or calls >= 1 << 16:
            break
        calls *= 2
    per_call = max(elapsed / calls, 1.0)
    samples = timing.samples
    if per_call * samples > timing.max_seconds * 1e9:
        samples = max(3, int(timing.max_seconds * 1e9 // per_call))
    inner = max(1, math.ceil(timing.min_seconds * 1e9 / samples / per_call))
    times = []
    for _ in range(samples):
        start = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter_ns() - start) / inner)
    return (min(times) if best else statistics.median(times)) * 1e-9


# -- the C++ peers ------------------------------------------------------------------------------------
def build_baseline(workdir: pathlib.Path) -> ctypes.CDLL:
    digest = hashlib.sha256(BASELINE_SRC.read_bytes()).hexdigest()[:12]
    library = workdir / f"rope_baseline_{digest}.so"
    command = [CXX, *CXX_FLAGS, str(BASELINE_SRC), "-o", str(library)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"building the C++ baseline failed:\n{' '.join(command)}\n{result.stderr}")
    lib = ctypes.CDLL(str(library))
    vp, i64, cint = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.rope_baseline.argtypes = [vp, vp, vp, vp, vp, i64, i64, i64, cint, cint, cint]
    lib.rope_baseline.restype = None
    lib.copy_baseline.argtypes = [vp, vp, i64, cint]
    lib.copy_baseline.restype = None
    return lib


# -- onnxruntime ---------------------------------------------------------------------------------------
class OrtPeer:
    """One onnxruntime RotaryEmbedding session (3D X [B, S, H*D], the memory layout of our [B, S, H, D])
    run through IOBinding into a preallocated output; `error` says why it is n/a."""

    def __init__(self, domain: str, dtype: str, heads: int, interleaved: bool, threads: int):
        self.error: Optional[str] = None
        self.session = None
        try:
            import onnxruntime as ort
            from onnx import TensorProto, helper
        except ImportError as error:
            self.error = f"onnxruntime/onnx not installed ({error})"
            return
        elem = {"f32": TensorProto.FLOAT, "bf16": TensorProto.BFLOAT16}[dtype]
        hidden = heads * HEAD_DIM
        x = helper.make_tensor_value_info("X", elem, ["B", "S", hidden])
        y = helper.make_tensor_value_info("Y", elem, ["B", "S", hidden])
        # ORT requires the caches in X's type.
        cos = helper.make_tensor_value_info("cos_cache", elem, ["M", HEAD_DIM // 2])
        sin = helper.make_tensor_value_info("sin_cache", elem, ["M", HEAD_DIM // 2])
        pos = helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["B", "S"])
        if domain == "com.microsoft":
            node = helper.make_node("RotaryEmbedding", ["X", "position_ids", "cos_cache", "sin_cache"],
                                    ["Y"], domain="com.microsoft", interleaved=int(interleaved))
            inputs = [x, pos, cos, sin]
            opsets = [helper.make_opsetid("", 23), helper.make_opsetid("com.microsoft", 1)]
        else:
            node = helper.make_node("RotaryEmbedding", ["X", "cos_cache", "sin_cache", "position_ids"],
                                    ["Y"], interleaved=int(interleaved), num_heads=heads)
            inputs = [x, cos, sin, pos]
            opsets = [helper.make_opsetid("", 23)]
        graph = helper.make_graph([node], "rope", inputs, [y])
        model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(model.SerializeToString(), options,
                                                providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001 - reported as the reason for n/a
            self.error = _first_line(error)

    def bind(self, x, positions, cos, sin, out) -> Optional[Callable[[], object]]:
        """The timed call, after one checked run; None (and `error`) when ORT cannot run it."""
        if self.session is None:
            return None
        b, s, h, d = x.shape
        binding = self.session.io_binding()
        binding.bind_cpu_input("X", x.reshape(b, s, h * d))
        binding.bind_cpu_input("position_ids", positions)
        binding.bind_cpu_input("cos_cache", cos)
        binding.bind_cpu_input("sin_cache", sin)
        binding.bind_output("Y", "cpu", 0, out.dtype, [b, s, h * d], out.ctypes.data)
        session = self.session

        def run():
            session.run_with_iobinding(binding)
        try:
            run()
        except Exception as error:  # noqa: BLE001 - a kernel missing for this type
            self.error = _first_line(error)
            return None
        return run


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:160]


# -- numpy, the Hugging Face way -------------------------------------------------------------------------
def numpy_hf(x, positions, cos_cache, sin_cache, interleaved: bool):
    """What a Python user writes: HF Llama's rotate_half, or GPT-J's rotate_every_two, on [B, S, H, D]."""
    cos = cos_cache[positions]                      # [B, S, D/2]
    sin = sin_cache[positions]
    half = x.shape[-1] // 2
    if interleaved:
        cos = np.repeat(cos, 2, axis=-1)[:, :, None, :].astype(x.dtype)
        sin = np.repeat(sin, 2, axis=-1)[:, :, None, :].astype(x.dtype)
        rotated = np.stack((-x[..., 1::2], x[..., ::2]), axis=-1).reshape(x.shape)
    else:
        cos = np.concatenate((cos, cos), axis=-1)[:, :, None, :].astype(x.dtype)
        sin = np.concatenate((sin, sin), axis=-1)[:, :, None, :].astype(x.dtype)
        rotated = np.concatenate((-x[..., half:], x[..., :half]), axis=-1)
    return x * cos + rotated * sin


# -- ours --------------------------------------------------------------------------------------------------
def kernel_fields() -> set:
    return {f.name for f in dataclasses.fields(rope_mlir.KernelConfig)}


def our_kernel(dtype: str, layout: str, cache: bool, threads: int, lowering: Optional[str],
               inplace: bool = False):
    extra = dict(inplace=True) if inplace else {}
    fields = kernel_fields()
    if "threads" in fields:
        extra["threads"] = threads
    if "lowering" in fields and lowering is not None:
        extra["lowering"] = lowering
    return rope_mlir.compile(dtype=dtype, rank=4, head_dim=HEAD_DIM, layout=layout, positions="explicit",
                             positions_dtype="i64", cache="gathered" if cache else None, cache_dtype="f32",
                             **extra)


def raw_call(kernel, x, positions, cos, sin, out) -> Optional[Callable[[], object]]:
    """The compiled function called directly with prebuilt memref descriptors (what Kernel.__call__
    does after its checks), or None if the package's internals changed."""
    try:
        from rope_mlir import _jit
        arrays = [x, positions] + ([cos, sin] if kernel.config.cache else []) + [out]
        descriptors = [_jit.memref_descriptor(a) for a in arrays]
        addresses = [ctypes.addressof(d) for d in descriptors]
        function = kernel._function
    except (AttributeError, ImportError, TypeError):
        return None

    def run(function=function, addresses=addresses, keep=(arrays, descriptors)):
        function(*addresses)
    return run


# -- correctness ---------------------------------------------------------------------------------------------
def relative_error(actual: np.ndarray, ref: np.ndarray, ref_scale: float) -> float:
    """reference.relative_error's measure (max|y - r| / max|r|), in chunks to stay fast on 16M elements."""
    flat_a, flat_r = actual.reshape(-1), ref.reshape(-1)
    worst = 0.0
    step = 1 << 22
    for i in range(0, flat_a.size, step):
        diff = np.abs(flat_a[i:i + step].astype(np.float64) - flat_r[i:i + step])
        chunk = float(np.max(diff, initial=0.0))
        if not math.isfinite(chunk):
            return math.inf
        worst = max(worst, chunk)
    return worst / max(ref_scale, 1e-30)


class Checker:
    def __init__(self):
        self.worst: Dict[tuple, float] = {}

    def check(self, who: str, kind: str, dtype: str, actual, ref, scale, where: str):
        error = relative_error(np.asarray(actual), ref, scale)
        key = (who, dtype)
        self.worst[key] = max(self.worst.get(key, 0.0), error)
        bound = TOLERANCE[(dtype, kind)]
        if not error <= bound:
            print(f"\nWRONG OUTPUT: {who} on {where}: relative error {error:.3g} > {bound:.3g} "
                  "against the float64 reference; aborting.", file=sys.stderr)
            raise SystemExit(2)


# -- one configuration -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Row:
    shape: Shape
    dtype: str
    layout: str
    form: str             # "computed" | "cache"
    threads: int
    bytes: int
    ours: float           # seconds (raw call, or API if raw is unavailable)
    api: float
    copy: float
    empty: float          # the copy helper called with 0 bytes: the call (and fork/join) floor
    ort23: Optional[float]
    ortms: Optional[float]
    numpy: float
    cxx: float
    other_form: float     # ours, the other cos/sin form, same threads
    inplace: Optional[float]  # ours computed, rotating x in place (out=x), same threads


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


def quiesce(timing: Timing, threads: int):
    if threads > 1 and timing.quiesce:
        time.sleep(timing.quiesce)


def run_config(shape: Shape, dtype: str, layout: str, thread_counts: List[int], args, timing: Timing,
               lib, checker: Checker, ort_notes: Dict[str, str]) -> List[Row]:
    rng = np.random.default_rng(zlib.crc32(f"{shape.name} {dtype} {layout}".encode()))
    interleaved = layout == "interleaved"
    x = rng.standard_normal(shape.x_shape, dtype=np.float32).astype(NP_DTYPES[dtype])
    positions = shape.positions(rng)
    pos_flat = np.ascontiguousarray(positions.reshape(-1))
    theta, _ = reference.inv_frequencies(HEAD_DIM, BASE, None, head_dim=HEAD_DIM, seq_len=CACHE_ROWS)
    cos64, sin64 = reference.cos_sin(np.arange(CACHE_ROWS), theta)
    cos, sin = cos64.astype(np.float32), sin64.astype(np.float32)
    out = np.empty_like(x)
    nbytes = x.nbytes + out.nbytes
    where = f"{shape.name} {dtype} {layout}"

    refs = {}
    refs["computed"] = reference.apply(x, positions, layout=layout, base=BASE)
    refs["cache"] = reference.apply(x, positions, layout=layout, cos_cache=cos, sin_cache=sin)
    scales = {k: float(np.max(np.abs(v))) for k, v in refs.items()}

    def check(who, kind, actual, form="cache", threads=1):
        checker.check(who, kind, dtype, actual, refs[form], scales[form], f"{where} threads={threads}")

    # numpy: single-threaded by nature, measured once for both thread counts.
    check("numpy HF", "peer", numpy_hf(x, positions, cos, sin, interleaved))
    t_numpy = measure(lambda: numpy_hf(x, positions, cos, sin, interleaved), timing)

    rows = []
    for threads in thread_counts:
        times = {}
        for form in ("computed", "cache"):
            kernel = our_kernel(dtype, layout, form == "cache", threads, args.lowering)
            extra = dict(cos_cache=cos, sin_cache=sin) if form == "cache" else {}
            out.fill(0)
            kernel(x, positions, out=out, **extra)
            check(f"ours {form}", "ours", out, form, threads)
            api = measure(lambda: kernel(x, positions, out=out, **extra), timing)
            raw = raw_call(kernel, x, positions, cos, sin, out)
            if raw is not None:
                out.fill(0)
                raw()
                check(f"ours {form}", "ours", out, form, threads)
                quiesce(timing, threads)
                times[form] = (measure(raw, timing), api)
            else:
                times[form] = (api, api)
            quiesce(timing, threads)

        # In place (out = x, how serving stacks rotate q/k): the same bytes, but every line written was
        # just read, so there is no write-allocate read of a separate output.
        scratch = x.copy()
        kernel = our_kernel(dtype, layout, False, threads, args.lowering, inplace=True)
        kernel(scratch, positions, out=scratch)
        check("ours computed in place", "ours", scratch, "computed", threads)
        try:
            from rope_mlir import _jit
            keep = [_jit.memref_descriptor(a) for a in (scratch, positions)]
            addresses = [ctypes.addressof(d) for d in keep]
            t_inplace = measure(lambda: kernel._function(*addresses), timing)
        except (AttributeError, ImportError, TypeError):
            t_inplace = measure(lambda: kernel(scratch, positions, out=scratch), timing)
        quiesce(timing, threads)

        # Addresses as plain ints: `array.ctypes.data` in the timed call would cost microseconds.
        xp, yp, pp, cp, sp = (a.ctypes.data for a in (x, out, pos_flat, cos, sin))
        # Ceilings take the best sample (as STREAM reports its best rate): a sample slowed by another
        # process would otherwise lower the bar ours is held to.
        t_copy = measure(lambda: lib.copy_baseline(xp, yp, x.nbytes, threads), timing, best=True)
        # The same call copying nothing: ctypes plus (threads > 1) an OpenMP fork/join.
        t_empty = measure(lambda: lib.copy_baseline(xp, yp, 0, threads), timing, best=True)
        quiesce(timing, threads)

        def cxx_fn():
            lib.rope_baseline(xp, yp, pp, cp, sp, shape.tokens, shape.heads, HEAD_DIM, int(interleaved),
                              int(dtype == "bf16"), threads)
        out.fill(0)
        cxx_fn()
        check("C++ loop", "peer", out, "cache", threads)
        t_cxx = measure(cxx_fn, timing)
        quiesce(timing, threads)

        t_ort = {}
        for domain, label in (("", "ORT opset 23"), ("com.microsoft", "ORT com.microsoft")):
            peer = OrtPeer(domain, dtype, shape.heads, interleaved, threads)
            ort_out = np.zeros_like(x)
            fn = peer.bind(x, positions, cos.astype(x.dtype), sin.astype(x.dtype), ort_out)
            if fn is None:
                ort_notes.setdefault(f"{label} {dtype}", peer.error or "unavailable")
                t_ort[domain] = None
                continue
            check(label, "peer", ort_out, "cache", threads)
            t_ort[domain] = measure(fn, timing)
            quiesce(timing, threads)

        for form, other in (("computed", "cache"), ("cache", "computed")):
            rows.append(Row(shape, dtype, layout, form, threads, nbytes, times[form][0], times[form][1],
                            t_copy, t_empty, t_ort[""], t_ort["com.microsoft"], t_numpy, t_cxx, times[other][0],
                            t_inplace if form == "computed" else None))
    return rows


# -- report ----------------------------------------------------------------------------------------------------
def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def format_rows(rows: List[Row], all_threads: bool):
    numpy_label = "×numpy(1T)" if all_threads else "×numpy"
    header = ["shape", "dtype", "layout", "cos/sin", "thr", "ours µs", "API µs", "GB/s", "copy µs",
              "floor µs", "of copy", "×ORT23", "×ORTms", numpy_label, "×C++", "comp/cache", "ovh µs",
              "in place µs", "in place of copy"]
    table = []
    for r in rows:
        large = not r.shape.decode
        fraction = r.copy / r.ours

        def speedup(peer, target):
            if peer is None:
                return "n/a"
            value = peer / r.ours
            return f"{value:.2f}" + (f" {verdict(value >= target)}" if large else "")
        if r.form == "computed":
            ratio = r.ours / r.other_form
            comp = f"{ratio:.2f}" + (f" {verdict(ratio <= TARGET_COMPUTED_VS_CACHE)}" if large else "")
        else:
            comp = "—"
        if r.shape.decode:
            # Bandwidth time = the same-bytes copy less its empty-call floor.
            overhead = (r.ours - (r.copy - r.empty)) * 1e6
            ovh = f"{overhead:.2f} {verdict(overhead < TARGET_DECODE_OVERHEAD_US)}"
        else:
            ovh = "—"
        table.append([
            r.shape.name, r.dtype, r.layout, r.form, str(r.threads),
            _us(r.ours), _us(r.api), f"{r.bytes / r.ours / 1e9:.1f}", _us(r.copy), _us(r.empty) + (" !" if contended(r) else ""),
            f"{fraction:.2f}" + (f" {verdict(fraction >= TARGET_BW_FRACTION)}" if large else ""),
            speedup(r.ort23, TARGET_VS_ORT), speedup(r.ortms, TARGET_VS_ORT),
            speedup(r.numpy, 0.0).replace(" PASS", ""), speedup(r.cxx, TARGET_VS_CXX), comp, ovh,
            _us(r.inplace) if r.inplace else "—",
            f"{r.copy / r.inplace:.2f}" if r.inplace else "—"])
    return header, table


# An empty parallel call (ctypes + OpenMP fork/join) takes ~2-3 µs on an idle 2-core machine; tens of
# µs mean another process held a core while the row was measured.
CONTENDED_FLOOR = 10e-6


def contended(r: Row) -> bool:
    return r.empty > CONTENDED_FLOOR


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


def print_table(title: str, header, table, markdown: bool):
    print()
    if markdown:
        print(f"**{title}**")
        print()
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" if i < 4 else "---:" for i in range(len(header))) + "|")
        for line in table:
            print("| " + " | ".join(line) + " |")
        return
    print(title)
    widths = [max(len(h), *(len(line[i]) for line in table)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) if i < 4 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for line in table:
        print("  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))


def machine_line() -> str:
    model = platform.processor() or "unknown CPU"
    flags = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = line
                break
    except OSError:
        pass
    avx512 = "AVX-512" + ("+BF16" if "avx512_bf16" in flags else "") if "avx512f" in flags else "no AVX-512"
    return f"{model}, {os.cpu_count()} logical CPUs, {avx512}, {platform.machine()}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer shapes and repetitions (< 60 s)")
    parser.add_argument("--smoke", action="store_true", help="one tiny shape, a few repetitions (tests)")
    parser.add_argument("--threads", type=int, default=0,
                        help="thread count of the 'all threads' table (default: all cores)")
    parser.add_argument("--lowering", default=None,
                        help="KernelConfig.lowering to pass when the package has it (default: its default)")
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument("--dtypes", default="f32,bf16", help="comma-separated subset of f32,bf16")
    args = parser.parse_args(argv)

    all_threads = args.threads or os.cpu_count() or 1
    thread_counts = [1] if all_threads == 1 else [1, all_threads]
    if args.smoke:
        timing = Timing(samples=3, min_seconds=0.002, max_seconds=0.5, quiesce=0.0)
    elif args.quick:
        timing = Timing(samples=5, min_seconds=0.05, max_seconds=1.0, quiesce=0.05)
    else:
        timing = Timing(samples=21, min_seconds=0.2, max_seconds=3.0, quiesce=0.25)
    dtypes = [d for d in args.dtypes.split(",") if d]
    for d in dtypes:
        if d not in NP_DTYPES:
            parser.error(f"unknown dtype {d!r}")

    fields = kernel_fields()
    threads_supported = "threads" in fields
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = "not installed"

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rope_cpu_bench_") as workdir:
        lib = build_baseline(pathlib.Path(workdir))  # stays mapped after the file is removed
    checker = Checker()
    ort_notes: Dict[str, str] = {}
    rows: List[Row] = []
    for shape in shapes_for(args):
        for dtype in dtypes:
            for layout in ("half", "interleaved"):
                progress(f"[{time.perf_counter() - started:6.1f} s] {shape.name} {dtype} {layout}")
                rows += run_config(shape, dtype, layout, thread_counts, args, timing, lib, checker,
                                   ort_notes)

    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    print(f"# rope.apply CPU benchmark ({mode}), {datetime.date.today().isoformat()}")
    print(f"machine: {machine_line()}")
    print(f"onnxruntime {ort_version}, numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"C++ peer: {CXX} {' '.join(CXX_FLAGS)}")
    lowering = ("lowering=" + (args.lowering or str(getattr(rope_mlir.KernelConfig, "lowering", "?")))
                if "lowering" in fields else "lowering: linalg loops (KernelConfig has no 'lowering')")
    print(f"ours: rope_mlir {rope_mlir.__version__}, {lowering}; " +
          ("threads passed as KernelConfig.threads" if threads_supported else
           "KernelConfig has no 'threads': ours runs single-threaded in the all-threads table"))
    load = f"load average {load_before:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    if max(load_before, os.getloadavg()[0]) > 0.5:
        load += " (WARNING: other processes competed for the CPUs; numbers are noisy)"
    print(load)
    print(f"timing: median (copy and call floor: best) of up to {timing.samples} samples, each >= {timing.min_seconds / timing.samples * 1e3:.2g}"
          f" ms of back-to-back calls (slow peers: >= 3 samples); warm-up excluded")
    for thr in thread_counts:
        header, table = format_rows([r for r in rows if r.threads == thr], thr > 1)
        title = ("single thread" if thr == 1 else
                 f"all threads ({thr}; numpy is single-threaded by nature)")
        print_table(title, header, table, args.markdown)
    print()
    noisy = sum(contended(r) for r in rows)
    if noisy:
        print(f"! {noisy} of {len(rows)} rows: the empty call took > {CONTENDED_FLOOR * 1e6:.0f} µs, i.e. "
              "another process held a core; rerun those on an idle machine")
    for key, note in sorted(ort_notes.items()):
        print(f"n/a: {key}: {note}")
    print("correctness: max relative error vs the float64 reference (max|y - r| / max|r|): " +
          ", ".join(f"{who} {dtype} {err:.2g}" for (who, dtype), err in sorted(checker.worst.items())) +
          " - all within tolerance")
    passes = sum(line.count("PASS") for _, t in [format_rows(rows, False)] for row in t for line in row)
    misses = sum(line.count("MISS") for _, t in [format_rows(rows, False)] for row in t for line in row)
    print(f"targets: {passes} PASS, {misses} MISS (large shapes: >= {TARGET_BW_FRACTION:.0%} of copy bandwidth, "
          f">= {TARGET_VS_ORT}x ORT, >= {TARGET_VS_CXX}x C++ loop, computed <= {TARGET_COMPUTED_VS_CACHE}x cache; "
          f"decode: overhead < {TARGET_DECODE_OVERHEAD_US} µs)")
    print(f"total time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
