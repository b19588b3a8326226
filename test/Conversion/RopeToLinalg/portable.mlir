// RUN: rope-opt %s --convert-rope-to-linalg --transform-interpreter -split-input-file -verify-diagnostics | FileCheck %s

// The linalg form is the exchange format with other MLIR compilers: its maps
// are projected permutations only (the two members of each pair are two
// slices of the input, read through maps that drop the member dim), so
// upstream's linalg vectorizer (`transform.structured.vectorize`) takes
// every generic of the decomposition. A partner read through `1 - k` (the
// previous form) is refused by the vectorizer (last case) and by IREE's
// verifier. test/Conversion/RopeToLinalg/rope-to-linalg.mlir's PORTABLE run
// checks that no map of any form has a negated dim.

// CHECK-LABEL: func.func @half_positions(
//   CHECK-NOT:   linalg.generic
//       CHECK:   vector.transfer_read {{.*}} : tensor<2x16x4x32xf32>, vector<2x16x4x2x32xf32>
//       CHECK:   vector.transfer_read {{.*}} : tensor<2x16x4x32xf32>, vector<2x16x4x2x32xf32>
//       CHECK:   math.fma {{.*}} : vector<2x16x4x2x32xf32>
//       CHECK:   vector.transfer_write {{.*}} : vector<2x16x4x2x32xf32>, tensor<2x16x4x2x32xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
func.func @half_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// Interleaved, partial rotary, f16, a scaled scheme, per-row offsets and
// M-RoPE's per-pair axis: the pass-through copy vectorizes too.
// CHECK-LABEL: func.func @interleaved_partial_f16(
//   CHECK-NOT:   linalg.{{generic|copy}}
//       CHECK:   vector.transfer_read {{.*}} : tensor<2x8x4x8xf16>, vector<2x8x4x8x2xf16>
//   CHECK-NOT:   linalg.{{generic|copy}}
//       CHECK:   return
func.func @interleaved_partial_f16(%x: tensor<2x8x4x64xf16>, %o: tensor<2xi64>, %init: tensor<2x8x4x64xf16>) -> tensor<2x8x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf16>) offset(%o : tensor<2xi64>) outs(%init : tensor<2x8x4x64xf16>) {layout = #rope.layout<interleaved>, rotary_dim = 16 : i64, freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 64>, magnitude = 1.1386294361119891} -> tensor<2x8x4x64xf16>
  return %y : tensor<2x8x4x64xf16>
}
// CHECK-LABEL: func.func @mrope(
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
func.func @mrope(%x: tensor<8x4x16xf32>, %p: tensor<3x8xi64>, %init: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x16xf32>) {mrope = #rope.mrope<section = [4, 2, 2], interleaved = true>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// The previous form's partner map, `1 - k`: the vectorizer refuses it.
#id = affine_map<(d0, d1) -> (d0, d1)>
#partner = affine_map<(d0, d1) -> (-d0 + 1, d1)>
func.func @partner_map(%x: tensor<2x8xf32>, %init: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{Attempted to vectorize, but failed}}
  %r = linalg.generic {indexing_maps = [#id, #partner, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<2x8xf32>, tensor<2x8xf32>) outs(%init : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}
