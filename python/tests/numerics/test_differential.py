# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Differential test: compiled rope.apply (CPU, JIT) vs the float64 reference.

Many random configurations: both layouts, P < D and P = D, every position
form (explicit i32/i64, scalar offset, per-row offset, implicit), every cos/sin
source (computed, gathered cache, pre-gathered cache), every dtype, static
and dynamic shapes, odd sizes (D = 2, S = 1) and positions up to 2^24.

Tolerances (SEMANTICS.md §5): f32/f64 outputs within 2^-20 (~1e-6) of the
reference relative to the rotated pair's magnitude; f16/bf16 outputs are
computed in f32 and rounded once, so within one unit in the last place of
the output type (plus the f32 error).
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}
NUM_CASES = 400
MAX_POSITION = 2 ** 24


@dataclasses.dataclass
class Case:
    seed: int
    dtype: str
    shape: tuple
    token_dims: tuple | None
    layout: str
    rotary_dim: int
    base: float
    magnitude: float
    inverse: bool
    positions: str        # explicit32 | explicit64 | offset | row_offset | none
    cache: str | None     # None | gathered | pregathered
    static: bool
    max_position: int
    # Signed positions (computed cos/sin only): explicit positions alternate
    # in sign, offsets are negative (R(-m), SEMANTICS.md §1).
    negative: bool = False

    def __str__(self):
        return (f"seed={self.seed} {self.dtype} shape={self.shape} "
                f"token_dims={self.token_dims} {self.layout} P={self.rotary_dim}"
                f" pos={self.positions} cache={self.cache} inv={self.inverse} "
                f"a={self.magnitude} static={self.static}"
                f"{' negative' if self.negative else ''}")


def make_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    rank = int(rng.choice([2, 3, 4]))
    head_dim = int(rng.choice([2, 4, 6, 8, 16, 32, 64, 80, 128]))
    rotary_dim = head_dim if rng.random() < 0.5 else \
        int(2 * rng.integers(1, head_dim // 2 + 1))
    if rank == 2:
        shape = (int(rng.choice([1, 2, 7])), head_dim)
        token_dims = None
    elif rank == 3:
        shape = (int(rng.choice([1, 3, 9])), int(rng.choice([1, 2, 4])),
                 head_dim)
        token_dims = None
    else:
        b, h, s = (int(rng.choice([1, 2, 3])), int(rng.choice([1, 2, 5])),
                   int(rng.choice([1, 4, 6])))
        if rng.random() < 0.5:
            shape, token_dims = (b, s, h, head_dim), None      # [B, S, H, D]
        else:
            shape, token_dims = (b, h, s, head_dim), (0, 2)    # [B, H, S, D]
    num_token_dims = len(token_dims) if token_dims else max(rank - 2, 1)
    cache = rng.choice([None, "gathered", "pregathered"], p=[0.5, 0.3, 0.2])
    forms = ["explicit32", "explicit64", "offset"]
    if num_token_dims >= 2:
        forms.append("row_offset")
    if cache is None:
        forms.append("none")
    positions = "none" if cache == "pregathered" else str(rng.choice(forms))
    if cache == "gathered" and positions == "none":
        positions = "offset"
    # Large positions stress the angle computation (computed frequencies).
    max_position = MAX_POSITION if (cache is None and rng.random() < 0.5) \
        else 64
    return Case(
        seed=seed, dtype=str(rng.choice(list(DTYPES))), shape=shape,
        token_dims=token_dims, layout=str(rng.choice(["half", "interleaved"])),
        rotary_dim=rotary_dim,
        base=float(rng.choice([10000.0, 500000.0, 1e6, 100.0])),
        magnitude=float(rng.choice([1.0, 1.0, 1.2])),
        inverse=bool(rng.random() < 0.25),
        positions=positions, cache=None if cache is None else str(cache),
        static=bool(rng.random() < 0.3), max_position=max_position)


def token_dims_of(case: Case) -> tuple:
    if case.token_dims is not None:
        return case.token_dims
    rank = len(case.shape)
    return (0,) if rank == 2 else tuple(range(rank - 2))


def run_case(case: Case, make_kernel=None, **lowering):
    """Runs `case` through `make_kernel(config)` (default: the cached
    rope_mlir.compile) and returns (x, output, float64 reference)."""
    rng = np.random.default_rng(case.seed + 1_000_003)
    dtype = DTYPES[case.dtype]
    x = rng.standard_normal(case.shape).astype(dtype)
    tdims = token_dims_of(case)
    token_sizes = tuple(case.shape[d] for d in tdims)
    pairs = case.rotary_dim // 2
    seq = token_sizes[-1]

    positions = offset = cos_cache = sin_cache = None
    call_offset = 0
    assert not (case.negative and case.cache), "a cache has no row -m"
    if case.positions.startswith("explicit"):
        pdtype = np.int32 if case.positions == "explicit32" else np.int64
        if case.negative:
            # |m| in [1, max), signs -, +, -, +, ... in row-major order.
            sign = np.where(np.arange(int(np.prod(token_sizes))) % 2, 1, -1)
            positions = (rng.integers(1, case.max_position, token_sizes) *
                         sign.reshape(token_sizes)).astype(pdtype)
        else:
            positions = rng.integers(0, case.max_position,
                                     token_sizes).astype(pdtype)
    elif case.positions == "offset":
        offset = (-int(rng.integers(1, case.max_position)) if case.negative
                  else int(rng.integers(0, case.max_position - seq)))
        call_offset = offset
    elif case.positions == "row_offset":
        offset = (-rng.integers(1, case.max_position, token_sizes[0])
                  if case.negative else
                  rng.integers(0, case.max_position - seq, token_sizes[0])
                  ).astype(np.int64)
        call_offset = offset

    cache_dtype = np.float32
    if case.cache == "gathered":
        rows = case.max_position
        theta, _ = reference.inv_frequencies(case.rotary_dim, case.base)
        cos_cache, sin_cache = reference.cos_sin(np.arange(rows), theta)
        cos_cache = cos_cache.astype(cache_dtype)
        sin_cache = sin_cache.astype(cache_dtype)
    elif case.cache == "pregathered":
        cos_cache = rng.uniform(-1, 1, token_sizes + (pairs,)).astype(
            cache_dtype)
        sin_cache = rng.uniform(-1, 1, token_sizes + (pairs,)).astype(
            cache_dtype)

    ref = reference.apply(
        x, positions, layout=case.layout, rotary_dim=case.rotary_dim,
        base=case.base, offset=offset, cos_cache=cos_cache,
        sin_cache=sin_cache, inverse=case.inverse, token_dims=case.token_dims,
        magnitude=case.magnitude)

    form = {"explicit32": "explicit", "explicit64": "explicit"}.get(
        case.positions, case.positions)
    config = rope_mlir.KernelConfig(
        dtype=case.dtype, rank=len(case.shape), head_dim=case.shape[-1],
        layout=case.layout, rotary_dim=case.rotary_dim, base=case.base,
        magnitude=case.magnitude, inverse=case.inverse,
        token_dims=case.token_dims, positions=form,
        positions_dtype="i32" if case.positions == "explicit32" else "i64",
        cache=case.cache, cache_dtype="f32",
        static_shape=case.shape if case.static else None,
        static_positions_shape=token_sizes if (
            case.static and positions is not None) else None,
        static_offset_shape=(token_sizes[0],) if (
            case.static and case.positions == "row_offset") else None,
        static_cache_shape=cos_cache.shape if (
            case.static and cos_cache is not None) else None,
        **lowering)
    kernel = (make_kernel or rope_mlir.compile)(config)
    if config.inplace:
        # Rotate a copy in place; x stays the original for the checks.
        target = np.ascontiguousarray(x.copy())
        got = kernel(target, positions, offset=call_offset,
                     cos_cache=cos_cache, sin_cache=sin_cache, out=target)
        assert got is target
    else:
        got = kernel(x, positions, offset=call_offset, cos_cache=cos_cache,
                     sin_cache=sin_cache)
    return x, got, ref


def pair_magnitude(x64: np.ndarray, case: Case) -> np.ndarray:
    """|(x1, x2)| * scale for each channel of the rotated part, broadcast to
    the channel layout (the bound for the rotated values)."""
    p = case.rotary_dim
    rot = x64[..., :p]
    if case.layout == "half":
        x1, x2 = rot[..., : p // 2], rot[..., p // 2:]
        norm = np.sqrt(x1 ** 2 + x2 ** 2)
        return np.concatenate([norm, norm], axis=-1)
    x1, x2 = rot[..., 0::2], rot[..., 1::2]
    return np.repeat(np.sqrt(x1 ** 2 + x2 ** 2), 2, axis=-1)


def check(case: Case, x, got, ref):
    p = case.rotary_dim
    got64 = np.asarray(got).astype(np.float64)
    x64 = np.asarray(x).astype(np.float64)
    # Pass-through channels are copied bit for bit.
    np.testing.assert_array_equal(got64[..., p:], x64[..., p:],
                                  err_msg=f"pass-through changed: {case}")
    # Bound of the rotated values: pair magnitude times the largest |c|,|s|
    # (the magnitude factor, or the pre-gathered cache entries, <= 1.2).
    scale = pair_magnitude(x64, case) * 1.5 * case.magnitude + 1e-30
    err = np.abs(got64[..., :p] - ref[..., :p])
    if case.dtype in ("f32", "f64"):
        tol = 2.0 ** -20 * scale
    else:
        # One rounding of the f32 result to the output type: half an ulp of
        # the reference's rounding plus half an ulp of the f32 result, i.e.
        # at most one ulp of the output type, plus the f32 error.
        dtype = DTYPES[case.dtype]
        ulp = np.abs(np.spacing(np.abs(ref[..., :p]).astype(dtype)).astype(
            np.float64))
        tol = ulp + 2.0 ** -20 * scale
    bad = err > tol
    assert not bad.any(), (
        f"{case}: {int(bad.sum())} of {bad.size} values out of tolerance; "
        f"worst error {err.max():.3g} (relative to pair magnitude "
        f"{(err / scale).max():.3g})")
    return float((err / scale).max()) if err.size else 0.0


@pytest.mark.parametrize("seed", range(NUM_CASES))
def test_random_case(seed):
    case = make_case(seed)
    x, got, ref = run_case(case)
    check(case, x, got, ref)


# The same random cases through the other CPU code paths: the scalar linalg
# lowering (rope-to-llvm-cpu{vectorize=false}), the OpenMP token loop, and
# the vector path in place (rows read from the destination).
@pytest.mark.parametrize("lowering", [dict(lowering="scalar"),
                                      dict(threads=2), dict(inplace=True)],
                         ids=["scalar", "threads2", "inplace"])
@pytest.mark.parametrize("seed", range(0, NUM_CASES, 4))
def test_random_case_other_lowerings(seed, lowering):
    case = make_case(seed)
    x, got, ref = run_case(case, **lowering)
    check(case, x, got, ref)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_large_positions_precision(dtype, layout):
    """Positions near 2^24 and near large multiples of 2*pi/theta_i, where
    f32 angle arithmetic fails: the compiled op stays within 2^-20."""
    theta, _ = reference.inv_frequencies(64, 10000.0)
    # Positions whose angle for the fastest frequency (theta_0 = 1) is close
    # to a multiple of 2*pi, plus the top of the range.
    turns = np.array([2 ** 20, 2 ** 21 + 7, 2 ** 22 - 3, 2 ** 23 + 11])
    near = np.round(turns * 2 * np.pi / theta[0]).astype(np.int64)
    positions = np.concatenate([near, [2 ** 24 - 1, 2 ** 24 - 2, 0, 1]])
    positions = positions[positions < 2 ** 24 + 1]
    x = np.random.default_rng(7).standard_normal(
        (positions.size, 4, 64)).astype(DTYPES[dtype])
    got = rope_mlir.apply(x, positions, layout=layout)
    ref = reference.apply(x, positions, layout=layout)
    norm = np.abs(x.astype(np.float64)).max()
    assert np.abs(got - ref).max() / norm < 2.0 ** -20


def test_f32_angle_baseline_is_worse():
    """The naive f32 formulation the op is designed to beat (SEMANTICS.md §5) is
    off by orders of magnitude more at 2^24: guards the test's ability to
    tell the two apart."""
    positions = np.array([2 ** 24 - 1], dtype=np.int64)
    theta, _ = reference.inv_frequencies(64, 10000.0)
    naive = positions.astype(np.float32)[:, None] * theta.astype(np.float32)
    exact = positions.astype(np.float64)[:, None] * theta
    assert np.abs(np.cos(naive.astype(np.float64)) - np.cos(exact)).max() > 1e-3
