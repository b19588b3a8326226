// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the rope.apply verifier (RopeOps.cpp) and of
// the #rope.default attribute verifier (RopeAttrs.cpp).

func.func @rank_one(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'rope.apply' op input must have rank >= 2 ([tokens..., D]), got rank 1}}
  %y = rope.apply ins(%x : tensor<64xf32>) outs(%x : tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @integer_data(%x: tensor<8x64xi32>) -> tensor<8x64xi32> {
  // expected-error @+1 {{'rope.apply' op input element type must be f16, bf16, f32 or f64, got 'i32'}}
  %y = rope.apply ins(%x : tensor<8x64xi32>) outs(%x : tensor<8x64xi32>) -> tensor<8x64xi32>
  return %y : tensor<8x64xi32>
}

// -----

func.func @init_type(%x: tensor<8x64xf32>, %init: tensor<8x64xf16>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op init type 'tensor<8x64xf16>' must match input type 'tensor<8x64xf32>'}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%init : tensor<8x64xf16>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @result_type(%x: tensor<8x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'rope.apply' op result type 'tensor<?x64xf32>' must match init type 'tensor<8x64xf32>'}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @dynamic_head_dim(%x: tensor<8x?xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{'rope.apply' op head dimension (the last dimension) must be static}}
  %y = rope.apply ins(%x : tensor<8x?xf32>) outs(%x : tensor<8x?xf32>) -> tensor<8x?xf32>
  return %y : tensor<8x?xf32>
}

// -----

func.func @rotary_dim_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op rotary_dim must be positive, got 0}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 0 : i64} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @rotary_dim_odd(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op rotary_dim must be even, got 31}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 31 : i64} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @rotary_dim_too_large(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op rotary_dim (128) must not exceed the head dimension (64)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 128 : i64} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @token_dims_empty(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op token_dims must not be empty}}
  %y = rope.apply ins(%x : tensor<2x8x64xf32>) outs(%x : tensor<2x8x64xf32>) {token_dims = array<i64>} -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

func.func @token_dims_head_dim(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op token_dims entry 2 is out of range [0, 2) (the head dimension cannot be a token dim)}}
  %y = rope.apply ins(%x : tensor<2x8x64xf32>) outs(%x : tensor<2x8x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

func.func @token_dims_not_increasing(%x: tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op token_dims must be strictly increasing}}
  %y = rope.apply ins(%x : tensor<2x4x8x64xf32>) outs(%x : tensor<2x4x8x64xf32>) {token_dims = array<i64: 2, 0>} -> tensor<2x4x8x64xf32>
  return %y : tensor<2x4x8x64xf32>
}

// -----

func.func @positions_and_offset(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %o: i64) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op positions and offset are mutually exclusive}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) offset(%o : i64) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @positions_element_type(%x: tensor<8x4x64xf32>, %p: tensor<8xi16>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op positions must have i32 or i64 elements, got 'i16'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi16>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @positions_rank(%x: tensor<2x8x4x64xf32>, %p: tensor<8xi64>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op positions must be shaped like the token dims: expected rank 2, got 1}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%x : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// [B, H, S, D]: positions follow dims 0 and 2, not 0 and 1.
func.func @positions_size(%x: tensor<2x4x8x64xf32>, %p: tensor<2x4xi64>) -> tensor<2x4x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op positions dim 1 has size 4, expected 8}}
  %y = rope.apply ins(%x : tensor<2x4x8x64xf32>) positions(%p : tensor<2x4xi64>) outs(%x : tensor<2x4x8x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x8x64xf32>
  return %y : tensor<2x4x8x64xf32>
}

// -----

func.func @offset_tensor_element_type(%x: tensor<1x8x64xf32>, %o: tensor<f32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op offset tensor must have i32 or i64 elements, got 'f32'}}
  %y = rope.apply ins(%x : tensor<1x8x64xf32>) offset(%o : tensor<f32>) outs(%x : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

func.func @offset_rank(%x: tensor<2x8x4x64xf32>, %o: tensor<2x8xi64>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op offset must be a scalar, a rank-0 tensor or a rank-1 tensor (one offset per row), got rank 2}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : tensor<2x8xi64>) outs(%x : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

func.func @offset_per_row_one_token_dim(%x: tensor<8x4x64xf32>, %o: tensor<8xi64>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a per-row offset needs at least two token dims (rows and sequence)}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) offset(%o : tensor<8xi64>) outs(%x : tensor<8x4x64xf32>) {token_dims = array<i64: 0>} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @offset_per_row_size(%x: tensor<3x8x4x64xf32>, %o: tensor<2xi64>) -> tensor<3x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op offset dim 0 has size 2, expected 3}}
  %y = rope.apply ins(%x : tensor<3x8x4x64xf32>) offset(%o : tensor<2xi64>) outs(%x : tensor<3x8x4x64xf32>) -> tensor<3x8x4x64xf32>
  return %y : tensor<3x8x4x64xf32>
}

// -----

func.func @offset_float(%x: tensor<1x8x64xf32>, %o: f32) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op offset must be an integer, an index or an integer tensor, got 'f32'}}
  %y = rope.apply ins(%x : tensor<1x8x64xf32>) offset(%o : f32) outs(%x : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// The custom syntax always takes both caches: use the generic form.
func.func @cos_without_sin(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op cos and sin caches must be given together}}
  %y = "rope.apply"(%x, %p, %cos, %x) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0, 0, 0, 0, 1>}>
         : (tensor<8x4x64xf32>, tensor<8xi64>, tensor<16x32xf32>, tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @freqs_and_cache(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op freqs and cache are mutually exclusive: the cache already holds cos/sin}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%x : tensor<8x4x64xf32>)
         {freqs = #rope.default<base = 10000.0>} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @cache_types_differ(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf16>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op cos and sin caches must have the same type, got 'tensor<16x32xf32>' and 'tensor<16x32xf16>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf16>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @cache_integer(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xi32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op cache element type must be a float type, got 'i32'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %cos : tensor<16x32xi32>, tensor<16x32xi32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @gathered_cache_rank(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<1x16x32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a cache gathered by position must have shape [max_positions, rotary_dim / 2], got rank 3}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %cos : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @pregathered_cache_rank(%x: tensor<2x8x4x64xf32>, %cos: tensor<16x32xf32>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a pre-gathered cache (no positions or offset) must be shaped like the token dims plus rotary_dim / 2: expected rank 3, got 2}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) cache(%cos, %cos : tensor<16x32xf32>, tensor<16x32xf32>) outs(%x : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

func.func @pregathered_cache_size(%x: tensor<2x8x4x64xf32>, %cos: tensor<2x4x32xf32>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op pre-gathered cache dim 1 has size 4, expected 8}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) cache(%cos, %cos : tensor<2x4x32xf32>, tensor<2x4x32xf32>) outs(%x : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// The cache holds P/2 = 16 frequencies for rotary_dim = 32, not D/2.
func.func @cache_width(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op cache width (32) must be rotary_dim / 2 (16)}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %cos : tensor<16x32xf32>, tensor<16x32xf32>) outs(%x : tensor<8x4x64xf32>)
         {rotary_dim = 32 : i64} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @magnitude_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op magnitude must be a positive finite number, got 0}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {magnitude = 0.0} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @base_not_positive(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{default: base must be a positive finite number, got 0}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.default<base = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// The head dimension is bounded (kMaxHeadDim): lowerings materialize P/2
// frequencies, and a 2^31-channel head once reserved an 8 GiB table.
func.func @head_dim_too_large(%x: tensor<1x2147483648xf32>, %c: i64) -> tensor<1x2147483648xf32> {
  // expected-error @+1 {{'rope.apply' op head dimension 2147483648 exceeds the supported maximum 65536}}
  %y = rope.apply ins(%x : tensor<1x2147483648xf32>) offset(%c : i64) outs(%x : tensor<1x2147483648xf32>) -> tensor<1x2147483648xf32>
  return %y : tensor<1x2147483648xf32>
}

// -----

// Section entries are bounded, so their sum cannot overflow (it was signed
// overflow, undefined behaviour, in the verifier).
func.func @mrope_section_overflow(%x: tensor<8x4x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{M-RoPE section entries must be in [0, 32768] (pairs of a head), got 9223372036854775807}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [9223372036854775807, 1, 0]>} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @empty_gathered_cache(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %c: tensor<0x32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op a cache gathered by position must have at least one row}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%c, %c : tensor<0x32xf32>, tensor<0x32xf32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}
