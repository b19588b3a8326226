// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// A tile of GQA queries [B, Hkv, G, S, D] = [1, 1, 2, ?, 16] with token dims
// (0, 3), as rope-fuse-into-attention makes them: the G heads precede the
// sequence dim, so the op takes the tiled form, whose tile slices keep full
// rank (1x1x2x?x16): nothing for canonicalization to recast (a per-token
// slice rank-reduced the canonical way, 2x1x16, once had to be chosen so
// that it did not cast between 1x2x16 and 2x1x16, which crashed).
// CHECK-LABEL: func.func @unit_head_dims(
//       CHECK:   scf.forall (%[[S0:.*]]) = (0) to (%{{.*}}) step (32)
//       CHECK:     %[[N:.*]] = arith.minsi
//       CHECK:     tensor.extract_slice {{.*}}[0, 0, 0, %[[S0]], 0] [1, 1, 2, %[[N]], 16] [1, 1, 1, 1, 1] : tensor<1x1x2x?x16xf32> to tensor<1x1x2x?x16xf32>
//       CHECK:     tensor.parallel_insert_slice {{.*}} : tensor<1x1x2x?x16xf32> into tensor<1x1x2x?x16xf32>
func.func @unit_head_dims(%x: tensor<1x1x2x?x16xf32>, %o: tensor<1xi64>, %n: index) -> tensor<1x1x2x?x16xf32> {
  %e = tensor.empty(%n) : tensor<1x1x2x?x16xf32>
  %y = rope.apply ins(%x : tensor<1x1x2x?x16xf32>) offset(%o : tensor<1xi64>) outs(%e : tensor<1x1x2x?x16xf32>) {rotary_dim = 8 : i64, token_dims = array<i64: 0, 3>} -> tensor<1x1x2x?x16xf32>
  return %y : tensor<1x1x2x?x16xf32>
}

// -----

// Only head dims of static size 1 before the sequence dim ([B, 1, S, 2, D],
// token dims (0, 2)): a token's rows are contiguous, so the per-token form
// stays (forall over every token, no table); its slice is upstream's
// canonical rank reduction (the first unit dims go).
// CHECK-LABEL: func.func @unit_head_dim_outer(
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
//   CHECK-NOT:     tensor.empty
//       CHECK:     tensor.extract_slice {{.*}} [1, 1, 1, 2, 16] [1, 1, 1, 1, 1] : tensor<?x1x?x2x16xf32> to tensor<1x2x16xf32>
//       CHECK:     tensor.parallel_insert_slice {{.*}} : tensor<1x2x16xf32> into tensor<?x1x?x2x16xf32>
func.func @unit_head_dim_outer(%x: tensor<?x1x?x2x16xf32>, %o: tensor<?xi64>) -> tensor<?x1x?x2x16xf32> {
  %y = rope.apply ins(%x : tensor<?x1x?x2x16xf32>) offset(%o : tensor<?xi64>) outs(%x : tensor<?x1x?x2x16xf32>) {token_dims = array<i64: 0, 2>} -> tensor<?x1x?x2x16xf32>
  return %y : tensor<?x1x?x2x16xf32>
}

// -----

// Decode with a static sequence of 1 ([B, H, 1, D], token dims (0, 2)): the
// heads precede the sequence dim, but a token's rows are contiguous, so the
// per-token form stays (canonicalization drops the forall's unit dim).
// CHECK-LABEL: func.func @static_single_token(
//       CHECK:   scf.forall (%{{.*}}) in (%{{.*}})
//   CHECK-NOT:     tensor.empty
//       CHECK:     tensor.extract_slice {{.*}} [1, 32, 1, 64] [1, 1, 1, 1] : tensor<?x32x1x64xf32> to tensor<32x64xf32>
func.func @static_single_token(%x: tensor<?x32x1x64xf32>, %p: tensor<?x1xi64>) -> tensor<?x32x1x64xf32> {
  %y = rope.apply ins(%x : tensor<?x32x1x64xf32>) positions(%p : tensor<?x1xi64>) outs(%x : tensor<?x32x1x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<?x32x1x64xf32>
  return %y : tensor<?x32x1x64xf32>
}
