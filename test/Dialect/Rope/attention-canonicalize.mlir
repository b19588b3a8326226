// RUN: rope-opt %s --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// tensor.cast to a less static type folds into the attention ops (the
// casts tiling and affine.min folding leave behind), with a cast back for a
// result whose destination became more static. Upstream's generic fold for
// destination-style ops crashed on these ops (their score region is
// optional: MLIR 22's clone reads the first block of an empty region).

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>

// CHECK-LABEL: func.func @inputs(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<1x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x6x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x6x8xf32>
//   CHECK-NOT:   tensor.cast
//       CHECK:   rope.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>)
func.func @inputs(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>, %v: tensor<1x6x8xf32>, %o: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %kc = tensor.cast %k : tensor<1x6x8xf32> to tensor<1x?x8xf32>
  %vc = tensor.cast %v : tensor<1x6x8xf32> to tensor<1x?x8xf32>
  %r = rope.attention ins(%q, %kc, %vc : tensor<1x4x8xf32>, tensor<1x?x8xf32>, tensor<1x?x8xf32>) outs(%o : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %r : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>

// Destinations too (the results become static; cast back for the users),
// and the score region moves with the op.
// CHECK-LABEL: func.func @destinations(
//       CHECK:   %[[ACC:.*]], %[[MAX:.*]], %[[SUM:.*]] = rope.online_attention ins({{.*}} : tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>) outs({{.*}} : tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
//       CHECK:     math.tanh
//       CHECK:     rope.yield
//       CHECK:   -> tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<1x4xf32>
//       CHECK:   %[[C:.*]] = tensor.cast %[[ACC]] : tensor<1x4x8xf32> to tensor<1x?x8xf32>
//       CHECK:   return %[[C]], %[[MAX]], %[[SUM]]
func.func @destinations(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>, %v: tensor<1x6x8xf32>, %acc: tensor<1x4x8xf32>, %max: tensor<1x4xf32>, %sum: tensor<1x4xf32>) -> (tensor<1x?x8xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %qc = tensor.cast %q : tensor<1x4x8xf32> to tensor<1x?x8xf32>
  %ac = tensor.cast %acc : tensor<1x4x8xf32> to tensor<1x?x8xf32>
  %mc = tensor.cast %max : tensor<1x4xf32> to tensor<1x?xf32>
  %r:3 = rope.online_attention ins(%qc, %k, %v : tensor<1x?x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>) outs(%ac, %mc, %sum : tensor<1x?x8xf32>, tensor<1x?xf32>, tensor<1x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f32, %b: index, %m: index, %k2: index):
    %t = math.tanh %s : f32
    rope.yield %t : f32
  } -> tensor<1x?x8xf32>, tensor<1x?xf32>, tensor<1x4xf32>
  %m2 = tensor.cast %r#1 : tensor<1x?xf32> to tensor<1x4xf32>
  return %r#0, %m2, %r#2 : tensor<1x?x8xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
