// RUN: rope-opt %s | rope-opt | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --mlir-print-op-generic | rope-opt | FileCheck %s --enable-var-scope

// Every syntactic form of rope.attention and rope.online_attention survives
// printing and parsing, in the custom and the generic form: optional
// operands (mask, query_positions, query_offset, key_offset, sinks), attributes
// (causal, window, query_dim), the score region, maps in any tensor layout,
// every element type. Executed: python/tests/numerics/test_attention_op.py.

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#mask_qk = affine_map<(b, h, m, k1, k2, n) -> (m, k2)>
#mask_full = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k2)>
#pos = affine_map<(b, h, m, k1, k2, n) -> (b, m)>

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[$O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-DAG: #[[$MQK:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4)>
// CHECK-DAG: #[[$MFULL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$POS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2)>
// CHECK-DAG: #[[$GQ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$GK:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d2, d4)>
// CHECK-DAG: #[[$GV:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d2, d6)>
// CHECK-DAG: #[[$GO:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>

// CHECK-LABEL: func.func @plain(
//  CHECK-SAME:     %[[Q0:[a-z0-9]+]]: tensor<2x4x8x64xf32>, %[[K0:[a-z0-9]+]]: tensor<2x4x16x64xf32>, %[[V0:[a-z0-9]+]]: tensor<2x4x16x64xf32>, %[[I0:[a-z0-9]+]]: tensor<2x4x8x64xf32>
//       CHECK:   rope.attention ins(%[[Q0]], %[[K0]], %[[V0]] : tensor<2x4x8x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) outs(%[[I0]] : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$O]]], scale = 1.250000e-01 : f64} -> tensor<2x4x8x64xf32>
func.func @plain(%q: tensor<2x4x8x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %init: tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x8x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) outs(%init : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64} -> tensor<2x4x8x64xf32>
  return %o : tensor<2x4x8x64xf32>
}

// A float mask over (queries, keys), f16 operands.
// CHECK-LABEL: func.func @float_mask_f16(
//  CHECK-SAME:     %[[M:[a-z0-9]+]]: tensor<8x16xf16>
//       CHECK:   rope.attention ins({{.*}}) mask(%[[M]] : tensor<8x16xf16>) outs({{.*}}) attributes {indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$MQK]], #[[$O]]], scale = 1.250000e-01 : f64} -> tensor<2x4x8x64xf16>
func.func @float_mask_f16(%q: tensor<2x4x8x64xf16>, %k: tensor<2x4x16x64xf16>, %v: tensor<2x4x16x64xf16>, %mask: tensor<8x16xf16>, %init: tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x8x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>) mask(%mask : tensor<8x16xf16>) outs(%init : tensor<2x4x8x64xf16>) attributes {indexing_maps = [#q, #k, #v, #mask_qk, #o], scale = 0.125 : f64} -> tensor<2x4x8x64xf16>
  return %o : tensor<2x4x8x64xf16>
}

// An i1 mask over every score dim, bf16 operands, f32 output.
// CHECK-LABEL: func.func @i1_mask_bf16(
//       CHECK:   rope.attention ins({{.*}} : tensor<2x4x8x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>) mask(%{{.*}} : tensor<2x4x8x16xi1>) outs(%{{.*}} : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$MFULL]], #[[$O]]], scale = 1.250000e-01 : f64} -> tensor<2x4x8x64xf32>
func.func @i1_mask_bf16(%q: tensor<2x4x8x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x64xbf16>, %mask: tensor<2x4x8x16xi1>, %init: tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x8x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>) mask(%mask : tensor<2x4x8x16xi1>) outs(%init : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#q, #k, #v, #mask_full, #o], scale = 0.125 : f64} -> tensor<2x4x8x64xf32>
  return %o : tensor<2x4x8x64xf32>
}

// Decode with per-row positions and a sliding window over a longer cache.
// CHECK-LABEL: func.func @positions_window(
//  CHECK-SAME:     %[[P:[a-z0-9]+]]: tensor<2x1xi32>, %[[KO:[a-z0-9]+]]: index
//       CHECK:   rope.attention ins({{.*}}) query_positions(%[[P]] : tensor<2x1xi32>) key_offset(%[[KO]]) outs({{.*}}) attributes {causal, indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$POS]], #[[$O]]], scale = 1.250000e-01 : f64, window = 4 : i64} -> tensor<2x4x1x64xf32>
func.func @positions_window(%q: tensor<2x4x1x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %pos: tensor<2x1xi32>, %koff: index, %init: tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x1x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) query_positions(%pos : tensor<2x1xi32>) key_offset(%koff) outs(%init : tensor<2x4x1x64xf32>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 0.125 : f64, causal, window = 4 : i64} -> tensor<2x4x1x64xf32>
  return %o : tensor<2x4x1x64xf32>
}

// Both offsets, causal, f64, dynamic sizes.
// CHECK-LABEL: func.func @offsets_f64(
//  CHECK-SAME:     %[[QO:[a-z0-9]+]]: index, %[[KO:[a-z0-9]+]]: index
//       CHECK:   rope.attention ins({{.*}} : tensor<1x2x?x32xf64>, tensor<1x2x?x32xf64>, tensor<1x2x?x32xf64>) query_offset(%[[QO]]) key_offset(%[[KO]]) outs(%{{.*}} : tensor<1x2x?x32xf64>) attributes {causal, indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$O]]], scale = 1.000000e+00 : f64} -> tensor<1x2x?x32xf64>
func.func @offsets_f64(%q: tensor<1x2x?x32xf64>, %k: tensor<1x2x?x32xf64>, %v: tensor<1x2x?x32xf64>, %qoff: index, %koff: index, %init: tensor<1x2x?x32xf64>) -> tensor<1x2x?x32xf64> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x?x32xf64>, tensor<1x2x?x32xf64>, tensor<1x2x?x32xf64>) query_offset(%qoff) key_offset(%koff) outs(%init : tensor<1x2x?x32xf64>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64, causal} -> tensor<1x2x?x32xf64>
  return %o : tensor<1x2x?x32xf64>
}

// A softcap score region (Gemma 2): the score and one index per loop but
// k1 and n.
// CHECK-LABEL: func.func @softcap(
//       CHECK:   rope.attention {{.*}} attributes {indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$O]]], scale = 1.250000e-01 : f64} {
//  CHECK-NEXT:   ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
//  CHECK-NEXT:     %[[C:.*]] = arith.constant 5.000000e+01 : f32
//  CHECK-NEXT:     %[[D:.*]] = arith.divf %[[S]], %[[C]] : f32
//  CHECK-NEXT:     %[[T:.*]] = math.tanh %[[D]] : f32
//  CHECK-NEXT:     %[[R:.*]] = arith.mulf %[[T]], %[[C]] : f32
//  CHECK-NEXT:     rope.yield %[[R]] : f32
//  CHECK-NEXT:   } -> tensor<2x4x8x64xf32>
func.func @softcap(%q: tensor<2x4x8x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %init: tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x8x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) outs(%init : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64} {
  ^bb0(%s: f32, %b: index, %h: index, %m: index, %k2: index):
    %c = arith.constant 50.0 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    rope.yield %r : f32
  } -> tensor<2x4x8x64xf32>
  return %o : tensor<2x4x8x64xf32>
}

// GQA in [B, S, H, D]: Q viewed as [B, S, Hkv, G, D], the group dim (d3)
// missing from the K/V maps; query_dim names the query loop. Dv != D.
#gq = affine_map<(b, m, h, g, k1, k2, n) -> (b, m, h, g, k1)>
#gk = affine_map<(b, m, h, g, k1, k2, n) -> (b, k2, h, k1)>
#gv = affine_map<(b, m, h, g, k1, k2, n) -> (b, k2, h, n)>
#go = affine_map<(b, m, h, g, k1, k2, n) -> (b, m, h, g, n)>
// CHECK-LABEL: func.func @gqa_bshd(
//       CHECK:   rope.attention ins({{.*}} : tensor<1x8x2x4x64xf32>, tensor<1x16x2x64xf32>, tensor<1x16x2x32xf32>) outs(%{{.*}} : tensor<1x8x2x4x32xf32>) attributes {causal, indexing_maps = [#[[$GQ]], #[[$GK]], #[[$GV]], #[[$GO]]], query_dim = 1 : i64, scale = 1.250000e-01 : f64} -> tensor<1x8x2x4x32xf32>
func.func @gqa_bshd(%q: tensor<1x8x2x4x64xf32>, %k: tensor<1x16x2x64xf32>, %v: tensor<1x16x2x32xf32>, %init: tensor<1x8x2x4x32xf32>) -> tensor<1x8x2x4x32xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x8x2x4x64xf32>, tensor<1x16x2x64xf32>, tensor<1x16x2x32xf32>) outs(%init : tensor<1x8x2x4x32xf32>) attributes {indexing_maps = [#gq, #gk, #gv, #go], scale = 0.125 : f64, causal, query_dim = 1 : i64} -> tensor<1x8x2x4x32xf32>
  return %o : tensor<1x8x2x4x32xf32>
}

// Attention sinks: one logit per (kv head, group) joining the softmax, with
// a mask, positions and a key offset before them in the operand order.
// CHECK-LABEL: func.func @sinks_gqa(
//  CHECK-SAME:     %[[SK:[a-z0-9]+]]: tensor<2x4xbf16>
//       CHECK:   rope.attention ins({{.*}}) mask(%{{.*}} : tensor<8x16xf32>) query_positions(%{{.*}} : tensor<1x8xi32>) key_offset(%{{.*}}) sinks(%[[SK]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<1x8x2x4x32xf32>) attributes {causal, indexing_maps = [#[[$GQ]], #[[$GK]], #[[$GV]], #{{[a-z0-9_]+}}, #{{[a-z0-9_]+}}, #{{[a-z0-9_]+}}, #[[$GO]]], query_dim = 1 : i64, scale = 1.250000e-01 : f64} -> tensor<1x8x2x4x32xf32>
#gmask = affine_map<(b, m, h, g, k1, k2, n) -> (m, k2)>
#gpos = affine_map<(b, m, h, g, k1, k2, n) -> (b, m)>
#gsink = affine_map<(b, m, h, g, k1, k2, n) -> (h, g)>
func.func @sinks_gqa(%q: tensor<1x8x2x4x64xf32>, %k: tensor<1x16x2x64xf32>, %v: tensor<1x16x2x32xf32>, %mask: tensor<8x16xf32>, %pos: tensor<1x8xi32>, %koff: index, %sinks: tensor<2x4xbf16>, %init: tensor<1x8x2x4x32xf32>) -> tensor<1x8x2x4x32xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x8x2x4x64xf32>, tensor<1x16x2x64xf32>, tensor<1x16x2x32xf32>) mask(%mask : tensor<8x16xf32>) query_positions(%pos : tensor<1x8xi32>) key_offset(%koff) sinks(%sinks : tensor<2x4xbf16>) outs(%init : tensor<1x8x2x4x32xf32>) attributes {indexing_maps = [#gq, #gk, #gv, #gmask, #gpos, #gsink, #go], scale = 0.125 : f64, causal, query_dim = 1 : i64} -> tensor<1x8x2x4x32xf32>
  return %o : tensor<1x8x2x4x32xf32>
}

// Sinks alone, one per head of [B, H, S, D].
// CHECK-LABEL: func.func @sinks_per_head(
//       CHECK:   rope.attention ins({{.*}}) sinks(%{{.*}} : tensor<4xf32>) outs({{.*}}) attributes {indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #{{[a-z0-9_]+}}, #[[$O]]], scale = 1.250000e-01 : f64} -> tensor<2x4x8x64xf32>
#head = affine_map<(b, h, m, k1, k2, n) -> (h)>
func.func @sinks_per_head(%q: tensor<2x4x8x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %sinks: tensor<4xf32>, %init: tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<2x4x8x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) sinks(%sinks : tensor<4xf32>) outs(%init : tensor<2x4x8x64xf32>) attributes {indexing_maps = [#q, #k, #v, #head, #o], scale = 0.125 : f64} -> tensor<2x4x8x64xf32>
  return %o : tensor<2x4x8x64xf32>
}

// One online-softmax step: acc in the accumulator type, max and sum shaped
// like acc without n; every optional operand and the region.
// CHECK-LABEL: func.func @online(
//  CHECK-SAME:     %[[ACC:[a-z0-9]+]]: tensor<2x4x8x64xf32>, %[[MAX:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[SUM:[a-z0-9]+]]: tensor<2x4x8xf32>
//       CHECK:   %{{.*}}, %{{.*}}, %{{.*}} = rope.online_attention ins({{.*}} : tensor<2x4x8x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>) mask(%{{.*}} : tensor<8x16xi1>) query_offset(%{{.*}}) key_offset(%{{.*}}) outs(%[[ACC]], %[[MAX]], %[[SUM]] : tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) attributes {causal, indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$MQK]], #[[$O]]], scale = 1.250000e-01 : f64} {
//       CHECK:     rope.yield
//       CHECK:   } -> tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
func.func @online(%q: tensor<2x4x8x64xf16>, %k: tensor<2x4x16x64xf16>, %v: tensor<2x4x16x64xf16>, %mask: tensor<8x16xi1>, %qoff: index, %koff: index, %acc: tensor<2x4x8x64xf32>, %max: tensor<2x4x8xf32>, %sum: tensor<2x4x8xf32>) -> (tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %a, %mx, %s = rope.online_attention ins(%q, %k, %v : tensor<2x4x8x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>) mask(%mask : tensor<8x16xi1>) query_offset(%qoff) key_offset(%koff) outs(%acc, %max, %sum : tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #mask_qk, #o], scale = 0.125 : f64, causal} {
  ^bb0(%x: f32, %b: index, %h: index, %m: index, %k2: index):
    %d = arith.subi %k2, %m : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    %r = arith.addf %x, %f : f32
    rope.yield %r : f32
  } -> tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %a, %mx, %s : tensor<2x4x8x64xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// The online step in f64 with query positions.
// CHECK-LABEL: func.func @online_f64_positions(
//       CHECK:   rope.online_attention ins({{.*}} : tensor<2x4x8x64xf64>, tensor<2x4x16x64xf64>, tensor<2x4x16x64xf64>) query_positions(%{{.*}} : tensor<2x8xi64>) outs({{.*}} : tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>) attributes {causal, indexing_maps = [#[[$Q]], #[[$K]], #[[$V]], #[[$POS]], #[[$O]]], scale = 1.250000e-01 : f64} -> tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>
func.func @online_f64_positions(%q: tensor<2x4x8x64xf64>, %k: tensor<2x4x16x64xf64>, %v: tensor<2x4x16x64xf64>, %pos: tensor<2x8xi64>, %acc: tensor<2x4x8x64xf64>, %max: tensor<2x4x8xf64>, %sum: tensor<2x4x8xf64>) -> (tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>) {
  %a, %mx, %s = rope.online_attention ins(%q, %k, %v : tensor<2x4x8x64xf64>, tensor<2x4x16x64xf64>, tensor<2x4x16x64xf64>) query_positions(%pos : tensor<2x8xi64>) outs(%acc, %max, %sum : tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 0.125 : f64, causal} -> tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>
  return %a, %mx, %s : tensor<2x4x8x64xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>
}
