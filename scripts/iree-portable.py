#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""IREE takes what `rope-opt --rope-optimize=portable=true` produces, with its
default flags (issue 34), and what it gains from it.

For every RoPE frontend fixture (test/Frontends/Inputs), attention fixture
(test/Frontends/Inputs/attention) and zoo module (test/Frontends/Inputs/zoo,
prefill and decode; torch, ONNX and JAX exports), on the same export:
  - IREE alone: the frontend's linalg straight into iree-compile;
  - IREE after our pre-pass: `rope-opt --rope-optimize=portable=true`
    (upstream dialects only, no rope op), then iree-compile;
both with iree-compile's defaults but the target (`llvm-cpu`, the host CPU's
features, so that neither build is held to a generic x86-64), run by
iree.runtime on one thread (`local-sync`) on the stored inputs; each
result's largest error against the stored float64 references, relative to
their largest value; the minimum time of a few calls, the two builds' calls
interleaved (one of each per round). A module passes when
it compiles and its error is within twice the frontend's own f32 error (or
2e-6, whichever is larger), as test_zoo_models asks of our own JIT.

Then the RoPE at long positions: the HF Llama RoPE fixture (llama_computed:
q and k rotated, the positions an argument) called at positions around 16K,
against rope_mlir.reference in float64: IREE alone carries the frontend's
f32 angle; after the pre-pass the angle is the exact one (angle=turns, which
IREE's default f64 demotion does not touch).

Not run by CI (iree-base-compiler is ~100 MB); run it where IREE is
installed, e.g. the peers' environment:

    PYTHONPATH=python ../peers/bin/python scripts/iree-portable.py [--markdown FILE] [--only REGEX]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from frontend_fixture_io import load_fixture, load_zoo_module, relative_error, zoo_manifest  # noqa: E402

INPUTS = ROOT / "test" / "Frontends" / "Inputs"
FLOOR = 2e-6


def inputs_list():
    """(group, name, text, args, refs, frontends) of every module."""
    rope = json.loads((INPUTS / "manifest.json").read_text())
    fixtures = {f["name"]: f for f in rope["fixtures"]}
    for name in fixtures:
        f, text, args, refs, frontends = load_fixture(INPUTS, fixtures, name)
        yield "rope", name, f.get("func", "main"), text, args, refs, frontends
    attention = json.loads((INPUTS / "attention" / "manifest.json").read_text())
    fixtures = {f["name"]: f for f in attention["fixtures"]}
    for name in fixtures:
        f, text, args, refs, frontends = load_fixture(INPUTS / "attention", fixtures, name)
        yield "attention", name, f.get("func", "main"), text, args, refs, frontends
    manifest = zoo_manifest()
    for model in manifest["models"]:
        for mode in model["modes"]:
            text, args, refs, frontends = load_zoo_module(manifest, model["name"], mode)
            yield "zoo", f"{model['name']}_{mode}", "main", text, args, refs, frontends


def portable(rope_opt: str, text: str) -> str:
    out = subprocess.run([rope_opt, "--rope-optimize=portable=true"], input=text,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-2000:])
    if re.search(r"\brope\.", out.stdout):
        raise RuntimeError("a rope op is left in the portable output")
    return out.stdout


def compile_and_load(text: str, ireec, ireert):
    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"],
                             extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = ireert.Config("local-sync")
    ctx = ireert.SystemContext(config=config)
    vm = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(vm)
    # The module's name is the MLIR module's (JAX: @jit_...), else "module".
    return getattr(ctx.modules, vm.name)


def run_both(modules, func: str, args, repeats: int):
    """Outputs and the min time of each module's `func`, their calls
    interleaved (one of each per round) so that the machine's drift reaches
    both alike."""
    fns = [getattr(m, func) if m is not None else None for m in modules]
    outs = [fn(*args) if fn else None for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            if fn is None:
                continue
            t = time.perf_counter()
            fn(*args)
            best[i] = min(best[i], time.perf_counter() - t)
    host = []
    for o in outs:
        if o is None:
            host.append(None)
            continue
        o = o if isinstance(o, (tuple, list)) else (o,)
        host.append([np.asarray(x.to_host() if hasattr(x, "to_host") else x) for x in o])
    return host, best


def max_error(outs, refs):
    """The largest of the outputs' relative errors (frontend_fixture_io's)."""
    return max(relative_error(got, np.asarray(ref, np.float64)) for got, ref in zip(outs, refs))


def long_positions(rope_opt: str, ireec, ireert):
    """The llama_computed fixture at positions near 16K: (IREE alone, after
    the pre-pass) errors against float64 (rotate_half written here in
    float64 with the fixture's own frequency table)."""
    rope = json.loads((INPUTS / "manifest.json").read_text())
    fixtures = {f["name"]: f for f in rope["fixtures"]}
    f, text, args, _, _ = load_fixture(INPUTS, fixtures, "llama_computed")
    q, k, pos = args
    rows = []
    for start in (16384 - 8, 32768 - 8, 131072 - 8):
        positions = np.broadcast_to(np.arange(start, start + pos.shape[1], dtype=pos.dtype), pos.shape).copy()
        theta = np.asarray(f["expect"][0]["freqs"]["values"], np.float64)
        refs = []
        for x in (q, k):
            # [B, H, S, D] with the positions per (batch, token).
            angle = positions.astype(np.float64)[:, None, :, None] * theta
            c, s = np.cos(np.concatenate([angle, angle], -1)), np.sin(np.concatenate([angle, angle], -1))
            x64 = x.astype(np.float64)
            half = x.shape[-1] // 2
            rot = np.concatenate([-x64[..., half:], x64[..., :half]], -1)
            refs.append(x64 * c + rot * s)
        errs = []
        for prepass in (False, True):
            module = compile_and_load(portable(rope_opt, text) if prepass else text, ireec, ireert)
            (outs,), _ = run_both([module], "main", [q, k, positions], 1)
            errs.append(max_error(outs, refs))
        rows.append((int(positions.max()), errs[0], errs[1]))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rope-opt", default=str(ROOT / "build" / "bin" / "rope-opt"))
    parser.add_argument("--only", default=None, help="regex on the module names")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--markdown", default=None, help="also write the tables to FILE")
    args = parser.parse_args(argv)
    import iree.compiler as ireec
    import iree.runtime as ireert

    lines = ["| group | module | IREE alone: compiles | err vs f64 | µs | IREE after pre-pass: compiles "
             "| err vs f64 | µs | after / alone | frontend's f32 err | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    failures = 0
    totals = {"alone": [], "prepass": []}
    for group, name, func, text, inputs, refs, frontends in inputs_list():
        if args.only and not re.search(args.only, name):
            continue
        theirs = max_error(frontends, refs) if frontends else 0.0
        modules, cells, results = {}, {}, {}
        for kind in ("alone", "prepass"):
            try:
                source = portable(args.rope_opt, text) if kind == "prepass" else text
                modules[kind] = compile_and_load(source, ireec, ireert)
            except Exception as error:  # the compiler's message
                modules[kind] = None
                cells[kind] = [f"no: {str(error).strip().splitlines()[-1][:80]}", "-", "-"]
        try:
            outs, best = run_both([modules["alone"], modules["prepass"]], func, inputs, args.repeats)
        except Exception as error:  # the runtime's message
            outs, best = [None, None], [None, None]
            for kind in modules:
                cells.setdefault(kind, [f"no: {str(error).strip().splitlines()[-1][:80]}", "-", "-"])
        for kind, out, t in zip(("alone", "prepass"), outs, best):
            if out is None:
                results[kind] = None
                continue
            err = max_error(out, refs)
            results[kind] = (err, t)
            cells[kind] = ["yes", f"{err:.1e}", f"{t * 1e6:.1f}"]
        cells = cells["alone"] + cells["prepass"]
        ratio = (f"{results['prepass'][1] / results['alone'][1]:.2f}"
                 if results["alone"] and results["prepass"] else "-")
        bound = 2 * max(theirs, FLOOR)
        ok = results["prepass"] is not None and results["prepass"][0] <= bound
        failures += not ok
        for kind in totals:
            if results[kind] is not None and results["alone"] is not None and results["prepass"] is not None:
                totals[kind].append(results[kind][1])
        lines.append(f"| {group} | {name} | " + " | ".join(cells) + f" | {ratio} | {theirs:.1e} | "
                     f"{'ok' if ok else 'FAIL'} |")
        print(lines[-1], flush=True)
    long_rows = long_positions(args.rope_opt, ireec, ireert)
    long_lines = ["| largest position | IREE alone: err vs f64 | after pre-pass | cut |", "|---|---|---|---|"]
    for top, alone, prepass in long_rows:
        long_lines.append(f"| {top} | {alone:.1e} | {prepass:.1e} | {alone / prepass:.0f}x |")
    print("\n".join(long_lines))
    if totals["alone"]:
        ratio = sum(totals["prepass"]) / sum(totals["alone"])
        print(f"sum of times where both run: after pre-pass / alone = {ratio:.2f}")
    if args.markdown:
        pathlib.Path(args.markdown).write_text("\n".join(lines + [""] + long_lines) + "\n")
    print(f"{failures} module(s) failing" if failures else "every module passes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
