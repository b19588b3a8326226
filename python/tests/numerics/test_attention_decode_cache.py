# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Decode on an un-rotated KV cache as a first-class configuration: one
query per row at its own position, a cache longer than the valid length
(keys beyond a row's position are masked by `causal` with
`query_positions`), K and Q rotated by rope.apply and fused into the
attention loops by the default pipeline (rope-optimize + rope-to-llvm-cpu:
K rotated per key tile, and only for tiles some row's position reaches).

Checked against an independent float64 reference (rope_mlir.reference's
rotation, then softmax over the visible keys), for several cache lengths,
positions at the ends of the valid range and across key-tile boundaries,
GQA groups and both pair layouts; and the IR is checked to be the fused
form (no whole rotated cache)."""

from __future__ import annotations

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, reference

MAPS = """#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
#p = affine_map<(b, h, g, m, k1, k2, n) -> (b, m)>
"""


def module(b, h, g, length, d, layout):
    q = f"tensor<{b}x{h}x{g}x1x{d}xf32>"
    k = f"tensor<{b}x{h}x{length}x{d}xf32>"
    return MAPS + f"""
func.func @decode(%x: {q}, %pos: tensor<{b}x1xi64>, %y: {k}, %v: {k}) -> {q} {{
  %e = tensor.empty() : {q}
  %qr = rope.apply ins(%x : {q}) positions(%pos : tensor<{b}x1xi64>) outs(%e : {q}) {{layout = #rope.layout<{layout}>, token_dims = array<i64: 0, 3>}} -> {q}
  %ek = tensor.empty() : {k}
  %kr = rope.apply ins(%y : {k}) outs(%ek : {k}) {{layout = #rope.layout<{layout}>, token_dims = array<i64: 0, 2>}} -> {k}
  %o = tensor.empty() : {q}
  %r = rope.attention ins(%qr, %kr, %v : {q}, {k}, {k}) query_positions(%pos : tensor<{b}x1xi64>) outs(%o : {q}) attributes {{indexing_maps = [#q, #k, #v, #p, #o], scale = {d ** -0.5!r} : f64, causal, query_dim = 3}} -> {q}
  return %r : {q}
}}
"""


def expected(x, pos, y, v, layout):
    b, h, g, _, d = x.shape
    length = y.shape[2]
    q = reference.apply(x[:, :, :, 0], np.broadcast_to(
        pos[:, None, None, 0], (b, h, g)), layout=layout,
        token_dims=(0, 1, 2))
    k = reference.apply(y, np.broadcast_to(np.arange(length), (b, h, length)),
                        layout=layout, token_dims=(0, 1, 2))
    s = np.einsum("bhgd,bhkd->bhgk", q, k) * d ** -0.5
    visible = np.arange(length)[None, :] <= pos[:, :1]          # [b, k]
    s = np.where(visible[:, None, None, :], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhgk,bhkd->bhgd", p, v.astype(np.float64))[:, :, :, None]


CASES = [
    # (batch, kv heads, group, cache length, head dim, layout, positions)
    (2, 2, 4, 1024, 64, "half", [0, 1023]),
    (2, 1, 8, 300, 32, "interleaved", [63, 64]),
    (3, 2, 2, 256, 128, "half", [5, 128, 200]),
    (1, 4, 1, 4096, 64, "half", [4095]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"L{c[3]}-{c[5]}")
def test_decode_on_unrotated_cache(case):
    b, h, g, length, d, layout, positions = case
    text = module(b, h, g, length, d, layout)
    rng = np.random.default_rng(length + d)
    x = rng.standard_normal((b, h, g, 1, d)).astype(np.float32)
    y = rng.standard_normal((b, h, length, d)).astype(np.float32)
    v = rng.standard_normal((b, h, length, d)).astype(np.float32)
    pos = np.array(positions, np.int64)[:, None]
    # Stale values beyond each row's valid length must not leak in (finite:
    # a masked key's V is still multiplied by its zero probability, so a
    # NaN there would propagate, as in softmax(...)·V written out; the
    # op's description says so).
    for row, p in enumerate(positions):
        y[row, :, p + 1:] = 1e30
        v[row, :, p + 1:] = -3e38
    got = rope_mlir.jit(text).function("decode")(x, pos, y, v)
    ref = expected(x, pos, y, v, layout)
    assert np.all(np.isfinite(ref))
    assert np.all(np.isfinite(got))
    err = np.abs(got - ref).max() / np.abs(ref).max()
    assert err <= 2e-6, err


def test_decode_is_fused_and_skips_unreached_tiles():
    text = module(2, 2, 4, 1024, 64, "half")
    fused = _jit.lower(text, "builtin.module(rope-optimize)")
    lines = fused.splitlines()
    # No rotation of the whole cache: K's rotation is a key tile, inside the
    # scf.if (some row reaches the tile) of the key loop.
    assert not [l for l in lines if "rope.apply ins(" in l and
                "tensor<2x2x1024x64xf32>)" in l], fused
    # A key tile (decode-key-tile-size: 256 of the 1024 keys).
    k_rot = [i for i, l in enumerate(lines)
             if "rope.apply" in l and "x256x64xf32>" in l]
    assert k_rot, fused
    ifs = [i for i, l in enumerate(lines) if "scf.if" in l]
    assert ifs and min(ifs) < k_rot[0], fused
