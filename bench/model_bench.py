#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Whole transformer models at a realistic width (issue 33): ours raised vs un-raised vs torch eager vs
torch.compile vs IREE, all on one core, all measured in the same run, on the same linalg export.

    python3 bench/model_bench.py                        # llama, prefill and decode (about 25 min, 2-core box)
    python3 bench/model_bench.py --models llama,qwen2,mistral --write-docs
    python3 bench/model_bench.py --smoke                # tiny width, every contestant, a minute or so
    options: --modes prefill,decode, --workdir DIR (default /tmp/rope-model-bench; the exported modules and
             their inputs, ~400 MB per model at full width: never commit them), --cpu N (the core everyone is
             pinned to, default 1), --timeout S (per contestant and case: compile + runs, default 1800),
             --repeats N, --only raised,unraised,eager,compile,iree, --peers-python PATH
             (default /work/peers/bin/python), --write-docs [FILE] (the model_bench region of
             docs/PERFORMANCE.md), --json FILE (raw results), --report-from FILE (the report of a saved
             --json, nothing run)

Runs with the normal python3 (rope_mlir from this checkout's python/ and build/lib, as scripts/setup.sh
installs it); torch, transformers, torch-mlir and IREE run in the peers' venv (--peers-python, see
../shared/FRONTENDS.md), so every contestant is a child process of this script: the export, torch eager,
torch.compile and IREE children under the peers' python, ours under this python. They exchange .npy files in
the work directory. Each child is pinned to one core (--cpu, sched_setaffinity inherited by the child) with
OMP_NUM_THREADS=MKL_NUM_THREADS=1; the children run one after another, never two at once, and each is killed
after --timeout seconds (reported as a timeout, not fatal). Ours load a copy of build/lib/libRopeJit.so taken
at the start under the build lock (/tmp/rope-build.lock), so a rebuild during the run changes nothing in it.

The models: transformers 5.25's own modeling code (AutoModelForCausalLM.from_config, random weights, seed 33),
built and exported as scripts/gen-model-zoo.py builds its zoo (its spec, patches and export() are reused), at
    hidden 2048, 16 heads / 4 KV heads, head dim 128, intermediate 5632, vocab 1024, 2 layers, untied lm_head
    (--smoke: hidden 64, 4 heads / 2 KV heads, head dim 16, intermediate 128, vocab 256, 2 layers)
The vocab is cut to 1024 so that the lm_head (a 2048 x 32000 matmul in a real model) does not dominate a
2-layer model; the intermediate size is TinyLlama's. Per model type: llama (llama3 RoPE scaling, as Llama 3.2:
theta 5e5, factor 32, original 8192), qwen2 (q/k/v bias, theta 1e6), mistral (sliding window 4096: the decode
cache holds the window's last 4095 tokens).
  prefill  forward(input_ids [1, 512], position_ids [1, 512], *weights) -> logits [1, 512, V]
  decode   forward(input_ids [1, 1], position_ids [1, 1] = 4096, k0, v0, k1, v1, *weights) -> (logits [1, 1, V],
           k0', v0', k1', v1'): one step at a 4096-token KV cache ([1, 4, 4096, 128] per tensor, random N(0, 1)
           values, seeded), the zoo's ModelDecode wrapper (a DynamicCache built from the argument tensors)
           (--smoke: 16 tokens of prefill, a 32-token cache)
The weights are function ARGUMENTS, not IR constants (400 MB of constants would be the module): a wrapper
module whose forward(input_ids, position_ids, *kv, *weights) calls torch.func.functional_call(model,
dict(zip(names, weights)), ...), exported by torch-mlir's fx importer to linalg on tensors (func @main); the
model is not a registered submodule of the wrapper, so torch.export lifts none of its parameters as constants.
The only constants left are the rotary inv_freq tables. That is also how serving stacks feed weights.

Contestants, each on the same inputs (ids, positions, cache, weights):
  raised     rope_mlir.jit(text): the default pipeline (rope-optimize: raising to rope.apply / rope.attention,
             tiling, fusion; then rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true}), num-threads 1
             (the pipeline's default: no OpenMP); also reports the rope ops --rope-optimize leaves
  unraised   rope_mlir.jit(text, pipeline="builtin.module(rope-to-llvm-cpu{emit-c-interface=true
             runtime-traps=true})"): the same module lowered as the frontend emitted it
  eager      the torch model itself (Prefill / ModelDecode wrapper with its own parameters = the weights),
             torch.set_num_threads(1), torch.no_grad()
  compile    torch.compile(the same module) (Inductor, CPU; compile_threads=1, a fresh cache directory per
             case, so the compile time is a cold compile)
  iree       iree.compiler.compile_str(text, target_backends=["llvm-cpu"],
             extra_args=["--iree-llvmcpu-target-cpu=host"]), run with iree.runtime's local-sync driver
             (single-threaded); inputs uploaded once, results left as IREE device arrays
Times: compile = what each spends before its first call can run (ours: rope_mlir.jit; IREE: compile_str +
load; torch.compile: the first call, minus nothing; eager: 0), "first call" the first call after it, then the
call repeated (--repeats, or until 60 s of calls, at least 3): min, median, and the noise (max/min - 1). The
ratio column is the contestant's min time / torch eager's min time (< 1: faster than eager). Agreement: the
logits' max|y - e| / max|e| against torch eager's logits e, on the same inputs, and the same against float64
logits (the model built again in the zoo's float64_mode with the same parameters, run by the eager child after
its timing): torch eager's own error is the yardstick.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "PERFORMANCE.md"
BEGIN_MARK = "<!-- BEGIN model_bench -->"
END_MARK = "<!-- END model_bench -->"
PEERS_PYTHON = "/work/peers/bin/python"
DEFAULT_WORKDIR = pathlib.Path("/tmp/rope-model-bench")
UNRAISED_PIPELINE = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true})"
CONTESTANTS = ("eager", "compile", "iree", "raised", "unraised")
PEERS_ROLES = ("export", "eager", "compile", "iree")
SEED = 33
BUILD_LOCK = "/tmp/rope-build.lock"

SIZES = {
    "full": dict(hidden_size=2048, num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                 intermediate_size=5632, vocab_size=1024, num_hidden_layers=2, max_position_embeddings=8192,
                 tie_word_embeddings=False),
    "smoke": dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=128,
                  vocab_size=256, num_hidden_layers=2, max_position_embeddings=128, tie_word_embeddings=False),
}
TOKENS = {"full": {"prefill": 512, "past": 4096}, "smoke": {"prefill": 16, "past": 32}}
REPEATS = {"full": {"prefill": 5, "decode": 20}, "smoke": {"prefill": 3, "decode": 3}}
# Per model: (zoo model type, config beyond SIZES at full width, at smoke width).
MODELS = {
    "llama": ("llama",
              dict(rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
                                    "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 8192}),
              dict(rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                    "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 32})),
    "qwen2": ("qwen2", dict(rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
              dict(rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    "mistral": ("mistral", dict(sliding_window=4096), dict(sliding_window=8)),
}


# -- shared helpers ------------------------------------------------------------------------------------------------
def rel_err(y, ref) -> float:
    import numpy as np
    y = np.asarray(y, np.float64)
    ref = np.asarray(ref, np.float64)
    if y.shape != ref.shape:
        return float("nan")
    return float(np.max(np.abs(y - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


def load_args(case: pathlib.Path) -> list:
    import numpy as np
    files = json.loads((case / "args.json").read_text())
    return [np.ascontiguousarray(np.load(case / f)) for f in files]


def time_calls(call, repeats: int, budget_s: float = 60.0) -> dict:
    """First call, then `repeats` timed calls (fewer if they pass budget_s, at least 3)."""
    t0 = time.perf_counter()
    out = call()
    first = time.perf_counter() - t0
    times: List[float] = []
    spent = 0.0
    while len(times) < repeats and (len(times) < 3 or spent < budget_s):
        t0 = time.perf_counter()
        call()
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
    return {"out": out, "first_s": first, "times_s": times, "min_s": min(times),
            "median_s": statistics.median(times), "noise": max(times) / min(times) - 1.0}


def emit(result: dict) -> None:
    print("RESULT " + json.dumps(result), flush=True)


# -- children under the peers' python: export, eager, compile, iree ---------------------------------------------------
def _zoo():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_model_zoo", ROOT / "scripts" / "gen-model-zoo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_model(zoo, model: str, size: str):
    """(config, the f32 causal LM, eval, buffers persistent): the zoo's spec at this width, seeded."""
    import torch
    mtype, full, smoke = MODELS[model]
    s = zoo.spec(mtype)
    s["config"].update(SIZES[size])
    s["config"].update(full if size == "full" else smoke)
    torch.manual_seed(SEED)
    cfg = zoo.make_config(s)
    lm = zoo.build_lm(s, cfg).float().eval()
    zoo.ff.make_buffers_persistent(lm)
    return s, cfg, lm


def inner_module(zoo, lm, mode: str, past: int):
    return zoo.Prefill.module(lm) if mode == "prefill" else zoo.decode_module(lm, past)


def peers_child(role: str, case: pathlib.Path, model: str, mode: str, size: str, repeats: int) -> None:
    if role == "export":
        os.nice(10)                      # untimed; leaves the core to the machine's other work
    import torch
    torch.set_num_threads(1)
    try:
        import triton  # noqa: F401  (FRONTENDS.md: torch and triton first)
    except Exception:  # noqa: BLE001
        pass
    import warnings
    warnings.filterwarnings("ignore")
    import numpy as np
    zoo = _zoo()
    zoo.patch_transformers()
    past = TOKENS[size]["past"]
    t0 = time.perf_counter()
    s, cfg, lm = build_model(zoo, model, size)
    inner = inner_module(zoo, lm, mode, past)
    names = [n for n, _ in inner.named_parameters()]
    weights = [p.detach() for _, p in inner.named_parameters()]
    if role == "export":
        g = torch.Generator().manual_seed(SEED + sum(map(ord, model + mode)))
        V = cfg.vocab_size
        if mode == "prefill":
            S = TOKENS[size]["prefill"]
            data = [torch.randint(3, V, (1, S), generator=g), torch.arange(S, dtype=torch.int64)[None]]
            kv: list = []
        else:
            data = [torch.randint(3, V, (1, 1), generator=g), torch.tensor([[past]], dtype=torch.int64)]
            # The cache as DynamicCache holds it after a prefix of `past` tokens: [1, Hkv, past, D] per layer
            # (a sliding-window layer: its last window - 1 tokens). Random values: the step's cost and the
            # agreement between contestants do not depend on them being the model's own.
            hkv = cfg.num_key_value_heads
            d = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
            window = getattr(cfg, "sliding_window", None)
            keep = min(past, window - 1) if window else past
            kv = [torch.randn((1, hkv, keep, d), generator=g) for _ in range(2 * cfg.num_hidden_layers)]
        build_s = time.perf_counter() - t0

        class WeightsAsArguments(torch.nn.Module):
            """forward(ids, positions, *kv, *weights): the model with its parameters taken from the arguments.
            The model is not a registered submodule, so torch.export does not lift its parameters."""

            def __init__(self):
                super().__init__()
                object.__setattr__(self, "inner", inner)

            def forward(self, input_ids, position_ids, *rest):
                n = len(rest) - len(names)
                params = dict(zip(names, rest[n:]))
                return torch.func.functional_call(self.inner, params, (input_ids, position_ids, *rest[:n]))

        t0 = time.perf_counter()
        text, rewrites, mutated = zoo.export(WeightsAsArguments(), data + kv + weights)
        export_s = time.perf_counter() - t0
        if mutated:
            raise SystemExit(f"error: the forward assigns buffers {mutated}; this bench takes logits as result 0")
        (case / "model.mlir").write_text(text)
        files = []
        for i, t in enumerate(data + kv):
            np.save(case / f"arg{i}.npy", t.numpy())
            files.append(f"arg{i}.npy")
        wdir = case.parent / "weights"          # shared by the model's modes (same seed, same parameters)
        wdir.mkdir(exist_ok=True)
        for i, (n, w) in enumerate(zip(names, weights)):
            f = wdir / f"w{i:03d}.npy"
            if not f.exists():
                np.save(f, w.numpy())
            files.append(f"../weights/w{i:03d}.npy")
        (case / "args.json").write_text(json.dumps(files))
        nparams = sum(w.numel() for w in weights)
        emit({"build_s": build_s, "export_s": export_s, "mlir_bytes": len(text.encode()),
              "params": int(nparams), "weights_mb": nparams * 4 / 1e6, "rewrites": rewrites,
              "config": {k: v for k, v in cfg.to_dict().items() if k in SIZES["full"] or k in
                         ("rope_parameters", "sliding_window", "model_type", "attention_bias")},
              "arg_shapes": [list(t.shape) for t in data + kv], "n_weights": len(weights)})
        return

    args = load_args(case)
    n_data = len(args) - len(weights)
    with torch.no_grad():
        for p, w in zip(inner.parameters(), args[n_data:]):
            p.copy_(torch.from_numpy(w))
    targs = [torch.from_numpy(a) for a in args[:n_data]]
    if role in ("eager", "compile"):
        fn = inner
        compile_s = 0.0
        if role == "compile":
            import torch._inductor.config as ic
            ic.compile_threads = 1
            fn = torch.compile(inner)

        def call():
            with torch.no_grad():
                out = fn(*targs)
            return out[0] if isinstance(out, (tuple, list)) else out
        if role == "compile":
            t0 = time.perf_counter()
            call()                       # compiles (cold cache: TORCHINDUCTOR_CACHE_DIR is fresh)
            compile_s = time.perf_counter() - t0
        r = time_calls(call, repeats)
        logits = r.pop("out").detach().numpy()
        if role == "eager":
            # The float64 reference: the same modeling code built in float64 (the zoo's float64_mode: torch.float
            # and .float() mean float64, so the rotary tables are float64 too), the same parameters, the same
            # inputs; after the timing, untimed.
            t0 = time.perf_counter()
            with zoo.ff.float64_mode(), torch.no_grad():
                _, _, lm64 = build_model(zoo, model, size)
                inner64 = inner_module(zoo, lm64.double(), mode, past)
                for p64, p in zip(inner64.parameters(), inner.parameters()):
                    p64.copy_(p.double())
                out64 = inner64(*[t.double() if t.is_floating_point() else t for t in targs])
                out64 = out64[0] if isinstance(out64, (tuple, list)) else out64
            np.save(case / "logits_f64.npy", out64.numpy())
            r["f64_s"] = time.perf_counter() - t0
    else:   # iree
        import iree.compiler as ireec
        import iree.runtime as ireert
        text = (case / "model.mlir").read_text()
        t0 = time.perf_counter()
        vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
        config = ireert.Config("local-sync")
        ctx = ireert.SystemContext(config=config)
        vm = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm)
        main = getattr(ctx.modules, vm.name).main
        compile_s = time.perf_counter() - t0
        dev = [ireert.asdevicearray(config.device, a) for a in args]     # uploaded once

        def call():
            out = main(*dev)
            return out[0] if isinstance(out, (tuple, list)) else out
        r = time_calls(call, repeats)
        logits = np.asarray(r.pop("out").to_host())
    np.save(case / f"logits_{role}.npy", logits)
    r["compile_s"] = compile_s
    emit(r)


# -- child under this python: ours ----------------------------------------------------------------------------------
OPS = ("rope.apply", "rope.attention", "rope.online_attention")


def ours_child(role: str, case: pathlib.Path, repeats: int) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    import numpy as np
    import rope_mlir
    from rope_mlir import _jit
    text = (case / "model.mlir").read_text()
    args = load_args(case)
    pipeline = None if role == "raised" else UNRAISED_PIPELINE
    t0 = time.perf_counter()
    mod = rope_mlir.jit(text, pipeline)
    compile_s = time.perf_counter() - t0
    fn = mod.function("main")

    def call():
        out = fn(*args)
        return out[0] if isinstance(out, tuple) else out
    r = time_calls(call, repeats)
    np.save(case / f"logits_{role}.npy", r.pop("out"))
    r["compile_s"] = compile_s
    r["pipeline"] = mod.pipeline
    if role == "raised":
        t0 = time.perf_counter()
        lowered = _jit.lower(text, "builtin.module(rope-optimize)")
        r["optimize_s"] = time.perf_counter() - t0
        r["ops"] = {op: len(re.findall(rf"\b{re.escape(op)}\b(?!_)", lowered)) for op in OPS}
    emit(r)


# -- the driver -----------------------------------------------------------------------------------------------------
def run_child(cmd: List[str], env: dict, timeout: float, log: pathlib.Path) -> dict:
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        log.write_text(f"$ {' '.join(cmd)}\n(timeout)\n{exc.stdout or ''}\n{exc.stderr or ''}")
        return {"error": f"timeout after {timeout:.0f} s"}
    log.write_text(f"$ {' '.join(cmd)}\nexit {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[len("RESULT "):])
            res["wall_s"] = time.time() - t0
            return res
    tail = [ln for ln in (r.stderr or r.stdout).strip().splitlines() if ln.strip()]
    msg = next((ln for ln in reversed(tail) if "error" in ln.lower()), tail[-1] if tail else "")
    return {"error": f"exit {r.returncode} after {time.time() - t0:.0f} s: {msg.strip()[:240]}"}


def snapshot_library(dest: pathlib.Path) -> pathlib.Path:
    """Copies libRopeJit.so (and the fast-call extension beside it) to `dest`, under the build lock
    (/tmp/rope-build.lock: others rebuild build/lib while a run goes on), so that every case of a run loads the
    same complete library. Returns the copy's path (ours' children get it as ROPE_MLIR_LIBRARY)."""
    import fcntl
    sys.path.insert(0, str(ROOT / "python"))
    from rope_mlir._jit import library_path
    lib = library_path()
    dest.mkdir(parents=True, exist_ok=True)
    with open(BUILD_LOCK, "a") as lock:
        print(f"== waiting for {BUILD_LOCK} to copy {lib}", file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
        for f in (lib, lib.parent / "_kernel_call.abi3.so"):
            if f.exists():
                shutil.copy2(f, dest / f.name)
        fcntl.flock(lock, fcntl.LOCK_UN)
    return dest / lib.name


def child_env(cache_dir: Optional[str] = None) -> dict:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", TORCHINDUCTOR_COMPILE_THREADS="1",
               PYTHONUNBUFFERED="1")
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        env["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    return env


def lscpu() -> Dict[str, str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in out.splitlines())}


def machine_line(cpu: int) -> str:
    f = lscpu()
    flags = set(f.get("Flags", "").split())
    isa = "AVX-512" if "avx512f" in flags else ("AVX2, no AVX-512" if "avx2" in flags else "no AVX2")
    return (f"{f.get('Model name', platform.processor() or 'unknown CPU')}, {os.cpu_count()} logical CPUs"
            + (f" under {f['Hypervisor vendor']}" if "Hypervisor vendor" in f else "")
            + f", {isa}; every contestant pinned to CPU {cpu}, one thread")


def peers_versions(peers: str) -> str:
    code = ("import importlib.metadata as m\nfor p in ('torch','transformers','torch-mlir','iree-base-compiler',"
            "'iree-base-runtime'):\n    try: print(p, m.version(p))\n    except Exception: print(p, 'absent')")
    try:
        out = subprocess.run([peers, "-c", code], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "peers: unknown"
    return ", ".join(ln.strip() for ln in out.splitlines() if ln.strip())


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x * 1e3:.1f} ms" if x < 1.0 else f"{x:.2f} s"


def fmt_err(x) -> str:
    return "-" if x is None else ("nan" if x != x else f"{x:.1e}")


def report(results: List[dict], meta: dict) -> List[str]:
    lines = [f"_Generated by `{meta['command']}` on {meta['date']}. Do not edit between the BEGIN/END markers: "
             "rerun the command._", "",
             f"- machine: {meta['machine']}; load average {meta['load_before']} before the run, "
             f"{meta['load_after']} after (other work shared the machine: the noise column says how much the "
             "repeated calls varied)",
             f"- {meta['source']}" + (f", {meta['library']}" if meta.get("library") else "") + f"; {meta['peers']}",
             f"- sizes ({meta['size']}): {meta['sizes']}; prefill {meta['tokens']['prefill']} tokens, decode one "
             f"token at a {meta['tokens']['past']}-token KV cache; weights as function arguments",
             "- time: min of the repeated calls (n = how many), after one first call; × eager: min time / torch "
             "eager's min time (< 1: faster than eager); noise: max/min - 1 over the repeats; compile: before the "
             "first call (ours: rope_mlir.jit; IREE: compile_str + load; torch.compile: its first call, cold "
             "cache); err vs eager: max|logits - eager| / max|eager|; err vs f64: the same against the model's own "
             "code run in float64 (same parameters and inputs)", ""]
    if meta.get("smoke"):
        lines.insert(2, "**(smoke mode: tiny width, the numbers mean nothing)**")
        lines.insert(3, "")
    for res in results:
        ex = res["export"]
        head = f"**{res['model']} {res['mode']}**"
        if "error" in ex:
            lines += [head, "", f"export failed: {ex['error']}", ""]
            continue
        ops = res.get("raised", {}).get("ops")
        lines += [head + f" — export {ex['export_s']:.1f} s, module {ex['mlir_bytes'] / 1e3:.0f} KB, "
                  f"{ex['params'] / 1e6:.1f} M parameters ({ex['weights_mb']:.0f} MB f32) as {ex['n_weights']} "
                  "arguments" + (f"; after --rope-optimize: {ops['rope.apply']} rope.apply, "
                                 f"{ops['rope.attention']} rope.attention, {ops['rope.online_attention']} "
                                 "rope.online_attention" if ops else ""), "",
                  "| contestant | compile | first call | time (min) | median | n | noise | × eager | "
                  "err vs eager | err vs f64 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        eager = res.get("eager", {}).get("min_s")
        for name in CONTESTANTS:
            r = res.get(name)
            if r is None:
                continue
            label = {"raised": "ours, raised (rope-optimize)", "unraised": "ours, un-raised",
                     "eager": "torch eager", "compile": "torch.compile (Inductor)",
                     "iree": "IREE llvm-cpu, local-sync"}[name]
            if "error" in r:
                lines.append(f"| {label} | {r['error']} | | | | | | | | |")
                continue
            ratio = f"{r['min_s'] / eager:.2f}" if eager else "-"
            lines.append(f"| {label} | {fmt_s(r['compile_s']) if name != 'eager' else '-'} | {fmt_s(r['first_s'])}"
                         f" | {fmt_s(r['min_s'])} | {fmt_s(r['median_s'])} | {len(r['times_s'])} | "
                         f"{r['noise'] * 100:.0f}% | {ratio} | "
                         f"{'(reference)' if name == 'eager' else fmt_err(r.get('err'))} | "
                         f"{fmt_err(r.get('err_f64'))} |")
        lines.append("")
    return lines + summary(results)


LABELS = {"raised": "ours raised", "unraised": "ours un-raised", "eager": "torch eager",
          "compile": "torch.compile", "iree": "IREE"}


def summary(results: List[dict]) -> List[str]:
    """The run's facts in a few lines, computed from the same results as the tables (so that prose around the
    region needs to quote no number)."""
    ok = [r for r in results if "error" not in r["export"]]
    if not ok:
        return []
    out = ["**Summary** (from the tables above)", ""]
    ops = {json.dumps(r["raised"]["ops"]) for r in ok if "ops" in r.get("raised", {})}
    if ops:
        by = [f"{r['model']} {r['mode']}: {r['raised']['ops']['rope.apply']} rope.apply, "
              f"{r['raised']['ops']['rope.attention']} rope.attention, "
              f"{r['raised']['ops']['rope.online_attention']} rope.online_attention"
              for r in ok if "ops" in r.get("raised", {})]
        out.append("- after `--rope-optimize`: " + (f"every module: {by[0].split(': ', 1)[1]}" if len(ops) == 1
                                                    else "; ".join(by)))
    good = lambda r, n: n in r and "error" not in r[n]  # noqa: E731
    spans = []
    for n in ("raised", "unraised", "iree", "compile"):
        xs = [r[n]["compile_s"] for r in ok if good(r, n)]
        if xs:
            spans.append(f"{LABELS[n]} {min(xs):.1f} to {max(xs):.1f} s")
    if spans:
        out.append("- compile: " + ", ".join(spans))
    for mode in ("prefill", "decode"):
        rs = [r for r in ok if r["mode"] == mode and good(r, "eager")]
        if not rs:
            continue
        parts = []
        for n in ("raised", "unraised", "compile", "iree"):
            xs = [f"{r[n]['min_s'] / r['eager']['min_s']:.2f} ({r['model']})" for r in rs if good(r, n)]
            if xs:
                parts.append(f"{LABELS[n]} {', '.join(xs)}")
        out.append(f"- {mode}, min time / torch eager's: " + "; ".join(parts))
    both = [r for r in ok if good(r, "raised") and good(r, "unraised")]
    if both:
        faster = [r for r in both if r["raised"]["min_s"] < r["unraised"]["min_s"]]
        slower = [f"{r['model']} {r['mode']} ({fmt_s(r['raised']['min_s'])} against "
                  f"{fmt_s(r['unraised']['min_s'])})" for r in both if r not in faster]
        out.append(f"- raised faster than un-raised in {len(faster)} of {len(both)} cases" +
                   (f"; slower in {', '.join(slower)}" if slower else ""))
    for mode in ("prefill", "decode"):
        rs = [r for r in ok if r["mode"] == mode]
        errs = [r[n]["err"] for r in rs for n in CONTESTANTS if good(r, n) and r[n].get("err") is not None]
        parts = []
        for n in ("raised", "unraised", "compile", "iree"):
            xs = [r[n]["err_f64"] / r["eager"]["err_f64"] for r in rs if good(r, n) and good(r, "eager")
                  and r[n].get("err_f64") is not None and r["eager"].get("err_f64")]
            if xs:
                parts.append(f"{LABELS[n]} {max(xs):.2f}")
        if errs:
            out.append(f"- {mode} agreement: logits within {max(errs):.1e} of torch eager's; error against "
                       f"float64 over torch eager's own, at most: " + ", ".join(parts))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=6, metavar=("ROLE", "CASE", "MODEL", "MODE", "SIZE", "REPEATS"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--models", default="llama")
    ap.add_argument("--modes", default="prefill,decode")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--workdir", type=pathlib.Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--only", default=",".join(CONTESTANTS))
    ap.add_argument("--peers-python", default=PEERS_PYTHON)
    ap.add_argument("--reuse", action="store_true", help="reuse an export already in the work directory")
    ap.add_argument("--write-docs", nargs="?", const=str(DOC), type=pathlib.Path)
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--report-from", type=pathlib.Path, metavar="JSON",
                    help="print (and with --write-docs write) the report of a run's --json file; runs nothing")
    opts = ap.parse_args(argv)
    if opts.report_from:
        saved = json.loads(opts.report_from.read_text())
        lines = report(saved["results"], saved["meta"])
        print("\n".join(lines))
        if opts.write_docs:
            sys.path.insert(0, str(ROOT / "bench"))
            from _source import replace_region
            replace_region(opts.write_docs, lines, BEGIN_MARK, END_MARK)
        return 0
    if opts.child:
        role, case, model, mode, size, repeats = opts.child
        if role in ("raised", "unraised"):
            ours_child(role, pathlib.Path(case), int(repeats))
        else:
            peers_child(role, pathlib.Path(case), model, mode, size, int(repeats))
        return 0

    size = "smoke" if opts.smoke else "full"
    models = [m for m in opts.models.split(",") if m]
    modes = [m for m in opts.modes.split(",") if m]
    only = [c for c in opts.only.split(",") if c]
    bad = [m for m in models if m not in MODELS] + [m for m in modes if m not in ("prefill", "decode")] + \
        [c for c in only if c not in CONTESTANTS]
    if bad:
        ap.error(f"unknown {bad}; models: {list(MODELS)}, modes: prefill, decode, contestants: {CONTESTANTS}")
    if not pathlib.Path(opts.peers_python).exists():
        print(f"error: the peers' python {opts.peers_python} is absent (torch, transformers, torch-mlir, IREE; "
              "../shared/FRONTENDS.md)", file=sys.stderr)
        return 3
    try:
        os.sched_setaffinity(0, {opts.cpu})
    except (AttributeError, OSError) as exc:
        print(f"warning: could not pin to CPU {opts.cpu}: {exc}", file=sys.stderr)
    workdir = opts.workdir / size
    workdir.mkdir(parents=True, exist_ok=True)
    me = str(pathlib.Path(__file__).resolve())
    meta = {"command": "python3 bench/model_bench.py" + (" --smoke" if opts.smoke else "")
            + (f" --models {opts.models}" if opts.models != "llama" else "")
            + (f" --modes {opts.modes}" if opts.modes != "prefill,decode" else "") + " --write-docs",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine_line(opts.cpu), "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "peers": peers_versions(opts.peers_python), "size": size, "smoke": opts.smoke,
            "sizes": ", ".join(f"{k} {v}" for k, v in SIZES[size].items()), "tokens": TOKENS[size]}
    try:
        sys.path.insert(0, str(ROOT / "bench"))
        from _source import source_line
        meta["source"] = source_line()
    except Exception:  # noqa: BLE001
        meta["source"] = "source: unknown"
    ours_env = child_env()
    if {"raised", "unraised"} & set(only):
        snap = snapshot_library(workdir / "lib")
        ours_env["ROPE_MLIR_LIBRARY"] = str(snap)
        meta["library"] = (f"libRopeJit.so as built at "
                           f"{datetime.datetime.fromtimestamp(snap.stat().st_mtime, datetime.timezone.utc):%H:%M} UTC "
                           "(copied for the run)")
    results = []
    failed = False
    for model in models:
        for mode in modes:
            case = workdir / model / mode
            case.mkdir(parents=True, exist_ok=True)
            repeats = opts.repeats or REPEATS[size][mode]
            res: dict = {"model": model, "mode": mode}

            def child(role: str, python: str, env: dict) -> dict:
                print(f"== {model} {mode}: {role}", file=sys.stderr, flush=True)
                r = run_child([python, me, "--child", role, str(case), model, mode, size, str(repeats)], env,
                              opts.timeout, case / f"{role}.log")
                print("   " + (r["error"] if "error" in r else
                               f"compile {fmt_s(r.get('compile_s', r.get('export_s')))}, min "
                               f"{fmt_s(r.get('min_s'))}"), file=sys.stderr, flush=True)
                return r
            if opts.reuse and (case / "args.json").exists() and (case / "export.json").exists():
                res["export"] = json.loads((case / "export.json").read_text())
            else:
                for stale in case.glob("logits_*.npy"):
                    stale.unlink()
                res["export"] = child("export", opts.peers_python, child_env())
                (case / "export.json").write_text(json.dumps(res["export"]))
            if "error" in res["export"]:
                failed = True
                results.append(res)
                continue
            for name in CONTESTANTS:     # eager first: the others are compared with its logits
                if name not in only and name != "eager":
                    continue
                if name in ("raised", "unraised"):
                    res[name] = child(name, sys.executable, ours_env)
                else:
                    cache = tempfile.mkdtemp(prefix="inductor-", dir=case) if name == "compile" else None
                    res[name] = child(name, opts.peers_python, child_env(cache))
                    if cache:
                        shutil.rmtree(cache, ignore_errors=True)
            import numpy as np
            ref, ref64 = case / "logits_eager.npy", case / "logits_f64.npy"
            for name in CONTESTANTS:
                r = res.get(name)
                if r and "error" not in r:
                    y = np.load(case / f"logits_{name}.npy")
                    if name != "eager" and ref.exists():
                        r["err"] = rel_err(y, np.load(ref))
                    if ref64.exists():
                        r["err_f64"] = rel_err(y, np.load(ref64))
                if r and "error" in r:
                    failed = True
            results.append(res)
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = report(results, meta)
    print("\n".join(lines))
    if opts.json:
        opts.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    if opts.write_docs:
        sys.path.insert(0, str(ROOT / "bench"))
        from _source import replace_region
        replace_region(opts.write_docs, lines, BEGIN_MARK, END_MARK)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
