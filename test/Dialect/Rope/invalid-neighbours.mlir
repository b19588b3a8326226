// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of rope.apply's fused neighbours (QK-norm before,
// quantized output after): RopeOps.cpp, verifyNeighbours and the init check.

func.func @norm_weight_shape(%x: tensor<8x4x64xf32>, %w: tensor<32xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op norm weight must be a [D] = [64] tensor of f16, bf16, f32 or f64, got 'tensor<32xf32>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) norm(%w : tensor<32xf32>) outs(%x : tensor<8x4x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @norm_weight_type(%x: tensor<8x4x64xf32>, %w: tensor<64xi32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op norm weight must be a [D] = [64] tensor of f16, bf16, f32 or f64, got 'tensor<64xi32>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) norm(%w : tensor<64xi32>) outs(%x : tensor<8x4x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @norm_without_epsilon(%x: tensor<8x4x64xf32>, %w: tensor<64xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op norm needs norm_epsilon (the RMSNorm's eps, stated explicitly)}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) norm(%w : tensor<64xf32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @negative_epsilon(%x: tensor<8x4x64xf32>, %w: tensor<64xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op norm_epsilon must be a finite number >= 0, got -1.000000e-06}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) norm(%w : tensor<64xf32>) outs(%x : tensor<8x4x64xf32>) {norm_epsilon = -1.0e-06} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @epsilon_without_norm(%x: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op norm_epsilon is only meaningful with norm}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%x : tensor<8x4x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @quantized_init_without_scale(%x: tensor<8x4x64xf32>, %o: tensor<8x4x64xf8E4M3FN>) -> tensor<8x4x64xf8E4M3FN> {
  // expected-error @+1 {{'rope.apply' op init type 'tensor<8x4x64xf8E4M3FN>' must match input type 'tensor<8x4x64xf32>' (a quantized destination needs quant_scale)}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%o : tensor<8x4x64xf8E4M3FN>) -> tensor<8x4x64xf8E4M3FN>
  return %y : tensor<8x4x64xf8E4M3FN>
}

// -----

func.func @scale_with_float_init(%x: tensor<8x4x64xf32>, %s: tensor<f32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op with quant_scale, init must be shaped like the input with f8E4M3FN, f8E5M2 or i8 elements, got 'tensor<8x4x64xf32>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) quant_scale(%s : tensor<f32>) outs(%x : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

func.func @quantized_init_shape(%x: tensor<8x4x64xf32>, %s: tensor<f32>, %o: tensor<8x2x64xi8>) -> tensor<8x2x64xi8> {
  // expected-error @+1 {{'rope.apply' op with quant_scale, init must be shaped like the input with f8E4M3FN, f8E5M2 or i8 elements, got 'tensor<8x2x64xi8>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) quant_scale(%s : tensor<f32>) outs(%o : tensor<8x2x64xi8>) -> tensor<8x2x64xi8>
  return %y : tensor<8x2x64xi8>
}

// -----

func.func @quantized_f64_input(%x: tensor<8x4x64xf64>, %s: tensor<f32>, %o: tensor<8x4x64xi8>) -> tensor<8x4x64xi8> {
  // expected-error @+1 {{'rope.apply' op quantized output needs f16, bf16 or f32 input (the quantization computes in f32), got f64}}
  %y = rope.apply ins(%x : tensor<8x4x64xf64>) quant_scale(%s : tensor<f32>) outs(%o : tensor<8x4x64xi8>) -> tensor<8x4x64xi8>
  return %y : tensor<8x4x64xi8>
}

// -----

func.func @scale_type(%x: tensor<8x4x64xf32>, %s: tensor<4xf16>, %o: tensor<8x4x64xi8>) -> tensor<8x4x64xi8> {
  // expected-error @+1 {{'rope.apply' op quant_scale must be tensor<f32> (per tensor) or tensor<Hxf32> (per head), got 'tensor<4xf16>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) quant_scale(%s : tensor<4xf16>) outs(%o : tensor<8x4x64xi8>) -> tensor<8x4x64xi8>
  return %y : tensor<8x4x64xi8>
}

// -----

func.func @scale_rank(%x: tensor<8x4x64xf32>, %s: tensor<8x4xf32>, %o: tensor<8x4x64xi8>) -> tensor<8x4x64xi8> {
  // expected-error @+1 {{'rope.apply' op quant_scale must be tensor<f32> (per tensor) or tensor<Hxf32> (per head), got 'tensor<8x4xf32>'}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) quant_scale(%s : tensor<8x4xf32>) outs(%o : tensor<8x4x64xi8>) -> tensor<8x4x64xi8>
  return %y : tensor<8x4x64xi8>
}

// -----

func.func @per_head_scale_size(%x: tensor<8x4x64xf32>, %s: tensor<3xf32>, %o: tensor<8x4x64xf8E5M2>) -> tensor<8x4x64xf8E5M2> {
  // expected-error @+1 {{'rope.apply' op per-head quant_scale has 3 entries, expected 4 (the size of head dim 1)}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) quant_scale(%s : tensor<3xf32>) outs(%o : tensor<8x4x64xf8E5M2>) -> tensor<8x4x64xf8E5M2>
  return %y : tensor<8x4x64xf8E5M2>
}

// -----

func.func @per_head_scale_two_head_dims(%x: tensor<8x2x4x64xf32>, %s: tensor<4xf32>, %o: tensor<8x2x4x64xi8>) -> tensor<8x2x4x64xi8> {
  // expected-error @+1 {{'rope.apply' op a per-head quant_scale needs exactly one head dim (one dim that is neither a token dim nor the channels)}}
  %y = rope.apply ins(%x : tensor<8x2x4x64xf32>) quant_scale(%s : tensor<4xf32>) outs(%o : tensor<8x2x4x64xi8>) {token_dims = array<i64: 0>} -> tensor<8x2x4x64xi8>
  return %y : tensor<8x2x4x64xi8>
}
