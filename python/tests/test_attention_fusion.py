"""rope-fuse-into-attention, executed: attention scores R(q)·R(k)ᵀ compiled
with the rotations fused into the contraction's tile loops must equal the
unfused build and the float64 reference (rope_mlir.reference), on random
shapes: both tensor layouts ([B, H, S, D] and [B, S, H, D]), partial rotary,
both pair layouts, GQA, decode (S_q = 1) at per-row offsets, explicit
positions, the batch_matmul form, tiles that do not divide the shapes, and
every fuse-key policy. Also RoPE in linear attention (below).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rope_mlir import _jit, attention, reference
from rope_mlir.attention import (AttentionConfig, AttentionKernel,
                                 ScoresConfig, ScoresKernel)

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


# Whole attention: softmax(scale·R(q)·R(k)ᵀ + mask)·V with an online softmax
# over the key tiles (whole-attention, on by default).

ATTENTION_TOLERANCE = 1e-5  # relative to the largest output


def attention_inputs(rng, c: AttentionConfig):
    q, k, positions = inputs(rng, c)
    v = rng.standard_normal(c.v_shape()).astype(np.float32)
    if c.mask:
        # Causal, aligned bottom-right (the queries are the last Sq tokens);
        # -inf where masked.
        m = np.arange(c.q_len)[:, None] + (c.kv_len - c.q_len)
        positions["mask"] = np.where(np.arange(c.kv_len)[None, :] <= m, 0.0,
                                     -np.inf).astype(np.float32)
    return q, k, v, positions


def check_attention(config, options, rng):
    q, k, v, extra = attention_inputs(rng, config)
    ref = attention.attention_reference(config, q, k, v, **extra)
    fused = AttentionKernel(config, True, **options)
    unfused = AttentionKernel(config, False)
    # The pass did rewrite the whole chain: no softmax, no scores tensor.
    lowered = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention{"
                         f"query-tile-size={options['query_tile']} "
                         f"key-tile-size={options['key_tile']}}}, "
                         "canonicalize)")
    assert "linalg.softmax" not in lowered, lowered
    scores = "tensor<" + "x".join(map(str, config.scores_shape())) + "xf32>"
    assert scores not in lowered, lowered
    got = fused(q, k, v, **extra)
    base = unfused(q, k, v, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= ATTENTION_TOLERANCE * scale, (config,
                                                                     options)
    assert np.abs(got - base).max() <= ATTENTION_TOLERANCE * scale, (config,
                                                                      options)
    return fused


def random_attention_case(seed: int):
    rng, c, options = random_case(1000 + seed)
    causal = c.q_len <= c.kv_len and rng.random() < 0.5
    config = AttentionConfig(
        **{f.name: getattr(c, f.name)
           for f in dataclasses.fields(ScoresConfig)},
        scale=(None if rng.random() < 0.25
               else float(1 / np.sqrt(c.head_dim))),
        mask=bool(causal),
        value_dim=int(rng.choice([c.head_dim, 8, 24])))
    return rng, config, options


@pytest.mark.parametrize("seed", range(24))
def test_whole_attention_random(seed):
    rng, config, options = random_attention_case(seed)
    check_attention(config, options, rng)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_prefill_causal_gqa(layout):
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=50,
                             kv_len=70, head_dim=32, layout=layout,
                             rotary_dim=16, scale=32 ** -0.5, mask=True)
    fused = check_attention(config, dict(query_tile=16, key_tile=32,
                                         fuse_key="always"),
                            np.random.default_rng(7))
    # Key tiles that the causal mask hides from a whole query tile (keys
    # 64-69 for queries 0-15) are skipped by an scf.if on the mask slice;
    # the comparison above runs through that path.
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention{"
                    "query-tile-size=16 key-tile-size=32}, canonicalize)")
    assert "scf.if" in ir and "arith.cmpf une" in ir, ir


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_decode_offsets(layout):
    """Decode: S_q = 1 at per-row offsets; each key tile rotated in the key
    loop, so neither the scores nor the rotated keys are ever whole."""
    config = AttentionConfig(batch=2, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=300, head_dim=64, layout=layout,
                             scale=0.125)
    fused = check_attention(config, dict(query_tile=32, key_tile=64),
                            np.random.default_rng(9))
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention, "
                    "canonicalize)")
    assert "x300x" not in ir.split("rope.apply", 1)[1].split("return")[0] \
        or "tensor.extract_slice" in ir
    applies = [line for line in ir.splitlines() if "rope.apply" in line]
    assert len(applies) == 2 and all("x64x" in a or "x?x" in a or "x1x" in a
                                     for a in applies), applies


@pytest.mark.parametrize("softmax", ["decomposed", "frontend"])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_decomposed_softmax(softmax, layout):
    """The softmax written out in linalg ops (as linalg.softmax's own
    decomposition writes it, or as a frontend lowers it): the pass raises it
    to linalg.softmax and fuses the whole chain the same way; the unfused
    build runs the written-out ops as they are."""
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=37,
                             kv_len=70, head_dim=32, layout=layout,
                             rotary_dim=16, scale=32 ** -0.5, mask=True,
                             softmax=softmax)
    fused = check_attention(config, dict(query_tile=16, key_tile=32,
                                         fuse_key="always"),
                            np.random.default_rng(13))
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention)")
    assert "linalg.reduce" not in ir and "maxnumf" not in ir.split(
        "scf.for", 1)[0], ir


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("whole", [True, False], ids=["attention", "scores"])
def test_fused_on_threads(whole, layout):
    """parallel-loops (the default): the loops over batch, heads and query
    tiles are one scf.forall, which rope-to-llvm-cpu{num-threads=2} runs on
    OpenMP threads (the key loop, carrying the online softmax, stays
    sequential). Every tile computes what it computes sequentially: the
    result is bitwise the scf.for build's (parallel_loops=False)."""
    c = ScoresConfig(batch=2, q_heads=4, kv_heads=2, q_len=50, kv_len=70,
                     head_dim=32, layout=layout, rotary_dim=16)
    options = dict(query_tile=16, key_tile=32, fuse_key="always")
    rng = np.random.default_rng(17)
    if whole:
        c = AttentionConfig(**{f.name: getattr(c, f.name)
                               for f in dataclasses.fields(ScoresConfig)},
                            scale=32 ** -0.5, mask=True)
        kernel = AttentionKernel
        q, k, v, extra = attention_inputs(rng, c)
        args = (q, k, v)
        ref = attention.attention_reference(c, q, k, v, **extra)
        tolerance = ATTENTION_TOLERANCE
    else:
        kernel = ScoresKernel
        q, k, extra = inputs(rng, c)
        args = (q, k)
        ref = attention.scores_reference(c, q, k, **extra)
        tolerance = TOLERANCE
    threaded = kernel(c, True, threads=2, **options)
    full = attention.pipeline(True, threads=2, **options)
    fused = _jit.lower(threaded.ir, full.split(", rope-to-llvm-cpu")[0] + ")")
    assert fused.index("scf.forall") < fused.index("scf.for ")
    assert "omp.parallel" in _jit.lower(threaded.ir, full)
    sequential = kernel(c, True, parallel_loops=False, **options)
    got = threaded(*args, **extra)
    assert np.array_equal(got, sequential(*args, **extra))
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= tolerance * scale
