// RUN: rope-opt %s --transform-interpreter --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// rope.apply's TilingInterface through the transform dialect. Every dim but
// the channels is tileable; each tile is a rope.apply on the tile whose
// positions are re-expressed for it. Executed equivalence:
// python/tests/compiler/test_tiling.py.

// Explicit positions are sliced along the token dims; the channel dim (64)
// is never split.
// CHECK-LABEL: func.func @explicit(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<2x16x4x64xf32>, %[[P:[a-z0-9]+]]: tensor<2x16xi64>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[S:[a-z0-9]+]] =
//   CHECK-DAG:       %[[XT:.*]] = tensor.extract_slice %[[X]][%[[B]], %[[S]], 0, 0] [1, 4, 4, 64]
//   CHECK-DAG:       %[[PT:.*]] = tensor.extract_slice %[[P]][%[[B]], %[[S]]] [1, 4]
//       CHECK:       rope.apply ins(%[[XT]] : tensor<1x4x4x64xf32>) positions(%[[PT]] : tensor<1x4xi64>)
func.func @explicit(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// Implicit positions (pos = s) become an offset: the tile's start along s.
// CHECK-LABEL: func.func @implicit(
//       CHECK:   scf.for
//       CHECK:     scf.for %[[S:[a-z0-9]+]] =
//       CHECK:       %[[OFF:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:       rope.apply ins(%{{.*}} : tensor<1x4x4x64xf32>) offset(%[[OFF]] : i64)
func.func @implicit(%x: tensor<2x16x4x64xf32>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// A scalar offset is shifted by the tile's start.
// CHECK-LABEL: func.func @scalar_offset(
//  CHECK-SAME:     %[[O:[a-z0-9]+]]: i32
//       CHECK:   scf.for
//       CHECK:     scf.for %[[S:[a-z0-9]+]] =
//   CHECK-DAG:       %[[O64:.*]] = arith.extsi %[[O]] : i32 to i64
//   CHECK-DAG:       %[[SHIFT:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:       %[[OFF:.*]] = arith.addi %[[O64]], %[[SHIFT]] : i64
//       CHECK:       rope.apply {{.*}} offset(%[[OFF]] : i64)
func.func @scalar_offset(%x: tensor<2x16x4x64xf32>, %o: i32, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) offset(%o : i32) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// A per-row offset is sliced along the rows and shifted along s; a dynamic
// scheme gets the whole call's length (max offset + S), not the tile's.
// CHECK-LABEL: func.func @row_offset_dynamic(
//  CHECK-SAME:     %[[O:[a-z0-9]+]]: tensor<2xi64>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[S:[a-z0-9]+]] =
//       CHECK:       linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[O]] : tensor<2xi64>)
//       CHECK:       %[[LEN:.*]] = arith.addi %{{.*}}, %c16_i64 : i64
//       CHECK:       %[[ROWS:.*]] = tensor.extract_slice %[[O]][%[[B]]] [1] [1]
//       CHECK:       %[[SPLAT:.*]] = tensor.splat
//       CHECK:       %[[OFF:.*]] = arith.addi %[[ROWS]], %[[SPLAT]] : tensor<1xi64>
//       CHECK:       rope.apply {{.*}} offset(%[[OFF]] : tensor<1xi64>) length(%[[LEN]] : i64)
func.func @row_offset_dynamic(%x: tensor<2x16x4x64xf32>, %o: tensor<2xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) offset(%o : tensor<2xi64>) outs(%init : tensor<2x16x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 8>} -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// A pre-gathered cache is sliced like the tokens (plus its P/2 columns); a
// gathered one ([M, P/2], indexed by position) is used whole.
// CHECK-LABEL: func.func @caches(
//  CHECK-SAME:     %[[PC:[a-z0-9]+]]: tensor<2x16x32xf32>, %[[PS:[a-z0-9]+]]: tensor<2x16x32xf32>, %[[GC:[a-z0-9]+]]: tensor<128x32xf32>, %[[GS:[a-z0-9]+]]: tensor<128x32xf32>
//       CHECK:       %[[C:.*]] = tensor.extract_slice %[[PC]][%{{.*}}, %{{.*}}, 0] [1, 4, 32]
//       CHECK:       %[[SN:.*]] = tensor.extract_slice %[[PS]][%{{.*}}, %{{.*}}, 0] [1, 4, 32]
//       CHECK:       rope.apply {{.*}} cache(%[[C]], %[[SN]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>)
//       CHECK:       rope.apply {{.*}} cache(%[[GC]], %[[GS]] : tensor<128x32xf32>, tensor<128x32xf32>)
func.func @caches(%x: tensor<2x16x4x64xf32>, %pc: tensor<2x16x32xf32>, %ps: tensor<2x16x32xf32>, %gc: tensor<128x32xf32>, %gs: tensor<128x32xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) cache(%pc, %ps : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  %z = rope.apply ins(%y : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) cache(%gc, %gs : tensor<128x32xf32>, tensor<128x32xf32>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %z : tensor<2x16x4x64xf32>
}

// M-RoPE positions keep their axis dim whole.
// CHECK-LABEL: func.func @mrope(
//  CHECK-SAME:     %[[P:[a-z0-9]+]]: tensor<3x2x16xi64>
//       CHECK:       %[[PT:.*]] = tensor.extract_slice %[[P]][0, %{{.*}}, %{{.*}}] [3, 1, 4]
//       CHECK:       rope.apply {{.*}} positions(%[[PT]] : tensor<3x1x4xi64>)
func.func @mrope(%x: tensor<2x16x4x64xf32>, %p: tensor<3x2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<3x2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.apply"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:2 = transform.structured.tile_using_for %ops tile_sizes [1, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// As a producer, rope.apply fuses into its consumer's tile loops
// (generateResultTileValue): the rotation runs per consumer tile.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @fuse_into_consumer(
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       %[[R:.*]] = rope.apply {{.*}} -> tensor<1x4x4x64xf32>
//       CHECK:       linalg.generic {{.*}} ins(%[[R]] : tensor<1x4x4x64xf32>)
// A consumer tiled along the channels cannot take the producer (a pair
// spans the channels): the rotation stays whole, outside the loops.
// CHECK-LABEL: func.func @no_fusion_across_channels(
//       CHECK:   %[[R:.*]] = rope.apply {{.*}} -> tensor<2x16x4x64xf32>
//       CHECK:   scf.for
//   CHECK-NOT:   rope.apply
func.func @fuse_into_consumer(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>) -> tensor<2x16x4x64xf32> {
  %e = tensor.empty() : tensor<2x16x4x64xf32>
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%e : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<2x16x4x64xf32>) outs(%e : tensor<2x16x4x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x16x4x64xf32>
  return %z : tensor<2x16x4x64xf32>
}
func.func @no_fusion_across_channels(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>) -> tensor<2x16x4x64xf32> {
  %e = tensor.empty() : tensor<2x16x4x64xf32>
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%e : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<2x16x4x64xf32>) outs(%e : tensor<2x16x4x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x16x4x64xf32>
  return %z : tensor<2x16x4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %g1, %g2 = transform.split_handle %g : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %loops:2 = transform.structured.fuse %g1 tile_sizes [1, 4, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %loops2 = transform.structured.fuse %g2 tile_sizes [0, 0, 0, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
