# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-rotate-keys-in-scores, executed: a decode step over a cache of keys
before RoPE, compiled as rope_mlir.jit compiles a model (rope-optimize with
share-key-rotation: a key tile of every KV head, rotated inside the key
loop), with the keys rotated inside the Q·Kᵀ register tiles (the default)
and stored rotated (rotate-keys-in-scores=false). Both must match the
float64 reference (rope_mlir.attention.attention_reference) on random
inputs: both tensor layouts, GQA ratios, head dims whose halves are whole
vectors or not, cache lengths with a partial last key tile, per-row offsets
and explicit positions, masks, AVX2- and AVX-512-wide tiles, and the
configurations the pass leaves alone (interleaved pairs, partial rotary, one
KV head, a cache of one key: no key loop), which must still be right.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rope_mlir import _jit, _kernel_path, attention
from rope_mlir.attention import AttentionConfig, AttentionKernel

TOLERANCE = 1e-5  # relative to the largest output, as test_attention_fusion

# The scores contraction of rope-rotate-keys-in-scores: six inputs (the
# query's and the key's halves, cos, sin) and the output.
ROTATED_SCORES = re.compile(r"linalg\.generic \{indexing_maps = "
                            r"\[(#map\d*, ){6}#map\d*\]")
SHARE_KEY = "rope-optimize{share-key-rotation=true peel-key-tiles=true}, "


class DecodeKernel(AttentionKernel):
    """The attention of `config` through rope-optimize with
    share-key-rotation and rope-to-llvm-cpu with `options`."""

    def __init__(self, config: AttentionConfig, **options):
        self.config = config
        self._specs = attention.arg_specs(config)
        self._compiled = _kernel_path.CompiledKernel(
            attention.emit_attention(config),
            _kernel_path.cpu_pipeline(SHARE_KEY, vectorize=True, **options),
            "attention", self._specs)
        self.ir = self._compiled.ir


def rotated_in_scores(config: AttentionConfig) -> bool:
    """Whether the pass rewrote the step's scores (IR up to the pass)."""
    lowered = _jit.lower(
        attention.emit_attention(config),
        f"builtin.module({SHARE_KEY}rope-tile-attention{{fuse-rotations="
        f"false}}, rope-rotate-keys-in-scores)")
    return bool(ROTATED_SCORES.search(lowered))


def inputs(rng, c: AttentionConfig):
    q = rng.standard_normal(c.q_shape()).astype(np.float32)
    k = rng.standard_normal(c.k_shape()).astype(np.float32)
    v = rng.standard_normal(c.v_shape()).astype(np.float32)
    extra = {}
    if c.positions == "offset":
        extra["offsets"] = rng.integers(0, 5000, size=c.batch)
    else:
        extra["q_positions"] = rng.integers(0, 5000, size=(c.batch, c.q_len))
        extra["k_positions"] = rng.integers(0, 5000, size=(c.batch, c.kv_len))
    if c.mask:
        # Keys hidden at random, one always visible; whole masked tiles are
        # skipped by the key loop.
        mask = np.where(rng.random((c.q_len, c.kv_len)) < 0.3, -np.inf, 0.0)
        mask[:, rng.integers(0, c.kv_len)] = 0.0
        extra["mask"] = mask.astype(np.float32)
    return q, k, v, extra


def check(config: AttentionConfig, seed: int, **options):
    rng = np.random.default_rng(seed)
    q, k, v, extra = inputs(rng, config)
    ref = attention.attention_reference(config, q, k, v, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    for rotate in (True, False):
        kernel = DecodeKernel(config, rotate_keys_in_scores=rotate, **options)
        got = kernel(q, k, v, **extra)
        assert np.abs(got - ref).max() <= TOLERANCE * scale, (config, rotate,
                                                              options)


CASES = [
    # layout, batch, q_heads, kv_heads, kv_len, head_dim, positions, mask
    ("bhsd", 1, 8, 2, 300, 64, "offset", False),
    ("bshd", 2, 8, 2, 300, 64, "offset", True),
    ("bhsd", 2, 32, 8, 513, 128, "offset", False),
    ("bshd", 1, 4, 4, 37, 16, "explicit", False),
    ("bhsd", 2, 6, 3, 5, 24, "offset", True),
    ("bshd", 1, 16, 8, 260, 128, "explicit", True),
]


@pytest.mark.parametrize("vector_bits", [256, 512])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_decode_keys_rotated_in_scores(case, vector_bits):
    layout, batch, q_heads, kv_heads, kv_len, head_dim, positions, mask = case
    config = AttentionConfig(batch=batch, q_heads=q_heads, kv_heads=kv_heads,
                             q_len=1, kv_len=kv_len, head_dim=head_dim,
                             layout=layout, positions=positions,
                             scale=head_dim ** -0.5, mask=mask)
    assert rotated_in_scores(config), config
    check(config, seed=kv_len + head_dim,
          contraction_vector_bits=vector_bits)


@pytest.mark.parametrize("config", [
    AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1, kv_len=100,
                    head_dim=32, pair_layout="interleaved"),
    AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1, kv_len=100,
                    head_dim=64, rotary_dim=32),
    AttentionConfig(batch=2, q_heads=4, kv_heads=1, q_len=1, kv_len=100,
                    head_dim=64),
    AttentionConfig(batch=2, q_heads=6, kv_heads=3, q_len=1, kv_len=1,
                    head_dim=24, mask=True),
], ids=["interleaved", "partial-rotary", "one-kv-head", "one-key"])
def test_left_alone_and_still_right(config):
    assert not rotated_in_scores(config), config
    check(config, seed=3)


def test_prefill_and_threads_still_right():
    # Prefill: K rotated whole before the loops (several query tiles), or in
    # the key loop for more query rows than the pass takes (8 tokens × 4);
    # and decode on two threads, through the pass.
    for q_len in (40, 8):
        prefill = AttentionConfig(batch=1, q_heads=8, kv_heads=2,
                                  q_len=q_len, kv_len=40, head_dim=64,
                                  scale=0.125, mask=True)
        assert not rotated_in_scores(prefill), prefill
        check(prefill, seed=5)
    decode = AttentionConfig(batch=2, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=300, head_dim=64, scale=0.125)
    check(decode, seed=6, num_threads=2)


def test_check_rejects_ir_without_the_rewrite():
    # The structural check above is not vacuous: the same step through the
    # pipeline without the pass has no such contraction.
    config = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=300, head_dim=64)
    lowered = _jit.lower(attention.emit_attention(config),
                         f"builtin.module({SHARE_KEY}rope-tile-attention"
                         f"{{fuse-rotations=false}})")
    assert not ROTATED_SCORES.search(lowered)
    assert rotated_in_scores(config)
