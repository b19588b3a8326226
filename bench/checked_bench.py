#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What `rope_mlir.jit(..., checked=True)` costs: the same modules compiled
with and without the runtime checks, timed in the same run.

    python3 bench/checked_bench.py            # markdown table on stdout (~2 min)
    python3 bench/checked_bench.py --quick    # fewer samples, smaller shapes
    python3 bench/checked_bench.py --zoo llama_prefill,llama_decode   # whole models too

Cases:
  rope dynamic   rope.apply on tensor<?x?x?x128xf32> (explicit positions, the
                 cos/sin cache gathered: the checked form also scans every
                 position against the cache's rows), prefill [1, 4096, 32, 128]
                 and decode [32, 1, 32, 128], from memory-sized arrays;
  fixtures       every committed frontend fixture (test/Frontends/Inputs and
                 its attention/ folder: torch-mlir, JAX and ONNX exports of
                 RoPE and attention, static shapes) on its stored inputs;
  zoo            with --zoo llama_prefill,...: whole models of the model zoo
                 (test/Frontends/Inputs/zoo) on their stored inputs.
Each row: compile time of both, the median call time of both over
interleaved samples, and checked/unchecked. One thread (checked code always
runs on one thread; unchecked here too, for a like-for-like ratio).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

import rope_mlir  # noqa: E402
from frontend_fixture_io import load_zoo_module, numbered_arrays  # noqa: E402

ROPE = """
func.func @rot(%x: tensor<?x?x?x128xf32>, %p: tensor<?x?xi64>,
               %cos: tensor<?x64xf32>, %sin: tensor<?x64xf32>)
    -> tensor<?x?x?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x?x128xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x?x128xf32>
  %h = tensor.dim %x, %c2 : tensor<?x?x?x128xf32>
  %e = tensor.empty(%b, %s, %h) : tensor<?x?x?x128xf32>
  %y = rope.apply ins(%x : tensor<?x?x?x128xf32>)
         positions(%p : tensor<?x?xi64>)
         cache(%cos, %sin : tensor<?x64xf32>, tensor<?x64xf32>)
         outs(%e : tensor<?x?x?x128xf32>) -> tensor<?x?x?x128xf32>
  return %y : tensor<?x?x?x128xf32>
}
"""


def timed_compile(text: str, checked: bool):
    start = time.perf_counter()
    module = rope_mlir.jit(text, checked=checked)
    return module, time.perf_counter() - start


def interleaved(functions, args, samples: int):
    """Median seconds of each function, sampled in alternation."""
    times = [[] for _ in functions]
    for f in functions:
        f(*args)  # warm-up
    order = list(range(len(functions)))
    for _ in range(samples):
        # The order flips every round: the first call of a round pays for
        # the page faults of a fresh result block (measured: 20 ms against
        # 16.5 ms for the same prefill kernel), whichever it is.
        for i in order:
            start = time.perf_counter()
            functions[i](*args)
            times[i].append(time.perf_counter() - start)
        order.reverse()
    return [statistics.median(t) for t in times]


def rope_cases(quick: bool):
    rng = np.random.default_rng(0)
    rows = 8192
    cos = rng.standard_normal((rows, 64)).astype(np.float32)
    sin = rng.standard_normal((rows, 64)).astype(np.float32)
    shapes = {"rope prefill [1, 4096, 32, 128]": (1, 4096, 32),
              "rope decode [32, 1, 32, 128]": (32, 1, 32)}
    if quick:
        shapes = {"rope prefill [1, 512, 32, 128]": (1, 512, 32),
                  "rope decode [32, 1, 32, 128]": (32, 1, 32)}
    for name, (b, s, h) in shapes.items():
        x = rng.standard_normal((b, s, h, 128)).astype(np.float32)
        p = rng.integers(0, rows, size=(b, s))
        yield name, ROPE, "rot", (x, p, cos, sin)


def fixture_cases():
    for folder in (ROOT / "test/Frontends/Inputs",
                   ROOT / "test/Frontends/Inputs/attention"):
        manifest = json.loads((folder / "manifest.json").read_text())
        for fixture in manifest["fixtures"]:
            text = (folder / fixture["file"]).read_text()
            data = np.load(folder / fixture["data"])
            yield (f"fixture {fixture['name']}", text,
                   fixture.get("func", "main"),
                   tuple(numbered_arrays(data, "arg")))


def zoo_cases(names):
    """Whole models of the model zoo (test/Frontends/Inputs/zoo), named
    `<model>_<mode>` (e.g. llama_prefill)."""
    folder = ROOT / "test/Frontends/Inputs/zoo"
    manifest = json.loads((folder / "manifest.json").read_text())
    modes = {f"{m['name']}_{mode}": entry
             for m in manifest["models"] for mode, entry in m["modes"].items()}
    for name in names:
        if name not in modes:
            raise SystemExit(f"--zoo: no zoo module {name!r}; there are "
                             f"{', '.join(sorted(modes))}")
        model, mode = name.rsplit("_", 1)
        _, args, _, _ = load_zoo_module(manifest, model, mode)   # bf16 args
        yield (f"zoo {name}", (folder / modes[name]["file"]).read_text(),
               "main", tuple(args))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--zoo", default="",
                        help="comma-separated zoo modules to add (whole "
                             "models, 5-14 s each to compile), e.g. "
                             "llama_prefill,llama_decode")
    args = parser.parse_args()
    samples = args.samples or (5 if args.quick else 15)
    print(f"# checked vs unchecked, {platform.processor() or platform.machine()}"
          f", one thread, medians of {samples} interleaved samples\n")
    print("| case | compile unchecked | compile checked | call unchecked | "
          "call checked | checked/unchecked |")
    print("|---|---|---|---|---|---|")
    cases = list(rope_cases(args.quick)) + list(fixture_cases())
    if args.zoo:
        cases += list(zoo_cases([n for n in args.zoo.split(",") if n]))
    for name, text, func, call_args in cases:
        try:
            plain, plain_s = timed_compile(text, False)
            checked, checked_s = timed_compile(text, True)
            f, g = plain.function(func), checked.function(func)
            expected, got = f(*call_args), g(*call_args)
            if not isinstance(expected, tuple):
                expected, got = (expected,), (got,)
            for a, b in zip(expected, got):
                np.testing.assert_array_equal(a, b)
            t_plain, t_checked = interleaved((f, g), call_args, samples)
        except Exception as error:  # noqa: BLE001 - a row says what failed
            print(f"| {name} | failed: {type(error).__name__}: "
                  f"{str(error).splitlines()[0][:80]} | | | | |")
            continue
        print(f"| {name} | {plain_s:.2f} s | {checked_s:.2f} s | "
              f"{t_plain * 1e3:.3f} ms | {t_checked * 1e3:.3f} ms | "
              f"{t_checked / t_plain:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
