// RUN: rope-opt %s -split-input-file -verify-diagnostics

// Rank-0 caches must be diagnosed like any other cache of the wrong rank
// (the cache width is the size of the last dim, which a rank-0 cache does not
// have).

func.func @gathered_cache_rank0(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %c: tensor<f32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a cache gathered by position must have shape [max_positions, rotary_dim / 2], got rank 0}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%c, %c : tensor<f32>, tensor<f32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @pregathered_cache_rank0(%x: tensor<8x4x64xf32>, %c: tensor<f32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a pre-gathered cache (no positions or offset) must be shaped like the token dims plus rotary_dim / 2: expected rank 2, got 0}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) cache(%c, %c : tensor<f32>, tensor<f32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}
