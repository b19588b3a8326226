# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Negative positions, compiled: R(-m) (SEMANTICS.md §1-§2) through every CPU code
path against the float64 reference, and the identities that rest on it.

The rotation angle is pos * theta_i with a signed integer position, so each
lowering converts the position with a signed conversion (sitofp, extsi for
i32 positions, index_cast for loop indices). Positive positions alone cannot
tell a signed conversion from an unsigned one; these cases can: a position
-m read as unsigned is 2^64 - m (or 2^32 - m from i32), an O(1) error.

- every lowering (the vector path, the scalar linalg path, OpenMP threads,
  in place) x every dtype x every position form (explicit i32 and i64 with
  mixed signs, a negative scalar offset, negative per-row offsets), at small
  positions (crossing zero) and up to |m| = 2^24;
- M-RoPE with negative positions on each axis;
- negative i32 per-row offsets, whole and tiled (tiling widens them);
- positions near -2^24 and near negative multiples of 2*pi/theta_0;
- R(m)·R(-m) = I: rotating by p, then by -p, returns x within the f32
  contract (2^-20 of the pair magnitude);
- `inverse` is rotation by -positions.

Tolerances are test_differential.check's (SEMANTICS.md §5).
"""

from __future__ import annotations

import ctypes
import itertools
import re

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, reference

from test_differential import DTYPES, Case, check, pair_magnitude, run_case

FORMS = ("explicit32", "explicit64", "offset", "row_offset")
LOWERINGS = {"vector": dict(), "scalar": dict(lowering="scalar"),
             "threads2": dict(threads=2), "inplace": dict(inplace=True)}
CONTRACT = 2.0 ** -20  # SEMANTICS.md §5, relative to the rotated pair's magnitude


def negative_case(seed: int, dtype: str, positions: str) -> Case:
    """A random configuration with computed cos/sin and signed positions of
    the given form; per-row offsets need two token dims (rank 4)."""
    rng = np.random.default_rng(seed)
    head_dim = int(rng.choice([2, 6, 16, 64, 128]))
    rotary_dim = head_dim if rng.random() < 0.5 else \
        int(2 * rng.integers(1, head_dim // 2 + 1))
    rank = 4 if positions == "row_offset" else int(rng.choice([2, 3, 4]))
    token_dims = None
    if rank == 2:
        shape = (int(rng.choice([2, 7])), head_dim)
    elif rank == 3:
        shape = (int(rng.choice([3, 9])), int(rng.choice([1, 2])), head_dim)
    else:
        b, h, s = (int(rng.choice([2, 3])), int(rng.choice([1, 2])),
                   int(rng.choice([4, 6])))
        if rng.random() < 0.5:
            shape = (b, s, h, head_dim)
        else:
            shape, token_dims = (b, h, s, head_dim), (0, 2)
    return Case(
        seed=seed, dtype=dtype, shape=shape, token_dims=token_dims,
        layout=str(rng.choice(["half", "interleaved"])),
        rotary_dim=rotary_dim,
        base=float(rng.choice([10000.0, 500000.0, 100.0])),
        magnitude=float(rng.choice([1.0, 1.2])),
        inverse=bool(rng.random() < 0.25), positions=positions, cache=None,
        static=bool(rng.random() < 0.3),
        # Small: offsets cross zero within the sequence; large: |m| < 2^24.
        max_position=2 ** 24 if seed % 2 else 64, negative=True)


CASES = [(lowering, dtype, form)
         for lowering, dtype, form in itertools.product(LOWERINGS, DTYPES,
                                                        FORMS)
         # Threads and in place change the loop and the buffers, not the
         # position arithmetic: one dtype per form is enough there.
         if lowering in ("vector", "scalar")
         or dtype == list(DTYPES)[FORMS.index(form)]]


@pytest.mark.parametrize("lowering,dtype,form", CASES,
                         ids=["-".join(c) for c in CASES])
def test_negative_positions(lowering, dtype, form):
    seed = CASES.index((lowering, dtype, form))
    case = negative_case(seed, dtype, form)
    x, got, ref = run_case(case, **LOWERINGS[lowering])
    check(case, x, got, ref)


@pytest.mark.parametrize("interleaved", [False, True],
                         ids=["chunked", "interleaved"])
@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("pdtype", ["i32", "i64"])
def test_negative_mrope(pdtype, lowering, interleaved):
    """M-RoPE (the vector path converts each axis' position on its own):
    every axis holds positions of both signs."""
    rng = np.random.default_rng(31)
    section = [6, 5, 5]  # as interleaving splits 16 pairs
    x = rng.standard_normal((7, 2, 32)).astype(np.float32)
    sign = np.where(np.arange(21).reshape(3, 7) % 2, 1, -1)
    positions = rng.integers(1, 2 ** 24, (3, 7)) * sign
    positions[:, 1] = [1, 2, 3]     # small, of either sign
    positions[:, 2] = [-1, -2, -3]
    config = rope_mlir.KernelConfig(
        dtype="f32", rank=3, head_dim=32, positions="explicit",
        positions_dtype=pdtype, lowering=lowering,
        mrope=(f"#rope.mrope<section = {section}"
               f"{', interleaved = true' if interleaved else ''}>"))
    got = rope_mlir.compile(config)(x, positions)
    ref = reference.apply(x, positions, mrope_section=section,
                          mrope_interleaved=interleaved)
    case = Case(seed=31, dtype="f32", shape=x.shape, token_dims=None,
                layout="half", rotary_dim=32, base=10000.0, magnitude=1.0,
                inverse=False, positions="explicit64", cache=None,
                static=False, max_position=2 ** 24, negative=True)
    check(case, x, got, ref)


def large_negative_positions() -> np.ndarray:
    """-2^24 + small, and negatives whose fastest angle (theta_0 = 1) is
    near a multiple of 2*pi, where the angle reduction matters most."""
    turns = np.array([3, 2 ** 18 + 1, 2 ** 20, 2 ** 21 + 7, 2670170])
    near = np.round(turns * 2 * np.pi).astype(np.int64)
    assert near.max() < 2 ** 24
    return -np.concatenate([near, [2 ** 24 - 1, 2 ** 24 - 2, 2 ** 24, 1]])


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_large_negative_positions_precision(layout, dtype, lowering):
    positions = large_negative_positions()
    x = np.random.default_rng(7).standard_normal(
        (positions.size, 4, 64)).astype(DTYPES[dtype])
    kernel = rope_mlir.compile(dtype=dtype, rank=3, head_dim=64,
                               layout=layout, positions="explicit",
                               lowering=lowering)
    got = kernel(x, positions)
    ref = reference.apply(x, positions, layout=layout)
    case = Case(seed=7, dtype=dtype, shape=x.shape, token_dims=None,
                layout=layout, rotary_dim=64, base=10000.0, magnitude=1.0,
                inverse=False, positions="explicit64", cache=None,
                static=False, max_position=2 ** 24 + 1, negative=True)
    worst = check(case, x, got, ref)
    assert worst <= CONTRACT


def pair_relative_error(actual, expected, x, layout, rotary_dim):
    """max |actual - expected| over the rotated channels, relative to each
    channel's pair magnitude in x (the measure of check())."""
    case = Case(seed=0, dtype="f64", shape=np.shape(x), token_dims=None,
                layout=layout, rotary_dim=rotary_dim, base=10000.0,
                magnitude=1.0, inverse=False, positions="explicit64",
                cache=None, static=False, max_position=0)
    scale = pair_magnitude(np.asarray(x, np.float64), case) + 1e-30
    diff = np.abs(np.asarray(actual, np.float64)[..., :rotary_dim] -
                  np.asarray(expected, np.float64)[..., :rotary_dim])
    return float((diff / scale).max())


def signed_positions(rng, count: int) -> np.ndarray:
    """Both signs, small and up to 2^24 in magnitude, including +-2^24."""
    magnitude = np.concatenate([rng.integers(1, 100, count // 2),
                                rng.integers(1, 2 ** 24, count - count // 2)])
    magnitude[:2] = 2 ** 24
    sign = np.where(np.arange(count) % 2, 1, -1)
    return magnitude * sign


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotation_by_minus_m_undoes_rotation_by_m(layout, dtype, lowering):
    """R(-m)·R(m) = I: rotate by p, rotate the result by -p, get x back.
    Each rotation is within 2^-20 of the exact one (SEMANTICS.md §5) and
    preserves the pair's norm, so the round trip could err by 2·2^-20; the
    f32 code is well inside that, so the test holds it to 2^-20 itself."""
    rng = np.random.default_rng(5)
    positions = signed_positions(rng, 40)
    x = rng.standard_normal((positions.size, 3, 64)).astype(DTYPES[dtype])
    kernel = rope_mlir.compile(dtype=dtype, rank=3, head_dim=64,
                               layout=layout, rotary_dim=48,
                               positions="explicit", lowering=lowering)
    there = kernel(x, positions)
    back = kernel(there, -positions)
    np.testing.assert_array_equal(back[..., 48:], x[..., 48:])
    assert pair_relative_error(there, x, x, layout, 48) > 0.1  # it rotated
    assert pair_relative_error(back, x, x, layout, 48) <= CONTRACT


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_inverse_is_rotation_by_negated_positions(dtype, lowering):
    """`inverse` with positions p rotates like positions -p (and the other
    way round): both match the float64 R(-p) within the dtype's bound."""
    rng = np.random.default_rng(9)
    positions = signed_positions(rng, 24)
    x = rng.standard_normal((positions.size, 2, 32)).astype(DTYPES[dtype])
    forward, inverse = (
        rope_mlir.compile(dtype=dtype, rank=3, head_dim=32,
                          layout="interleaved", positions="explicit",
                          inverse=flag, lowering=lowering)
        for flag in (False, True))
    ref = reference.apply(x, -positions, layout="interleaved")
    assert np.allclose(ref, reference.apply(x, positions,
                                            layout="interleaved",
                                            inverse=True), rtol=0, atol=1e-12)
    case = Case(seed=9, dtype=dtype, shape=x.shape, token_dims=None,
                layout="interleaved", rotary_dim=32, base=10000.0,
                magnitude=1.0, inverse=False, positions="explicit64",
                cache=None, static=False, max_position=2 ** 24 + 1,
                negative=True)
    check(case, x, inverse(x, positions), ref)
    check(case, x, forward(x, -positions), ref)
    # And inverse with -p is the forward rotation by p.
    check(case, x, inverse(x, -positions),
          reference.apply(x, positions, layout="interleaved"))


_TILE_ROWS_AND_TOKENS = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %op tile_sizes [2, 3, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""


@pytest.mark.parametrize("tiled", [False, True], ids=["whole", "tiled"])
@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_negative_i32_row_offsets(lowering, tiled, tmp_path):
    """Per-row offsets of type i32 (rope.apply takes any integer type; the
    Python kernels pass i64), negative, through the op and through its
    tiles (tiling slices the offsets and widens them to i64 itself)."""
    shape = (5, 7, 2, 32)  # [B, S, H, D]: rows tiled by 2, tokens by 3
    x = np.random.default_rng(17).standard_normal(shape).astype(np.float32)
    offsets = np.array([-5, -2 ** 24 + 9, -1, -70001, -3], np.int32)
    x_type, o_type = "memref<?x?x?x32xf32>", "memref<?xi32>"
    ir = f"""func.func @rope_kernel(%x: {x_type}, %off: {o_type}, %out: {x_type}) attributes {{llvm.emit_c_interface}} {{
  %xt = bufferization.to_tensor %x restrict : {x_type} to tensor<?x?x?x32xf32>
  %ot = bufferization.to_tensor %off restrict : {o_type} to tensor<?xi32>
  %it = bufferization.to_tensor %out restrict writable : {x_type} to tensor<?x?x?x32xf32>
  %y = rope.apply ins(%xt : tensor<?x?x?x32xf32>) offset(%ot : tensor<?xi32>) outs(%it : tensor<?x?x?x32xf32>) {{layout = #rope.layout<interleaved>}} -> tensor<?x?x?x32xf32>
  bufferization.materialize_in_destination %y in restrict writable %out : (tensor<?x?x?x32xf32>, {x_type}) -> ()
  return
}}
"""
    pipeline = rope_mlir.kernel.pipeline(rope_mlir.KernelConfig(
        dtype="f32", rank=4, head_dim=32, lowering=lowering))
    if tiled:
        script = tmp_path / "tile.mlir"
        script.write_text(_TILE_ROWS_AND_TOKENS)
        pipeline = ("builtin.module(transform-preload-library{transform-"
                    f"library-paths={script}}}, transform-interpreter, "
                    "canonicalize, " + pipeline[len("builtin.module("):])
        tiles = _jit.lower(ir, pipeline.split(", canonicalize")[0] + ")")
        # The tiles widen their slice of the offsets (how is the numbers'
        # business: a zero extension must fail below, not here).
        assert re.search(r"arith\.ext[su]i %\S+ : tensor<\?xi32> to "
                         r"tensor<\?xi64>", tiles), tiles
    module = _jit.compile_module(ir, pipeline)
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3)(
        module.lookup("rope_kernel"))
    out = np.zeros_like(x)
    descriptors = [_jit.memref_descriptor(a) for a in (x, offsets, out)]
    function(*[ctypes.addressof(d) for d in descriptors])
    ref = reference.apply(x, offset=offsets.astype(np.int64),
                          layout="interleaved")
    case = Case(seed=17, dtype="f32", shape=shape, token_dims=None,
                layout="interleaved", rotary_dim=32, base=10000.0,
                magnitude=1.0, inverse=False, positions="row_offset",
                cache=None, static=False, max_position=2 ** 24,
                negative=True)
    check(case, x, out, ref)
