#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face Llama RoPE as a frontend emits it: raised to `rope.apply` against un-raised and the peers.

    python3 bench/frontend_bench.py                 # full run, tables on stdout (~1 min on a 2-core machine
                                                    # once Inductor's cache is warm; its first compile ~1 min)
    python3 bench/frontend_bench.py --quick         # fewer repetitions
    python3 bench/frontend_bench.py --write-docs    # full run; rewrites the frontend_bench region of
                                                    # docs/PERFORMANCE.md (appends the section if absent)
    /work/peers/bin/python bench/frontend_bench.py  # with the peers (torch, torch-mlir, IREE) importable

The module: transformers' LlamaRotaryEmbedding (inv_freq table, positions × inv_freq, cat, cos, sin) and
the q half of apply_rotary_pos_emb (q·cos + rotate_half(q)·sin), q in HF's [B, H, S, D], position_ids [B, S]
int64, exported by torch-mlir's fx importer to linalg on tensors (func @main), at two shapes:
  prefill  q [1, 32, 4096, 128], positions 0..4095
  decode   q [64, 32, 1, 128], one position per row, random in [1, 8192)
The modules are exported at bench time (into a temporary directory) when torch, transformers and
torch-mlir are importable, else read from bench/inputs/llama_rope_{prefill,decode}.mlir (committed, a few
KB: the only constant is the 64-entry inv_freq table). `--save-inputs` rewrites those files.

Columns, each the function's public call, single-threaded, timed as medians of repeated samples with the
samples of all functions of a shape interleaved round by round (bench/cpu_bench.py's measure_interleaved):
  raised     rope_mlir.jit(text) (default pipeline: rope-optimize, which raises the RoPE to rope.apply,
             then rope-to-llvm-cpu): argument checks, the compiled code, the result buffer adopted by numpy;
  un-raised  rope_mlir.jit(text, pipeline="builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"): the
             same IR lowered as the frontend emitted it;
  eager      the torch module in eager mode (torch.set_num_threads(1));
  Inductor   torch.compile(module) (Inductor, CPU), same thread count;
  IREE       iree.compiler.compile_str(text, target_backends=["llvm-cpu"], host CPU) run with
             iree.runtime's local-sync driver; inputs uploaded once, the result left as IREE's device array.
A column is "n/a" when its package is not importable (or the call fails: the reason is printed). Ratios
are named numerator/denominator, > 1: raised is faster. Every output is compared with the float64 numpy
reference: the same rotation in float64 with the module's own inv_freq table (SEMANTICS.md §7: what the IR says),
and, second table, with exact powers; "max rel err" is max|y - r| / max|r|.
A frontend's f32 angle (position × inv_freq rounded to f32) errs ~1e-4 at 4K positions (SEMANTICS.md §7); an
error above 1e-3 means a wrong output and aborts the run (exit status 2).
"""

from __future__ import annotations

import argparse
import re
import datetime
import os
import pathlib
import platform
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

# torch (and triton) before anything loads rope-mlir's library (FRONTENDS.md: else triton segfaults).
try:
    import torch
    torch.set_num_threads(1)
    try:
        import triton  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
except Exception:  # noqa: BLE001
    torch = None

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import rope_mlir  # noqa: E402
from rope_mlir import reference  # noqa: E402

from _source import replace_region as write_region, source_line  # noqa: E402
from cpu_bench import Timing, machine_line, measure_interleaved  # noqa: E402

DOC = ROOT / "docs" / "PERFORMANCE.md"
BEGIN_MARK = "<!-- BEGIN frontend_bench -->"
END_MARK = "<!-- END frontend_bench -->"
INPUTS = ROOT / "bench" / "inputs"
UNRAISED_PIPELINE = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"
BASE = 10000.0
WRONG = 1e-3       # relative error above which an output is wrong, not merely f32-angle imprecise

SHAPES = {"prefill": (1, 32, 4096, 128), "decode": (64, 32, 1, 128)}
COLUMNS = ["raised", "un-raised", "eager", "Inductor", "IREE"]


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:200]


# -- the module ---------------------------------------------------------------------------------------------
def inputs_for(name: str) -> Tuple[np.ndarray, np.ndarray]:
    b, h, s, d = SHAPES[name]
    rng = np.random.default_rng(20240607)
    q = rng.standard_normal((b, h, s, d), dtype=np.float32)
    if name == "prefill":
        pos = np.arange(s, dtype=np.int64)[None, :].repeat(b, 0)
    else:
        pos = rng.integers(1, 8192, size=(b, s), dtype=np.int64)
    return q, pos


def hf_module():
    """LlamaRotaryEmbedding + the q half of apply_rotary_pos_emb, from transformers' own code."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as ml
    h, d = SHAPES["prefill"][1], SHAPES["prefill"][3]
    cfg = LlamaConfig(hidden_size=h * d, num_attention_heads=h, num_key_value_heads=h, head_dim=d,
                      max_position_embeddings=8192, num_hidden_layers=1, intermediate_size=64, vocab_size=32,
                      rope_parameters={"rope_type": "default", "rope_theta": BASE})

    class LlamaRopeQ(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = ml.LlamaRotaryEmbedding(cfg)

        def forward(self, q, position_ids):
            cos, sin = self.rotary_emb(q, position_ids)
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)          # apply_rotary_pos_emb, unsqueeze_dim=1
            return (q * cos) + (ml.rotate_half(q) * sin)

    m = LlamaRopeQ().eval()
    for sub in m.modules():                                    # persistent buffers for the fx importer
        for buf in list(sub._non_persistent_buffers_set):
            t = sub._buffers[buf]
            sub._non_persistent_buffers_set.discard(buf)
            sub.register_buffer(buf, t, persistent=True)
    return m


def export(module, q, pos) -> str:
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType
    return str(fx.export_and_import(module, torch.from_numpy(q), torch.from_numpy(pos),
                                    output_type=OutputType.LINALG_ON_TENSORS, func_name="main"))


def module_texts(save: bool) -> Tuple[Dict[str, str], str]:
    """{shape name: module text} and where they came from."""
    try:
        if torch is None:
            raise ImportError("torch")
        import torch_mlir  # noqa: F401
        import transformers
        m = hf_module()
        texts = {}
        with tempfile.TemporaryDirectory(prefix="rope_frontend_bench_") as tmp:
            for name in SHAPES:
                texts[name] = export(m, *inputs_for(name))
                (pathlib.Path(tmp) / f"llama_rope_{name}.mlir").write_text(texts[name])
        if save:
            INPUTS.mkdir(exist_ok=True)
            for name, text in texts.items():
                (INPUTS / f"llama_rope_{name}.mlir").write_text(text)
        from importlib import metadata
        return texts, (f"exported at bench time by torch-mlir {metadata.version('torch-mlir')} from "
                       f"transformers {transformers.__version__} LlamaRotaryEmbedding (torch {torch.__version__})")
    except ImportError as exc:
        if save:
            raise SystemExit(f"--save-inputs needs torch, transformers and torch-mlir: {exc}")
        texts = {name: (INPUTS / f"llama_rope_{name}.mlir").read_text() for name in SHAPES}
        return texts, (f"bench/inputs/llama_rope_{{prefill,decode}}.mlir (committed; torch-mlir not importable "
                       f"here: {first_line(exc)})")


def module_table(text: str) -> Optional[np.ndarray]:
    """The module's own inv_freq table, as the raised op states it (SEMANTICS.md §7: the IR's f32 entries widened
    exactly), or None when this build cannot raise."""
    try:
        from rope_mlir import _jit
        found = re.search(r"inv_freq = \[([^\]]*)\]", _jit.lower(text, "builtin.module(rope-raise)"))
    except Exception:  # noqa: BLE001
        return None
    return np.array([float(v) for v in found.group(1).split(",")]) if found else None


def reference_output(q: np.ndarray, pos: np.ndarray, theta: Optional[np.ndarray] = None) -> np.ndarray:
    """The float64 rotation of q [B, H, S, D] by positions [B, S] and frequencies theta (default: the exact
    powers BASE^(-2i/D))."""
    if theta is None:
        return reference.apply(q, pos, layout="half", base=BASE, token_dims=[0, 2])
    d = q.shape[-1]
    angle = pos.astype(np.float64)[..., None] * theta            # [B, S, D/2]
    emb = np.concatenate([angle, angle], -1)[:, None]              # [B, 1, S, D]
    x = q.astype(np.float64)
    half = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * np.cos(emb) + half * np.sin(emb)


def rel_err(y, ref) -> float:
    return float(np.max(np.abs(np.asarray(y, np.float64) - ref)) / np.max(np.abs(ref)))


def rope_ops_after_raising(text: str) -> Optional[int]:
    """How many rope.apply ops the default pipeline's first stage leaves (None: cannot tell; -1: this build
    of the library has no rope-optimize)."""
    try:
        from rope_mlir import _jit
        if not _jit.is_registered("rope-optimize"):
            return -1
        return _jit.lower(text, "builtin.module(rope-optimize)").count("rope.apply")
    except Exception:  # noqa: BLE001
        return None


# -- the contestants ----------------------------------------------------------------------------------------
class Contestant:
    def __init__(self, name: str):
        self.name = name
        self.fn: Optional[Callable[[], object]] = None
        self.output: Optional[np.ndarray] = None
        self.na: Optional[str] = None


def make_jit(name: str, text: str, q, pos, pipeline: Optional[str]) -> Contestant:
    c = Contestant(name)
    if not hasattr(rope_mlir, "jit"):
        c.na = "rope_mlir.jit is not in this checkout"
        return c
    try:
        prog = rope_mlir.jit(text) if pipeline is None else rope_mlir.jit(text, pipeline=pipeline)
        f = prog.function("main")
        c.output = np.asarray(f(q, pos))
        c.fn = lambda f=f, prog=prog: f(q, pos)
    except Exception as exc:  # noqa: BLE001
        c.na = first_line(exc)
    return c


def make_torch(name: str, module, q, pos, compiled: bool) -> Contestant:
    c = Contestant(name)
    if module is None:
        c.na = "torch/transformers not importable"
        return c
    try:
        qt, pt = torch.from_numpy(q), torch.from_numpy(pos)
        fn = module
        if compiled:
            fn = torch.compile(module, backend="inductor")
        with torch.no_grad():
            c.output = fn(qt, pt).numpy().copy()

        def run(fn=fn):
            with torch.no_grad():
                return fn(qt, pt)
        c.fn = run
    except Exception as exc:  # noqa: BLE001
        c.na = first_line(exc)
    return c


def make_iree(text: str, q, pos) -> Contestant:
    c = Contestant("IREE")
    try:
        import iree.compiler as ireec
        import iree.runtime as ireert
    except ImportError as exc:
        c.na = f"iree not importable ({first_line(exc)})"
        return c
    try:
        vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"],
                                 extra_args=["--iree-llvmcpu-target-cpu=host"])
        config = ireert.Config("local-sync")
        ctx = ireert.SystemContext(config=config)
        vm = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm)
        main = getattr(ctx.modules, vm.name).main
        args = [ireert.asdevicearray(config.device, a) for a in (q, pos)]   # uploaded once
        out = main(*args)
        c.output = np.asarray((out[0] if isinstance(out, (tuple, list)) else out).to_host())
        c.fn = lambda main=main, args=args, keep=ctx: main(*args)
    except Exception as exc:  # noqa: BLE001
        c.na = first_line(exc)
    return c


# -- report -------------------------------------------------------------------------------------------------
def fmt_time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def fmt_ratio(num: Optional[float], den: Optional[float]) -> str:
    return "n/a" if num is None or den is None else f"{num / den:.2f}"


def render(header: List[str], rows: List[List[str]], markdown: bool) -> List[str]:
    if markdown:
        return (["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"] +
                ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header)] + [line(r) for r in rows]


def replace_region(path: pathlib.Path, lines: List[str]):
    text = path.read_text()
    if BEGIN_MARK not in text and END_MARK not in text:
        path.write_text(text.rstrip() + "\n\n## Frontend IR: Hugging Face Llama RoPE, raised and not\n\n"
                        "`bench/frontend_bench.py` (its header says what each column is). The region below is "
                        "written by `python3 bench/frontend_bench.py --write-docs`.\n\n" + BEGIN_MARK + "\n" +
                        END_MARK + "\n")
    write_region(path, lines, BEGIN_MARK, END_MARK)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--markdown", action="store_true", help="print the report as markdown")
    parser.add_argument("--write-docs", nargs="?", const=str(DOC), default=None, metavar="FILE",
                        help=f"also write the markdown report between {BEGIN_MARK} and {END_MARK} in FILE "
                        f"(default: {DOC.relative_to(ROOT)}; the section is appended when absent)")
    parser.add_argument("--save-inputs", action="store_true",
                        help="rewrite bench/inputs/llama_rope_{prefill,decode}.mlir from a fresh export")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of prefill,decode")
    args = parser.parse_args(argv)
    names = [n for n in args.shapes.split(",") if n]
    for n in names:
        if n not in SHAPES:
            parser.error(f"unknown shape {n!r}")
    timing = (Timing(samples=5, min_seconds=0.1, max_seconds=1.5, quiesce=0.0) if args.quick else
              Timing(samples=15, min_seconds=0.5, max_seconds=6.0, quiesce=0.0))

    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    texts, origin = module_texts(args.save_inputs)
    try:
        module = hf_module() if torch is not None else None
    except Exception as exc:  # noqa: BLE001
        progress(f"torch module unavailable: {first_line(exc)}")
        module = None

    results = {}
    notes: Dict[str, str] = {}
    raised_ops = {}
    for name in names:
        q, pos = inputs_for(name)
        text = texts[name]
        theta = module_table(text)
        ref = reference_output(q, pos, theta)
        ref_exact = reference_output(q, pos)
        raised_ops[name] = rope_ops_after_raising(text)
        progress(f"[{time.perf_counter() - started:6.1f} s] {name}: compiling")
        cs = [make_jit("raised", text, q, pos, None), make_jit("un-raised", text, q, pos, UNRAISED_PIPELINE),
              make_torch("eager", module, q, pos, False), make_torch("Inductor", module, q, pos, True),
              make_iree(text, q, pos)]
        errors, errors_exact = {}, {}
        for c in cs:
            if c.na:
                notes.setdefault(c.name, c.na)
                continue
            errors[c.name] = rel_err(c.output, ref)
            errors_exact[c.name] = rel_err(c.output, ref_exact)
            if not errors[c.name] <= WRONG:
                print(f"{name}: {c.name} output is wrong: relative error {errors[c.name]:.3g} > {WRONG}")
                return 2
        progress(f"[{time.perf_counter() - started:6.1f} s] {name}: timing "
                 f"{', '.join(c.name for c in cs if c.fn)}")
        stats = measure_interleaved({c.name: c.fn for c in cs if c.fn}, timing)
        results[name] = (cs, stats, errors, errors_exact, theta is not None)
    elapsed = time.perf_counter() - started

    markdown = args.markdown or args.write_docs is not None
    mode = "quick" if args.quick else "full"
    command = "python3 bench/frontend_bench.py" + (" --quick" if args.quick else "")
    versions = []
    for pkg in ("torch", "transformers", "torch-mlir", "iree-base-compiler", "iree-base-runtime"):
        try:
            from importlib import metadata
            versions.append(f"{pkg} {metadata.version(pkg)}")
        except Exception:  # noqa: BLE001
            versions.append(f"{pkg} not installed")
    def raised_note(n: str) -> str:
        ops = raised_ops[n]
        if ops is None:
            return f"{n}: cannot tell"
        if ops < 0:
            return f"{n}: NOT raised (this build of the library registers no rope-optimize)"
        return f"{n}: {ops} rope.apply after rope-optimize" + (
            " (NOT raised: the 'raised' column runs the un-raised IR)" if ops == 0 else "")
    raised_text = "; ".join(raised_note(n) for n in names)
    meta = [
        f"machine: {machine_line()}",
        source_line(),
        f"software: {', '.join(versions)}, numpy {np.__version__}, python {platform.python_version()}",
        f"module: {origin}",
        f"raising: {raised_text}",
        f"load: 1-minute load average {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
        + ("; WARNING: other processes were running, the numbers are noisy" if load_start > 0.5 else ""),
        f"timing: single thread; median of up to {timing.samples} samples per function, each >= "
        f"{timing.min_seconds / timing.samples * 1e3:.2g} ms of back-to-back calls, the functions of a shape "
        f"interleaved round by round; warm-up and compilation excluded; total run time {elapsed:.0f} s",
    ]
    report: List[str] = []
    if markdown:
        report += [f"_Generated by `{command} --write-docs` ({mode} mode) on "
                   f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Do not edit between "
                   "the BEGIN/END markers: rerun the command._", ""]
        report += [f"- {m}" for m in meta]
    else:
        report += [f"# HF Llama RoPE from frontend IR ({mode}), {datetime.date.today().isoformat()}"] + meta

    header = ["shape"] + COLUMNS + ["un-raised/raised", "Inductor/raised", "IREE/raised"]
    rows = []
    err_rows = []
    exact_rows = []
    for name in names:
        cs, stats, errors, errors_exact, own_table = results[name]
        t = {c: (stats[c].median if c in stats else None) for c in COLUMNS}
        shape = "x".join(map(str, SHAPES[name]))
        rows.append([f"{name} [{shape}]"] + [fmt_time(t[c]) for c in COLUMNS] +
                    [fmt_ratio(t["un-raised"], t["raised"]), fmt_ratio(t["Inductor"], t["raised"]),
                     fmt_ratio(t["IREE"], t["raised"])])
        err_rows.append([name + ("" if own_table else " (exact powers: no table found)")] +
                        [f"{errors[c]:.2g}" if c in errors else "n/a" for c in COLUMNS])
        exact_rows.append([name] + [f"{errors_exact[c]:.2g}" if c in errors_exact else "n/a" for c in COLUMNS])
    report += ["", ("**Time per call** (median; ratios > 1: raised is faster)" if markdown else
                    "time per call (median; ratios > 1: raised is faster)"), ""]
    report += render(header, rows, markdown)
    report += ["", ("**Max relative error** vs the float64 rotation by the module's own inv_freq table "
                    "(max\\|y − r\\| / max\\|r\\|; what the IR says, SEMANTICS.md §7)" if markdown
                    else "max relative error vs the float64 rotation by the module's own inv_freq table "
                    "(max|y - r| / max|r|)"), ""]
    report += render(["shape"] + COLUMNS, err_rows, markdown)
    report += ["", (f"The same against exact powers {BASE:g}^(−2i/D) (the module's f32 table itself is off by "
                    "up to an f32 ulp in some entries):" if markdown else
                    "the same against exact powers (the module's f32 table is off by up to an ulp):"), ""]
    report += render(["shape"] + COLUMNS, exact_rows, markdown)
    if notes:
        report.append("")
        bullet = "- " if markdown else ""
        for k in COLUMNS:
            if k in notes:
                report.append(f"{bullet}n/a: {k}: {notes[k]}")

    print("\n".join(report))
    if args.write_docs is not None:
        replace_region(pathlib.Path(args.write_docs), report)
        progress(f"wrote the report into {args.write_docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
