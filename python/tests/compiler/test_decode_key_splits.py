# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-tile-attention{decode-key-splits=N}, executed: a decode step's keys
split into blocks of whole key tiles computed in parallel (an scf.forall,
OpenMP threads) from the initial state, their (acc, max, sum) merged after
by rope.online_attention's mergeKeyBlockStates. Compiled as rope_mlir.jit
compiles a model (rope-optimize with share-key-rotation: every KV head in a
key tile, K rotated inside the key loop), on one and two threads; each
output must match the float64 reference (rope_mlir.attention's) on random
inputs: both layouts, GQA ratios, cache lengths that split evenly, into a
partial last block, or into one block only (no split), masks that hide
whole blocks, explicit positions, AVX2- and AVX-512-wide tiles.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rope_mlir import _jit, _kernel_path, attention
from rope_mlir.attention import AttentionConfig, AttentionKernel
from test_rotate_keys_in_scores import inputs as decode_step_inputs

TOLERANCE = 1e-5  # relative to the largest output, as test_attention_fusion

# The blocks' loop: an scf.forall whose shared outputs are the stacked
# states (a leading dim of blocks) of acc, max and sum.
BLOCKS_LOOP = re.compile(r"scf\.forall \(%\w+\) in \((\d+)\) shared_outs\("
                         r"%\w+ = %\w+, %\w+ = %\w+, %\w+ = %\w+\)")


def optimize(splits: int) -> str:
    return ("rope-optimize{share-key-rotation=true peel-key-tiles=true "
            f"decode-key-splits={splits}}}, ")


class SplitDecodeKernel(AttentionKernel):
    def __init__(self, config: AttentionConfig, splits: int, **options):
        self.config = config
        self._specs = attention.arg_specs(config)
        self._compiled = _kernel_path.CompiledKernel(
            attention.emit_attention(config),
            _kernel_path.cpu_pipeline(optimize(splits), vectorize=True,
                                      **options),
            "attention", self._specs)


def blocks(config: AttentionConfig, splits: int) -> list:
    """The trip counts of the blocks' loops after rope-optimize."""
    lowered = _jit.lower(attention.emit_attention(config),
                         f"builtin.module({optimize(splits)[:-2]})")
    return [int(n) for n in BLOCKS_LOOP.findall(lowered)]


def inputs(rng, c: AttentionConfig, hide_block: bool):
    """test_rotate_keys_in_scores' decode inputs (a mask hides 30 % of the
    keys at random, one always visible); with `hide_block`, the first half
    of the keys hidden too: the first block's state stays (0, -inf, 0) and
    must add nothing."""
    q, k, v, extra = decode_step_inputs(rng, c)
    if hide_block:
        extra["mask"][:, : c.kv_len // 2] = -np.inf
        extra["mask"][:, c.kv_len - 1] = 0.0
    return q, k, v, extra


def check(config: AttentionConfig, splits: int, seed: int,
          hide_block: bool = False, **options):
    rng = np.random.default_rng(seed)
    q, k, v, extra = inputs(rng, config, hide_block)
    ref = attention.attention_reference(config, q, k, v, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    for threads in (1, 2):
        kernel = SplitDecodeKernel(config, splits, num_threads=threads,
                                   **options)
        got = kernel(q, k, v, **extra)
        error = np.abs(got - ref).max()
        assert error <= TOLERANCE * scale, (config, splits, threads, error)


CASES = [
    # layout, batch, q_heads, kv_heads, kv_len, head_dim, positions, mask,
    # splits, expected blocks (256-key tiles, whole tiles per block)
    ("bhsd", 1, 32, 8, 1024, 128, "offset", False, 2, [2]),
    ("bshd", 2, 8, 2, 1000, 64, "offset", True, 2, [2]),
    ("bhsd", 1, 8, 2, 1300, 64, "explicit", True, 3, [3]),
    ("bshd", 1, 4, 4, 2048, 32, "offset", False, 8, [8]),
    ("bhsd", 2, 6, 3, 700, 24, "offset", True, 4, [3]),
    ("bhsd", 1, 8, 2, 200, 64, "offset", False, 2, []),
]


@pytest.mark.parametrize("vector_bits", [256, 512])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(
    map(str, c[:9])))
def test_split_decode_matches_float64(case, vector_bits):
    (layout, batch, q_heads, kv_heads, kv_len, head_dim, positions, mask,
     splits, expected) = case
    config = AttentionConfig(batch=batch, q_heads=q_heads, kv_heads=kv_heads,
                             q_len=1, kv_len=kv_len, head_dim=head_dim,
                             layout=layout, positions=positions,
                             scale=head_dim ** -0.5, mask=mask)
    assert blocks(config, splits) == expected, config
    check(config, splits, seed=kv_len + head_dim,
          contraction_vector_bits=vector_bits)


def test_a_hidden_block_adds_nothing():
    config = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=1024, head_dim=64, scale=0.125,
                             mask=True)
    assert blocks(config, 2) == [2]
    check(config, 2, seed=11, hide_block=True)


def test_prefill_is_not_split():
    # Several query tiles: the keys stay one loop per query tile.
    config = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=64,
                             kv_len=1024, head_dim=64, scale=0.125)
    assert blocks(config, 2) == []
    check(config, 2, seed=12)


def test_blocks_check_sees_the_split():
    # The structural check above is not vacuous: without the option the
    # same step has no blocks' loop.
    config = AttentionConfig(batch=1, q_heads=32, kv_heads=8, q_len=1,
                             kv_len=1024, head_dim=128)
    assert blocks(config, 0) == [] and blocks(config, 1) == []
    assert blocks(config, 2) == [2]


def test_negative_splits_rejected():
    config = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=64, head_dim=64)
    with pytest.raises(Exception, match="decode-key-splits must be >= 0"):
        _jit.lower(attention.emit_attention(config),
                   "builtin.module(rope-tile-attention{decode-key-splits=-1})")


# The public kernel path: AttentionKernel (rope-fuse-into-attention) splits
# a decode step's keys among its threads by default.

def fused_blocks(config: AttentionConfig, **options) -> list:
    """The blocks' loops after attention.pipeline()'s fusion passes."""
    text = attention.pipeline(True, **options)
    fusion = text[len("builtin.module("):text.index("rope-to-llvm-cpu")]
    lowered = _jit.lower(attention.emit_attention(config),
                         f"builtin.module({fusion.rstrip(', ')})")
    return [int(n) for n in BLOCKS_LOOP.findall(lowered)]


DECODE = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=1,
                         kv_len=1300, head_dim=64, scale=0.125, mask=True)


@pytest.mark.parametrize("threads,splits,expected", [
    (1, None, []), (2, None, [2]), (2, 3, [3]), (2, 0, []), (1, 2, [2])])
def test_attention_kernel_splits_decode_among_its_threads(threads, splits,
                                                           expected):
    options = {"threads": threads}
    if splits is not None:
        options["decode_key_splits"] = splits
    assert fused_blocks(DECODE, **options) == expected
    rng = np.random.default_rng(threads * 10 + (splits or 0))
    q, k, v, extra = inputs(rng, DECODE, hide_block=False)
    ref = attention.attention_reference(DECODE, q, k, v, **extra)
    got = AttentionKernel(DECODE, True, **options)(q, k, v, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= TOLERANCE * scale


def test_attention_kernel_prefill_is_not_split():
    config = AttentionConfig(batch=1, q_heads=8, kv_heads=2, q_len=64,
                             kv_len=1024, head_dim=64, scale=0.125)
    assert fused_blocks(config, threads=2) == []


@pytest.mark.parametrize("splits", [-1, 1.5, "2"])
def test_attention_kernel_rejects_bad_splits(splits):
    with pytest.raises((TypeError, ValueError), match="decode_key_splits"):
        AttentionKernel(DECODE, True, threads=2, decode_key_splits=splits)
