// RUN: rope-opt %s --transform-interpreter --canonicalize --cse -split-input-file -verify-diagnostics | FileCheck %s --enable-var-scope

// TilingInterface of rope.attention and rope.online_attention, driven by the
// transform dialect. Each operand is sliced by its indexing map; a tile
// keeps the whole op's positions (an explicit query_offset/key_offset) and
// the score region's indices (the tile's start added to each). Executed
// equivalence: python/tests/numerics/test_attention_op.py (test_tiled).

// Batch, query and value-channel tiles. Q is sliced along the queries, K
// along nothing but the batch, V along its channels; the causal mask's
// bottom-right alignment of the whole op (Sk - Sq = 16) plus the query tile's
// start becomes the tile's query_offset; the region's query index is
// shifted by it (its unused batch index is not).
// CHECK-DAG: #[[$QOFF:.*]] = affine_map<()[s0] -> (s0 + 16)>
// CHECK-LABEL: func.func @causal_region(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x4x16x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x32x64xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x32x48xf32>, %[[I:[a-z0-9]+]]: tensor<2x4x16x48xf32>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] = {{.*}} iter_args(%[[O1:.*]] = %[[I]])
//       CHECK:     scf.for %[[M:[a-z0-9]+]] = {{.*}} iter_args(%[[O2:.*]] = %[[O1]])
//       CHECK:       scf.for %[[N:[a-z0-9]+]] = {{.*}} iter_args(%[[O3:.*]] = %[[O2]])
//   CHECK-DAG:         %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], 0, %[[M]], 0] [1, 4, 8, 64]
//   CHECK-DAG:         %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], 0, 0, 0] [1, 4, 32, 64]
//   CHECK-DAG:         %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], 0, 0, %[[N]]] [1, 4, 32, 16]
//   CHECK-DAG:         %[[OT:.*]] = tensor.extract_slice %[[O3]][%[[B]], 0, %[[M]], %[[N]]] [1, 4, 8, 16]
//   CHECK-DAG:         %[[OFF:.*]] = affine.apply #[[$QOFF]]()[%[[M]]]
//       CHECK:         %[[T:.*]] = rope.attention ins(%[[QT]], %[[KT]], %[[VT]] : tensor<1x4x8x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x16xf32>) query_offset(%[[OFF]]) outs(%[[OT]] : tensor<1x4x8x16xf32>) attributes {causal,
//  CHECK-NEXT:         ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[MI:.*]]: index, %[[KI:.*]]: index):
//  CHECK-NEXT:           %[[MA:.*]] = arith.addi %[[MI]], %[[M]] : index
//  CHECK-NEXT:           arith.subi %[[KI]], %[[MA]] : index
//       CHECK:         tensor.insert_slice %[[T]] into %[[O3]][%[[B]], 0, %[[M]], %[[N]]] [1, 4, 8, 16]
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @causal_region(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x48xf32>, %init: tensor<2x4x16x48xf32>) -> tensor<2x4x16x48xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>, tensor<2x4x32x48xf32>) outs(%init : tensor<2x4x16x48xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} {
  ^bb0(%s: f32, %b: index, %h: index, %m: index, %k2: index):
    %d = arith.subi %k2, %m : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    %r = arith.addf %s, %f : f32
    rope.yield %r : f32
  } -> tensor<2x4x16x48xf32>
  return %o : tensor<2x4x16x48xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:3 = transform.structured.tile_using_for %ops tile_sizes [1, 0, 8, 0, 0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// GQA with scf.forall over (kv head, group, queries): K and V are sliced
// only along the kv head (they lack the group and query dims), the mask
// along the queries, the query positions along batch and queries; the
// positions operand already makes the tile's positions absolute, and the
// key offset is kept (no key tile).
// CHECK-LABEL: func.func @gqa_forall(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<1x2x4x8x32xf16>, %[[K:[a-z0-9]+]]: tensor<1x2x16x32xf16>, %[[V:[a-z0-9]+]]: tensor<1x2x16x32xf16>, %[[MASK:[a-z0-9]+]]: tensor<8x16xi1>, %[[P:[a-z0-9]+]]: tensor<1x8xi64>, %[[KO:[a-z0-9]+]]: index
//       CHECK:   scf.forall (%[[H:.*]], %[[G:.*]], %[[M:.*]]) in (2, 2, 2) shared_outs(%[[OUT:.*]] = %{{.*}})
//   CHECK-DAG:     %[[GO:.*]] = affine.apply #{{.*}}(%[[G]])
//   CHECK-DAG:     %[[MO:.*]] = affine.apply #{{.*}}(%[[M]])
//   CHECK-DAG:     %[[QT:.*]] = tensor.extract_slice %[[Q]][0, %[[H]], %[[GO]], %[[MO]], 0] [1, 1, 2, 4, 32]
//   CHECK-DAG:     %[[KT:.*]] = tensor.extract_slice %[[K]][0, %[[H]], 0, 0] [1, 1, 16, 32]
//   CHECK-DAG:     %[[VT:.*]] = tensor.extract_slice %[[V]][0, %[[H]], 0, 0] [1, 1, 16, 32]
//   CHECK-DAG:     %[[MT:.*]] = tensor.extract_slice %[[MASK]][%[[MO]], 0] [4, 16]
//   CHECK-DAG:     %[[PT:.*]] = tensor.extract_slice %[[P]][0, %[[MO]]] [1, 4]
//       CHECK:     %[[T:.*]] = rope.attention ins(%[[QT]], %[[KT]], %[[VT]] : tensor<1x1x2x4x32xf16>, tensor<1x1x16x32xf16>, tensor<1x1x16x32xf16>) mask(%[[MT]] : tensor<4x16xi1>) query_positions(%[[PT]] : tensor<1x4xi64>) key_offset(%[[KO]]) outs(%{{.*}} : tensor<1x1x2x4x32xf16>) attributes {causal, {{.*}}query_dim = 3 : i64, scale = 1.250000e-01 : f64, window = 4 : i64}
//       CHECK:     tensor.parallel_insert_slice %[[T]] into %[[OUT]][0, %[[H]], %[[GO]], %[[MO]], 0] [1, 1, 2, 4, 32]
#gq = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#gk = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#gv = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#gm = affine_map<(b, h, g, m, k1, k2, n) -> (m, k2)>
#gp = affine_map<(b, h, g, m, k1, k2, n) -> (b, m)>
#go = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @gqa_forall(%q: tensor<1x2x4x8x32xf16>, %k: tensor<1x2x16x32xf16>, %v: tensor<1x2x16x32xf16>, %mask: tensor<8x16xi1>, %pos: tensor<1x8xi64>, %koff: index, %init: tensor<1x2x4x8x32xf16>) -> tensor<1x2x4x8x32xf16> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) mask(%mask : tensor<8x16xi1>) query_positions(%pos : tensor<1x8xi64>) key_offset(%koff) outs(%init : tensor<1x2x4x8x32xf16>) attributes {indexing_maps = [#gq, #gk, #gv, #gm, #gp, #go], scale = 0.125 : f64, causal, window = 4 : i64, query_dim = 3 : i64} -> tensor<1x2x4x8x32xf16>
  return %o : tensor<1x2x4x8x32xf16>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loop = transform.structured.tile_using_forall %ops tile_sizes [0, 1, 2, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Sinks [Hkv, G] are sliced along the batch dims they have (kv head and
// group), not along the queries.
// CHECK-LABEL: func.func @gqa_sinks_forall(
//  CHECK-SAME:     %[[S:[a-z0-9]+]]: tensor<2x4xf32>
//       CHECK:   scf.forall (%[[H:.*]], %[[G:.*]], %[[M:.*]]) in (2, 2, 2) shared_outs(%[[OUT:.*]] = %{{.*}})
//   CHECK-DAG:     %[[GO:.*]] = affine.apply #{{.*}}(%[[G]])
//   CHECK-DAG:     %[[ST:.*]] = tensor.extract_slice %[[S]][%[[H]], %[[GO]]] [1, 2]
//       CHECK:     rope.attention ins({{.*}}) sinks(%[[ST]] : tensor<1x2xf32>) outs(%{{.*}} : tensor<1x1x2x4x32xf32>)
#sq = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#sk = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#sv = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#ss = affine_map<(b, h, g, m, k1, k2, n) -> (h, g)>
#so = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @gqa_sinks_forall(%q: tensor<1x2x4x8x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %sinks: tensor<2x4xf32>, %init: tensor<1x2x4x8x32xf32>) -> tensor<1x2x4x8x32xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) sinks(%sinks : tensor<2x4xf32>) outs(%init : tensor<1x2x4x8x32xf32>) attributes {indexing_maps = [#sq, #sk, #sv, #ss, #so], scale = 0.125 : f64, causal, query_dim = 3 : i64} -> tensor<1x2x4x8x32xf32>
  return %o : tensor<1x2x4x8x32xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loop = transform.structured.tile_using_forall %ops tile_sizes [0, 1, 2, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Dynamic sizes ([B, S, H, D]): the whole op's Sk - Sq comes from the
// operands' sizes, plus the query tile's start; the keys stay whole.
// CHECK-DAG: #[[$DOFF:.*]] = affine_map<()[s0, s1, s2] -> (s0 - s1 + s2)>
// CHECK-LABEL: func.func @dynamic(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<1x?x4x64xf32>, %[[K:[a-z0-9]+]]: tensor<1x?x4x64xf32>
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[SQ:.*]] = tensor.dim %[[Q]], %[[C1]]
//   CHECK-DAG:   %[[SK:.*]] = tensor.dim %[[K]], %[[C1]]
//       CHECK:   scf.for %[[M:[a-z0-9]+]] = %{{.*}} to %[[SQ]] step %{{.*}}
//       CHECK:     %[[KT:.*]] = tensor.extract_slice %[[K]][0, 0, 0, 0] [1, %[[SK]], 4, 64]
//       CHECK:     %[[OFF:.*]] = affine.apply #[[$DOFF]]()[%[[SK]], %[[SQ]], %[[M]]]
//       CHECK:     rope.attention ins(%{{.*}}, %[[KT]], %{{.*}} : tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>) query_offset(%[[OFF]])
#q = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, k1)>
#k = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, k1)>
#v = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, n)>
#o = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, n)>
func.func @dynamic(%q: tensor<1x?x4x64xf32>, %k: tensor<1x?x4x64xf32>, %v: tensor<1x?x4x64xf32>, %init: tensor<1x?x4x64xf32>) -> tensor<1x?x4x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>) outs(%init : tensor<1x?x4x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<1x?x4x64xf32>
  return %o : tensor<1x?x4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops = transform.structured.tile_using_for %ops tile_sizes [0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// As a producer, rope.attention fuses into its consumer's tile loops
// (generateResultTileValue): one attention per consumer tile.
// CHECK-LABEL: func.func @fuse_into_consumer(
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       %[[T:.*]] = rope.attention {{.*}} -> tensor<1x1x8x64xf32>
//       CHECK:       linalg.generic {{.*}} ins(%[[T]] : tensor<1x1x8x64xf32>)
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fuse_into_consumer(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x32x64xf32>, %v: tensor<1x4x32x64xf32>) -> tensor<1x4x16x64xf32> {
  %e = tensor.empty() : tensor<1x4x16x64xf32>
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>) outs(%e : tensor<1x4x16x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<1x4x16x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<1x4x16x64xf32>) outs(%e : tensor<1x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16x64xf32>
  return %z : tensor<1x4x16x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:2 = transform.structured.fuse %g tile_sizes [0, 1, 8, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// rope.attention's softmax needs every key: a key tile is refused.
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @attention_key_tile(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x32x64xf32>, %v: tensor<1x4x32x64xf32>, %e: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  // expected-error @+3 {{'rope.attention' op tiles only batch, query and value channel dims; tile the keys through rope.online_attention}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-error @+1 {{to tile operation}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>) outs(%e : tensor<1x4x16x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal} -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops = transform.structured.tile_using_for %ops tile_sizes [0, 0, 0, 0, 8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The online step tiled along the queries and the keys: a sequential key
// loop threads acc, max and sum through its iter_args (each iteration reads
// the query tile's rows of the running state and writes them back); K, V
// and the mask are sliced along the keys (a partial last tile: 40 = 2·16 +
// 8); the tile's key_offset is the op's plus the key tile's start, its
// query_offset the whole op's Sk - Sq = 32 plus the query tile's start; the
// region's query and key indices are both shifted.
// CHECK-DAG: #[[$KMIN:.*]] = affine_map<(d0) -> (-d0 + 40, 16)>
// CHECK-DAG: #[[$OQOFF:.*]] = affine_map<()[s0] -> (s0 + 32)>
// CHECK-DAG: #[[$OKOFF:.*]] = affine_map<()[s0, s1] -> (s0 + s1)>
// CHECK-LABEL: func.func @online_keys(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x8x4x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x40x4x64xf32>, %[[V:[a-z0-9]+]]: tensor<2x40x4x32xf32>, %[[MASK:[a-z0-9]+]]: tensor<2x8x40xf32>, %[[KO:[a-z0-9]+]]: index, %[[ACC:[a-z0-9]+]]: tensor<2x8x4x32xf32>, %[[MAX:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[SUM:[a-z0-9]+]]: tensor<2x8x4xf32>
//       CHECK:   %[[R:.*]]:3 = scf.for %[[M:[a-z0-9]+]] = {{.*}} iter_args(%[[A0:.*]] = %[[ACC]], %[[X0:.*]] = %[[MAX]], %[[S0:.*]] = %[[SUM]])
//       CHECK:     %[[L:.*]]:3 = scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[A0]], %[[X:.*]] = %[[X0]], %[[S:.*]] = %[[S0]]) -> (tensor<2x8x4x32xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
//       CHECK:       %[[JS:.*]] = affine.min #[[$KMIN]](%[[J]])
//   CHECK-DAG:       %[[QT:.*]] = tensor.extract_slice %[[Q]][0, %[[M]], 0, 0] [2, 4, 4, 64]
//   CHECK-DAG:       %[[KT:.*]] = tensor.extract_slice %[[K]][0, %[[J]], 0, 0] [2, %[[JS]], 4, 64]
//   CHECK-DAG:       %[[VT:.*]] = tensor.extract_slice %[[V]][0, %[[J]], 0, 0] [2, %[[JS]], 4, 32]
//   CHECK-DAG:       %[[MT:.*]] = tensor.extract_slice %[[MASK]][0, %[[M]], %[[J]]] [2, 4, %[[JS]]]
//   CHECK-DAG:       %[[AT:.*]] = tensor.extract_slice %[[A]][0, %[[M]], 0, 0] [2, 4, 4, 32]
//   CHECK-DAG:       %[[XT:.*]] = tensor.extract_slice %[[X]][0, %[[M]], 0] [2, 4, 4]
//   CHECK-DAG:       %[[ST:.*]] = tensor.extract_slice %[[S]][0, %[[M]], 0] [2, 4, 4]
//   CHECK-DAG:       %[[QOFF:.*]] = affine.apply #[[$OQOFF]]()[%[[M]]]
//   CHECK-DAG:       %[[KOFF:.*]] = affine.apply #[[$OKOFF]]()[%[[KO]], %[[J]]]
//       CHECK:       %[[NA:.*]], %[[NX:.*]], %[[NS:.*]] = rope.online_attention ins(%[[QT]], %[[KT]], %[[VT]] : tensor<2x4x4x64xf32>, tensor<2x?x4x64xf32>, tensor<2x?x4x32xf32>) mask(%[[MT]] : tensor<2x4x?xf32>) query_offset(%[[QOFF]]) key_offset(%[[KOFF]]) outs(%[[AT]], %[[XT]], %[[ST]] : tensor<2x4x4x32xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>)
//  CHECK-NEXT:       ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[MI:.*]]: index, %{{.*}}: index, %[[KI:.*]]: index):
//  CHECK-NEXT:         %[[MA:.*]] = arith.addi %[[MI]], %[[M]] : index
//  CHECK-NEXT:         %[[KA:.*]] = arith.addi %[[KI]], %[[J]] : index
//  CHECK-NEXT:         arith.subi %[[KA]], %[[MA]] : index
//       CHECK:       %[[IA:.*]] = tensor.insert_slice %[[NA]] into %[[A]][0, %[[M]], 0, 0] [2, 4, 4, 32]
//       CHECK:       %[[IX:.*]] = tensor.insert_slice %[[NX]] into %[[X]][0, %[[M]], 0] [2, 4, 4]
//       CHECK:       %[[IS:.*]] = tensor.insert_slice %[[NS]] into %[[S]][0, %[[M]], 0] [2, 4, 4]
//       CHECK:       scf.yield %[[IA]], %[[IX]], %[[IS]]
//       CHECK:     scf.yield %[[L]]#0, %[[L]]#1, %[[L]]#2
//       CHECK:   return %[[R]]#0, %[[R]]#1, %[[R]]#2
#q = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, k1)>
#k = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, k1)>
#v = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, n)>
#mask = affine_map<(b, m, h, k1, k2, n) -> (b, m, k2)>
#o = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, n)>
func.func @online_keys(%q: tensor<2x8x4x64xf32>, %k: tensor<2x40x4x64xf32>, %v: tensor<2x40x4x32xf32>, %mask: tensor<2x8x40xf32>, %koff: index, %acc: tensor<2x8x4x32xf32>, %max: tensor<2x8x4xf32>, %sum: tensor<2x8x4xf32>) -> (tensor<2x8x4x32xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %a, %mx, %s = rope.online_attention ins(%q, %k, %v : tensor<2x8x4x64xf32>, tensor<2x40x4x64xf32>, tensor<2x40x4x32xf32>) mask(%mask : tensor<2x8x40xf32>) key_offset(%koff) outs(%acc, %max, %sum : tensor<2x8x4x32xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 0.125 : f64, causal} {
  ^bb0(%x: f32, %b: index, %m: index, %h: index, %k2: index):
    %d = arith.subi %k2, %m : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    %r = arith.addf %x, %f : f32
    rope.yield %r : f32
  } -> tensor<2x8x4x32xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
  return %a, %mx, %s : tensor<2x8x4x32xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.online_attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:2 = transform.structured.tile_using_for %ops tile_sizes [0, 4, 0, 0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The online step keeps the value channels whole (max and sum have none).
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_channel_tile(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x32x64xf32>, %v: tensor<1x4x32x64xf32>, %acc: tensor<1x4x16x64xf32>, %max: tensor<1x4x16xf32>, %sum: tensor<1x4x16xf32>) -> tensor<1x4x16x64xf32> {
  // expected-error @+3 {{'rope.online_attention' op tiles only batch, query and key dims (k1 and the value channels stay whole)}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-error @+1 {{to tile operation}}
  %a, %mx, %s = rope.online_attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>) outs(%acc, %max, %sum : tensor<1x4x16x64xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64} -> tensor<1x4x16x64xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>
  return %a : tensor<1x4x16x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.online_attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops = transform.structured.tile_using_for %ops tile_sizes [0, 0, 0, 0, 0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
