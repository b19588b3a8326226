// RUN: rope-opt %s --rope-tile-attention --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// rope-tile-attention first folds a copy that permutes the attention's
// result into the attention's output map (through the reshapes between):
// the tiles write the permuted layout, and no copy of the output is left.

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// Hugging Face's GQA prefill: [Hkv, G, S, D] merged to [1, H, S, D] and
// transposed to [1, S, H, D].
// CHECK-LABEL: func.func @hf_prefill(
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<64x2x4x32xf32>
//       CHECK:   %[[R:.*]] = scf.forall {{.*}} shared_outs(%{{.*}} = %[[E]]) -> (tensor<64x2x4x32xf32>)
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2], [3]] : tensor<64x2x4x32xf32> into tensor<64x8x32xf32>
//       CHECK:   %[[X:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 64, 8, 32] : tensor<64x8x32xf32> into tensor<1x64x8x32xf32>
//       CHECK:   return %[[X]]
func.func @hf_prefill(%q: tensor<2x4x64x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x32xf32>) -> tensor<1x64x8x32xf32> {
  %o = tensor.empty() : tensor<2x4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x4x64x32xf32>, tensor<2x64x32xf32>, tensor<2x64x32xf32>) outs(%o : tensor<2x4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 2} -> tensor<2x4x64x32xf32>
  %c = tensor.collapse_shape %r [[0, 1], [2], [3]] : tensor<2x4x64x32xf32> into tensor<8x64x32xf32>
  %x = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [1, 8, 64, 32] : tensor<8x64x32xf32> into tensor<1x8x64x32xf32>
  %e = tensor.empty() : tensor<1x64x8x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x64x32xf32>) outs(%e : tensor<1x64x8x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x64x8x32xf32>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>
#in = affine_map<(a, b, c) -> (b, a, c)>
#id = affine_map<(a, b, c) -> (a, b, c)>

// The same permutation as a linalg.generic that only moves elements.
// CHECK-LABEL: func.func @generic_copy(
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.forall {{.*}} -> (tensor<64x4x32xf32>)
func.func @generic_copy(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> tensor<64x4x32xf32> {
  %o = tensor.empty() : tensor<4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) outs(%o : tensor<4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 1} -> tensor<4x64x32xf32>
  %e = tensor.empty() : tensor<64x4x32xf32>
  %t = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<4x64x32xf32>) outs(%e : tensor<64x4x32xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<64x4x32xf32>
  return %t : tensor<64x4x32xf32>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>

// A unit batch dim added by the reshape: the permuted result is expanded
// to it.
// CHECK-LABEL: func.func @unit_dim(
//       CHECK:   %[[R:.*]] = scf.forall {{.*}} -> (tensor<64x4x32xf32>)
//       CHECK:   %[[X:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 64, 4, 32] : tensor<64x4x32xf32> into tensor<1x64x4x32xf32>
//       CHECK:   return %[[X]]
func.func @unit_dim(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> tensor<1x64x4x32xf32> {
  %o = tensor.empty() : tensor<4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) outs(%o : tensor<4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 1} -> tensor<4x64x32xf32>
  %x = tensor.expand_shape %r [[0, 1], [2], [3]] output_shape [1, 4, 64, 32] : tensor<4x64x32xf32> into tensor<1x4x64x32xf32>
  %e = tensor.empty() : tensor<1x64x4x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x4x64x32xf32>) outs(%e : tensor<1x64x4x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x64x4x32xf32>
}

// -----

#q = affine_map<(h, m, k1, k2, n) -> (h, m, k1)>
#k = affine_map<(h, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, m, k1, k2, n) -> (h, m, n)>

// Left alone: the attention's own layout is also returned, and a reshape
// that splits head_dim (an attention dim) before the permutation.
// CHECK-LABEL: func.func @used_twice(
//       CHECK:   scf.forall {{.*}} -> (tensor<4x64x32xf32>)
//       CHECK:   linalg.transpose
// CHECK-LABEL: func.func @split_head_dim(
//       CHECK:   scf.forall {{.*}} -> (tensor<4x64x32xf32>)
//       CHECK:   linalg.transpose
func.func @used_twice(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> (tensor<64x4x32xf32>, tensor<4x64x32xf32>) {
  %o = tensor.empty() : tensor<4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) outs(%o : tensor<4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 1} -> tensor<4x64x32xf32>
  %e = tensor.empty() : tensor<64x4x32xf32>
  %t = linalg.transpose ins(%r : tensor<4x64x32xf32>) outs(%e : tensor<64x4x32xf32>) permutation = [1, 0, 2]
  return %t, %r : tensor<64x4x32xf32>, tensor<4x64x32xf32>
}
func.func @split_head_dim(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x2x64x16xf32> {
  %o = tensor.empty() : tensor<4x64x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>) outs(%o : tensor<4x64x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 1} -> tensor<4x64x32xf32>
  %x = tensor.expand_shape %r [[0], [1], [2, 3]] output_shape [4, 64, 2, 16] : tensor<4x64x32xf32> into tensor<4x64x2x16xf32>
  %e = tensor.empty() : tensor<4x2x64x16xf32>
  %t = linalg.transpose ins(%x : tensor<4x64x2x16xf32>) outs(%e : tensor<4x2x64x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<4x2x64x16xf32>
}
