// RUN: rope-opt %s | rope-opt | FileCheck %s
// RUN: rope-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

// The KV-cache append forms parse, print and verify: a contiguous
// [B, max_len, Hkv, D] cache, Hugging Face's [B, Hkv, max_len, D] at token
// dims (0, 2), collapsed pages [num_pages * page_size, Hkv, D] with a
// quantized cache, and rope.cache_write for V.

// CHECK-LABEL: func.func @contiguous
// CHECK: rope.apply ins(%{{.*}} : tensor<64x1x8x128xbf16>) positions(%{{.*}} : tensor<64x1xi64>) slots(%{{.*}} : tensor<64x1xi64>) outs(%{{.*}} : tensor<64x4096x8x128xbf16>)
func.func @contiguous(%k: tensor<64x1x8x128xbf16>, %pos: tensor<64x1xi64>, %slots: tensor<64x1xi64>, %cache: tensor<64x4096x8x128xbf16>) -> tensor<64x4096x8x128xbf16> {
  %r = rope.apply ins(%k : tensor<64x1x8x128xbf16>) positions(%pos : tensor<64x1xi64>) slots(%slots : tensor<64x1xi64>) outs(%cache : tensor<64x4096x8x128xbf16>) {freqs = #rope.default<base = 500000.0>} -> tensor<64x4096x8x128xbf16>
  return %r : tensor<64x4096x8x128xbf16>
}

// CHECK-LABEL: func.func @heads_outer
// CHECK: rope.apply {{.*}} slots(%{{.*}} : tensor<2x?xi32>) outs(%{{.*}} : tensor<2x8x?x64xf32>) {token_dims = array<i64: 0, 2>}
func.func @heads_outer(%k: tensor<2x8x?x64xf32>, %slots: tensor<2x?xi32>, %cache: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %r = rope.apply ins(%k : tensor<2x8x?x64xf32>) slots(%slots : tensor<2x?xi32>) outs(%cache : tensor<2x8x?x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x?x64xf32>
  return %r : tensor<2x8x?x64xf32>
}

// The identity rotation (position 0, one token) still appends: not folded.
// CANON-LABEL: func.func @paged_fp8
// CANON: rope.apply {{.*}} norm({{.*}}) quant_scale({{.*}}) slots({{.*}}) outs(%{{.*}} : tensor<?x8x128xf8E4M3FN>)
// CANON: rope.cache_write ins(%{{.*}} : tensor<1x8x128xbf16>) slots(%{{.*}} : tensor<1xi64>) quant_scale(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<?x8x128xf8E4M3FN>)
func.func @paged_fp8(%k: tensor<1x8x128xbf16>, %v: tensor<1x8x128xbf16>, %w: tensor<128xbf16>, %ks: tensor<f32>, %vs: tensor<8xf32>, %slots: tensor<1xi64>, %kc: tensor<?x8x128xf8E4M3FN>, %vc: tensor<?x8x128xf8E4M3FN>) -> (tensor<?x8x128xf8E4M3FN>, tensor<?x8x128xf8E4M3FN>) {
  %rk = rope.apply ins(%k : tensor<1x8x128xbf16>) norm(%w : tensor<128xbf16>) quant_scale(%ks : tensor<f32>) slots(%slots : tensor<1xi64>) outs(%kc : tensor<?x8x128xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<?x8x128xf8E4M3FN>
  %rv = rope.cache_write ins(%v : tensor<1x8x128xbf16>) slots(%slots : tensor<1xi64>) quant_scale(%vs : tensor<8xf32>) outs(%vc : tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN>
  return %rk, %rv : tensor<?x8x128xf8E4M3FN>, tensor<?x8x128xf8E4M3FN>
}

// CANON-LABEL: func.func @identity_appends
// CANON: rope.apply {{.*}} slots
func.func @identity_appends(%k: tensor<1x8x64xf32>, %slots: tensor<1xi64>, %cache: tensor<32x8x64xf32>) -> tensor<32x8x64xf32> {
  %r = rope.apply ins(%k : tensor<1x8x64xf32>) slots(%slots : tensor<1xi64>) outs(%cache : tensor<32x8x64xf32>) -> tensor<32x8x64xf32>
  return %r : tensor<32x8x64xf32>
}
