# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The machine's limits, probed in the bench's own run (issue 35).

Attention rows are reported as fractions of what this core can do, measured
here and now rather than taken from a data sheet (clocks, turbo and a
neighbour's load move both):

- `fma_peak()`: f32 FMA throughput of one thread, GFLOP/s (2 per lane per
  FMA). A loop of independent FMAs on register-resident vectors of the
  host's native width (16 lanes with AVX-512, 8 with AVX2), 12 accumulators
  (more than the FMA latency times the ports, fewer than the registers),
  compiled by our own JIT like the kernels it is compared with.
- `bf16_dot_peak()`: with AVX512-BF16, the same loop on `vdpbf16ps`
  (`x86vector.avx512.dot`: per f32 lane two bf16 products and their two
  additions, 4 FLOP), the rate bf16 contractions reach with products in
  pairs; None on hosts without it. (AMX is not probed: no kernel of ours
  uses it yet.)
- `read_bandwidth(nbytes)`: GB/s of one thread summing `nbytes` of f32 with
  vector loads into 4 accumulators, warm (the array read once first), so
  that an array the size of a decode step's K and V is measured where that
  K and V live (in the last-level cache when it fits: Intel's 300+ MiB L3
  holds a 16K-key cache, AMD's does not).

Both take the best of a few repeats (the machine's ceiling, not its mean).
"""

from __future__ import annotations

import functools
import pathlib
import platform
import time

import numpy as np

ACCUMULATORS = 12
READ_ACCUMULATORS = 4


def native_lanes() -> int:
    """f32 lanes of the widest vector the host has (16: AVX-512, else 8)."""
    try:
        flags = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return 8
    return 16 if " avx512f" in flags else 8


def cpu_name() -> str:
    """The CPU's model name (the benches' one reader of it)."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _fma_module(lanes: int, bf16_pairs: bool = False) -> str:
    vec = f"vector<{lanes}xf32>"
    accs = [f"%a{i}" for i in range(ACCUMULATORS)]
    init = ", ".join(f"{a} = %init{i % 2}" for i, a in enumerate(accs))
    if bf16_pairs:
        pairs = f"vector<{2 * lanes}xbf16>"
        body = "\n".join(
            f"      %n{i} = x86vector.avx512.dot {a}, %mb, %cb : {pairs} -> "
            f"{vec}" for i, a in enumerate(accs))
    else:
        body = "\n".join(f"      %n{i} = math.fma {a}, %m, %c : {vec}"
                         for i, a in enumerate(accs))
    yields = ", ".join(f"%n{i}" for i in range(ACCUMULATORS))
    types = ", ".join([vec] * ACCUMULATORS)
    sums = []
    prev = "%r0"
    lines = [f"    %r0 = arith.addf %s#0, %s#1 : {vec}"]
    for i in range(2, ACCUMULATORS):
        lines.append(f"    %r{i - 1} = arith.addf {prev}, %s#{i} : {vec}")
        prev = f"%r{i - 1}"
    sums = "\n".join(lines)
    return f"""
func.func @fma(%iterations: index, %seed: f32) -> f32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = vector.broadcast %seed : f32 to {vec}
  %half = arith.constant 0.5 : f32
  %c = vector.broadcast %half : f32 to {vec}
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %init0 = vector.broadcast %one : f32 to {vec}
  %init1 = vector.broadcast %two : f32 to {vec}
  %seedb = arith.truncf %seed : f32 to bf16
  %halfb = arith.truncf %half : f32 to bf16
  %mb = vector.broadcast %seedb : bf16 to vector<{2 * lanes}xbf16>
  %cb = vector.broadcast %halfb : bf16 to vector<{2 * lanes}xbf16>
  %s:{ACCUMULATORS} = scf.for %i = %c0 to %iterations step %c1 iter_args({init}) -> ({types}) {{
{body}
      scf.yield {yields} : {types}
  }}
{sums}
  %total = vector.reduction <add>, {prev} : {vec} into f32
  return %total : f32
}}
"""


def _read_module(lanes: int) -> str:
    vec = f"vector<{lanes}xf32>"
    step = lanes * READ_ACCUMULATORS
    accs = [f"%a{i}" for i in range(READ_ACCUMULATORS)]
    init = ", ".join(f"{a} = %zero" for a in accs)
    types = ", ".join([vec] * READ_ACCUMULATORS)
    loads = []
    for i, a in enumerate(accs):
        loads.append(f"      %o{i} = arith.addi %i, %off{i} : index")
        loads.append(f"      %v{i} = vector.transfer_read %x[%o{i}], %pad "
                     f"{{in_bounds = [true]}} : tensor<?xf32>, {vec}")
        loads.append(f"      %n{i} = arith.addf {a}, %v{i} : {vec}")
    offsets = "\n".join(f"  %off{i} = arith.constant {i * lanes} : index"
                        for i in range(READ_ACCUMULATORS))
    yields = ", ".join(f"%n{i}" for i in range(READ_ACCUMULATORS))
    return f"""
func.func @read(%x: tensor<?xf32>) -> f32 {{
  %c0 = arith.constant 0 : index
  %step = arith.constant {step} : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : {vec}
{offsets}
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %s:{READ_ACCUMULATORS} = scf.for %i = %c0 to %n step %step iter_args({init}) -> ({types}) {{
{chr(10).join(loads)}
      scf.yield {yields} : {types}
  }}
  %r0 = arith.addf %s#0, %s#1 : {vec}
  %r1 = arith.addf %s#2, %s#3 : {vec}
  %r2 = arith.addf %r0, %r1 : {vec}
  %total = vector.reduction <add>, %r2 : {vec} into f32
  return %total : f32
}}
"""


@functools.lru_cache(maxsize=None)
def _compiled(kind: str, lanes: int):
    import rope_mlir
    text = (_fma_module(lanes, bf16_pairs=kind == "bf16_dot")
            if kind in ("fma", "bf16_dot") else _read_module(lanes))
    kind = "fma" if kind == "bf16_dot" else kind
    return rope_mlir.jit(text).function(kind)


def _loop_peak(kind: str, flops_per_lane: int, repeats: int,
               iterations: int) -> float:
    """GFLOP/s of the `kind` loop (fma or bf16_dot): the best of `repeats`
    runs of `iterations` steps of ACCUMULATORS independent vector ops."""
    lanes = native_lanes()
    fn = _compiled(kind, lanes)
    fn(1000, np.float32(0.999))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(iterations, np.float32(0.999))
        best = min(best, time.perf_counter() - t)
    return flops_per_lane * lanes * ACCUMULATORS * iterations / best / 1e9


def fma_peak(repeats: int = 5, iterations: int = 20_000_000) -> float:
    """One thread's f32 FMA peak, GFLOP/s."""
    return _loop_peak("fma", 2, repeats, iterations)


def has_bf16_pairs() -> bool:
    """Whether the host has AVX512-BF16 (vdpbf16ps)."""
    from rope_mlir import _jit
    return _jit.host_has_feature("avx512bf16")


def bf16_dot_peak(repeats: int = 5, iterations: int = 20_000_000):
    """One thread's bf16 pair-product peak (vdpbf16ps), GFLOP/s counting
    each product and each addition; None without AVX512-BF16."""
    if not has_bf16_pairs():
        return None
    return _loop_peak("bf16_dot", 4, repeats, iterations)


def read_bandwidth(nbytes: int, repeats: int = 5) -> float:
    """One thread's warm read bandwidth over an array of about `nbytes`,
    GB/s."""
    lanes = native_lanes()
    step = lanes * READ_ACCUMULATORS
    n = max(step, (nbytes // 4) // step * step)
    x = np.ones(n, np.float32)
    fn = _compiled("read", lanes)
    fn(x)
    best = float("inf")
    # Enough reads of a small array to time it well.
    inner = max(1, int(2e8 // (4 * n)))
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn(x)
        best = min(best, (time.perf_counter() - t) / inner)
    return 4.0 * n / best / 1e9


if __name__ == "__main__":
    print(f"{cpu_name()}: {native_lanes()} f32 lanes")
    print(f"f32 FMA peak, one thread: {fma_peak():.1f} GFLOP/s")
    bf16 = bf16_dot_peak()
    print("bf16 vdpbf16ps peak, one thread: " +
          (f"{bf16:.1f} GFLOP/s" if bf16 else "no AVX512-BF16"))
    for mib in (32, 128, 1024):
        print(f"read bandwidth, one thread, {mib} MiB warm: "
              f"{read_bandwidth(mib << 20):.1f} GB/s")
