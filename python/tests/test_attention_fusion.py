"""rope-fuse-into-attention, executed: attention scores R(q)·R(k)ᵀ compiled
with the rotations fused into the contraction's tile loops must equal the
unfused build and the float64 reference (rope_mlir.reference), on random
shapes: both tensor layouts ([B, H, S, D] and [B, S, H, D]), partial rotary,
both pair layouts, GQA, decode (S_q = 1) at per-row offsets, explicit
positions, the batch_matmul form, tiles that do not divide the shapes, and
every fuse-key policy. Also RoPE in linear attention (below).
"""

from __future__ import annotations

import numpy as np
import pytest

from rope_mlir import _jit, attention, reference
from rope_mlir.attention import ScoresConfig, ScoresKernel

TOLERANCE = 2e-6  # relative to the largest score; f32 dot products of D terms


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    kv_heads = int(rng.integers(1, 3))
    group = int(rng.choice([1, 1, 2, 4]))
    head_dim = int(rng.choice([8, 16, 32, 64]))
    rotary = int(rng.choice([head_dim, head_dim // 2, head_dim // 4]))
    rotary -= rotary % 2
    decode = rng.random() < 0.3
    config = ScoresConfig(
        batch=int(rng.integers(1, 3)), q_heads=kv_heads * group,
        kv_heads=kv_heads, q_len=1 if decode else int(rng.integers(1, 70)),
        kv_len=int(rng.integers(1, 200)), head_dim=head_dim,
        layout=str(rng.choice(["bhsd", "bshd"])),
        rotary_dim=None if rotary == head_dim else max(rotary, 2),
        pair_layout=str(rng.choice(["half", "interleaved"])),
        base=float(rng.choice([10000.0, 500000.0])),
        positions="offset" if decode or rng.random() < 0.6 else "explicit")
    options = dict(query_tile=int(rng.choice([1, 7, 16, 32])),
                   key_tile=int(rng.choice([5, 16, 64])),
                   fuse_key=str(rng.choice(["auto", "always", "never"])))
    return rng, config, options


def inputs(rng, c: ScoresConfig):
    q = rng.standard_normal(c.q_shape()).astype(np.float32)
    k = rng.standard_normal(c.k_shape()).astype(np.float32)
    if c.positions == "offset":
        rows = c.batch if c.form != "batch_matmul" else None
        offsets = (rng.integers(0, 100000, rows) if rows
                   else int(rng.integers(0, 100000)))
        return q, k, dict(offsets=offsets)
    rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
    return q, k, dict(q_positions=rng.integers(0, 100000, (rows, c.q_len)),
                      k_positions=rng.integers(0, 100000, (rows, c.kv_len)))


def check(config, options, rng):
    q, k, positions = inputs(rng, config)
    ref = attention.scores_reference(config, q, k, **positions)
    fused = ScoresKernel(config, True, **options)
    unfused = ScoresKernel(config, False)
    # The pass did fuse: Q's rotation is a tile in the loops.
    lowered = _jit.lower(fused.ir, attention.pipeline(
        True, **options).split(", rope-to-llvm-cpu")[0] + ")")
    assert "scf.for" in lowered and "tensor.empty() : tensor<" in lowered
    got = fused(q, k, **positions)
    base = unfused(q, k, **positions)
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= TOLERANCE * scale, (config, options)
    assert np.abs(got - base).max() <= TOLERANCE * scale, (config, options)
    return fused


@pytest.mark.parametrize("seed", range(24))
def test_fused_scores_random(seed):
    rng, config, options = random_case(seed)
    check(config, options, rng)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_decode_gqa_fuses_both(layout):
    """Decode: one query tile, so fuse-key=auto rotates each key tile in the
    key loop; nothing whole-size is rotated."""
    config = ScoresConfig(batch=2, q_heads=8, kv_heads=2, q_len=1,
                          kv_len=300, head_dim=64, layout=layout,
                          rotary_dim=32)
    rng = np.random.default_rng(3)
    fused = check(config, dict(query_tile=32, key_tile=64), rng)
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention, "
                    "canonicalize)")
    applies = [line for line in ir.splitlines() if "rope.apply" in line]
    assert len(applies) == 2 and all("x?x" in a or "x1x" in a
                                     for a in applies), applies
    assert "tensor<2x300x2x64xf32>) outs" not in ir


def test_batch_matmul_form():
    rng = np.random.default_rng(5)
    for positions in ("offset", "explicit"):
        config = ScoresConfig(batch=2, q_heads=3, kv_heads=3, q_len=45,
                              kv_len=70, head_dim=32, form="batch_matmul",
                              positions=positions)
        check(config, dict(query_tile=16, key_tile=32, fuse_key="always"),
              rng)


def test_linear_attention_numerator():
    """RoPE in linear attention (RoFormer §3.3): with a non-negative feature
    map φ, the numerator is Σ_n φ(q_m)ᵀ R(n−m) φ(k_n) v_n, computed as
    R(φ(q_m))·R(φ(k_n))ᵀ — the rotation applied to the features, so it is
    the same scores contraction and fuses the same way; the denominator
    Σ_n φ(q_m)ᵀ φ(k_n) stays unrotated (rotating it could make it vanish).
    Checked against the explicit relative-position form."""
    rng = np.random.default_rng(11)
    config = ScoresConfig(batch=1, q_heads=2, kv_heads=2, q_len=40,
                          kv_len=40, head_dim=16, layout="bhsd")
    q = rng.standard_normal(config.q_shape())
    k = rng.standard_normal(config.k_shape())
    v = rng.standard_normal((1, 2, 40, 16))
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(x))  # elu + 1
    fq, fk = phi(q).astype(np.float32), phi(k).astype(np.float32)
    offsets = np.zeros(1, np.int64)
    fused = ScoresKernel(config, True, query_tile=16, key_tile=16,
                         fuse_key="always")
    rotated = fused(fq, fk, offsets)[:, :, 0]          # [B, H, Sq, Sk]
    causal = np.tril(np.ones((40, 40)))
    numerator = np.einsum("bhmn,bhnd->bhmd", rotated * causal, v)
    plain = np.einsum("bhmd,bhnd->bhmn", fq[:, :, 0].astype(np.float64),
                      fk.astype(np.float64))
    denominator = (plain * causal).sum(-1, keepdims=True)
    out = numerator / denominator

    # Reference: φ(q_m)ᵀ R(n − m) φ(k_n), one relative rotation per pair.
    fq64, fk64 = fq[:, :, 0].astype(np.float64), fk.astype(np.float64)
    expected_scores = np.empty((1, 2, 40, 40))
    for m in range(40):
        for n in range(40):
            rk = reference.apply(fk64[:, :, n:n + 1], np.array([n - m]),
                                 token_dims=(2,))
            expected_scores[:, :, m, n] = np.einsum(
                "bhd,bhd->bh", fq64[:, :, m], rk[:, :, 0])
    expected = np.einsum("bhmn,bhnd->bhmd", expected_scores * causal,
                         v) / denominator
    assert np.abs(out - expected).max() <= 1e-5 * np.abs(expected).max()
