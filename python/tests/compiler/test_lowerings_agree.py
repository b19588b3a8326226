# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The three lowerings of rope.apply follow one description of it.

lib/Dialect/Rope/Utils/RotationCore.cpp holds what rope.apply means
(positions, M-RoPE's per-pair axis, the cos/sin source with the
out-of-range rule, magnitude and direction, the pair rotation with one
rounding); the linalg decomposition (rope-to-llvm-cpu{vectorize=false}),
the vector lowering (the default) and the GPU kernel (convert-rope-to-gpu,
launched on CPU loops as in test_gpu_emulation) only read operands and loop
differently. So the same random case gives the same bits on all three where
the math is the same:

every dtype (f16/bf16 rounded once at the end), computed or cached cos/sin,
bitwise identical on the linalg and vector CPU paths and on the emulated GPU
kernel. (Both CPU pipelines and the GPU one take sin/cos from
rope-approximate-trig's polynomials, so the transcendental is the same code
too; on a device, NVPTX's FMA contraction of other ops may still move the
last bit: the device rows of bench/gpu check the SEMANTICS.md §5 contract.)

The cases are test_differential's random configurations (every dtype, both
layouts, partial rotary, every position form and cos/sin source, inverse,
magnitude, static shapes) and M-RoPE in both axis encodings.
"""

from __future__ import annotations

import numpy as np
import pytest

import rope_mlir

from test_differential import NUM_CASES, make_case, run_case
from test_gpu_emulation import emulated_kernel

SEEDS = range(5, NUM_CASES, 16)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    # NaN payloads may differ (out-of-range cache rows yield NaN on every
    # path): compare NaN positions, then the bits of everything else.
    nan_a, nan_b = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    if not np.array_equal(nan_a, nan_b):
        return False
    return np.array_equal(_bits(a)[~nan_a], _bits(b)[~nan_b])


@pytest.mark.parametrize("seed", SEEDS)
def test_linalg_and_vector_paths_agree_bitwise(seed):
    case = make_case(seed)
    _, vector, _ = run_case(case)
    _, linalg, _ = run_case(case, lowering="scalar")
    assert np.asarray(vector).size and np.any(np.asarray(vector) != 0)
    assert _same_bits(vector, linalg), (case, np.max(np.abs(
        np.asarray(vector, np.float64) - np.asarray(linalg, np.float64))))


# test_gpu_emulation's seeds: cases whose op survives canonicalization as
# a kernel launch (some configurations fold to a copy before the launch).
GPU_SEEDS = range(3, NUM_CASES, 20)


@pytest.mark.parametrize("seed", GPU_SEEDS)
def test_emulated_gpu_agrees_with_the_cpu_bitwise(seed):
    case = make_case(seed)
    _, cpu, _ = run_case(case)
    _, gpu, _ = run_case(case, make_kernel=lambda c: emulated_kernel(
        c, "default"))
    assert np.any(np.asarray(cpu) != 0)
    assert _same_bits(cpu, gpu), (case, np.max(np.abs(
        np.asarray(cpu, np.float64) - np.asarray(gpu, np.float64))))


@pytest.mark.parametrize("interleaved", [False, True])
def test_mrope_paths_agree_bitwise(interleaved):
    """M-RoPE's axis per pair: one arithmetic encoding, folded to masks on
    the vector path and evaluated per element on the linalg path."""
    rng = np.random.default_rng(61)
    section = [6, 5, 5]
    x = rng.standard_normal((9, 2, 32)).astype(np.float32)
    positions = rng.integers(-2 ** 20, 2 ** 20, (3, 9))
    mrope = (f"#rope.mrope<section = {section}"
             f"{', interleaved = true' if interleaved else ''}>")
    outputs = []
    for lowering in ("vector", "scalar"):
        config = rope_mlir.KernelConfig(
            dtype="f32", rank=3, head_dim=32, positions="explicit",
            mrope=mrope, lowering=lowering)
        outputs.append(rope_mlir.compile(config)(x, positions))
    assert np.any(outputs[0] != 0)
    assert _same_bits(outputs[0], outputs[1])
