# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-expand-f8: f32 -> f8E4M3FN / f8E5M2 rounding compiled through
rope-to-llvm-cpu, compared bit for bit with ml_dtypes. arith.truncf's
folder only folds exact conversions, so APFloat is not reachable from here;
checked once outside (2026-12-02, LLVM 22.1.8, ml_dtypes 0.6.0) on every
non-negative f32 pattern: APFloat and ml_dtypes agree everywhere except on
f8E5M2 NaN encodings (APFloat keeps a NaN's top payload bits, so 0x7e or
0x7f; ml_dtypes and the expansion always give 0x7e), and both paths below
agree with ml_dtypes on all 2^32 patterns of both formats.

The semantics are arith.truncf's: round to nearest, ties to even;
f8E4M3FN has no infinity, so overflow (|x| rounding above 448), infinities
and NaN give NaN (0x7f with the sign); f8E5M2 gives infinity (0x7c with the
sign) on overflow and infinities and the quiet NaN 0x7e (with the sign) on
NaN. ml_dtypes does the same, NaN encodings included.

Values: every f8 value and its f32 neighbours, every midpoint between
neighbouring f8 values (the exact tie and +-1, +-2 f32 ulps), a sweep of the
f8 subnormal range and of the f32 subnormals, the overflow thresholds,
+-0, +-inf, NaNs with payloads, and 10^6 random f32 bit patterns; each
through the scalar (dynamic-shape linalg loop) and the vector<16> path.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir

FORMATS = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
}

LANES = 16


def _module(name: str) -> str:
    return f"""
#id = affine_map<(d0) -> (d0)>
func.func @scalar(%x: tensor<?xf32>) -> tensor<?x{name}> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?x{name}>
  %y = linalg.generic {{indexing_maps = [#id, #id],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?x{name}>) {{
  ^bb0(%a: f32, %b: {name}):
    %t = arith.truncf %a : f32 to {name}
    linalg.yield %t : {name}
  }} -> tensor<?x{name}>
  return %y : tensor<?x{name}>
}}
func.func @vector(%x: tensor<?x{LANES}xf32>) -> tensor<?x{LANES}x{name}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x{LANES}xf32>
  %e = tensor.empty(%n) : tensor<?x{LANES}x{name}>
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %e)
      -> tensor<?x{LANES}x{name}> {{
    %v = vector.transfer_read %x[%i, %c0], %pad {{in_bounds = [true]}}
        : tensor<?x{LANES}xf32>, vector<{LANES}xf32>
    %t = arith.truncf %v : vector<{LANES}xf32> to vector<{LANES}x{name}>
    %w = vector.transfer_write %t, %acc[%i, %c0] {{in_bounds = [true]}}
        : vector<{LANES}x{name}>, tensor<?x{LANES}x{name}>
    scf.yield %w : tensor<?x{LANES}x{name}>
  }}
  return %y : tensor<?x{LANES}x{name}>
}}
"""


@pytest.fixture(scope="module", params=sorted(FORMATS))
def compiled(request):
    name = request.param
    return name, FORMATS[name], rope_mlir.jit(_module(name))


def _bits(values) -> np.ndarray:
    return np.asarray(values, np.float32).view(np.uint32)


def _ulp_neighbours(bits: np.ndarray, reach: int = 2) -> np.ndarray:
    """`bits` and the f32 patterns up to `reach` ulps either side (within the
    positive patterns; the sign is added by the caller)."""
    steps = np.arange(-reach, reach + 1, dtype=np.int64)
    near = bits.astype(np.int64)[:, None] + steps[None, :]
    return near[(near >= 0) & (near <= 0x7FFFFFFF)].astype(np.uint32)


def _cases(dtype, seed: int = 0) -> np.ndarray:
    """The f32 bit patterns compared (see the module docstring)."""
    finfo = ml_dtypes.finfo(dtype)
    encodings = np.arange(0x80, dtype=np.uint8).view(dtype)
    finite = encodings[np.isfinite(encodings.astype(np.float32))]
    values = finite.astype(np.float32)  # increasing, 0 .. max
    largest = float(finfo.max)
    # The first value that no longer rounds to a finite f8: one ulp of the
    # largest binade above it (it is the tie: ties to even round up there
    # because the largest finite value has an odd mantissa).
    beyond = np.float32(largest + float(finfo.eps) * 2.0 ** finfo.maxexp / 2)
    upper = np.append(values, beyond)
    midpoints = ((upper[:-1].astype(np.float64) + upper[1:]) / 2).astype(
        np.float32)
    assert np.all(midpoints.astype(np.float64) ==
                  (upper[:-1].astype(np.float64) + upper[1:]) / 2), \
        "midpoints between f8 values are exact in f32"
    positive = [
        _ulp_neighbours(_bits(values)),
        _ulp_neighbours(_bits(midpoints)),
        _ulp_neighbours(_bits([largest, beyond, 2 * beyond, 2.0 ** 127,
                               np.finfo(np.float32).max])),
        # The f8 subnormal range and up to twice the smallest normal, every
        # 2^13th f32 pattern (offset so that the sweep also hits non-ties).
        np.arange(0, _bits(2 * float(finfo.smallest_normal)) + 1, 8191,
                  dtype=np.uint32),
        # f32 subnormals: all round to zero.
        np.arange(0, 0x00800000, 4099, dtype=np.uint32),
        np.array([1, 0x007FFFFF, 0x00800000], np.uint32),
        # Infinity and NaNs (signaling, quiet, payloads).
        np.array([0x7F800000, 0x7F800001, 0x7FA00000, 0x7FBFFFFF,
                  0x7FC00000, 0x7FC00001, 0x7FFFFFFF], np.uint32),
    ]
    positive = np.concatenate(positive)
    signed = np.concatenate([positive, positive | np.uint32(0x80000000)])
    rng = np.random.default_rng(seed)
    random = rng.integers(0, 2 ** 32, size=10 ** 6, dtype=np.uint64)
    cases = np.concatenate([signed, random.astype(np.uint32)])
    # A whole number of vector rows.
    cases = np.concatenate(
        [cases, np.zeros(-len(cases) % LANES, np.uint32)])
    return cases


def _expected(bits: np.ndarray, dtype) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return bits.view(np.float32).astype(dtype).view(np.uint8)


def _compare(actual: np.ndarray, bits: np.ndarray, dtype, what: str):
    expected = _expected(bits, dtype)
    actual = np.asarray(actual).view(np.uint8).reshape(-1)
    wrong = np.flatnonzero(actual != expected)
    assert wrong.size == 0, (
        f"{what}: {wrong.size} of {bits.size} differ from ml_dtypes, e.g. " +
        ", ".join(f"{bits[i]:#010x} ({bits.view(np.float32)[i]!r}) -> "
                  f"{actual[i]:#04x}, expected {expected[i]:#04x}"
                  for i in wrong[:8]))


def test_reference_semantics():
    """ml_dtypes rounds as arith.truncf does (the expansion's contract):
    NaN and overflow per format, ties to even at the thresholds."""
    e4m3, e5m2 = FORMATS["f8E4M3FN"], FORMATS["f8E5M2"]
    special = _bits([np.inf, -np.inf, np.nan, -np.nan, 464.0, 464.00003,
                     -500.0, 61440.0, 61439.996, 1e30, 2.0 ** -10,
                     3 * 2.0 ** -10, 2.0 ** -17, 3 * 2.0 ** -17])
    assert [hex(v) for v in _expected(special, e4m3)] == [
        "0x7f", "0xff", "0x7f", "0xff", "0x7e", "0x7f", "0xff", "0x7f",
        "0x7f", "0x7f", "0x0", "0x2", "0x0", "0x0"]
    assert [hex(v) for v in _expected(special, e5m2)] == [
        "0x7c", "0xfc", "0x7e", "0xfe", "0x5f", "0x5f", "0xe0", "0x7c",
        "0x7b", "0x7c", "0x14", "0x1a", "0x0", "0x2"]


@pytest.mark.parametrize("path", ["scalar", "vector"])
def test_bit_exact_against_ml_dtypes(compiled, path):
    name, dtype, module = compiled
    bits = _cases(dtype)
    x = bits.view(np.float32)
    if path == "vector":
        x = x.reshape(-1, LANES)
    out = module.function(path)(x)
    assert out.dtype == np.dtype(dtype) and out.shape == x.shape
    _compare(out, bits, dtype, f"{name} {path}")

