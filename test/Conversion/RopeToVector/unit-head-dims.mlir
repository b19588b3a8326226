// RUN: rope-opt %s --convert-rope-to-vector --canonicalize | FileCheck %s --enable-var-scope

// A tile of GQA queries [B, Hkv, G, S, D] = [1, 1, 2, ?, 16] with token dims
// (0, 3), as rope-fuse-into-attention makes them: the per-token slice drops
// two of the four unit dims. Its type is upstream's canonical rank reduction
// (2x1x16: the first unit dims go), so canonicalization keeps it instead of
// casting between 1x2x16 and 2x1x16 (which crashed).
// CHECK-LABEL: func.func @unit_head_dims(
//       CHECK:   scf.forall
//       CHECK:     tensor.extract_slice {{.*}} [1, 1, 2, 1, 16] [1, 1, 1, 1, 1] : tensor<1x1x2x?x16xf32> to tensor<2x1x16xf32>
//       CHECK:     tensor.parallel_insert_slice {{.*}} : tensor<2x1x16xf32> into tensor<1x1x2x?x16xf32>
func.func @unit_head_dims(%x: tensor<1x1x2x?x16xf32>, %o: tensor<1xi64>, %n: index) -> tensor<1x1x2x?x16xf32> {
  %e = tensor.empty(%n) : tensor<1x1x2x?x16xf32>
  %y = rope.apply ins(%x : tensor<1x1x2x?x16xf32>) offset(%o : tensor<1xi64>) outs(%e : tensor<1x1x2x?x16xf32>) {rotary_dim = 8 : i64, token_dims = array<i64: 0, 3>} -> tensor<1x1x2x?x16xf32>
  return %y : tensor<1x1x2x?x16xf32>
}
