// RUN: rope-opt %s --test-rope-fuse-into-attention-patterns -split-input-file | FileCheck %s --check-prefixes=COMMON,SCORES --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-attention="fuse-key=always" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=COMMON,CHECK --enable-var-scope

// populateRopeFuseIntoAttentionPatterns under the default greedy driver,
// which revisits every op until nothing changes: the tiled contraction is
// again a contraction fed by rope.apply (the tile rotations), and is not
// tiled again (the test pass fails when the driver does not converge), and
// no marker is left. The patterns fuse scores only; the pass first raises
// whole attention to rope.attention and tiles that.

// Scores: a parallel loop over query tiles (32), a key loop (64) inside,
// each rotation once per tile.
// COMMON-LABEL: func.func @scores(
//   COMMON-NOT:   rope.attention_tile
//       COMMON:   scf.forall (%[[M:[a-z0-9]+]]) = (0) to (128) step (32)
//       COMMON:     rope.apply {{.*}} -> tensor<32x64xf32>
//       COMMON:     scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64
//       COMMON:       rope.apply {{.*}} -> tensor<64x64xf32>
//       COMMON:       linalg.matmul
//   COMMON-NOT:       scf.for %
//   COMMON-NOT:   rope.attention_tile
//       COMMON:   return
func.func @scores(%q: tensor<128x64xf32>, %k: tensor<256x64xf32>, %acc: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %eq = tensor.empty() : tensor<128x64xf32>
  %ek = tensor.empty() : tensor<256x64xf32>
  %qr = rope.apply ins(%q : tensor<128x64xf32>) outs(%eq : tensor<128x64xf32>) -> tensor<128x64xf32>
  %kr = rope.apply ins(%k : tensor<256x64xf32>) outs(%ek : tensor<256x64xf32>) -> tensor<256x64xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%qr, %kr : tensor<128x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %s : tensor<128x256xf32>
}

// -----

// Two attention layers, the second's queries from the first's output: the
// pass raises each to rope.attention and tiles it (query loop, key loop
// carrying the online softmax; layer 1's K rotated per key tile with
// fuse-key=always, layer 2's Q per query tile).
// CHECK-LABEL: func.func @two_layers(
//   CHECK-NOT:   linalg.softmax
//       CHECK:   %[[O1:.*]] = scf.forall
//       CHECK:     scf.for {{.*}} iter_args(
//       CHECK:       rope.apply {{.*}} -> tensor<64x16xf32>
//   CHECK-NOT:       scf.for %
//       CHECK:       rope.online_attention
//       CHECK:   scf.forall
//       CHECK:     tensor.extract_slice %[[O1]]
//       CHECK:     rope.apply {{.*}} -> tensor<32x16xf32>
//       CHECK:     scf.for {{.*}} iter_args(
//   CHECK-NOT:       scf.for %
//       CHECK:       rope.online_attention
//   CHECK-NOT:   linalg.softmax
//   CHECK-NOT:   rope.attention_tile
//       CHECK:   return
// The patterns alone (scores only): each layer's scores are tiled with the
// rotation inside (K's tile in the key loop, the second layer's Q tile in
// the query loop), and the softmax and P·V stay whole.
// SCORES-LABEL: func.func @two_layers(
//   SCORES-NOT:   rope.apply
//       SCORES:   scf.forall
//       SCORES:     scf.for
//       SCORES:       %[[KR:.*]] = rope.apply {{.*}} -> tensor<64x16xf32>
//       SCORES:       linalg.matmul {{.*}} ins(%{{.*}}, %[[KR]] : tensor<32x16xf32>, tensor<64x16xf32>)
//       SCORES:   linalg.softmax
//       SCORES:   linalg.matmul
//   SCORES-NOT:   rope.apply
//       SCORES:   scf.forall
//       SCORES:     %[[QR:.*]] = rope.apply {{.*}} -> tensor<32x16xf32>
//       SCORES:     scf.for
//       SCORES:       linalg.matmul {{.*}} ins(%[[QR]], %{{.*}} : tensor<32x16xf32>, tensor<64x16xf32>)
//       SCORES:   linalg.softmax
//   SCORES-NOT:   rope.attention_tile
func.func @two_layers(%x: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x16xf32>
  %se = tensor.empty() : tensor<128x128xf32>
  %kr1 = rope.apply ins(%k : tensor<128x16xf32>) outs(%e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%se : tensor<128x128xf32>) -> tensor<128x128xf32>
  %s1 = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%x, %kr1 : tensor<128x16xf32>, tensor<128x16xf32>) outs(%acc1 : tensor<128x128xf32>) -> tensor<128x128xf32>
  %p1 = linalg.softmax dimension(1) ins(%s1 : tensor<128x128xf32>) outs(%se : tensor<128x128xf32>) -> tensor<128x128xf32>
  %oacc1 = linalg.fill ins(%zero : f32) outs(%e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %o1 = linalg.matmul ins(%p1, %v : tensor<128x128xf32>, tensor<128x16xf32>) outs(%oacc1 : tensor<128x16xf32>) -> tensor<128x16xf32>
  %qr2 = rope.apply ins(%o1 : tensor<128x16xf32>) outs(%e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%se : tensor<128x128xf32>) -> tensor<128x128xf32>
  %s2 = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%qr2, %k : tensor<128x16xf32>, tensor<128x16xf32>) outs(%acc2 : tensor<128x128xf32>) -> tensor<128x128xf32>
  %p2 = linalg.softmax dimension(1) ins(%s2 : tensor<128x128xf32>) outs(%se : tensor<128x128xf32>) -> tensor<128x128xf32>
  %oacc2 = linalg.fill ins(%zero : f32) outs(%e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %o2 = linalg.matmul ins(%p2, %v : tensor<128x128xf32>, tensor<128x16xf32>) outs(%oacc2 : tensor<128x16xf32>) -> tensor<128x16xf32>
  return %o2 : tensor<128x16xf32>
}
