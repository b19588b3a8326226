# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every token layout against the float64 reference, at sizes the vector
lowering tiles (issue 18).

The vector lowering (lib/Conversion/RopeToVector) has two loop forms: one
token at a time with its heads inside ([B, S, H, D], [T, H, D]) and, where a
head dim precedes the last token dim (Hugging Face's [B, H, S, D], token dims
(0, 2)), tiles of up to 256 tokens with the tile's cos/sin in a table and
the heads, two at a time (four in rope-to-llvm-cpu), outside the tile's
tokens; with threads, tiles as short as 32 tokens so that every thread gets
one. test_differential's random shapes are smaller than one tile; here
sequences span several tiles with a partial last one (S = 300, 520; 33 and
70 are one partial tile), head counts are odd (the remainder head of the
jammed loop), and shapes are static or dynamic, in

- [B, S, H, D] (token dims (0, 1)), [B, H, S, D] (token dims (0, 2));
- vLLM's flat [T, H·D]: rope.apply's head dim is the last dim, so a flat
  buffer is rotated through its zero-copy [T, H, D] view (input and out=);

x explicit positions (i32, i64), a scalar offset, a per-row offset (two
token dims), f32 cos/sin caches gathered by position; half and interleaved
pairs; full and partial rotary; f32, f64 and bf16, at test_differential's
tolerances (SEMANTICS.md §5: 2^-20 of the pair magnitude for f32/f64, plus one
ulp of the output type for bf16). The long cases are also checked bit for
bit against the scalar linalg lowering (one rounding in every lowering).
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference

from test_differential import Case, check, run_case

NUM_CASES = 48
LAYOUTS = ("BSHD", "BHSD")


def _same_bits(a, b) -> bool:
    """Bit for bit, NaN where the other is NaN (as test_lowerings_agree)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    nan = np.isnan(a.astype(np.float64))
    if not np.array_equal(nan, np.isnan(b.astype(np.float64))):
        return False
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return np.array_equal(a.view(unsigned)[~nan], b.view(unsigned)[~nan])


def make_layout_case(seed: int) -> Case:
    rng = np.random.default_rng(10_000 + seed)
    layout = LAYOUTS[seed % 2]
    head_dim = int(rng.choice([16, 64, 80, 128]))
    rotary_dim = head_dim if rng.random() < 0.6 else \
        int(2 * rng.integers(1, head_dim // 2))
    b = int(rng.choice([1, 2]))
    h = int(rng.choice([1, 3, 4, 7]))
    s = int(rng.choice([33, 70, 300, 520]))
    if layout == "BSHD":
        shape, token_dims = (b, s, h, head_dim), None
    else:
        shape, token_dims = (b, h, s, head_dim), (0, 2)
    cache = "gathered" if rng.random() < 0.3 else None
    positions = str(rng.choice(["explicit32", "explicit64", "offset",
                                "row_offset"]))
    large = cache is None and rng.random() < 0.5
    return Case(
        seed=10_000 + seed, dtype=str(rng.choice(["f32", "f64", "bf16"])),
        shape=shape, token_dims=token_dims,
        layout=str(rng.choice(["half", "interleaved"])), rotary_dim=rotary_dim,
        base=float(rng.choice([10000.0, 500000.0])), magnitude=1.0,
        inverse=bool(rng.random() < 0.2), positions=positions, cache=cache,
        static=bool(rng.random() < 0.4),
        max_position=2 ** 24 if large else 4 * s)


@pytest.mark.parametrize("seed", range(NUM_CASES))
def test_layout_case(seed):
    case = make_layout_case(seed)
    x, got, ref = run_case(case)
    check(case, x, got, ref)


@pytest.mark.parametrize("seed", range(0, NUM_CASES, 6))
def test_layout_case_matches_linalg_bitwise(seed):
    case = make_layout_case(seed)
    _, vector, _ = run_case(case)
    _, linalg, _ = run_case(case, lowering="scalar")
    assert _same_bits(vector, linalg), case


@pytest.mark.parametrize("seed", range(0, NUM_CASES, 8))
def test_layout_case_in_place(seed):
    """In place (rows read from the destination), tiles included."""
    case = make_layout_case(seed)
    x, got, ref = run_case(case, inplace=True)
    check(case, x, got, ref)


@pytest.mark.parametrize("threads", [2, 0])
@pytest.mark.parametrize("seq", [40, 300, 1030])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_tiled_threads_match_one_thread_bitwise(dtype, seq, threads):
    """[B, H, S, D] on OpenMP threads: the tiles are shortened at run time
    (to no fewer than 32 tokens) so that a call of one sequence has a tile
    per thread; tile boundaries move, the arithmetic per row does not, so the
    output is bit for bit the one-thread kernel's, for one and two
    sequences."""
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {seq} {threads}".encode()))
    np_dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}[dtype]
    for batch in (1, 2):
        x = rng.standard_normal((batch, 5, seq, 64)).astype(np_dtype)
        positions = rng.integers(0, 1 << 20, (batch, seq)).astype(np.int64)
        one = rope_mlir.apply(x, positions, token_dims=(0, 2))
        many = rope_mlir.apply(x, positions, token_dims=(0, 2),
                               threads=threads)
        assert _same_bits(one, many), (dtype, seq, threads, batch)
        ref = reference.apply(x, positions, token_dims=(0, 2))
        np.testing.assert_allclose(np.asarray(one, np.float64), ref,
                                   atol=2e-2 if dtype == "bf16" else 1e-5)


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16"])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("form", ["positions", "offset", "cache"])
def test_flat_tokens_by_heads(dtype, layout, form):
    """vLLM's flat q [T, H·D]: the [T, H, D] view in, a flat buffer's view
    out, no copy either way; every head of a token rotated by its position."""
    tokens, heads, head_dim = 45, 5, 64
    rng = np.random.default_rng(
        zlib.crc32(f"{dtype} {layout} {form}".encode()))
    np_dtype = {"f32": np.float32, "f64": np.float64,
                "bf16": ml_dtypes.bfloat16}[dtype]
    flat = rng.standard_normal((tokens, heads * head_dim)).astype(np_dtype)
    out_flat = np.zeros_like(flat)
    view, out_view = flat.reshape(tokens, heads, head_dim), \
        out_flat.reshape(tokens, heads, head_dim)
    assert np.shares_memory(view, flat) and np.shares_memory(out_view,
                                                             out_flat)
    positions = rng.integers(0, 4096, tokens).astype(np.int64)
    kwargs, ref_kwargs = {}, {}
    if form == "offset":
        positions, kwargs = None, dict(offset=17)
        ref_kwargs = dict(offset=17)
    elif form == "cache":
        theta, _ = reference.inv_frequencies(head_dim, 10000.0)
        cos, sin = reference.cos_sin(np.arange(4096), theta)
        kwargs = dict(cos_cache=cos.astype(np.float32),
                      sin_cache=sin.astype(np.float32))
        ref_kwargs = dict(kwargs)
    got = rope_mlir.apply(view, positions, layout=layout, out=out_view,
                          **kwargs)
    assert got is out_view
    ref = reference.apply(view, positions, layout=layout, **ref_kwargs)
    case = Case(seed=0, dtype=dtype, shape=view.shape, token_dims=None,
                layout=layout, rotary_dim=head_dim, base=10000.0,
                magnitude=1.0, inverse=False,
                positions="explicit64" if positions is not None else "offset",
                cache="gathered" if form == "cache" else None, static=False,
                max_position=4096)
    check(case, view, out_flat.reshape(view.shape), ref)
    # Head h of token t is columns [h·D, (h + 1)·D) of the flat row t.
    for h in (0, heads - 1):
        np.testing.assert_array_equal(
            out_flat[:, h * head_dim:(h + 1) * head_dim], got[:, h, :])
