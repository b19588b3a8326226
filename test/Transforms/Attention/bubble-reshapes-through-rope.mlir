// Decode key tiles of 64 (not decode-key-tile-size's default 256, which
// would be the whole 256-key cache): the rotations are fused per key tile.
// RUN: rope-opt %s --rope-tile-attention="decode-key-tile-size=64" --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// rope-tile-attention first moves reshapes of a rotation's result above the
// rotation, so that the rotation produces the view the attention reads and
// its tiles can be fused into the attention's loops.

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// Hugging Face's decode over a cache of un-rotated keys: K rotated as
// [1, Hkv, L, D] at positions 0..L-1, read by the attention as [Hkv, L, D].
// The collapse of the unit batch dim into the heads goes above the
// rotation, and each key tile is rotated in the key loop: no rotated copy
// of the whole cache is written.
// CHECK-LABEL: func.func @decode_cache_keys(
//   CHECK-NOT:   rope.apply
//       CHECK:   scf.forall
//       CHECK:     scf.for %[[N:[a-z0-9]+]] =
//       CHECK:       %[[KT:.*]] = rope.apply ins(%{{.*}} : tensor<1x64x32xf32>) offset(%{{.*}} : i64)
//  CHECK-SAME:         token_dims = array<i64: 1>
//       CHECK:       rope.online_attention ins(%{{.*}}, %[[KT]], %{{.*}} :
func.func @decode_cache_keys(%q: tensor<2x4x1x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<2x256x32xf32>) -> tensor<2x4x1x32xf32> {
  %ke = tensor.empty() : tensor<1x2x256x32xf32>
  %kr = rope.apply ins(%k : tensor<1x2x256x32xf32>) outs(%ke : tensor<1x2x256x32xf32>) {token_dims = array<i64: 2>} -> tensor<1x2x256x32xf32>
  %kc = tensor.collapse_shape %kr [[0, 1], [2], [3]] : tensor<1x2x256x32xf32> into tensor<2x256x32xf32>
  %o = tensor.empty() : tensor<2x4x1x32xf32>
  %r = rope.attention ins(%q, %kc, %v : tensor<2x4x1x32xf32>, tensor<2x256x32xf32>, tensor<2x256x32xf32>) outs(%o : tensor<2x4x1x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 2} -> tensor<2x4x1x32xf32>
  return %r : tensor<2x4x1x32xf32>
}

// -----

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// With positions: they index the token dim, which keeps its size.
// CHECK-LABEL: func.func @token_dim_kept(
//   CHECK-NOT:   rope.apply
//       CHECK:   scf.forall
//       CHECK:     scf.for
//       CHECK:       rope.apply ins(%{{.*}} : tensor<1x64x32xf32>) positions(%{{.*}} : tensor<64xi64>)
//  CHECK-SAME:         token_dims = array<i64: 1>
func.func @token_dim_kept(%q: tensor<2x4x1x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<2x256x32xf32>, %pos: tensor<256xi64>) -> tensor<2x4x1x32xf32> {
  %ke = tensor.empty() : tensor<1x2x256x32xf32>
  %kr = rope.apply ins(%k : tensor<1x2x256x32xf32>) positions(%pos : tensor<256xi64>) outs(%ke : tensor<1x2x256x32xf32>) {token_dims = array<i64: 2>} -> tensor<1x2x256x32xf32>
  %kc = tensor.collapse_shape %kr [[0, 1], [2], [3]] : tensor<1x2x256x32xf32> into tensor<2x256x32xf32>
  %o = tensor.empty() : tensor<2x4x1x32xf32>
  %r = rope.attention ins(%q, %kc, %v : tensor<2x4x1x32xf32>, tensor<2x256x32xf32>, tensor<2x256x32xf32>) outs(%o : tensor<2x4x1x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 2} -> tensor<2x4x1x32xf32>
  return %r : tensor<2x4x1x32xf32>
}

// -----

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// A token dim (the batch rows, each with its own positions) merged with a
// unit head dim keeps its size: the positions index the same rows.
// CHECK-LABEL: func.func @token_dim_with_unit_head(
//   CHECK-NOT:   rope.apply
//       CHECK:   scf.forall
//       CHECK:     scf.for
//       CHECK:       rope.apply ins(%{{.*}} : tensor<1x64x32xf32>) positions(%{{.*}} : tensor<1x64xi64>)
//  CHECK-SAME:         token_dims = array<i64: 0, 1>
func.func @token_dim_with_unit_head(%q: tensor<2x4x1x32xf32>, %k: tensor<2x1x256x32xf32>, %v: tensor<2x256x32xf32>, %pos: tensor<2x256xi64>) -> tensor<2x4x1x32xf32> {
  %ke = tensor.empty() : tensor<2x1x256x32xf32>
  %kr = rope.apply ins(%k : tensor<2x1x256x32xf32>) positions(%pos : tensor<2x256xi64>) outs(%ke : tensor<2x1x256x32xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x1x256x32xf32>
  %kc = tensor.collapse_shape %kr [[0, 1], [2], [3]] : tensor<2x1x256x32xf32> into tensor<2x256x32xf32>
  %o = tensor.empty() : tensor<2x4x1x32xf32>
  %r = rope.attention ins(%q, %kc, %v : tensor<2x4x1x32xf32>, tensor<2x256x32xf32>, tensor<2x256x32xf32>) outs(%o : tensor<2x4x1x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 2} -> tensor<2x4x1x32xf32>
  return %r : tensor<2x4x1x32xf32>
}

// -----

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// Left alone: the collapse merges a token dim (2 batch rows, each with its
// own positions) with 2 heads, so a row of the view is no longer one row
// of positions; the rotation stays whole, ahead of the loops.
// CHECK-LABEL: func.func @token_dim_merged_with_heads(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x2x256x32xf32>) positions(%{{.*}} : tensor<2x256xi64>)
//       CHECK:   tensor.collapse_shape
//       CHECK:   scf.forall
//   CHECK-NOT:     rope.apply
//       CHECK:     rope.online_attention
func.func @token_dim_merged_with_heads(%q: tensor<4x4x1x32xf32>, %k: tensor<2x2x256x32xf32>, %v: tensor<4x256x32xf32>, %pos: tensor<2x256xi64>) -> tensor<4x4x1x32xf32> {
  %ke = tensor.empty() : tensor<2x2x256x32xf32>
  %kr = rope.apply ins(%k : tensor<2x2x256x32xf32>) positions(%pos : tensor<2x256xi64>) outs(%ke : tensor<2x2x256x32xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x2x256x32xf32>
  %kc = tensor.collapse_shape %kr [[0, 1], [2], [3]] : tensor<2x2x256x32xf32> into tensor<4x256x32xf32>
  %o = tensor.empty() : tensor<4x4x1x32xf32>
  %r = rope.attention ins(%q, %kc, %v : tensor<4x4x1x32xf32>, tensor<4x256x32xf32>, tensor<4x256x32xf32>) outs(%o : tensor<4x4x1x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 2} -> tensor<4x4x1x32xf32>
  return %r : tensor<4x4x1x32xf32>
}

// -----

#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, n)>

// A cache of dynamic length: the moved rotation's destination is sized from
// the collapsed input (the collapse's own result is replaced).
// CHECK-LABEL: func.func @dynamic_cache(
//   CHECK-NOT:   rope.apply ins(%{{.*}} : tensor<1x2x?x32xf32>)
//       CHECK:   scf.for
//       CHECK:     rope.apply ins(%{{.*}} : tensor<1x?x32xf32>) offset(
func.func @dynamic_cache(%q: tensor<2x4x1x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<2x?x32xf32>) -> tensor<2x4x1x32xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %k, %c2 : tensor<1x2x?x32xf32>
  %ke = tensor.empty(%n) : tensor<1x2x?x32xf32>
  %kr = rope.apply ins(%k : tensor<1x2x?x32xf32>) outs(%ke : tensor<1x2x?x32xf32>) {token_dims = array<i64: 2>} -> tensor<1x2x?x32xf32>
  %kc = tensor.collapse_shape %kr [[0, 1], [2], [3]] : tensor<1x2x?x32xf32> into tensor<2x?x32xf32>
  %o = tensor.empty() : tensor<2x4x1x32xf32>
  %r = rope.attention ins(%q, %kc, %v : tensor<2x4x1x32xf32>, tensor<2x?x32xf32>, tensor<2x?x32xf32>) outs(%o : tensor<2x4x1x32xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 2} -> tensor<2x4x1x32xf32>
  return %r : tensor<2x4x1x32xf32>
}
