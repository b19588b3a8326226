// RUN: rope-opt %s --rope-decompose-in-forall -split-input-file | FileCheck %s --enable-var-scope

// Inside an scf.forall (a loop rope-map-forall-to-gpu will map to threads)
// the rotation tile and the online-softmax step become linalg, computed by
// the iteration itself; the rope.apply outside any forall is left for
// convert-rope-to-gpu (a kernel of its own).

// CHECK-LABEL: func.func @rows(
//       CHECK:   %[[K:.*]] = rope.apply ins(%{{.*}} : tensor<2x8x16xf32>)
//       CHECK:   scf.forall
//   CHECK-NOT:     rope.
//       CHECK:     linalg.generic
//       CHECK:       math.cos
//       CHECK:     linalg.generic
//   CHECK-NOT:     rope.
//       CHECK:     scf.forall.in_parallel
#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
func.func @rows(%q: tensor<2x4x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %ek = tensor.empty() : tensor<2x8x16xf32>
  %kr = rope.apply ins(%k : tensor<2x8x16xf32>) outs(%ek : tensor<2x8x16xf32>) {token_dims = array<i64: 0, 1>} -> tensor<2x8x16xf32>
  %init = tensor.empty() : tensor<2x4x16xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %r = scf.forall (%b, %m) in (2, 4) shared_outs(%o = %init) -> (tensor<2x4x16xf32>) {
    %qs = tensor.extract_slice %q[%b, %m, 0] [1, 1, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<1x1x16xf32>
    %eq = tensor.empty() : tensor<1x1x16xf32>
    %off = arith.index_cast %m : index to i64
    %qr = rope.apply ins(%qs : tensor<1x1x16xf32>) offset(%off : i64) outs(%eq : tensor<1x1x16xf32>) {token_dims = array<i64: 0, 1>} -> tensor<1x1x16xf32>
    %ks = tensor.extract_slice %kr[%b, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<2x8x16xf32> to tensor<1x8x16xf32>
    %vs = tensor.extract_slice %v[%b, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<2x8x16xf32> to tensor<1x8x16xf32>
    %acc0 = linalg.fill ins(%zero : f32) outs(%eq : tensor<1x1x16xf32>) -> tensor<1x1x16xf32>
    %er = tensor.empty() : tensor<1x1xf32>
    %max0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x1xf32>) -> tensor<1x1xf32>
    %sum0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x1xf32>) -> tensor<1x1xf32>
    %acc, %max, %sum = rope.online_attention ins(%qr, %ks, %vs : tensor<1x1x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) outs(%acc0, %max0, %sum0 : tensor<1x1x16xf32>, tensor<1x1xf32>, tensor<1x1xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.25 : f64} -> tensor<1x1x16xf32>, tensor<1x1xf32>, tensor<1x1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %acc into %o[%b, %m, 0] [1, 1, 16] [1, 1, 1] : tensor<1x1x16xf32> into tensor<2x4x16xf32>
    }
  }
  return %r : tensor<2x4x16xf32>
}

// -----

// Nothing inside a forall: nothing changes.
// CHECK-LABEL: func.func @standalone(
//       CHECK:   rope.apply
//   CHECK-NOT:   linalg.generic
func.func @standalone(%x: tensor<4x2x16xf32>, %init: tensor<4x2x16xf32>) -> tensor<4x2x16xf32> {
  %y = rope.apply ins(%x : tensor<4x2x16xf32>) outs(%init : tensor<4x2x16xf32>) -> tensor<4x2x16xf32>
  return %y : tensor<4x2x16xf32>
}
