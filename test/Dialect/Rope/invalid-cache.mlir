// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the KV-cache append: rope.apply's `slots` and
// rope.cache_write (RopeOps.cpp, verifySlotsAndCache and the cache checks).

func.func @slots_type(%k: tensor<4x8x64xf32>, %s: tensor<4xf32>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op slots must have i32 or i64 elements, got 'f32'}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xf32>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @slots_rank(%k: tensor<4x8x64xf32>, %s: tensor<4x1xi64>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op slots must be shaped like the token dims: expected rank 1, got 2}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4x1xi64>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @slots_size(%k: tensor<4x8x64xf32>, %s: tensor<5xi64>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op slots dim 0 has size 5, expected 4}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<5xi64>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @cache_rank(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<2x16x8x64xf32>) -> tensor<2x16x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op with slots, init is the cache: rank 3 with 'f32' elements, got 'tensor<2x16x8x64xf32>'}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<2x16x8x64xf32>) -> tensor<2x16x8x64xf32>
  return %y : tensor<2x16x8x64xf32>
}

// -----

func.func @cache_heads(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x4x64xf32>) -> tensor<16x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op cache dim 1 has size 4, expected 8 (a head or channel dim: only token dims may differ from the input's)}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x4x64xf32>) -> tensor<16x4x64xf32>
  return %y : tensor<16x4x64xf32>
}

// -----

func.func @cache_channels(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x8x128xf32>) -> tensor<16x8x128xf32> {
  // expected-error @+1 {{'rope.apply' op cache dim 2 has size 128, expected 64 (a head or channel dim: only token dims may differ from the input's)}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x128xf32>) -> tensor<16x8x128xf32>
  return %y : tensor<16x8x128xf32>
}

// -----

func.func @cache_element(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x8x64xf16>) -> tensor<16x8x64xf16> {
  // expected-error @+1 {{'rope.apply' op with slots, the cache's element type must be the input's ('f32') or a quantized type with quant_scale, got 'f16'}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x64xf16>) -> tensor<16x8x64xf16>
  return %y : tensor<16x8x64xf16>
}

// -----

func.func @cache_quant_element(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %q: tensor<f32>, %c: tensor<16x8x64xf16>) -> tensor<16x8x64xf16> {
  // expected-error @+1 {{'rope.apply' op with quant_scale, the cache must have f8E4M3FN, f8E5M2 or i8 elements, got 'f16'}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) quant_scale(%q : tensor<f32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x64xf16>) -> tensor<16x8x64xf16>
  return %y : tensor<16x8x64xf16>
}

// -----

func.func @cache_is_input(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>) -> tensor<4x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op with slots, the cache (init) must not be the input: a cache append is not in place}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%k : tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// -----

func.func @bad_token_dims(%k: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.apply' op token_dims entry 2 is out of range [0, 2) (the head dimension cannot be a token dim)}}
  %y = rope.apply ins(%k : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x64xf32>) {token_dims = array<i64: 2>} -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @cw_slots_type(%v: tensor<4x8x64xf32>, %s: tensor<4xi16>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op slots must have i32 or i64 elements, got 'i16'}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf32>) slots(%s : tensor<4xi16>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @cw_cache_heads(%v: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x2x64xf32>) -> tensor<16x2x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op cache dim 1 has size 2, expected 8 (a head or channel dim: only token dims may differ from the input's)}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x2x64xf32>) -> tensor<16x2x64xf32>
  return %y : tensor<16x2x64xf32>
}

// -----

func.func @cw_element(%v: tensor<4x8x64xbf16>, %s: tensor<4xi64>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op the cache's element type must be the input's ('bf16') or a quantized type with quant_scale, got 'f32'}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xbf16>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @cw_quant_element(%v: tensor<4x8x64xf32>, %s: tensor<4xi64>, %q: tensor<f32>, %c: tensor<16x8x64xf32>) -> tensor<16x8x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op with quant_scale, the cache must have f8E4M3FN, f8E5M2 or i8 elements, got 'f32'}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) quant_scale(%q : tensor<f32>) outs(%c : tensor<16x8x64xf32>) -> tensor<16x8x64xf32>
  return %y : tensor<16x8x64xf32>
}

// -----

func.func @cw_quant_f64(%v: tensor<4x8x64xf64>, %s: tensor<4xi64>, %q: tensor<f32>, %c: tensor<16x8x64xi8>) -> tensor<16x8x64xi8> {
  // expected-error @+1 {{'rope.cache_write' op quantized output needs f16, bf16 or f32 input (the quantization computes in f32), got f64}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf64>) slots(%s : tensor<4xi64>) quant_scale(%q : tensor<f32>) outs(%c : tensor<16x8x64xi8>) -> tensor<16x8x64xi8>
  return %y : tensor<16x8x64xi8>
}

// -----

func.func @cw_scale_heads(%v: tensor<4x8x64xf32>, %s: tensor<4xi64>, %q: tensor<4xf32>, %c: tensor<16x8x64xi8>) -> tensor<16x8x64xi8> {
  // expected-error @+1 {{'rope.cache_write' op per-head quant_scale has 4 entries, expected 8 (the size of head dim 1)}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) quant_scale(%q : tensor<4xf32>) outs(%c : tensor<16x8x64xi8>) -> tensor<16x8x64xi8>
  return %y : tensor<16x8x64xi8>
}

// -----

func.func @cw_rank(%v: tensor<64xf32>, %s: tensor<4xi64>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op input must have rank >= 2 ([tokens..., D]), got rank 1}}
  %y = rope.cache_write ins(%v : tensor<64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @cw_result(%v: tensor<4x8x64xf32>, %s: tensor<4xi64>, %c: tensor<16x8x64xf32>) -> tensor<?x8x64xf32> {
  // expected-error @+1 {{'rope.cache_write' op result type 'tensor<?x8x64xf32>' must match init type 'tensor<16x8x64xf32>'}}
  %y = rope.cache_write ins(%v : tensor<4x8x64xf32>) slots(%s : tensor<4xi64>) outs(%c : tensor<16x8x64xf32>) -> tensor<?x8x64xf32>
  return %y : tensor<?x8x64xf32>
}
