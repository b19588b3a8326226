#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the compiler stands on the model zoo (issue 33; test/Frontends/Inputs/zoo, made by
scripts/gen-model-zoo.py). Not run in CI: each whole-model compile takes tens of seconds or more.

    nice -n 19 python3 scripts/zoo-status.py                          # every model and mode in the manifest
    nice -n 19 python3 scripts/zoo-status.py --models llama,qwen2 --modes prefill --timeout 120
    options: --zoo DIR, --rope-opt PATH (default build/bin/rope-opt), --out FILE (the markdown table too),
             --remarks N (distinct remarks shown per file, default 3), --no-jit (counts and remarks only)

Runs with the normal python3 and the installed rope_mlir package (scripts/setup.sh), not the peers' venv. Per
model and mode it reports
  (a) the rope ops `rope-opt --rope-raise` makes (rope.apply, rope.attention) against the manifest's expected
      counts (rotations: q and k of every RoPE layer; attentions: one per layer), the ops left by
      `rope-opt --rope-optimize` (rope.apply / rope.attention / rope.online_attention: after tiling, attention
      becomes online-softmax loops with the rotations fused), and the first few distinct
      `--rope-raise=remarks=true` remarks (why something rotation- or attention-shaped was not raised), with
      how often each occurs;
  (b) the time `rope_mlir.jit(text)` (default pipeline) takes to compile the module, and the time rope-opt
      takes to run the same pass pipeline (the rest of the jit's time is LLVM translation and code generation);
  (c) the max relative error max|y - ref| / max|ref| of its logits against the stored float64 logits, next to
      torch f32's own error (the stored frontend output; the manifest's logits_result says which result holds
      the logits: Phi-3 returns its re-assigned inv_freq buffer first). The bf16 members (NAME_bf16; manifest:
      frontend_dtype bfloat16) take and return bf16 (their KV cache passed as ml_dtypes.bfloat16) and stand
      next to torch bf16's own error (torch_bf16_err; the table marks it "(bf16)"). For the ONNX and JAX members
      (NAME_onnx, NAME_jax: scripts/gen-model-zoo-onnx-jax.py) the f32 peer is onnxruntime or jax.jit
      (manifest: frontend_f32, frontend_f32_err); their logits are result 0 and their inputs may be int32.
Each model/mode runs in a child process limited by --timeout seconds (default 300), so a hung or crashing
compile is reported, not fatal. Output: a markdown table on stdout (and in --out).
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys
import time
from typing import Dict, List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_ZOO = ROOT / "test" / "Frontends" / "Inputs" / "zoo"
DEFAULT_ROPE_OPT = ROOT / "build" / "bin" / "rope-opt"
# rope_mlir.default_pipeline() (rope_mlir.compiled._default_pipeline), run by rope-opt to time the MLIR passes
# apart from LLVM's translation and code generation, which the jit's compile time also holds.
PIPELINE = ("builtin.module(rope-optimize{share-key-rotation=true peel-key-tiles=true}, "
            "rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true})")
OPS = ("rope.apply", "rope.attention", "rope.online_attention")


def rel_err(y, ref) -> float:
    import numpy as np
    ref = np.asarray(ref, np.float64)
    y = np.asarray(y, np.float64)
    if y.shape != ref.shape:
        return float("nan")
    return float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-300))


def count_ops(text: str) -> Dict[str, int]:
    return {op: len(re.findall(rf"\b{re.escape(op)}\b(?!_)", text)) for op in OPS}


def rope_opt(tool: str, path: pathlib.Path, args: List[str], timeout: float):
    t0 = time.time()
    r = subprocess.run([tool, str(path), *args], capture_output=True, text=True, timeout=timeout)
    return r, time.time() - t0


def remarks_of(stderr: str) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for m in re.finditer(r"remark: (.*)", stderr):
        c[m.group(1).strip()] += 1
    return c


def stored_args(data, arg_dtypes: List[str]) -> list:
    """The .npz's arg0.. as @main takes them: a bfloat16 argument (the bf16 members' KV cache; the manifest's
    args[i].dtype) is stored as its float32 values, numpy having no bfloat16, and passed as ml_dtypes.bfloat16."""
    import ml_dtypes
    import numpy as np
    n = len([k for k in data.files if k.startswith("arg")])
    args = [data[f"arg{i}"] for i in range(n)]
    return [a.astype(ml_dtypes.bfloat16) if i < len(arg_dtypes) and arg_dtypes[i] == "bfloat16" else a
            for i, a in enumerate(args)]


def worker(mlir: str, npz: str, arg_dtypes: str = "") -> None:
    """Child process: compile with rope_mlir.jit, run on the stored inputs, print one JSON line."""
    import numpy as np
    import rope_mlir
    data = np.load(npz)
    args = stored_args(data, arg_dtypes.split(",") if arg_dtypes else [])
    text = pathlib.Path(mlir).read_text()
    t0 = time.time()
    mod = rope_mlir.jit(text)
    compile_s = time.time() - t0
    fn = mod.function("main")
    t0 = time.time()
    outs = fn(*args)
    run_s = time.time() - t0
    outs = outs if isinstance(outs, tuple) else (outs,)
    nref = len([k for k in data.files if k.startswith("ref")])
    if len(outs) != nref:
        raise SystemExit(f"error: the compiled function returns {len(outs)} results, the .npz has {nref} refs")
    refs = [data[f"ref{i}"] for i in range(nref)]
    res = {"compile_s": compile_s, "run_s": run_s,
           "err": [rel_err(o, r) for o, r in zip(outs, refs)]}
    print("RESULT " + json.dumps(res), flush=True)


def jit_in_child(mlir: pathlib.Path, npz: pathlib.Path, timeout: float, arg_dtypes: List[str]) -> dict:
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, __file__, "--worker", str(mlir), str(npz), ",".join(arg_dtypes)],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (r.stderr or r.stdout).strip().splitlines()
    msg = next((ln for ln in tail if "error" in ln.lower()), tail[-1] if tail else f"exit {r.returncode}")
    return {"error": f"exit {r.returncode} after {time.time() - t0:.0f} s: {msg.strip()[:300]}",
            "stderr_tail": "\n".join(tail[-15:])}


def fmt_err(x) -> str:
    return "-" if x is None else ("nan" if x != x else f"{x:.1e}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", nargs=3, metavar=("MLIR", "NPZ", "ARG_DTYPES"), help=argparse.SUPPRESS)
    ap.add_argument("--zoo", type=pathlib.Path, default=DEFAULT_ZOO)
    ap.add_argument("--models", default="", help="comma-separated model names (default: all in the manifest)")
    ap.add_argument("--modes", default="prefill,decode")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per model and mode (jit compile + run)")
    ap.add_argument("--rope-opt", default=str(DEFAULT_ROPE_OPT))
    ap.add_argument("--remarks", type=int, default=3)
    ap.add_argument("--no-jit", action="store_true")
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--json", type=pathlib.Path, help="also write the raw results as JSON")
    opts = ap.parse_args(argv)
    if opts.worker:
        worker(*opts.worker)
        return 0
    manifest = json.loads((opts.zoo / "manifest.json").read_text())
    models = {m["name"]: m for m in manifest["models"]}
    chosen = [n for n in opts.models.split(",") if n] or list(models)
    unknown = [n for n in chosen if n not in models]
    if unknown:
        ap.error(f"not in the manifest: {unknown}; there: {list(models)}")
    modes = opts.modes.split(",")
    rows, details, raw = [], [], []
    for name in chosen:
        m = models[name]
        exp = m["expected"]
        for mode in modes:
            info = m["modes"].get(mode)
            if not info:
                continue
            mlir, npz = opts.zoo / info["file"], opts.zoo / info["data"]
            print(f"== {name} {mode}", file=sys.stderr, flush=True)
            rec: dict = {"model": name, "mode": mode}
            try:
                r, raise_s = rope_opt(opts.rope_opt, mlir, ["--rope-raise=remarks=true"], opts.timeout)
                rec["raise"] = count_ops(r.stdout) if r.returncode == 0 else None
                rec["raise_s"] = raise_s
                rec["remarks"] = remarks_of(r.stderr)
                if r.returncode != 0:
                    rec["raise_error"] = r.stderr.strip()[-300:]
                r, opt_s = rope_opt(opts.rope_opt, mlir, ["--rope-optimize"], opts.timeout)
                rec["optimize"] = count_ops(r.stdout) if r.returncode == 0 else None
                rec["optimize_s"] = opt_s
                r, passes_s = rope_opt(opts.rope_opt, mlir, [f"--pass-pipeline={PIPELINE}", "-o", "/dev/null"],
                                       opts.timeout)
                rec["passes_s"] = passes_s if r.returncode == 0 else None
            except subprocess.TimeoutExpired:
                rec["raise_error"] = f"rope-opt timeout after {opts.timeout:.0f} s"
                rec.setdefault("remarks", collections.Counter())
            arg_dtypes = [a.get("dtype", "") for a in info.get("args", [])]
            rec["jit"] = ({"error": "skipped (--no-jit)"} if opts.no_jit
                          else jit_in_child(mlir, npz, opts.timeout, arg_dtypes))
            li = info.get("logits_result", 0)     # results ahead of the logits: buffers the forward assigns
            # The peer: torch eager for the torch members (f32; bf16 for the bf16 members, frontend_dtype
            # bfloat16: torch_bf16_err), onnxruntime (*_onnx) or jax.jit (*_jax) for the members from
            # scripts/gen-model-zoo-onnx-jax.py (their manifest entries name it: frontend_f32).
            rec["peer_dtype"] = info.get("frontend_dtype", "float32")
            rec["peer_err"] = info.get("frontend_f32_err", info.get("torch_f32_err",
                                                                         info.get("torch_bf16_err")))
            raw.append({k: (dict(v) if isinstance(v, collections.Counter) else v) for k, v in rec.items()})
            ra, op = rec.get("raise"), rec.get("optimize")
            j = rec["jit"]
            raised = (f"{ra['rope.apply']}/{exp['rotations']} · {ra['rope.attention']}/{exp['attentions']}"
                      if ra else "error")
            optimized = (f"{op['rope.apply']} · {op['rope.attention']} · {op['rope.online_attention']}"
                         if op else "error")
            compile_s = f"{j['compile_s']:.1f}" if "compile_s" in j else j.get("error", "?")[:60]
            err = fmt_err(j["err"][li]) if "err" in j and len(j["err"]) > li else "-"
            passes = f"{rec['passes_s']:.1f}" if rec.get("passes_s") is not None else "error"
            peer = fmt_err(rec["peer_err"]) + (" (bf16)" if rec["peer_dtype"] == "bfloat16" else "")
            rows.append(f"| {name} | {mode} | {raised} | {optimized} | {compile_s} | {passes} | {err} | {peer} |")
            rem = rec["remarks"].most_common()
            if rem or "error" in j or "raise_error" in rec:
                lines = [f"- **{name} {mode}**"]
                if "raise_error" in rec:
                    lines.append(f"  - rope-opt --rope-raise failed: `{rec['raise_error']}`")
                for text, n in rem[:opts.remarks]:
                    lines.append(f"  - {n}× {text}")
                if len(rem) > opts.remarks:
                    lines.append(f"  - … {len(rem) - opts.remarks} more distinct remarks "
                                 f"({sum(n for _, n in rem[opts.remarks:])} in all)")
                if "error" in j:
                    lines.append(f"  - jit: {j['error']}")
                details.append("\n".join(lines))
            print(rows[-1], file=sys.stderr, flush=True)
    head = ["| model | mode | raised: rope.apply/expected · rope.attention/expected | after --rope-optimize: "
            "apply · attention · online_attention | jit compile (s) | of which MLIR passes (s, rope-opt) | "
            "jit logits err vs f64 | peer err vs f64 (torch f32, or bf16 where marked; ORT for *_onnx, JAX for "
            "*_jax) |",
            "|---|---|---|---|---|---|---|---|"]
    out = "\n".join(head + rows)
    if details:
        out += "\n\nRaising remarks (`--rope-raise=remarks=true`, distinct, most frequent first) and failures:\n\n"
        out += "\n".join(details)
    print(out)
    if opts.out:
        opts.out.write_text(out + "\n")
    if opts.json:
        opts.json.write_text(json.dumps(raw, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
