#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Whole-model compile time (issue 33): how long `rope_mlir.jit` takes to compile each model of the zoo
(test/Frontends/Inputs/zoo), split into the MLIR passes and LLVM, and how long one forward of the compiled
model then runs; and how `rope-opt --rope-optimize` and the whole jit compile scale with the number of layers
of a narrow Llama (2, 8, 32 layers, generated at bench time).

    taskset -c 1 nice -n 10 python3 bench/compile_bench.py                   # the whole zoo + the layer sweep
    taskset -c 1 python3 bench/compile_bench.py --models llama,qwen2 --modes prefill --layers ""
    options: --repeat N (compiles per model, each in a fresh process; the minimum is reported; default 3),
             --layers 2,8,32 ("" skips the sweep), --peers-python PATH (default /work/peers/bin/python),
             --gen-dir DIR (default /tmp/rope-compile-bench), --json FILE, --markdown FILE,
             --cpu-options "outline-max-ops=0" (extra rope-to-llvm-cpu options, e.g. the unchunked baseline)

Runs with the normal python3 and the installed rope_mlir package (as python/tests do: the working tree's
python/ and build/lib). Per model and mode, in a child process per repetition (so every compile is a first
compile, as a user's is):
  * compile: wall and CPU seconds of `rope_mlir.jit(text)` (default pipeline, opt_level 3): parse, raise,
    lower, LLVM optimization and machine code;
  * of which MLIR: `_jit.lower(text, default_pipeline())` (parse, the passes, and printing the LLVM dialect)
    in the same process; LLVM = compile - MLIR (translation, the optimizer, the code generator);
  * forward: the minimum over 20 calls of the compiled function on the stored inputs (this includes the
    Python call, about 60 us here: compare rows, not absolute microseconds); and the logits' error against
    the stored float64 logits (a check that the faster code is still right).
The layer sweep needs the peers' venv (torch, transformers, torch-mlir; scripts/gen-model-zoo.py): it builds
the zoo's Llama (hidden 64, 4 heads / 2 KV heads, 16 tokens) with 2, 8 and 32 layers through
scripts/gen-model-zoo.py's own code, into --gen-dir (not committed; reused when present), then times
`rope-opt --rope-optimize` (its -mlir-timing total: parse, passes, output) and the jit compile of each. Without
the venv it says so and skips the sweep.

Timings are only comparable on one machine and one core: run under `taskset -c 1` and repeat; on a machine
shared with other work, CPU seconds are steadier than wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time
from typing import Dict, List, Optional

from _limits import cpu_name  # the benches' one reader of the CPU's name

ROOT = pathlib.Path(__file__).resolve().parents[1]
ZOO = ROOT / "test" / "Frontends" / "Inputs" / "zoo"
ROPE_OPT = ROOT / "build" / "bin" / "rope-opt"
PEERS_PYTHON = pathlib.Path("/work/peers/bin/python")
GEN_DIR = pathlib.Path("/tmp/rope-compile-bench")


# -- child: one compile and run ---------------------------------------------------------------------------------
def bf16_args(npz: pathlib.Path, args: list) -> list:
    """The zoo's bf16 members store their bf16 arguments (the KV cache) as float32 values, the manifest's
    args[i].dtype saying bfloat16 (scripts/gen-model-zoo.py): those are passed as ml_dtypes.bfloat16."""
    manifest = npz.parent / "manifest.json"
    if not manifest.exists():
        return args
    import ml_dtypes
    for model in json.loads(manifest.read_text())["models"]:
        for info in model["modes"].values():
            if info.get("data") == npz.name:
                dtypes = [a.get("dtype") for a in info.get("args", [])]
                return [a.astype(ml_dtypes.bfloat16) if i < len(dtypes) and dtypes[i] == "bfloat16" else a
                        for i, a in enumerate(args)]
    return args


def child(mlir: str, npz: str, logits_result: int) -> None:
    import numpy as np
    sys.path.insert(0, str(ROOT / "python"))
    import rope_mlir
    from rope_mlir import _jit, compiled
    text = pathlib.Path(mlir).read_text()
    data = np.load(npz)
    args = [data[f"arg{i}"] for i in range(len([k for k in data.files if k.startswith("arg")]))]
    args = bf16_args(pathlib.Path(npz), args)
    pipeline = compiled.default_pipeline()
    extra = os.environ.get("ROPE_BENCH_CPU_OPTIONS", "")
    if extra:
        pipeline = pipeline.replace("rope-to-llvm-cpu{", "rope-to-llvm-cpu{" + extra + " ", 1)
    _jit.lower("module {}", "builtin.module()")         # load the library and its dialects first
    t0, c0 = time.perf_counter(), time.process_time()
    _jit.lower(text, pipeline)
    mlir_s, mlir_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    module = rope_mlir.jit(text, pipeline if extra else None)
    compile_s, compile_cpu = time.perf_counter() - t0, time.process_time() - c0
    fn = module.function("main")
    outs = fn(*args)
    best = float("inf")
    for _ in range(20):
        t0 = time.perf_counter()
        outs = fn(*args)
        best = min(best, time.perf_counter() - t0)
    outs = outs if isinstance(outs, tuple) else (outs,)
    err = None
    if f"ref{logits_result}" in data.files and logits_result < len(outs):
        ref = np.asarray(data[f"ref{logits_result}"], np.float64)
        y = np.asarray(outs[logits_result], np.float64)
        if y.shape == ref.shape:
            err = float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-300))
    print("RESULT " + json.dumps({"compile_s": compile_s, "compile_cpu": compile_cpu, "mlir_s": mlir_s,
                                  "mlir_cpu": mlir_cpu, "forward_s": best, "err": err}), flush=True)


def measure(mlir: pathlib.Path, npz: pathlib.Path, logits_result: int, repeat: int, timeout: float) -> dict:
    """The minimum of each timing over `repeat` fresh processes."""
    runs: List[dict] = []
    for _ in range(repeat):
        for attempt in range(4):
            try:
                r = subprocess.run([sys.executable, __file__, "--child", str(mlir), str(npz), str(logits_result)],
                                   capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"error": f"timeout after {timeout:.0f} s"}
            # A library being relinked by a build in the same tree (invalid ELF header, file too short): wait.
            if r.returncode == 0 or "OSError" not in r.stderr or attempt == 3:
                break
            time.sleep(30)
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            tail = (r.stderr or r.stdout).strip().splitlines()
            return {"error": f"exit {r.returncode}: {(tail[-1] if tail else '')[:200]}"}
        runs.append(json.loads(line[len("RESULT "):]))
    best = {k: min(run[k] for run in runs) for k in ("compile_s", "compile_cpu", "mlir_s", "mlir_cpu",
                                                       "forward_s")}
    best["llvm_s"] = max(0.0, best["compile_s"] - best["mlir_s"])
    best["llvm_cpu"] = max(0.0, best["compile_cpu"] - best["mlir_cpu"])
    best["err"] = runs[0]["err"]
    return best


def rope_optimize_time(mlir: pathlib.Path, repeat: int) -> Optional[float]:
    """`rope-opt --rope-optimize` as its -mlir-timing total (parse, passes, output), minimum over `repeat`."""
    best = None
    for _ in range(repeat):
        r = subprocess.run([str(ROPE_OPT), str(mlir), "--rope-optimize", "-mlir-timing", "-o", os.devnull],
                           capture_output=True, text=True)
        m = re.search(r"Total Execution Time: ([0-9.]+) seconds", r.stderr)
        if r.returncode != 0 or not m:
            return None
        best = float(m.group(1)) if best is None else min(best, float(m.group(1)))
    return best


# -- the layer sweep's models (run by the peers' python) --------------------------------------------------------
def generate(layers: int, out_dir: str) -> None:
    """Writes llama_L{layers}_prefill.mlir/.npz with scripts/gen-model-zoo.py's code (its Llama, n layers)."""
    import copy
    import importlib.util
    import numpy as np
    import warnings
    spec = importlib.util.spec_from_file_location("gen_model_zoo", ROOT / "scripts" / "gen-model-zoo.py")
    zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zoo)
    import torch  # noqa: F401
    warnings.filterwarnings("ignore")
    zoo.patch_transformers()
    s = copy.deepcopy(zoo.MODELS["llama"])
    s["config"]["num_hidden_layers"] = layers
    r = zoo.run_mode("llama", s, "prefill")
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"llama_L{layers}_prefill"
    arrays = {f"arg{i}": a for i, a in enumerate(r["args"])}
    arrays.update({f"ref{i}": x.astype(np.float64) for i, x in enumerate(r["refs"])})
    arrays.update({f"frontend{i}": np.asarray(x, np.float32) for i, x in enumerate(r["outs"])})
    np.savez_compressed(f"{stem}.npz", **arrays)
    pathlib.Path(f"{stem}.mlir").write_text(r["text"])      # last: its presence means the pair is complete
    print(f"wrote {stem}.mlir ({len(r['text'].encode())} bytes)", flush=True)


def layer_models(layers: List[int], peers: pathlib.Path, gen_dir: pathlib.Path) -> Dict[int, pathlib.Path]:
    found: Dict[int, pathlib.Path] = {}
    for n in layers:
        mlir = gen_dir / f"llama_L{n}_prefill.mlir"
        if not mlir.exists():
            if not peers.exists():
                print(f"layer sweep skipped: the peers' venv ({peers}: torch, transformers, torch-mlir) is absent; "
                      f"it generates the {n}-layer Llama (pass --peers-python)", file=sys.stderr)
                return found
            print(f"generating the {n}-layer Llama into {gen_dir} ...", file=sys.stderr, flush=True)
            r = subprocess.run([str(peers), __file__, "--generate", str(n), str(gen_dir)], capture_output=True,
                               text=True)
            if r.returncode != 0 or not mlir.exists():
                tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
                print(f"generating {n} layers failed: {' | '.join(tail)}", file=sys.stderr)
                continue
        found[n] = mlir
    return found


# -- report -----------------------------------------------------------------------------------------------------
def fmt(x, spec=".2f") -> str:
    return "-" if x is None else format(x, spec)


def row(name: str, mode: str, r: dict, extra: str = "") -> str:
    if "error" in r:
        return f"| {name} | {mode} | {r['error']} | | | | | |{extra}"
    return (f"| {name} | {mode} | {r['compile_s']:.2f} ({r['compile_cpu']:.2f}) | {r['mlir_s']:.2f} | "
            f"{r['llvm_s']:.2f} | {r['forward_s'] * 1e3:.3f} | {fmt(r['err'], '.1e')} |{extra}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--models", default="", help="comma-separated zoo model names (default: all; '-' none)")
    ap.add_argument("--modes", default="prefill,decode")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--layers", default="2,8,32", help="layer counts of the narrow-Llama sweep ('' skips it)")
    ap.add_argument("--peers-python", type=pathlib.Path, default=PEERS_PYTHON)
    ap.add_argument("--gen-dir", type=pathlib.Path, default=GEN_DIR)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--cpu-options", default="",
                    help="extra rope-to-llvm-cpu options for every compile, e.g. outline-max-ops=0 (the baseline "
                         "without rope-outline-chunks)")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--markdown", type=pathlib.Path)
    opts = ap.parse_args(argv)
    if opts.cpu_options:
        os.environ["ROPE_BENCH_CPU_OPTIONS"] = opts.cpu_options
    if opts.child:
        child(opts.child[0], opts.child[1], int(opts.child[2]))
        return 0
    if opts.generate:
        generate(int(opts.generate[0]), opts.generate[1])
        return 0

    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    head = [f"Machine: {cpu_name()}, {os.cpu_count()} cores; bench pinned to cores {affinity} "
            f"(`taskset -c 1`: one core){'' if len(affinity) == 1 else ' -- NOT pinned to one core'}; "
            f"load average at start {os.getloadavg()[0]:.1f}; minimum of {opts.repeat} fresh processes.", ""]
    table_head = ["| model | mode | jit compile s (CPU s) | of which MLIR s | LLVM s | forward ms | logits err |",
                  "|---|---|---|---|---|---|---|"]
    lines = head + table_head
    results: dict = {"machine": head[0], "zoo": [], "layers": []}
    print("\n".join(lines), flush=True)

    manifest = json.loads((ZOO / "manifest.json").read_text())
    models = {m["name"]: m for m in manifest["models"]}
    chosen = [] if opts.models == "-" else ([n for n in opts.models.split(",") if n] or list(models))
    for name in chosen:
        if name not in models:
            ap.error(f"{name} is not in the zoo's manifest")
        for mode in opts.modes.split(","):
            info = models[name]["modes"].get(mode)
            if not info:
                continue
            r = measure(ZOO / info["file"], ZOO / info["data"], info.get("logits_result", 0), opts.repeat,
                        opts.timeout)
            results["zoo"].append({"model": name, "mode": mode, **r})
            lines.append(row(name, mode, r))
            print(lines[-1], flush=True)

    layers = [int(x) for x in opts.layers.split(",") if x.strip()]
    if layers:
        found = layer_models(layers, opts.peers_python, opts.gen_dir)
        if found:
            sweep = ["", f"Narrow Llama (the zoo's: hidden 64, 4 heads / 2 KV heads, 16 tokens) by layers "
                         f"(generated into {opts.gen_dir}):", "",
                     "| layers | rope-opt --rope-optimize s | per layer ms | jit compile s (CPU s) | of which MLIR s "
                     "| LLVM s | forward ms | logits err |",
                     "|---|---|---|---|---|---|---|---|"]
            lines += sweep
            print("\n".join(sweep), flush=True)
            for n, mlir in sorted(found.items()):
                t = rope_optimize_time(mlir, opts.repeat)
                r = measure(mlir, mlir.with_suffix(".npz"), 0, opts.repeat, opts.timeout)
                results["layers"].append({"layers": n, "rope_optimize_s": t, **r})
                per = None if t is None else t / n * 1e3
                if "error" in r:
                    lines.append(f"| {n} | {fmt(t)} | {fmt(per, '.1f')} | {r['error']} | | | | |")
                else:
                    lines.append(f"| {n} | {fmt(t)} | {fmt(per, '.1f')} | {r['compile_s']:.2f} "
                                 f"({r['compile_cpu']:.2f}) | {r['mlir_s']:.2f} | {r['llvm_s']:.2f} | "
                                 f"{r['forward_s'] * 1e3:.3f} | {fmt(r['err'], '.1e')} |")
                print(lines[-1], flush=True)
    if opts.markdown:
        opts.markdown.write_text("\n".join(lines) + "\n")
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
