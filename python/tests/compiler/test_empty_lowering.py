# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""An empty input returns at once through every CPU lowering (issue 32).

x of shape [2^40, 0, 4] has 2^40 tokens and no head: a token loop over it
(cos/sin per token, nothing to rotate) would run for hours. The lowerings
guard their loops with one scf.if on the head count (EmptyGuard.h), so the
call returns in microseconds; the destination comes back as it went in.
Compiled from IR text (rope_mlir.jit) through the vector form (the default)
and the linalg form (vectorize=false); the time of the call alone is
measured, not the compilation. A head still rotates (the guard lets it
through).
"""

import time

import numpy as np
import pytest

import rope_mlir

PIPELINES = {
    "vector": "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})",
    "linalg": ("builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
               "vectorize=false})"),
}

# [T, H, D] with T and H dynamic: computed cos/sin at offset + t (a dynamic
# scheme, whose length is computed per call), a gathered cache, and a cache
# append (rope.cache_write) whose cache must come back unchanged.
MODULE = """
func.func @computed(%x: tensor<?x?x4xf32>, %o: i64) -> tensor<?x?x4xf32> {
  %y = rope.apply ins(%x : tensor<?x?x4xf32>) offset(%o : i64)
         outs(%x : tensor<?x?x4xf32>)
         {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>}
         -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
func.func @gathered(%x: tensor<?x?x4xf32>, %o: i64, %c: tensor<?x2xf32>,
                    %s: tensor<?x2xf32>) -> tensor<?x?x4xf32> {
  %y = rope.apply ins(%x : tensor<?x?x4xf32>) offset(%o : i64)
         cache(%c, %s : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%x : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
func.func @append(%x: tensor<?x?x4xf32>, %slots: tensor<?xi64>,
                  %cache: tensor<8x?x4xf32>) -> tensor<8x?x4xf32> {
  %y = rope.cache_write ins(%x : tensor<?x?x4xf32>)
         slots(%slots : tensor<?xi64>) outs(%cache : tensor<8x?x4xf32>)
         -> tensor<8x?x4xf32>
  return %y : tensor<8x?x4xf32>
}
"""

TOKENS = 2 ** 40


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def module(request):
    return rope_mlir.jit(MODULE, pipeline=PIPELINES[request.param])


def test_computed_returns_at_once(module):
    x = np.empty((TOKENS, 0, 4), np.float32)
    y, seconds = timed(module.function("computed"), x, np.int64(0))
    assert y.shape == (TOKENS, 0, 4)
    assert seconds < 1.0


def test_gathered_returns_at_once(module):
    x = np.empty((TOKENS, 0, 4), np.float32)
    cos = np.ones((8, 2), np.float32)
    sin = np.zeros((8, 2), np.float32)
    y, seconds = timed(module.function("gathered"), x, np.int64(0), cos, sin)
    assert y.shape == (TOKENS, 0, 4)
    assert seconds < 1.0


def test_append_without_heads_leaves_the_cache():
    # Slots for 2^40 tokens would be 8 TiB: a few tokens, the guard is on
    # the heads. The cache has no head either: nothing to write.
    module = rope_mlir.jit(MODULE, pipeline=PIPELINES["vector"])
    x = np.empty((3, 0, 4), np.float32)
    cache = np.empty((8, 0, 4), np.float32)
    y, seconds = timed(module.function("append"), x,
                       np.array([0, 1, 2], np.int64), cache)
    assert y.shape == (8, 0, 4)
    assert seconds < 1.0


def test_a_head_still_rotates(module):
    # Past the guard: one head, positions 0 and 1 of a cache (c, s) =
    # (1, 0), (0, 1): the second token's pairs turn by 90 degrees.
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]] * 2, np.float32)
    cos = np.array([[1.0, 1.0], [0.0, 0.0]], np.float32)
    sin = np.array([[0.0, 0.0], [1.0, 1.0]], np.float32)
    y = module.function("gathered")(x, np.int64(0), cos, sin)
    np.testing.assert_array_equal(y[0, 0], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(y[1, 0], [-3.0, -4.0, 1.0, 2.0])
