// RUN: rope-opt %s --transform-interpreter --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// rope.apply with its fused neighbours through TilingInterface and the
// transform dialect: a per-head quantization scale is sliced like the tile's
// heads, a per-tensor scale and the norm weight (the channels, never split)
// are passed whole. Its linalg form tiles and fuses as well: a tile of the
// rotation pulls in the sum of squares and the norm factor of its rows only.

// [S, H, D] with QK-norm and an fp8 output per head: the scale follows the
// head tile (2 of 8 heads from %h), the weight stays [D].
// CHECK-LABEL: func.func @norm_quant_per_head(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<16x8x128xbf16>, %[[P:[a-z0-9]+]]: tensor<16xi64>, %[[W:[a-z0-9]+]]: tensor<128xbf16>, %[[S:[a-z0-9]+]]: tensor<8xf32>, %[[INIT:[a-z0-9]+]]: tensor<16x8x128xf8E4M3FN>)
//       CHECK:   scf.for %[[T:[a-z0-9]+]] = {{.*}} iter_args(%[[D0:[a-z0-9]+]] = %[[INIT]])
//       CHECK:     scf.for %[[H:[a-z0-9]+]] = {{.*}} iter_args(%[[D1:[a-z0-9]+]] = %[[D0]])
//   CHECK-DAG:       %[[XT:.*]] = tensor.extract_slice %[[X]][%[[T]], %[[H]], 0] [4, 2, 128]
//   CHECK-DAG:       %[[DT:.*]] = tensor.extract_slice %[[D1]][%[[T]], %[[H]], 0] [4, 2, 128] [1, 1, 1] : tensor<16x8x128xf8E4M3FN> to tensor<4x2x128xf8E4M3FN>
//   CHECK-DAG:       %[[PT:.*]] = tensor.extract_slice %[[P]][%[[T]]] [4]
//   CHECK-DAG:       %[[ST:.*]] = tensor.extract_slice %[[S]][%[[H]]] [2] [1] : tensor<8xf32> to tensor<2xf32>
//       CHECK:       %[[Y:.*]] = rope.apply ins(%[[XT]] : tensor<4x2x128xbf16>) positions(%[[PT]] : tensor<4xi64>) norm(%[[W]] : tensor<128xbf16>) quant_scale(%[[ST]] : tensor<2xf32>) outs(%[[DT]] : tensor<4x2x128xf8E4M3FN>)
//  CHECK-SAME:         norm_epsilon = 9.9999999999999995E-7
//       CHECK:       tensor.insert_slice %[[Y]] into %[[D1]][%[[T]], %[[H]], 0] [4, 2, 128]
func.func @norm_quant_per_head(%x: tensor<16x8x128xbf16>, %p: tensor<16xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %init: tensor<16x8x128xf8E4M3FN>) -> tensor<16x8x128xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<16x8x128xbf16>) positions(%p : tensor<16xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<16x8x128xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<16x8x128xf8E4M3FN>
  return %y : tensor<16x8x128xf8E4M3FN>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:2 = transform.structured.tile_using_for %ops tile_sizes [4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// [B, H, S, D] (token_dims (0, 2)), i8 per head: the head dim is d1, between
// the token dims; the scale is sliced along it, not along s.
// CHECK-LABEL: func.func @bhsd_i8_per_head(
//  CHECK-SAME:     %[[S:[a-z0-9]+]]: tensor<8xf32>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       scf.for %[[Q:[a-z0-9]+]] =
//       CHECK:         %[[ST:.*]] = tensor.extract_slice %[[S]][%[[H]]] [2] [1] : tensor<8xf32> to tensor<2xf32>
//       CHECK:         rope.apply ins(%{{.*}} : tensor<1x2x4x64xf32>) positions(%{{.*}} : tensor<1x4xi64>) quant_scale(%[[ST]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x2x4x64xi8>)
func.func @bhsd_i8_per_head(%x: tensor<2x8x16x64xf32>, %p: tensor<2x16xi64>, %s: tensor<8xf32>, %init: tensor<2x8x16x64xi8>) -> tensor<2x8x16x64xi8> {
  %y = rope.apply ins(%x : tensor<2x8x16x64xf32>) positions(%p : tensor<2x16xi64>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<2x8x16x64xi8>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x16x64xi8>
  return %y : tensor<2x8x16x64xi8>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:3 = transform.structured.tile_using_for %ops tile_sizes [1, 2, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A per-tensor scale is passed whole to every tile.
// CHECK-LABEL: func.func @per_tensor_partial(
//  CHECK-SAME:     %[[S:[a-z0-9]+]]: tensor<f32>
//       CHECK:   scf.for
//       CHECK:     scf.for
//   CHECK-NOT:       tensor.extract_slice %[[S]]
//       CHECK:       rope.apply ins(%{{.*}} : tensor<4x2x128xf16>) offset(%{{.*}} : i64) quant_scale(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<4x2x128xi8>) {rotary_dim = 64 : i64}
func.func @per_tensor_partial(%x: tensor<16x8x128xf16>, %s: tensor<f32>, %init: tensor<16x8x128xi8>) -> tensor<16x8x128xi8> {
  %y = rope.apply ins(%x : tensor<16x8x128xf16>) quant_scale(%s : tensor<f32>) outs(%init : tensor<16x8x128xi8>) {rotary_dim = 64 : i64} -> tensor<16x8x128xi8>
  return %y : tensor<16x8x128xi8>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:2 = transform.structured.tile_using_for %ops tile_sizes [4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The linalg form (transform.structured.decompose_interface): tiling the
// rotation generic by (4 tokens, 2 heads) and fusing its producers computes
// the sum of squares (from a zero fill) and the norm factor of the tile's
// 4 x 2 rows inside the loops, reads the per-head scale's 2 entries and the
// weight's two halves whole.
// CHECK-LABEL: func.func @fuse_decomposed(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<16x8x128xbf16>, %[[P:[a-z0-9]+]]: tensor<16xi64>, %[[W:[a-z0-9]+]]: tensor<128xbf16>, %[[S:[a-z0-9]+]]: tensor<8xf32>
//   CHECK-DAG:   %[[W1:.*]] = tensor.extract_slice %[[W]][0] [64] [1]
//   CHECK-DAG:   %[[W2:.*]] = tensor.extract_slice %[[W]][64] [64] [1]
//   CHECK-NOT:   linalg.
//       CHECK:   scf.for %[[T:[a-z0-9]+]] =
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       linalg.generic
//       CHECK:       %[[XT:.*]] = tensor.extract_slice %[[X]][%[[T]], %[[H]], 0] [4, 2, 128] [1, 1, 1] : tensor<16x8x128xbf16> to tensor<4x2x128xbf16>
//       CHECK:       %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<4x2xf32>
//       CHECK:       %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XT]] : tensor<4x2x128xbf16>) outs(%[[FILL]] : tensor<4x2xf32>)
//       CHECK:       %[[FACTOR:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4x2xf32>)
//       CHECK:         math.rsqrt
//       CHECK:       %[[ST:.*]] = tensor.extract_slice %[[S]][%[[H]]] [2] [1] : tensor<8xf32> to tensor<2xf32>
//       CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FACTOR]], %[[W1]], %[[W2]], %[[ST]] : tensor<4x2x64xbf16>, tensor<4x2x64xbf16>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x2xf32>, tensor<64xbf16>, tensor<64xbf16>, tensor<2xf32>) outs(%{{.*}} : tensor<4x2x2x64xf8E4M3FN>)
//       CHECK:         arith.truncf %{{.*}} : f32 to f8E4M3FN
//       CHECK:   %[[C:.*]] = tensor.collapse_shape
//   CHECK-NOT:   linalg.
//       CHECK:   return %[[C]]
func.func @fuse_decomposed(%x: tensor<16x8x128xbf16>, %p: tensor<16xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %init: tensor<16x8x128xf8E4M3FN>) -> tensor<16x8x128xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<16x8x128xbf16>) positions(%p : tensor<16xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<16x8x128xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<16x8x128xf8E4M3FN>
  return %y : tensor<16x8x128xf8E4M3FN>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %r = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %r : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %table, %sum, %factor, %rotation = transform.split_handle %g : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t, %loops:2 = transform.structured.fuse %rotation tile_sizes [4, 2, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
