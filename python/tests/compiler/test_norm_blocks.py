# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""QK-norm in blocks of rows (convert-rope-to-vector, issue 18).

In the per-token form, for rows that convert (bf16/f16 data, quantized
stores), the heads loop normalizes min(chunk lanes, 4) rows at a time where
the chunks are a power of two dividing D: the rows' sums of squares are
reduced together (shuffles and adds, lane r = row r) and one vector rsqrt
gives the block's factors; the heads left over are normalized one by one,
and so are all rows of f32/f64 kept as such. These cases put heads on both
sides of the block boundary (7, 8, 9, 17, 32 heads: one block and three
rows, two blocks, two blocks and a row, four and a row, eight), with chunk
widths that block and one that does not (D = 40 of f16: 16 lanes do not
divide it), rows that do not convert (f32, f64: row by row), in place and
not, quantized and not, and check every output against the float64
reference with test_neighbours' tolerances; apply_qk and the KV-cache
append (both members normalized in one token loop) too.
"""

from __future__ import annotations

import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference
from test_neighbours import DTYPES, QUANT, check_against_float64
import test_kv_cache

HEADS = [7, 8, 9, 17, 32]

# (dtype, quant, head dim): rope-to-llvm-cpu's 32-byte chunks are 16
# bf16/f16 lanes (blocks of 4 rows); a quantized store takes 16 f32 lanes
# (blocks of 4). f32 and f64 rows kept as such go row by row (D = 24: three
# 8-lane chunks), and so does f16 with D = 40 (16 does not divide 40).
VARIANTS = [("f32", None, 128), ("f32", "f8e4m3fn", 128), ("f32", None, 24),
            ("bf16", None, 64), ("bf16", "i8", 64), ("f64", None, 24),
            ("f16", "f8e5m2", 40)]


def _arrays(seed, heads, dtype, quant, head_dim, flat=False):
    rng = np.random.default_rng(seed)
    t = DTYPES[dtype]
    b, s = 2, 3
    shape = (b * s, heads, head_dim) if flat else (b, s, heads, head_dim)
    # Rows of very different magnitudes, so that a factor taken from the
    # wrong row shows.
    scale = 10.0 ** rng.integers(-2, 3, size=shape[:-1] + (1,))
    x = (rng.standard_normal(shape) * scale).astype(t)
    kw = dict(layout=str(rng.choice(["half", "interleaved"])),
              rotary_dim=head_dim, token_dims=None, base=10000.0,
              positions=rng.integers(0, 4096, size=shape[:-2]).astype(
                  np.int64),
              norm_weight=(rng.standard_normal(head_dim) * 0.5 + 1.0).astype(
                  np.float32),
              norm_eps=1e-6)
    if quant:
        kw["quant_dtype"] = quant
        limit = reference.QUANT_LIMITS[quant]
        kw["quant_scale"] = np.asarray(
            limit / 3.0 * rng.uniform(0.5, 1.5, size=heads), np.float32)
    return x, kw


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("dtype, quant, head_dim", VARIANTS)
def test_blocks_against_float64(heads, dtype, quant, head_dim):
    x, kw = _arrays(heads, heads, dtype, quant, head_dim)
    got = rope_mlir.apply(x, **kw)
    assert got.dtype == np.dtype(QUANT[quant] if quant else x.dtype)
    check_against_float64(got, x, kw, head_axis=2)


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_blocks_in_place(heads, dtype):
    """In place the block's sums read rows not yet rotated: every row of
    the block is summed before the first is written."""
    x, kw = _arrays(100 + heads, heads, dtype, None, 64, flat=True)
    original = x.copy()
    got = rope_mlir.apply(x, out=x, **kw)
    assert got is x or np.shares_memory(got, x)
    check_against_float64(x, original, kw, head_axis=1)


@pytest.mark.parametrize("heads", [(32, 8), (17, 9)])
def test_apply_qk_blocks(heads):
    hq, hkv = heads
    q, kwq = _arrays(1, hq, "f32", "f8e4m3fn", 128)
    k, kwk = _arrays(2, hkv, "f32", "f8e4m3fn", 128)
    kwk["positions"] = kwq["positions"]
    kwk["layout"] = kwq["layout"]
    got_q, got_k = rope_mlir.apply_qk(
        q, k, kwq["positions"], layout=kwq["layout"], base=kwq["base"],
        q_norm_weight=kwq["norm_weight"], k_norm_weight=kwk["norm_weight"],
        norm_eps=1e-6, quant_dtype="f8e4m3fn", q_scale=kwq["quant_scale"],
        k_scale=kwk["quant_scale"])
    check_against_float64(got_q, q, kwq, head_axis=2)
    check_against_float64(got_k, k, kwk, head_axis=2)


# KV-append cases of test_kv_cache with QK-norm (every form: bshd, bhsd,
# paged, slots), with 9 KV heads (two blocks and a row where the rows
# convert) and so 9 or 36 query heads.
_KV_SEEDS = [seed for seed in range(40)
             if "k_norm_weight" in test_kv_cache._case(seed)["kw"]]


@pytest.mark.parametrize("seed", _KV_SEEDS)
def test_append_blocks(seed):
    case = test_kv_cache._case(seed, kv_heads=9)
    assert case["k"].shape[case["head_axis"]] == 9
    k_before, v_before = case["k_cache"].copy(), case["v_cache"].copy()
    q_got = rope_mlir.append_kv(case["k"], case["v"], case["k_cache"],
                                case["v_cache"], case["positions"],
                                **case["kw"])
    test_kv_cache._verify(case, k_before, v_before, case["k_cache"],
                          case["v_cache"], q_got)


def test_kv_seeds_cover_the_forms():
    forms = {test_kv_cache._case(seed)["kw"]["cache_layout"]
             for seed in _KV_SEEDS}
    assert forms == {"bshd", "bhsd", "paged"}
