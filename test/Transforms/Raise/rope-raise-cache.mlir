// RUN: rope-opt --rope-raise --split-input-file %s | FileCheck %s --enable-var-scope

// rope-raise folds the KV-cache append as frontends write it (a rotation
// inserted into the cache by tensor.insert_slice: JAX's
// lax.dynamic_update_slice after stablehlo -> linalg, a slicing assignment
// through torch-mlir) into one rope.apply with slots writing into the cache
// (RaiseCacheAppend.cpp). The slots are a linalg.generic over the tokens:
// sum over token dims of (insert offset + index) * row-major stride of the
// cache's token dims, from the insert's own offset values. Refused: strided
// inserts, a partial head (or channel) range, a non-rope value, a rotation
// with other uses, rank-reducing inserts (but of a rotation whose unit dims
// were collapsed away, rebuilt on the insert's unreduced view).

// Hugging Face [B, H, S, D] into [B, H, max_len, D] at position %p (token
// dims (0, 2)): slot = b * 4096 + (%p + s).
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @hf_bhsd(
//  CHECK-SAME:     %[[K:[^:]*]]: tensor<2x8x3x64xf32>, %[[POS:[^:]*]]: tensor<2x3xi64>, %[[C:[^:]*]]: tensor<2x8x4096x64xf32>, %[[P:[^:]*]]: index)
//   CHECK-DAG:   %[[M:.*]] = arith.constant 4096 : index
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<2x3xi64>
//       CHECK:   %[[S:.*]] = linalg.generic {indexing_maps = [#[[$ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<2x3xi64>)
//       CHECK:     %[[B:.*]] = linalg.index 0 : index
//       CHECK:     %[[BR:.*]] = arith.muli %[[B]], %[[M]] : index
//       CHECK:     %[[T:.*]] = linalg.index 1 : index
//       CHECK:     %[[PT:.*]] = arith.addi %[[P]], %[[T]] : index
//       CHECK:     %[[LIN:.*]] = arith.addi %[[BR]], %[[PT]] : index
//       CHECK:     %[[L64:.*]] = arith.index_cast %[[LIN]] : index to i64
//       CHECK:     linalg.yield %[[L64]] : i64
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<2x8x3x64xf32>) positions(%[[POS]] : tensor<2x3xi64>) slots(%[[S]] : tensor<2x3xi64>) outs(%[[C]] : tensor<2x8x4096x64xf32>) {token_dims = array<i64: 0, 2>}
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R]]
func.func @hf_bhsd(%k: tensor<2x8x3x64xf32>, %pos: tensor<2x3xi64>, %cache: tensor<2x8x4096x64xf32>, %p: index) -> tensor<2x8x4096x64xf32> {
  %e = tensor.empty() : tensor<2x8x3x64xf32>
  %r = rope.apply ins(%k : tensor<2x8x3x64xf32>) positions(%pos : tensor<2x3xi64>) outs(%e : tensor<2x8x3x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x3x64xf32>
  %c = tensor.insert_slice %r into %cache[0, 0, %p, 0] [2, 8, 3, 64] [1, 1, 1, 1] : tensor<2x8x3x64xf32> into tensor<2x8x4096x64xf32>
  return %c : tensor<2x8x4096x64xf32>
}

// -----

// Contiguous [B, S, H, D] into [B, max_len, H, D], a quantized rotation
// (its quant_scale and i8 destination carried over), QK-norm too.
// CHECK-LABEL: func.func @contiguous_quantized(
//  CHECK-SAME:     %[[K:[^:]*]]: tensor<1x4x8x128xbf16>, %[[W:[^:]*]]: tensor<128xbf16>, %[[Q:[^:]*]]: tensor<8xf32>, %[[C:[^:]*]]: tensor<1x2048x8x128xi8>, %[[P:[^:]*]]: index)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4xi64>)
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<1x4x8x128xbf16>) offset(%[[P]] : index) norm(%[[W]] : tensor<128xbf16>) quant_scale(%[[Q]] : tensor<8xf32>) slots(%[[S]] : tensor<1x4xi64>) outs(%[[C]] : tensor<1x2048x8x128xi8>) {freqs = #rope.default<base = 5.000000e+05>, norm_epsilon = 9.9999999999999995E-7 : f64}
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R]]
func.func @contiguous_quantized(%k: tensor<1x4x8x128xbf16>, %w: tensor<128xbf16>, %q: tensor<8xf32>, %cache: tensor<1x2048x8x128xi8>, %p: index) -> tensor<1x2048x8x128xi8> {
  %e = tensor.empty() : tensor<1x4x8x128xi8>
  %r = rope.apply ins(%k : tensor<1x4x8x128xbf16>) offset(%p : index) norm(%w : tensor<128xbf16>) quant_scale(%q : tensor<8xf32>) outs(%e : tensor<1x4x8x128xi8>) {freqs = #rope.default<base = 500000.0>, norm_epsilon = 1.0e-06} -> tensor<1x4x8x128xi8>
  %c = tensor.insert_slice %r into %cache[0, %p, 0, 0] [1, 4, 8, 128] [1, 1, 1, 1] : tensor<1x4x8x128xi8> into tensor<1x2048x8x128xi8>
  return %c : tensor<1x2048x8x128xi8>
}

// -----

// Flat tokens [T, H, D] (dynamic T) into rows [N, H, D] at %o, and a head
// dim of dynamic size inserted whole (its size is the cache's tensor.dim).
// CHECK-LABEL: func.func @flat_dynamic(
//  CHECK-SAME:     %[[K:[^:]*]]: tensor<?x?x64xf32>, %[[C:[^:]*]]: tensor<4096x?x64xf32>, %[[O:[^:]*]]: index)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xi64>)
//       CHECK:     %[[T:.*]] = linalg.index 0 : index
//       CHECK:     %[[LIN:.*]] = arith.addi %[[O]], %[[T]] : index
//       CHECK:     arith.index_cast %[[LIN]] : index to i64
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<?x?x64xf32>) slots(%[[S]] : tensor<?xi64>) outs(%[[C]] : tensor<4096x?x64xf32>) {token_dims = array<i64: 0>}
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R]]
func.func @flat_dynamic(%k: tensor<?x?x64xf32>, %cache: tensor<4096x?x64xf32>, %o: index) -> tensor<4096x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %k, %c0 : tensor<?x?x64xf32>
  %h = tensor.dim %cache, %c1 : tensor<4096x?x64xf32>
  %e = tensor.empty(%t, %h) : tensor<?x?x64xf32>
  %r = rope.apply ins(%k : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {token_dims = array<i64: 0>} -> tensor<?x?x64xf32>
  %c = tensor.insert_slice %r into %cache[%o, 0, 0] [%t, %h, 64] [1, 1, 1] : tensor<?x?x64xf32> into tensor<4096x?x64xf32>
  return %c : tensor<4096x?x64xf32>
}

// -----

// Refused: a strided insert (every other cache position).
// CHECK-LABEL: func.func @strided(
//       CHECK:   %[[R:.*]] = rope.apply
//   CHECK-NOT:     slots
//  CHECK-SAME:     -> tensor<1x4x8x64xf32>
//       CHECK:   tensor.insert_slice %[[R]] into %{{.*}}[0, %{{.*}}, 0, 0] [1, 4, 8, 64] [1, 2, 1, 1]
func.func @strided(%k: tensor<1x4x8x64xf32>, %cache: tensor<1x512x8x64xf32>, %p: index) -> tensor<1x512x8x64xf32> {
  %e = tensor.empty() : tensor<1x4x8x64xf32>
  %r = rope.apply ins(%k : tensor<1x4x8x64xf32>) outs(%e : tensor<1x4x8x64xf32>) -> tensor<1x4x8x64xf32>
  %c = tensor.insert_slice %r into %cache[0, %p, 0, 0] [1, 4, 8, 64] [1, 2, 1, 1] : tensor<1x4x8x64xf32> into tensor<1x512x8x64xf32>
  return %c : tensor<1x512x8x64xf32>
}

// -----

// Refused: a partial head range (heads [4, 8) of the cache's 8; the slots
// op would not verify either), and a head dim whose size is not provably the
// cache's (the input's tensor.dim: the verifier accepts dynamic sizes, only
// the raise's check refuses it).
// CHECK-LABEL: func.func @partial_heads(
//       CHECK:   %[[R:.*]] = rope.apply
//   CHECK-NOT:     slots
//  CHECK-SAME:     -> tensor<1x1x4x64xf32>
//       CHECK:   tensor.insert_slice %[[R]] into %{{.*}}[0, %{{.*}}, 4, 0] [1, 1, 4, 64] [1, 1, 1, 1]
func.func @partial_heads(%k: tensor<1x1x4x64xf32>, %cache: tensor<1x512x8x64xf32>, %p: index) -> tensor<1x512x8x64xf32> {
  %e = tensor.empty() : tensor<1x1x4x64xf32>
  %r = rope.apply ins(%k : tensor<1x1x4x64xf32>) outs(%e : tensor<1x1x4x64xf32>) -> tensor<1x1x4x64xf32>
  %c = tensor.insert_slice %r into %cache[0, %p, 4, 0] [1, 1, 4, 64] [1, 1, 1, 1] : tensor<1x1x4x64xf32> into tensor<1x512x8x64xf32>
  return %c : tensor<1x512x8x64xf32>
}

// CHECK-LABEL: func.func @unproven_heads(
//       CHECK:   %[[R:.*]] = rope.apply
//   CHECK-NOT:     slots
//  CHECK-SAME:     -> tensor<?x?x64xf32>
//       CHECK:   tensor.insert_slice %[[R]]
func.func @unproven_heads(%k: tensor<?x?x64xf32>, %cache: tensor<4096x?x64xf32>, %o: index) -> tensor<4096x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %k, %c0 : tensor<?x?x64xf32>
  %h = tensor.dim %k, %c1 : tensor<?x?x64xf32>
  %e = tensor.empty(%t, %h) : tensor<?x?x64xf32>
  %r = rope.apply ins(%k : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {token_dims = array<i64: 0>} -> tensor<?x?x64xf32>
  %c = tensor.insert_slice %r into %cache[%o, 0, 0] [%t, %h, 64] [1, 1, 1] : tensor<?x?x64xf32> into tensor<4096x?x64xf32>
  return %c : tensor<4096x?x64xf32>
}

// -----

// Refused: a plain value (V, no rotation) inserted into a cache is left
// alone (rope.cache_write is for the APIs that ask for it).
// CHECK-LABEL: func.func @plain_value(
//   CHECK-NOT:   rope.
//       CHECK:   tensor.insert_slice
func.func @plain_value(%v: tensor<1x4x8x64xf32>, %cache: tensor<1x512x8x64xf32>, %p: index) -> tensor<1x512x8x64xf32> {
  %c = tensor.insert_slice %v into %cache[0, %p, 0, 0] [1, 4, 8, 64] [1, 1, 1, 1] : tensor<1x4x8x64xf32> into tensor<1x512x8x64xf32>
  return %c : tensor<1x512x8x64xf32>
}

// -----

// Refused: the rotated tensor has another use (attention reads it too), so
// it is computed anyway.
// CHECK-LABEL: func.func @other_users(
//       CHECK:   %[[R:.*]] = rope.apply
//   CHECK-NOT:     slots
//  CHECK-SAME:     -> tensor<1x4x8x64xf32>
//       CHECK:   %[[C:.*]] = tensor.insert_slice %[[R]]
//       CHECK:   return %[[C]], %[[R]]
func.func @other_users(%k: tensor<1x4x8x64xf32>, %cache: tensor<1x512x8x64xf32>, %p: index) -> (tensor<1x512x8x64xf32>, tensor<1x4x8x64xf32>) {
  %e = tensor.empty() : tensor<1x4x8x64xf32>
  %r = rope.apply ins(%k : tensor<1x4x8x64xf32>) outs(%e : tensor<1x4x8x64xf32>) -> tensor<1x4x8x64xf32>
  %c = tensor.insert_slice %r into %cache[0, %p, 0, 0] [1, 4, 8, 64] [1, 1, 1, 1] : tensor<1x4x8x64xf32> into tensor<1x512x8x64xf32>
  return %c, %r : tensor<1x512x8x64xf32>, tensor<1x4x8x64xf32>
}

// -----

// Refused: a rank-reducing insert (one token's [H, D] into [max_len, H, D]),
// the rotation's token dim (8 tokens) not the one the insert appends along.
// CHECK-LABEL: func.func @rank_reducing(
//       CHECK:   %[[R:.*]] = rope.apply
//   CHECK-NOT:     slots
//  CHECK-SAME:     -> tensor<8x64xf32>
//       CHECK:   tensor.insert_slice %[[R]]
func.func @rank_reducing(%k: tensor<8x64xf32>, %cache: tensor<512x8x64xf32>, %p: index) -> tensor<512x8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %r = rope.apply ins(%k : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {token_dims = array<i64: 0>} -> tensor<8x64xf32>
  %c = tensor.insert_slice %r into %cache[%p, 0, 0] [1, 8, 64] [1, 1, 1] : tensor<8x64xf32> into tensor<512x8x64xf32>
  return %c : tensor<512x8x64xf32>
}

// -----

// A decode step after linalg-fold-unit-extent-dims: the rotation of one
// token's [H, 1, D] (token dim 1) collapsed to [H, D] and inserted,
// rank-reducing, into the [B, max_len, H, D] cache at [0, %p, 0, 0]. Rebuilt
// on the insert's unreduced view [1, 1, H, D], its token dim the one the
// insert appends along (1).
// CHECK-LABEL: func.func @unit_dims_folded(
//  CHECK-SAME:     %[[K:[^:]*]]: tensor<2x1x16xf32>, %[[POS:[^:]*]]: tensor<1xi32>, %[[C:[^:]*]]: tensor<1x17x2x16xf32>
//       CHECK:   %[[F:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0], [1, 2]] : tensor<2x1x16xf32> into tensor<2x16xf32>
//       CHECK:   %[[X:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 2, 16] : tensor<2x16xf32> into tensor<1x1x2x16xf32>
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1xi64>)
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[X]] : tensor<1x1x2x16xf32>) positions(%[[POS]] : tensor<1xi32>) slots(%[[S]] : tensor<1xi64>) outs(%[[C]] : tensor<1x17x2x16xf32>) {token_dims = array<i64: 1>}
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R]]
func.func @unit_dims_folded(%k: tensor<2x1x16xf32>, %pos: tensor<1xi32>, %cache: tensor<1x17x2x16xf32>, %p: index) -> tensor<1x17x2x16xf32> {
  %e = tensor.empty() : tensor<2x1x16xf32>
  %r = rope.apply ins(%k : tensor<2x1x16xf32>) positions(%pos : tensor<1xi32>) outs(%e : tensor<2x1x16xf32>) {token_dims = array<i64: 1>} -> tensor<2x1x16xf32>
  %v = tensor.collapse_shape %r [[0, 1], [2]] : tensor<2x1x16xf32> into tensor<2x16xf32>
  %c = tensor.insert_slice %v into %cache[0, %p, 0, 0] [1, 1, 2, 16] [1, 1, 1, 1] : tensor<2x16xf32> into tensor<1x17x2x16xf32>
  return %c : tensor<1x17x2x16xf32>
}

// -----

// Refused: the same, inserted into one head's row ([0, %p, %h, 0], sizes
// [1, 1, 1, 16] of a [2, 16] whose heads are 1 x 32): the dims the insert
// appends along (token and head) are not the rotation's token dims.
// CHECK-LABEL: func.func @unit_dims_folded_wrong_dims(
//       CHECK:   rope.apply
//   CHECK-NOT:     slots
//       CHECK:   tensor.insert_slice
func.func @unit_dims_folded_wrong_dims(%k: tensor<1x1x32xf32>, %pos: tensor<1xi32>, %cache: tensor<1x17x2x32xf32>, %p: index, %h: index) -> tensor<1x17x2x32xf32> {
  %e = tensor.empty() : tensor<1x1x32xf32>
  %r = rope.apply ins(%k : tensor<1x1x32xf32>) positions(%pos : tensor<1xi32>) outs(%e : tensor<1x1x32xf32>) {token_dims = array<i64: 1>} -> tensor<1x1x32xf32>
  %v = tensor.collapse_shape %r [[0, 1, 2]] : tensor<1x1x32xf32> into tensor<32xf32>
  %c = tensor.insert_slice %v into %cache[0, %p, %h, 0] [1, 1, 1, 32] [1, 1, 1, 1] : tensor<32xf32> into tensor<1x17x2x32xf32>
  return %c : tensor<1x17x2x32xf32>
}

// -----

// Refused: a rank-reducing insert whose appended dim has the size of the
// rotation's token dim but is not where the insert puts it: the rotated
// [S, H, D] (token dim 0, S = H = 4) lands with its tokens along the
// cache's first dim, while the insert appends along its second.
// CHECK-LABEL: func.func @appended_dim_not_the_tokens(
//       CHECK:   rope.apply
//   CHECK-NOT:     slots
//       CHECK:   tensor.insert_slice
func.func @appended_dim_not_the_tokens(%k: tensor<4x4x16xf32>, %pos: tensor<4xi64>, %cache: tensor<4x4096x1x16xf32>, %p: index) -> tensor<4x4096x1x16xf32> {
  %e = tensor.empty() : tensor<4x4x16xf32>
  %r = rope.apply ins(%k : tensor<4x4x16xf32>) positions(%pos : tensor<4xi64>) outs(%e : tensor<4x4x16xf32>) {token_dims = array<i64: 0>} -> tensor<4x4x16xf32>
  %c = tensor.insert_slice %r into %cache[0, %p, 0, 0] [4, 4, 1, 16] [1, 1, 1, 1] : tensor<4x4x16xf32> into tensor<4x4096x1x16xf32>
  return %c : tensor<4x4096x1x16xf32>
}
