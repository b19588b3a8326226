// RUN: rope-opt %s -canonicalize -split-input-file | FileCheck %s --enable-var-scope

// R(0) = I: all-zero constant positions fold to the input.
// CHECK-LABEL: func.func @zero_positions_fold(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @zero_positions_fold(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// With a magnitude a != 1, R(0) scales by a: not the identity.
// CHECK-LABEL: func.func @zero_positions_magnitude_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//  CHECK-SAME:     magnitude = 1.500000e+00
//       CHECK:   return %[[Y]]
func.func @zero_positions_magnitude_no_fold(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %p = arith.constant dense<0> : tensor<8xi32>
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi32>) outs(%init : tensor<8x4x64xf32>) {magnitude = 1.5} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// A cache row 0 need not hold cos = 1, sin = 0.
// CHECK-LABEL: func.func @zero_positions_cache_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//  CHECK-SAME:     cache(
//       CHECK:   return %[[Y]]
func.func @zero_positions_cache_no_fold(%x: tensor<8x4x64xf32>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// Positions that are not all zero.
// CHECK-LABEL: func.func @nonzero_positions_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//       CHECK:   return %[[Y]]
func.func @nonzero_positions_no_fold(%x: tensor<2x4x64xf32>, %init: tensor<2x4x64xf32>) -> tensor<2x4x64xf32> {
  %p = arith.constant dense<[0, 1]> : tensor<2xi64>
  %y = rope.apply ins(%x : tensor<2x4x64xf32>) positions(%p : tensor<2xi64>) outs(%init : tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
  return %y : tensor<2x4x64xf32>
}

// -----

// One token at offset 0: pos = 0 + s = 0 everywhere.
// CHECK-LABEL: func.func @seq_one_offset_zero_fold(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x1x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @seq_one_offset_zero_fold(%x: tensor<2x1x4x64xf32>, %init: tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32> {
  %o = arith.constant 0 : i64
  %y = rope.apply ins(%x : tensor<2x1x4x64xf32>) offset(%o : i64) outs(%init : tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32>
  return %y : tensor<2x1x4x64xf32>
}

// -----

// The same with a per-row offset tensor of zeros.
// CHECK-LABEL: func.func @seq_one_per_row_zero_fold(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x1x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @seq_one_per_row_zero_fold(%x: tensor<2x1x4x64xf32>, %init: tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32> {
  %o = arith.constant dense<0> : tensor<2xi32>
  %y = rope.apply ins(%x : tensor<2x1x4x64xf32>) offset(%o : tensor<2xi32>) outs(%init : tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32>
  return %y : tensor<2x1x4x64xf32>
}

// -----

// One token and implicit positions: pos = s = 0.
// CHECK-LABEL: func.func @seq_one_implicit_fold(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @seq_one_implicit_fold(%x: tensor<1x4x64xf32>, %init: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  %y = rope.apply ins(%x : tensor<1x4x64xf32>) outs(%init : tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
  return %y : tensor<1x4x64xf32>
}

// -----

// One token at a nonzero or unknown offset is a real rotation.
// CHECK-LABEL: func.func @seq_one_offset_no_fold(
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply
//       CHECK:   return %[[A]], %[[B]]
func.func @seq_one_offset_no_fold(%x: tensor<2x1x4x64xf32>, %o: i64, %init: tensor<2x1x4x64xf32>) -> (tensor<2x1x4x64xf32>, tensor<2x1x4x64xf32>) {
  %c5 = arith.constant 5 : i64
  %a = rope.apply ins(%x : tensor<2x1x4x64xf32>) offset(%c5 : i64) outs(%init : tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32>
  %b = rope.apply ins(%x : tensor<2x1x4x64xf32>) offset(%o : i64) outs(%init : tensor<2x1x4x64xf32>) -> tensor<2x1x4x64xf32>
  return %a, %b : tensor<2x1x4x64xf32>, tensor<2x1x4x64xf32>
}

// -----

// Offset 0 with more than one token: pos = s is not zero.
// CHECK-LABEL: func.func @seq_many_offset_zero_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//       CHECK:   return %[[Y]]
func.func @seq_many_offset_zero_no_fold(%x: tensor<2x8x4x64xf32>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %o = arith.constant 0 : index
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : index) outs(%init : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// One token but a magnitude != 1.
// CHECK-LABEL: func.func @seq_one_magnitude_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//       CHECK:   return %[[Y]]
func.func @seq_one_magnitude_no_fold(%x: tensor<1x4x64xf32>, %init: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  %y = rope.apply ins(%x : tensor<1x4x64xf32>) outs(%init : tensor<1x4x64xf32>) {magnitude = 2.0} -> tensor<1x4x64xf32>
  return %y : tensor<1x4x64xf32>
}

// -----

// R(-p) R(p) = I.
// CHECK-LABEL: func.func @inverse_after_forward_cancels(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @inverse_after_forward_cancels(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// R(p) R(-p) = I, with offsets.
// CHECK-LABEL: func.func @forward_after_inverse_offset_cancels(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @forward_after_inverse_offset_cancels(%x: tensor<2x8x4x64xf32>, %o: i64, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : i64) outs(%init : tensor<2x8x4x64xf32>) {inverse, layout = #rope.layout<interleaved>} -> tensor<2x8x4x64xf32>
  %b = rope.apply ins(%a : tensor<2x8x4x64xf32>) offset(%o : i64) outs(%init : tensor<2x8x4x64xf32>) {layout = #rope.layout<interleaved>} -> tensor<2x8x4x64xf32>
  return %b : tensor<2x8x4x64xf32>
}

// -----

// Implicit positions (pos = s) on both sides.
// CHECK-LABEL: func.func @inverse_implicit_cancels(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @inverse_implicit_cancels(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%init : tensor<8x4x64xf32>) {rotary_dim = 32 : i64} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) outs(%init : tensor<8x4x64xf32>) {inverse, rotary_dim = 32 : i64} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Different offsets: neither a cancellation nor a merge (merging needs
// explicit positions).
// CHECK-LABEL: func.func @inverse_different_offsets_no_cancel(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x64xf32>
//       CHECK:   %[[A:.*]] = rope.apply ins(%[[X]]
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//  CHECK-SAME:     inverse
//       CHECK:   return %[[B]]
func.func @inverse_different_offsets_no_cancel(%x: tensor<2x8x4x64xf32>, %o1: i64, %o2: i64, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o1 : i64) outs(%init : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  %b = rope.apply ins(%a : tensor<2x8x4x64xf32>) offset(%o2 : i64) outs(%init : tensor<2x8x4x64xf32>) {inverse} -> tensor<2x8x4x64xf32>
  return %b : tensor<2x8x4x64xf32>
}

// -----

// Explicit positions against an offset.
// CHECK-LABEL: func.func @inverse_positions_vs_offset_no_cancel(
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @inverse_positions_vs_offset_no_cancel(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %o: i64, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%init : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  %b = rope.apply ins(%a : tensor<2x8x4x64xf32>) offset(%o : i64) outs(%init : tensor<2x8x4x64xf32>) {inverse} -> tensor<2x8x4x64xf32>
  return %b : tensor<2x8x4x64xf32>
}

// -----

// Different bases: different frequencies.
// CHECK-LABEL: func.func @inverse_different_freqs_no_cancel(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//       CHECK:   %[[A:.*]] = rope.apply ins(%[[X]]
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//  CHECK-SAME:     freqs = #rope.default<base = 5.000000e+05>, inverse
//       CHECK:   return %[[B]]
func.func @inverse_different_freqs_no_cancel(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse, freqs = #rope.default<base = 500000.0>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @inverse_different_layouts_no_cancel(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//       CHECK:   %[[A:.*]] = rope.apply ins(%[[X]]
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//  CHECK-SAME:     inverse, layout = #rope.layout<interleaved>
//       CHECK:   return %[[B]]
func.func @inverse_different_layouts_no_cancel(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse, layout = #rope.layout<interleaved>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @inverse_different_rotary_dims_no_cancel(
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @inverse_different_rotary_dims_no_cancel(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {rotary_dim = 32 : i64} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Caches are opaque: R_cache(-p) R_cache(p) is not known to cancel.
// CHECK-LABEL: func.func @inverse_cache_no_cancel(
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @inverse_cache_no_cancel(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<8x4x64xf32>) {inverse} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// R(q) R(p) = R(p + q).
// CHECK-LABEL: func.func @merge_forward_forward(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x64xf32>, %[[P:[^:]*]]: tensor<2x8xi64>, %[[Q:[^:]*]]: tensor<2x8xi64>, %[[I1:[^:]*]]: tensor<2x8x4x64xf32>, %[[I2:[^:]*]]: tensor<2x8x4x64xf32>)
//       CHECK:   %[[SUM:.*]] = arith.addi %[[P]], %[[Q]] : tensor<2x8xi64>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<2x8x4x64xf32>) positions(%[[SUM]] : tensor<2x8xi64>) outs(%[[I2]] : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_forward_forward(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %q: tensor<2x8xi64>, %i1: tensor<2x8x4x64xf32>, %i2: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%i1 : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  %b = rope.apply ins(%a : tensor<2x8x4x64xf32>) positions(%q : tensor<2x8xi64>) outs(%i2 : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %b : tensor<2x8x4x64xf32>
}

// -----

// R(-q) R(-p) = R(-(p + q)).
// CHECK-LABEL: func.func @merge_inverse_inverse(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<8xi32>, %[[Q:[^:]*]]: tensor<8xi32>
//       CHECK:   %[[SUM:.*]] = arith.addi %[[P]], %[[Q]] : tensor<8xi32>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[SUM]] : tensor<8xi32>)
//  CHECK-SAME:     {inverse, layout = #rope.layout<interleaved>}
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_inverse_inverse(%x: tensor<8x4x64xf32>, %p: tensor<8xi32>, %q: tensor<8xi32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi32>) outs(%init : tensor<8x4x64xf32>) {inverse, layout = #rope.layout<interleaved>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi32>) outs(%init : tensor<8x4x64xf32>) {inverse, layout = #rope.layout<interleaved>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// R(-q) R(p) = R(p - q).
// CHECK-LABEL: func.func @merge_forward_then_inverse(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[Q:[^:]*]]: tensor<8xi64>
//       CHECK:   %[[DIFF:.*]] = arith.subi %[[P]], %[[Q]] : tensor<8xi64>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[DIFF]] : tensor<8xi64>) outs(%{{.*}} : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_forward_then_inverse(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// R(q) R(-p) = R(q - p).
// CHECK-LABEL: func.func @merge_inverse_then_forward(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[Q:[^:]*]]: tensor<8xi64>
//       CHECK:   %[[DIFF:.*]] = arith.subi %[[Q]], %[[P]] : tensor<8xi64>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[DIFF]] : tensor<8xi64>) outs(%{{.*}} : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_inverse_then_forward(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// The inner rotation is still needed: merging would duplicate work.
// CHECK-LABEL: func.func @no_merge_multiple_uses(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[Q:[^:]*]]: tensor<8xi64>
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[P]]
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]] : tensor<8x4x64xf32>) positions(%[[Q]]
//       CHECK:   return %[[A]], %[[B]]
func.func @no_merge_multiple_uses(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> (tensor<8x4x64xf32>, tensor<8x4x64xf32>) {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %a, %b : tensor<8x4x64xf32>, tensor<8x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @no_merge_cache(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_cache(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) cache(%cos, %sin : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Different magnitudes do not compose additively in position.
// CHECK-LABEL: func.func @no_merge_magnitude(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_magnitude(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {magnitude = 2.0} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Positions of different integer types are not added.
// CHECK-LABEL: func.func @no_merge_position_types(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_position_types(%x: tensor<8x4x64xf32>, %p: tensor<8xi32>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Frequency schemes. R(q) R(p) = R(p + q) holds for any static scheme with
// unit magnitude: both rotations use the same constant theta'.
// CHECK-LABEL: func.func @merge_same_static_scheme(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[Q:[^:]*]]: tensor<8xi64>
//       CHECK:   %[[SUM:.*]] = arith.addi %[[P]], %[[Q]] : tensor<8xi64>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[SUM]] : tensor<8xi64>)
//  CHECK-SAME:     {freqs = #rope.llama3<base = 5.000000e+05>}
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_same_static_scheme(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.llama3<base = 500000.0>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.llama3<base = 500000.0>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// YaRN whose magnitude is 1 (an explicit attention_factor = 1): merges.
// CHECK-LABEL: func.func @merge_yarn_unit_magnitude(
//       CHECK:   arith.addi
//       CHECK:   %[[Y:.*]] = rope.apply
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_yarn_unit_magnitude(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, attention_factor = 1.0>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, attention_factor = 1.0>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// YaRN with its default magnitude g(4) != 1: a^2 R(p + q) is not R(p + q).
// CHECK-LABEL: func.func @no_merge_yarn_magnitude(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_yarn_magnitude(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>, magnitude = 1.1386294361119891} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>, magnitude = 1.1386294361119891} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Different schemes: different frequencies.
// CHECK-LABEL: func.func @no_merge_different_schemes(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_different_schemes(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.linear<factor = 2.0>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.ntk<factor = 2.0>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// A dynamic scheme's theta depends on each call's length (max position + 1):
// R_l(q) R_l'(p) is not R_l''(p + q).
// CHECK-LABEL: func.func @no_merge_dynamic_scheme(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_dynamic_scheme(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// The same for LongRoPE (the table switches on the length).
// CHECK-LABEL: func.func @no_merge_longrope(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_merge_longrope(%x: tensor<8x4x4xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x4xf32>) -> tensor<8x4x4xf32> {
  %a = rope.apply ins(%x : tensor<8x4x4xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 16>} -> tensor<8x4x4xf32>
  %b = rope.apply ins(%a : tensor<8x4x4xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 16>} -> tensor<8x4x4xf32>
  return %b : tensor<8x4x4xf32>
}

// -----

// The inverse of a forward rotation at the same positions cancels with a
// static scheme.
// CHECK-LABEL: func.func @cancel_static_scheme(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @cancel_static_scheme(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.proportional<partial_rotary_factor = 0.5>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse, freqs = #rope.proportional<partial_rotary_factor = 0.5>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// The same with a dynamic scheme is not cancelled (the patterns only reason
// about static schemes, conservatively).
// CHECK-LABEL: func.func @no_cancel_dynamic_scheme(
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   return %[[B]]
func.func @no_cancel_dynamic_scheme(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse, freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// M-RoPE rotations with the same sections merge: each pair's angle is
// additive in its own axis, so the [3, tokens] positions add elementwise.
// CHECK-LABEL: func.func @merge_same_mrope(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[P:[^:]*]]: tensor<3x8xi64>, %[[Q:[^:]*]]: tensor<3x8xi64>
//       CHECK:   %[[SUM:.*]] = arith.addi %[[P]], %[[Q]] : tensor<3x8xi64>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x4x64xf32>) positions(%[[SUM]] : tensor<3x8xi64>)
//  CHECK-SAME:     mrope = #rope.mrope<section = [16, 8, 8]>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[Y]]
func.func @merge_same_mrope(%x: tensor<8x4x64xf32>, %p: tensor<3x8xi64>, %q: tensor<3x8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// Different sections (or chunked against interleaved) do not merge.
// CHECK-LABEL: func.func @no_merge_different_mrope(
//   CHECK-NOT:   arith.addi
//       CHECK:   %[[A:.*]] = rope.apply
//       CHECK:   %[[B:.*]] = rope.apply ins(%[[A]]
//       CHECK:   %[[C:.*]] = rope.apply ins(%[[B]]
//       CHECK:   return %[[C]]
func.func @no_merge_different_mrope(%x: tensor<8x4x64xf32>, %p: tensor<3x8xi64>, %q: tensor<3x8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [8, 16, 8]>} -> tensor<8x4x64xf32>
  %c = rope.apply ins(%b : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [12, 10, 10], interleaved = true>} -> tensor<8x4x64xf32>
  return %c : tensor<8x4x64xf32>
}

// -----

// M-RoPE cancels against its inverse at the same positions; an M-RoPE
// rotation does not cancel a plain one.
// CHECK-LABEL: func.func @mrope_cancel(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]]
func.func @mrope_cancel(%x: tensor<8x4x64xf32>, %p: tensor<3x8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [24, 4, 4], interleaved = true>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {inverse, mrope = #rope.mrope<section = [24, 4, 4], interleaved = true>} -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// R(0) = I whatever the scheme, dynamic ones included, and with M-RoPE when
// all three axes are zero.
// CHECK-LABEL: func.func @zero_positions_fold_schemes(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   return %[[X]], %[[X]], %[[X]]
func.func @zero_positions_fold_schemes(%x: tensor<8x4x64xf32>, %l: i64, %init: tensor<8x4x64xf32>) -> (tensor<8x4x64xf32>, tensor<8x4x64xf32>, tensor<8x4x64xf32>) {
  %p = arith.constant dense<0> : tensor<8xi64>
  %p3 = arith.constant dense<0> : tensor<3x8xi64>
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.ntk<factor = 4.0>} -> tensor<8x4x64xf32>
  %b = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) length(%l : i64) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  %c = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p3 : tensor<3x8xi64>) outs(%init : tensor<8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x4x64xf32>
  return %a, %b, %c : tensor<8x4x64xf32>, tensor<8x4x64xf32>, tensor<8x4x64xf32>
}

// -----

// YaRN at position 0 still scales by its magnitude: no fold.
// CHECK-LABEL: func.func @zero_positions_yarn_no_fold(
//       CHECK:   %[[Y:.*]] = rope.apply
//       CHECK:   return %[[Y]]
func.func @zero_positions_yarn_no_fold(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %p = arith.constant dense<0> : tensor<8xi64>
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>, magnitude = 1.1386294361119891} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// A cast of a static input into a dynamic rope.apply: upstream's cast
// folding alone would leave the input static and the init dynamic, which
// the op's verifier refuses (init shaped like the input). The input and the
// init meet at the static size; the result is cast back for its users.
// CHECK-LABEL: func.func @fold_input_cast(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[E:[a-z0-9]+]]: tensor<?x8xf32>
//       CHECK:   %[[INIT:.*]] = tensor.cast %[[E]] : tensor<?x8xf32> to tensor<4x8xf32>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK:   %[[R:.*]] = tensor.cast %[[Y]] : tensor<4x8xf32> to tensor<?x8xf32>
//       CHECK:   return %[[R]]
func.func @fold_input_cast(%x: tensor<4x8xf32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = tensor.cast %x : tensor<4x8xf32> to tensor<?x8xf32>
  %y = rope.apply ins(%c : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// The same from the init's side, with another dim dynamic on the input:
// each dim takes the static size either operand has.
// CHECK-LABEL: func.func @fold_init_cast(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<?x?x8xf32>, %[[E:[a-z0-9]+]]: tensor<?x4x8xf32>
//       CHECK:   %[[IN:.*]] = tensor.cast %[[X]] : tensor<?x?x8xf32> to tensor<?x4x8xf32>
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[IN]] : tensor<?x4x8xf32>) outs(%[[E]] : tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
//       CHECK:   tensor.cast %[[Y]] : tensor<?x4x8xf32> to tensor<?x?x8xf32>
func.func @fold_init_cast(%x: tensor<?x?x8xf32>, %e: tensor<?x4x8xf32>) -> tensor<?x?x8xf32> {
  %c = tensor.cast %e : tensor<?x4x8xf32> to tensor<?x?x8xf32>
  %y = rope.apply ins(%x : tensor<?x?x8xf32>) outs(%c : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
