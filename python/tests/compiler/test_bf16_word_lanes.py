# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""bf16 rows in word lanes, bit for bit against the scalar lowering.

convert-rope-to-vector rotates bf16 rows (no QK-norm, no quantized store)
in word lanes: each chunk of a row is split into its even and odd lanes,
the two f32 halves rotated and rounded, and the halves joined again;
rope-expand-bf16 makes the split a shift and a mask of the chunk's 32-bit
words and the join one or of the two roundings (docs/DESIGN.md). Half
pairs need cos/sin in the split's order (reordered once per token, or in
the tiled form's table); chunks of an odd number of pairs keep the plain
form. The scalar linalg lowering has none of this and rounds each element
once with the one-op rule, so every case here must give the same bits on
both paths, NaN where the other is NaN:

- rows of 64, 80, 128 and 136 channels, full and partial rotary (pairs
  splitting into chunks of 32 plus an even rest, an odd rest, one odd
  chunk), both pair layouts;
- [B, S, H, D] (per token) and [B, H, S, D] (tiled, cos/sin in the table);
- computed cos/sin and gathered f32 caches; in place and into out=;
- x with ±0, ±inf, NaN, bf16 subnormals and the largest finite values
  among random ones (their rotations overflow, cancel and carry into the
  exponent); 3 tokens of several heads at 10^5 positions each are ~10^6
  random roundings, so round-to-even ties are met too;
- Q and K rotated together (apply_qk), each in word lanes.

A float64 reference bounds both (test_differential covers that; here one
ulp of bf16 over finite lanes as a sanity check).
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference

# Specials make the float64 reference's inf - inf a NaN (compared as such).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BF16 = ml_dtypes.bfloat16
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -133,
                     -(2.0 ** -130), 3.3895e38, -3.3895e38],
                    dtype=np.float32).astype(BF16)


def _same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    nan = np.isnan(a.astype(np.float64))
    if not np.array_equal(nan, np.isnan(b.astype(np.float64))):
        return False
    return np.array_equal(a.view(np.uint16)[~nan], b.view(np.uint16)[~nan])


def _x(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3], shape)
         ).astype(np.float32).astype(BF16)
    flat = x.reshape(-1)
    where = rng.choice(flat.size, size=min(flat.size // 8, 4096),
                       replace=False)
    flat[where] = rng.choice(SPECIALS, where.size)
    return x


CASES = [
    # (head_dim, rotary_dim, layout, token order, cache)
    (128, None, "half", "BSHD", None),
    (128, None, "interleaved", "BSHD", None),
    (128, None, "half", "BHSD", None),
    (128, None, "interleaved", "BHSD", "gathered"),
    (80, None, "half", "BSHD", "gathered"),   # 40 pairs: 32 + 8
    (136, 100, "half", "BHSD", None),         # 50 pairs: 32 + 18
    (64, 34, "half", "BSHD", None),           # 17 pairs: one odd chunk
    (136, 102, "half", "BSHD", None),         # 51 pairs: 32 + an odd 19
    (80, 76, "interleaved", "BSHD", None),    # 76 lanes: 64 + 12
    (64, None, "interleaved", "BHSD", None),
]


def _run(case, lowering, inplace, seed):
    head_dim, rotary_dim, layout, order, cache = case
    tokens, heads = 37, 5
    shape = (2, tokens, heads, head_dim) if order == "BSHD" else \
        (2, heads, tokens, head_dim)
    token_dims = None if order == "BSHD" else (0, 2)
    x = _x(shape, seed)
    rng = np.random.default_rng(seed + 1)
    positions = rng.integers(0, 100_000, (2, tokens)).astype(np.int64)
    kw = {}
    if cache:
        theta, _ = reference.inv_frequencies(rotary_dim or head_dim, 10000.0,
                                             None, head_dim=head_dim)
        cos, sin = reference.cos_sin(np.arange(100_000), theta)
        kw = dict(cos_cache=cos.astype(np.float32),
                  sin_cache=sin.astype(np.float32))
    kernel = rope_mlir.compile(
        dtype="bf16", rank=4, head_dim=head_dim, rotary_dim=rotary_dim,
        layout=layout, token_dims=token_dims, positions="explicit",
        cache=cache, inplace=inplace, lowering=lowering)
    if inplace:
        y = x.copy()
        kernel(y, positions, out=y, **kw)
    else:
        y = kernel(x, positions, **kw)
    return x, positions, y, kw


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_word_lanes_match_the_scalar_lowering_bitwise(case, inplace):
    seed = zlib.crc32(repr(case).encode()) % 1000 + (7 if inplace else 0)
    x, positions, vector, kw = _run(case, "vector", inplace, seed)
    _, _, scalar, _ = _run(case, "scalar", inplace, seed)
    assert _same_bits(vector, scalar), case
    # Sanity: finite lanes within one bf16 rounding of float64 plus
    # SEMANTICS.md's 2^-20 of their pair's magnitude (cancellation).
    head_dim, rotary_dim, layout, order, _ = case
    ref = reference.apply(x.astype(np.float64), positions, layout=layout,
                          rotary_dim=rotary_dim,
                          token_dims=None if order == "BSHD" else (0, 2),
                          **kw)
    got = np.asarray(vector, np.float64)
    bound = 2.0 ** -8 * np.abs(ref) + 2.0 ** -20 * _pair_magnitude(
        x.astype(np.float64), rotary_dim or head_dim, layout) + 2.0 ** -133
    finite = np.isfinite(ref) & np.isfinite(got) & np.isfinite(bound)
    assert np.all(np.abs(got - ref)[finite] <= bound[finite])


def _pair_magnitude(x, rotary_dim, layout):
    """|(x1, x2)| of each channel's pair (the channel itself past P)."""
    mag = np.abs(x).copy()
    if layout == "half":
        half = rotary_dim // 2
        x1, x2 = x[..., :half], x[..., half:rotary_dim]
        m = np.hypot(x1, x2)
        mag[..., :half], mag[..., half:rotary_dim] = m, m
    else:
        x1, x2 = x[..., 0:rotary_dim:2], x[..., 1:rotary_dim:2]
        m = np.hypot(x1, x2)
        mag[..., 0:rotary_dim:2], mag[..., 1:rotary_dim:2] = m, m
    return mag


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_q_and_k_together_in_word_lanes(layout):
    rng = np.random.default_rng(11)
    q, k = _x((3, 29, 8, 128), 12), _x((3, 29, 2, 128), 13)
    positions = rng.integers(0, 50_000, (3, 29)).astype(np.int64)
    yq, yk = rope_mlir.apply_qk(q, k, positions, layout=layout)
    for x, y in ((q, yq), (k, yk)):
        scalar = rope_mlir.compile(dtype="bf16", rank=4, head_dim=128,
                                   layout=layout, positions="explicit",
                                   lowering="scalar")(x, positions)
        assert _same_bits(y, scalar)
