# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the fused-form benchmarks (kv_cache_bench, neighbours_bench, mla_bench) share: the copy peer of
the bytes a fused form must move, and the markdown report with issue 18's two ratios (unfused / fused,
target >= 1.3; copy / fused, target >= 0.85), written once here so the three tables stay alike."""

from __future__ import annotations

import datetime
import os
import statistics
import sys
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

import cpu_bench
from _source import source_line

SPEEDUP_TARGET, COPY_TARGET = 1.3, 0.85


def copy_peer(lib, moved: int) -> Callable[[], None]:
    """A STREAM-style copy of `moved` bytes (bench/cpp/rope_baseline.cpp's copy_baseline, one thread)
    between two buffers of its own."""
    src, dst = np.empty(moved, np.uint8), np.empty(moved, np.uint8)
    src[:] = 1
    return lambda: lib.copy_baseline(src.ctypes.data, dst.ctypes.data, moved, 1)


_flusher = None


def measure(fns: Dict[str, Callable[[], object]], timing: cpu_bench.Timing, unfused: str,
            peers: Sequence[str] = ("copy",)) -> Dict[str, float]:
    """Every fn's median (seconds) over cpu_bench.measure_interleaved's warm rounds, and under "cold <name>"
    the medians of cpu_bench.measure_cold for those the ratios use ("fused raw", `unfused` and the `peers`):
    each call alone with its arrays evicted first (a CacheFlusher twice the last-level cache, made once)."""
    global _flusher
    if _flusher is None:
        _flusher = cpu_bench.CacheFlusher()
    result = {n: st.median for n, st in cpu_bench.measure_interleaved(fns, timing).items()}
    cold = cpu_bench.measure_cold({n: fns[n] for n in ("fused raw", unfused, *peers)}, timing.samples, _flusher)
    result.update({f"cold {n}": st.median for n, st in cold.items()})
    return result


def report(script: str, argv, repeat: int, samples: int, keys: Sequence[str],
           rows: Dict[Tuple[str, ...], List[Dict[str, float]]], names: Sequence[str], unfused: str,
           verdicts: bool = True, peers: Sequence[str] = ("copy",)) -> List[str]:
    """The markdown report: a header naming the command, machine, source and load, then one line per
    row key (the `keys` columns) with the median of each timed function in `names` (µs) and the
    medians of unfused / "fused raw" and, per peer ("copy" unless `peers` says), peer / "fused raw",
    with PASS/MISS when `verdicts`; then the same ratios of the cold measurements (measure), where the
    rows have them."""
    load = os.getloadavg()[0]
    args = " ".join(argv if argv is not None else sys.argv[1:])
    cold_names = ["fused raw", "unfused", *peers]
    lines = [f"{script}, {datetime.date.today().isoformat()}: `python3 bench/{script}.py {args}`",
             "",
             f"- machine: {cpu_bench.machine_line()}",
             f"- {source_line()}",
             f"- single thread; per row the median over {repeat} run(s), each of {samples} "
             f"interleaved rounds; 1-minute load average {load:.2f} at the end",
             f"- `cold` columns: {', '.join(cold_names[:-1])} and {cold_names[-1]} each called alone after reading "
             "a buffer twice the last-level cache (cpu_bench.measure_cold), so their arrays come from memory; "
             "the other columns time batches of back-to-back calls, which a large last-level cache partly serves",
             "",
             "| " + " | ".join(list(keys) + [f"{n} µs" for n in names] +
                            ["unfused/fused"] + [f"of {p}" for p in peers] +
                            ["cold: fused µs", "cold: unfused/fused"] + [f"cold: of {p}" for p in peers]) + " |",
             "|" + "---|" * len(keys) + "---:|" * (len(names) + 3 + 2 * len(peers))]

    def verdict(value: float, target: float) -> str:
        return f"{value:.2f} {'PASS' if value >= target else 'MISS'}" if verdicts else f"{value:.2f}"

    for key, rs in rows.items():
        med = {n: statistics.median(r[n] for r in rs) for n in names}
        speedup = statistics.median(r[unfused] / r["fused raw"] for r in rs)
        cells = [verdict(speedup, SPEEDUP_TARGET)]
        cells += [verdict(statistics.median(r[p] / r["fused raw"] for r in rs), COPY_TARGET) for p in peers]
        if all("cold fused raw" in r for r in rs):
            cold = statistics.median(r["cold fused raw"] for r in rs)
            cold_speedup = statistics.median(r[f"cold {unfused}"] / r["cold fused raw"] for r in rs)
            cells += [f"{cold * 1e6:.1f}", verdict(cold_speedup, SPEEDUP_TARGET)]
            cells += [verdict(statistics.median(r[f"cold {p}"] / r["cold fused raw"] for r in rs), COPY_TARGET)
                      for p in peers]
        else:
            cells += ["n/a"] * (2 + len(peers))
        lines.append("| " + " | ".join(list(key) + [f"{med[n] * 1e6:.1f}" for n in names] + cells) + " |")
    return lines
