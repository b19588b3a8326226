// RUN: rope-opt %s --rope-tile-attention --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// rope-tile-attention first folds a generic that converts the attention's
// f32 result to another float type (torch-mlir's bf16 P·V: a contraction
// into f32, then truncf) into the attention's output type, through the
// reshapes between them: the tiles write bf16, and no f32 output is left.

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>
#id = affine_map<(a, b, c) -> (a, b, c)>

// bf16 GQA, the f32 result merged to [H, S, D] and truncated.
// CHECK-LABEL: func.func @truncf_through_reshape(
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<2x4x64x32xbf16>
//       CHECK:   %[[R:.*]] = scf.forall {{.*}} shared_outs(%{{.*}} = %[[E]]) -> (tensor<2x4x64x32xbf16>)
//       CHECK:     arith.divf
//  CHECK-NEXT:     arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x64x32xbf16> into tensor<8x64x32xbf16>
//  CHECK-NEXT:   return %[[C]]
func.func @truncf_through_reshape(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x64x32xbf16>, %v: tensor<2x64x32xbf16>) -> tensor<8x64x32xbf16> {
  %o = tensor.empty() : tensor<2x4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x4x64x32xbf16>, tensor<2x64x32xbf16>, tensor<2x64x32xbf16>) outs(%o : tensor<2x4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 2} -> tensor<2x4x64x32xf32>
  %c = tensor.collapse_shape %r [[0, 1], [2], [3]] : tensor<2x4x64x32xf32> into tensor<8x64x32xf32>
  %e = tensor.empty() : tensor<8x64x32xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<8x64x32xf32>) outs(%e : tensor<8x64x32xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<8x64x32xbf16>
  return %t : tensor<8x64x32xbf16>
}

// -----

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>

// Then a transpose after it folds into the output map as well.
// CHECK-LABEL: func.func @truncf_then_transpose(
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<64x2x4x32xbf16>
//       CHECK:   scf.forall {{.*}} shared_outs(%{{.*}} = %[[E]]) -> (tensor<64x2x4x32xbf16>)
//   CHECK-NOT:   linalg.transpose
func.func @truncf_then_transpose(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x64x32xbf16>, %v: tensor<2x64x32xbf16>) -> tensor<64x2x4x32xbf16> {
  %o = tensor.empty() : tensor<2x4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x4x64x32xbf16>, tensor<2x64x32xbf16>, tensor<2x64x32xbf16>) outs(%o : tensor<2x4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 2} -> tensor<2x4x64x32xf32>
  %e = tensor.empty() : tensor<2x4x64x32xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<2x4x64x32xf32>) outs(%e : tensor<2x4x64x32xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x4x64x32xbf16>
  %pe = tensor.empty() : tensor<64x2x4x32xbf16>
  %p = linalg.transpose ins(%t : tensor<2x4x64x32xbf16>) outs(%pe : tensor<64x2x4x32xbf16>) permutation = [2, 0, 1, 3]
  return %p : tensor<64x2x4x32xbf16>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>
#id = affine_map<(a, b, c) -> (a, b, c)>

// Left alone: the f32 result is also returned (folding would compute the
// attention twice).
// CHECK-LABEL: func.func @second_use(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x64x32xf32>)
//       CHECK:   linalg.generic
//       CHECK:   arith.truncf {{.*}} : f32 to bf16
func.func @second_use(%q: tensor<2x64x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x32xf32>) -> (tensor<2x64x32xbf16>, tensor<2x64x32xf32>) {
  %o = tensor.empty() : tensor<2x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x64x32xf32>, tensor<2x64x32xf32>, tensor<2x64x32xf32>) outs(%o : tensor<2x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<2x64x32xf32>
  %e = tensor.empty() : tensor<2x64x32xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x64x32xf32>) outs(%e : tensor<2x64x32xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x64x32xbf16>
  return %t, %r : tensor<2x64x32xbf16>, tensor<2x64x32xf32>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>
#id = affine_map<(a, b, c) -> (a, b, c)>

// Left alone: f64 operands accumulate in f64, and the f32 output is already
// a rounding of the quotient; truncating that to bf16 rounds twice, which
// the op writing bf16 would not.
// CHECK-LABEL: func.func @not_the_accumulator_type(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x64x32xf32>)
//       CHECK:   linalg.generic
//       CHECK:   arith.truncf {{.*}} : f32 to bf16
func.func @not_the_accumulator_type(%q: tensor<2x64x32xf64>, %k: tensor<2x64x32xf64>, %v: tensor<2x64x32xf64>) -> tensor<2x64x32xbf16> {
  %o = tensor.empty() : tensor<2x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x64x32xf64>, tensor<2x64x32xf64>, tensor<2x64x32xf64>) outs(%o : tensor<2x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<2x64x32xf32>
  %e = tensor.empty() : tensor<2x64x32xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x64x32xf32>) outs(%e : tensor<2x64x32xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x64x32xbf16>
  return %t : tensor<2x64x32xbf16>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>
#id = affine_map<(a, b, c) -> (a, b, c)>

// Left alone: a truncf with its own rounding mode is not the op's
// conversion (round to nearest even).
// CHECK-LABEL: func.func @rounding_mode(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x64x32xf32>)
//       CHECK:   arith.truncf {{.*}} toward_zero
func.func @rounding_mode(%q: tensor<2x64x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x32xf32>) -> tensor<2x64x32xbf16> {
  %o = tensor.empty() : tensor<2x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x64x32xf32>, tensor<2x64x32xf32>, tensor<2x64x32xf32>) outs(%o : tensor<2x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<2x64x32xf32>
  %e = tensor.empty() : tensor<2x64x32xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x64x32xf32>) outs(%e : tensor<2x64x32xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x toward_zero : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x64x32xbf16>
  return %t : tensor<2x64x32xbf16>
}
