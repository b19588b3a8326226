// RUN: rope-opt %s --convert-rope-to-vector=vector-bytes=32 -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-rope-to-vector=vector-bytes=32 --canonicalize --rope-expand-bf16 -split-input-file | FileCheck %s --check-prefix=EXPAND

// bf16 rows are rotated in word lanes: a chunk of 2N bf16 lanes (at least
// 64 bytes) is split into its even and odd lanes, rotated as two f32
// halves, and joined again; rope-expand-bf16 turns the split into a shift
// and a mask of the chunk's 32-bit words and the join into one or of the
// two roundings, so no lane moves are left in the rotation.

// Interleaved pairs (2j, 2j + 1) are the even and odd lanes themselves:
// cos/sin one per pair, neither spread over the lanes nor reordered.
// CHECK-LABEL: func.func @interleaved
//       CHECK:   scf.forall
//   CHECK-NOT:     vector.shuffle
//       CHECK:     scf.for
//       CHECK:       %[[X:.*]] = vector.transfer_read {{.*}} : tensor<4x64xbf16>, vector<32xbf16>
//       CHECK:       %[[E:.*]], %[[O:.*]] = vector.deinterleave %[[X]] : vector<32xbf16> -> vector<16xbf16>
//       CHECK:       %[[EF:.*]] = arith.extf %[[E]] : vector<16xbf16> to vector<16xf32>
//       CHECK:       %[[OF:.*]] = arith.extf %[[O]] : vector<16xbf16> to vector<16xf32>
//       CHECK:       %[[C:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       arith.mulf %[[EF]], %[[C]] : vector<16xf32>
//       CHECK:       math.fma %[[OF]]
//       CHECK:       vector.interleave %{{.*}}, %{{.*}} : vector<16xbf16> -> vector<32xbf16>
//       CHECK:       vector.transfer_write {{.*}} : vector<32xbf16>, tensor<4x64xbf16>
//   CHECK-NOT:       vector.shuffle
//       CHECK:   return
// EXPAND-LABEL: func.func @interleaved
//   EXPAND-NOT:   vector.deinterleave
//   EXPAND-NOT:   vector.interleave
//   EXPAND-NOT:   vector.shuffle
//       EXPAND:   vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
//       EXPAND:   arith.ori %{{.*}}, %{{.*}} : vector<16xi32>
//       EXPAND:   vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
//       EXPAND:   return
func.func @interleaved(%x: tensor<2x16x4x64xbf16>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xbf16>) -> tensor<2x16x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xbf16>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<2x16x4x64xbf16>
  return %y : tensor<2x16x4x64xbf16>
}

// -----

// Half pairs with P/2 = 40 (chunks of 32 and 8 pairs): cos/sin are put in
// the chunks' even-then-odd order once per token, one shuffle each.
// CHECK-LABEL: func.func @half_two_chunks
//       CHECK:   scf.forall
//       CHECK:     vector.shuffle %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 32, 34, 36, 38, 33, 35, 37, 39] : vector<40xf32>, vector<40xf32>
//       CHECK:     vector.shuffle
//       CHECK:     scf.for
//       CHECK:       vector.deinterleave %{{.*}} : vector<32xbf16> -> vector<16xbf16>
//       CHECK:       vector.deinterleave %{{.*}} : vector<32xbf16> -> vector<16xbf16>
//       CHECK:       vector.deinterleave %{{.*}} : vector<8xbf16> -> vector<4xbf16>
//       CHECK:       vector.deinterleave %{{.*}} : vector<8xbf16> -> vector<4xbf16>
func.func @half_two_chunks(%x: tensor<16x4x80xbf16>, %p: tensor<16xi64>, %init: tensor<16x4x80xbf16>) -> tensor<16x4x80xbf16> {
  %y = rope.apply ins(%x : tensor<16x4x80xbf16>) positions(%p : tensor<16xi64>) outs(%init : tensor<16x4x80xbf16>) -> tensor<16x4x80xbf16>
  return %y : tensor<16x4x80xbf16>
}

// -----

// A chunk of an odd number of pairs (rotary_dim 6: 3 pairs) is rotated as
// before: its lanes widened one by one, cos/sin in their own order (no
// shuffle: the order is the identity).
// CHECK-LABEL: func.func @odd_pairs
//   CHECK-NOT:   vector.shuffle
//   CHECK-NOT:   vector.deinterleave
//   CHECK-NOT:   vector.interleave
//       CHECK:   return
func.func @odd_pairs(%x: tensor<16x4x8xbf16>, %p: tensor<16xi64>, %init: tensor<16x4x8xbf16>) -> tensor<16x4x8xbf16> {
  %y = rope.apply ins(%x : tensor<16x4x8xbf16>) positions(%p : tensor<16xi64>) outs(%init : tensor<16x4x8xbf16>) {rotary_dim = 6 : i64} -> tensor<16x4x8xbf16>
  return %y : tensor<16x4x8xbf16>
}

// -----

// Not in word lanes: QK-norm (its weights are in channel order), a
// quantized store, f16 data.
// CHECK-LABEL: func.func @norm
//   CHECK-NOT:   vector.deinterleave
//       CHECK:   return
func.func @norm(%x: tensor<16x4x64xbf16>, %p: tensor<16xi64>, %w: tensor<64xbf16>, %init: tensor<16x4x64xbf16>) -> tensor<16x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<16x4x64xbf16>) positions(%p : tensor<16xi64>) norm(%w : tensor<64xbf16>) outs(%init : tensor<16x4x64xbf16>) {norm_epsilon = 1.0e-06} -> tensor<16x4x64xbf16>
  return %y : tensor<16x4x64xbf16>
}

// -----

// CHECK-LABEL: func.func @quantized
//   CHECK-NOT:   vector.deinterleave
//       CHECK:   return
func.func @quantized(%x: tensor<16x4x64xbf16>, %p: tensor<16xi64>, %s: tensor<f32>, %init: tensor<16x4x64xf8E4M3FN>) -> tensor<16x4x64xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<16x4x64xbf16>) positions(%p : tensor<16xi64>) quant_scale(%s : tensor<f32>) outs(%init : tensor<16x4x64xf8E4M3FN>) -> tensor<16x4x64xf8E4M3FN>
  return %y : tensor<16x4x64xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @f16
//   CHECK-NOT:   vector.deinterleave
//       CHECK:   return
func.func @f16(%x: tensor<16x4x64xf16>, %p: tensor<16xi64>, %init: tensor<16x4x64xf16>) -> tensor<16x4x64xf16> {
  %y = rope.apply ins(%x : tensor<16x4x64xf16>) positions(%p : tensor<16xi64>) outs(%init : tensor<16x4x64xf16>) -> tensor<16x4x64xf16>
  return %y : tensor<16x4x64xf16>
}
