// RUN: rope-opt %s --convert-rope-to-linalg --canonicalize | FileCheck %s

// A rotation tile holding one batch row (a unit token dim) and several
// heads, its key extent dynamic until canonicalization folds it: each pair
// member is read by a slice that keeps the member dim and a collapse that
// drops it. A rank-reducing slice would be ambiguous between the unit dims,
// and the canonicalizer, once the extent folds to 21, re-infers it dropping
// the leading one, which the generic's maps do not read (a verifier error
// in decode tiles of rope-tile-attention with heads kept whole).
// CHECK-LABEL: func.func @unit_batch_row_heads(
//       CHECK:   %[[M:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 21, 2, 1, 4] [1, 1, 1, 1, 1] : tensor<1x21x2x2x4xf32> to tensor<1x21x2x1x4xf32>
//       CHECK:   tensor.collapse_shape %[[M]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x21x2x1x4xf32> into tensor<1x21x2x4xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     tensor<1x21x2x4xf32>, tensor<1x21x2x4xf32>, tensor<21x4xf32>, tensor<21x4xf32>
func.func @unit_batch_row_heads(%x: tensor<1x21x2x8xf32>, %o: i64) -> tensor<1x21x2x8xf32> {
  %d = tensor.cast %x : tensor<1x21x2x8xf32> to tensor<1x?x2x8xf32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %d, %c1 : tensor<1x?x2x8xf32>
  %e = tensor.empty(%n) : tensor<1x?x2x8xf32>
  %r = rope.apply ins(%d : tensor<1x?x2x8xf32>) offset(%o : i64) outs(%e : tensor<1x?x2x8xf32>) {token_dims = array<i64: 0, 1>} -> tensor<1x?x2x8xf32>
  %s = tensor.cast %r : tensor<1x?x2x8xf32> to tensor<1x21x2x8xf32>
  return %s : tensor<1x21x2x8xf32>
}
