// RUN: rope-opt %s --rope-fold-unit-dim-copies -split-input-file | FileCheck %s --enable-var-scope

// The query's copy without the batch dim of one: a collapse_shape (a view
// once bufferized), the unit dim joining the next dim's group.
// CHECK-LABEL: func.func @drop_batch(
//  CHECK-SAME:     %[[Q:.*]]: tensor<1x32x64x128xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : tensor<1x32x64x128xf32> into tensor<32x64x128xf32>
//       CHECK:   return %[[C]]
func.func @drop_batch(%q: tensor<1x32x64x128xf32>) -> tensor<32x64x128xf32> {
  %e = tensor.empty() : tensor<32x64x128xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<1x32x64x128xf32>) outs(%e : tensor<32x64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32x64x128xf32>
  return %c : tensor<32x64x128xf32>
}

// -----

// Unit dims in the middle and at the end: the middle one joins the next
// dim's group, the trailing one the last group.
// CHECK-LABEL: func.func @middle_and_trailing(
//       CHECK:   tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<4x1x8x1xf32> into tensor<4x8xf32>
func.func @middle_and_trailing(%x: tensor<4x1x8x1xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x1x8x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Left alone: a transposing copy, a broadcast (a dim the input lacks), a
// payload that computes, a conversion of the element type, and a
// constant index into a dim that is not of extent 1.
// CHECK-LABEL: func.func @left_alone(
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
//   CHECK-NOT:   tensor.collapse_shape
func.func @left_alone(%x: tensor<1x4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<2x4x8xf32>)
    -> (tensor<8x4xf32>, tensor<4x8x3xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>) {
  %t = tensor.empty() : tensor<8x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x4x8xf32>) outs(%t : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %bt = tensor.empty() : tensor<4x8x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%bt : tensor<4x8x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8x3xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %de = tensor.empty() : tensor<4x8xf64>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x4x8xf32>) outs(%de : tensor<4x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %w64 = arith.extf %in : f32 to f64
    linalg.yield %w64 : f64
  } -> tensor<4x8xf64>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  return %a, %b, %c, %d, %f : tensor<8x4xf32>, tensor<4x8x3xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>
}
