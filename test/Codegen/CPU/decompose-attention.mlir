// RUN: rope-opt %s --rope-decompose-aggregates --split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --transform-interpreter --split-input-file | FileCheck %s --enable-var-scope --check-prefix=STEP

// (Each case carries a transform script for the second run: one
// decomposition step of rope.attention through upstream's
// transform.structured.decompose_interface.)

// rope-decompose-aggregates on the attention ops, repeated until no
// aggregated op is left: rope.attention -> (fills, rope.online_attention,
// normalization) -> linalg. The online step becomes what the fused whole
// attention produces for one key tile: a Q·Kᵀ contraction over k1 into
// zeros, one elementwise generic (scale, region, masks), the online update
// (row max, exp, rescale, new max, new sum, rescaled acc; from the initial
// state of a whole rope.attention only row max, exp and sum) and a P·V
// contraction over k2 into the rescaled acc. Executed:
// python/tests/numerics/test_attention_op.py.

// The loops are (b, h, m, k1, k2, n); scores are indexed by (b, h, m, k2).
// CHECK-DAG: #[[$Q5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$K5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[$S5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$V5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>

// CHECK-LABEL: func.func @attention_softcap_causal(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x6x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x6x16xf32>, %[[INIT:[a-z0-9]+]]: tensor<1x2x4x16xf32>
//   CHECK-NOT:   rope.
// The initial state: acc 0, max -inf, sum 0.
//       CHECK:   %[[ACC0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4x16xf32>)
//       CHECK:   %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[MAX0:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x2x4xf32>)
//       CHECK:   %[[SUM0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4xf32>)
// 1. Scores: a contraction over k1 into zeros.
//       CHECK:   %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4x6xf32>)
//       CHECK:   %[[QK:.*]] = linalg.generic {indexing_maps = [#[[$Q5]], #[[$K5]], #[[$S5]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[ZERO]] : tensor<1x2x4x6xf32>)
//  CHECK-NEXT:   ^bb0(%[[QE:.*]]: f32, %[[KE:.*]]: f32, %[[SE:.*]]: f32):
//  CHECK-NEXT:     %[[PR:.*]] = arith.mulf %[[QE]], %[[KE]] : f32
//  CHECK-NEXT:     %[[SU:.*]] = arith.addf %[[PR]], %[[SE]] : f32
//  CHECK-NEXT:     linalg.yield %[[SU]]
// 2. Scale, the region (softcap) and the causal mask at bottom-right
// alignment (Sk - Sq = 2), in one elementwise generic.
//       CHECK:   %[[QOFF:.*]] = arith.constant 2 : index
//       CHECK:   %[[MS:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[QK]] : tensor<1x2x4x6xf32>)
//  CHECK-NEXT:   ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
//       CHECK:     %[[SC:.*]] = arith.mulf %[[X]], %{{.*}} : f32
//       CHECK:     %[[D:.*]] = arith.divf %[[SC]], %{{.*}} : f32
//       CHECK:     %[[T:.*]] = math.tanh %[[D]] : f32
//       CHECK:     %[[CAP:.*]] = arith.mulf %[[T]], %{{.*}} : f32
//       CHECK:     %[[KI:.*]] = linalg.index 3 : index
//       CHECK:     %[[KP:.*]] = arith.index_cast %[[KI]] : index to i64
//       CHECK:     %[[MI:.*]] = linalg.index 2 : index
//       CHECK:     %[[QI:.*]] = arith.addi %[[MI]], %[[QOFF]] : index
//       CHECK:     %[[QP:.*]] = arith.index_cast %[[QI]] : index to i64
//       CHECK:     %[[KEEP:.*]] = arith.cmpi sle, %[[KP]], %[[QP]] : i64
//       CHECK:     %[[MASKED:.*]] = arith.select %[[KEEP]], %[[CAP]], %{{.*}} : f32
//       CHECK:     linalg.yield %[[MASKED]]
// 3. The online update.
//       CHECK:   %[[RMAX0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4xf32>)
//       CHECK:   %[[RMAX:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[MS]] : {{.*}}) outs(%[[RMAX0]] : {{.*}})
//       CHECK:     arith.maximumf
//       CHECK:   %[[P:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW4]], #[[$ID4]]], {{.*}}} ins(%[[MS]], %[[RMAX]] : {{.*}})
//       CHECK:     arith.maximumf
//       CHECK:     arith.cmpf oeq
//       CHECK:     arith.select
//       CHECK:     arith.subf
//       CHECK:     math.exp
// From the initial state nothing is rescaled (exp(-inf - shift) = 0 times
// zeros): the sum reduces P into the zeros and P·V accumulates into the
// zero acc, with no generic between.
//   CHECK-NOT:   math.exp
//       CHECK:   %[[SUM2:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : {{.*}}) outs(%[[SUM0]] : {{.*}})
//       CHECK:     arith.addf
//   CHECK-NOT:   linalg.generic
// P·V over (b, h, m, k2, n), k2 the reduction, into the acc.
//       CHECK:   %[[PV:.*]] = linalg.generic {indexing_maps = [#[[$Q5]], #[[$V5]], #[[$S5]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[V]] : {{.*}}) outs(%[[ACC0]] : tensor<1x2x4x16xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
// O = acc / sum, into the destination.
//       CHECK:   %[[O:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW4]], #[[$ID4]]], {{.*}}} ins(%[[PV]], %[[SUM2]] : {{.*}}) outs(%[[INIT]] : tensor<1x2x4x16xf32>)
//       CHECK:     arith.divf
//       CHECK:   return %[[O]]

// One step: the fills, an online_attention over all keys with the same
// operands, attributes and region, and the normalization.
// STEP-LABEL: func.func @attention_softcap_causal(
//       STEP:   %[[ACC0:.*]] = linalg.fill {{.*}} -> tensor<1x2x4x16xf32>
//       STEP:   %[[MAX0:.*]] = linalg.fill {{.*}} -> tensor<1x2x4xf32>
//       STEP:   %[[SUM0:.*]] = linalg.fill {{.*}} -> tensor<1x2x4xf32>
//       STEP:   %[[A:.*]], %{{.*}}, %[[S:.*]] = rope.online_attention ins({{.*}}) outs(%[[ACC0]], %[[MAX0]], %[[SUM0]] : {{.*}}) attributes {causal, {{.*}}scale = 5.000000e-01 : f64} {
//       STEP:     math.tanh
//       STEP:     rope.yield
//       STEP:   linalg.generic {{.*}} ins(%[[A]], %[[S]] : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>)
//       STEP:     arith.divf
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @attention_softcap_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x16xf32>, %init: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x16xf32>) outs(%init : tensor<1x2x4x16xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.5 : f64, causal} {
  ^bb0(%s: f32, %b: index, %h: index, %m: index, %k2: index):
    %c = arith.constant 30.0 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    rope.yield %r : f32
  } -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// The online step of a GQA [B, S, H, D] op with f16 operands: the
// contractions extend to f32 inside their bodies; an i1 mask selects; query
// positions (i32) are sign-extended; the window also needs kpos > qpos - W;
// max, sum and the row tensors are laid out like acc without n; V's map
// lacks the group dim.
// CHECK-DAG: #[[$GQ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$GK:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d5, d2, d4)>
// CHECK-DAG: #[[$GS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[$GID:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$GMASK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-DAG: #[[$GPOS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
// CHECK-DAG: #[[$GV:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d2, d5)>
// CHECK-LABEL: func.func @online_gqa_f16(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<1x4x2x2x8xf16>, %[[K:[a-z0-9]+]]: tensor<1x6x2x8xf16>, %[[V:[a-z0-9]+]]: tensor<1x6x2x16xf16>, %[[MASK:[a-z0-9]+]]: tensor<4x6xi1>, %[[POS:[a-z0-9]+]]: tensor<1x4xi32>, %[[ACC:[a-z0-9]+]]: tensor<1x4x2x2x16xf32>, %[[MAX:[a-z0-9]+]]: tensor<1x4x2x2xf32>, %[[SUM:[a-z0-9]+]]: tensor<1x4x2x2xf32>
//       CHECK:   %[[QK:.*]] = linalg.generic {indexing_maps = [#[[$GQ]], #[[$GK]], #[[$GS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[Q]], %[[K]] : {{.*}})
//  CHECK-NEXT:   ^bb0(%[[QE:.*]]: f16, %[[KE:.*]]: f16, %{{.*}}: f32):
//  CHECK-NEXT:     arith.extf %[[QE]] : f16 to f32
//  CHECK-NEXT:     arith.extf %[[KE]] : f16 to f32
//       CHECK:   %[[MS:.*]] = linalg.generic {indexing_maps = [#[[$GID]], #[[$GMASK]], #[[$GPOS]], #[[$GID]]], {{.*}}} ins(%[[QK]], %[[MASK]], %[[POS]] : {{.*}})
//  CHECK-NEXT:   ^bb0(%{{.*}}: f32, %[[M1:.*]]: i1, %[[P1:.*]]: i32, %{{.*}}: f32):
//       CHECK:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
//       CHECK:     %[[SEL:.*]] = arith.select %[[M1]], %{{.*}}, %[[NEGINF]] : f32
//       CHECK:     %[[KI:.*]] = linalg.index 4 : index
//       CHECK:     %[[KP:.*]] = arith.index_cast %[[KI]] : index to i64
//       CHECK:     %[[QP:.*]] = arith.extsi %[[P1]] : i32 to i64
//       CHECK:     %[[CAUSAL:.*]] = arith.cmpi sle, %[[KP]], %[[QP]] : i64
//       CHECK:     %[[W:.*]] = arith.constant 3 : i64
//       CHECK:     %[[LOW:.*]] = arith.subi %[[QP]], %[[W]] : i64
//       CHECK:     %[[INWIN:.*]] = arith.cmpi sgt, %[[KP]], %[[LOW]] : i64
//       CHECK:     %[[KEEP:.*]] = arith.andi %[[CAUSAL]], %[[INWIN]] : i1
//       CHECK:     arith.select %[[KEEP]], %[[SEL]], %[[NEGINF]] : f32
//       CHECK:   %[[NMAX:.*]] = linalg.generic {{.*}} outs(%[[MAX]] : tensor<1x4x2x2xf32>)
//       CHECK:   %[[NSUM1:.*]] = linalg.generic {{.*}} outs(%[[SUM]] : tensor<1x4x2x2xf32>)
//       CHECK:   %[[NSUM:.*]] = linalg.generic {{.*}} outs(%[[NSUM1]] : tensor<1x4x2x2xf32>)
//       CHECK:   %[[SACC:.*]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<1x4x2x2x16xf32>)
//       CHECK:   %[[PV:.*]] = linalg.generic {indexing_maps = [#[[$GQ]], #[[$GV]], #[[$GS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %[[V]] : tensor<1x4x2x2x6xf32>, tensor<1x6x2x16xf16>) outs(%[[SACC]] : tensor<1x4x2x2x16xf32>)
//  CHECK-NEXT:   ^bb0(%[[PE:.*]]: f32, %[[VE:.*]]: f16, %[[AE:.*]]: f32):
//  CHECK-NEXT:     %[[VX:.*]] = arith.extf %[[VE]] : f16 to f32
//  CHECK-NEXT:     %[[PVX:.*]] = arith.mulf %[[PE]], %[[VX]] : f32
//  CHECK-NEXT:     arith.addf %[[PVX]], %[[AE]] : f32
//       CHECK:   return %[[PV]], %[[NMAX]], %[[NSUM]]
#gq = affine_map<(b, m, h, g, k1, k2, n) -> (b, m, h, g, k1)>
#gk = affine_map<(b, m, h, g, k1, k2, n) -> (b, k2, h, k1)>
#gv = affine_map<(b, m, h, g, k1, k2, n) -> (b, k2, h, n)>
#gmask = affine_map<(b, m, h, g, k1, k2, n) -> (m, k2)>
#gpos = affine_map<(b, m, h, g, k1, k2, n) -> (b, m)>
#go = affine_map<(b, m, h, g, k1, k2, n) -> (b, m, h, g, n)>
func.func @online_gqa_f16(%q: tensor<1x4x2x2x8xf16>, %k: tensor<1x6x2x8xf16>, %v: tensor<1x6x2x16xf16>, %mask: tensor<4x6xi1>, %pos: tensor<1x4xi32>, %acc: tensor<1x4x2x2x16xf32>, %max: tensor<1x4x2x2xf32>, %sum: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x2x16xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) {
  %a, %mx, %s = rope.online_attention ins(%q, %k, %v : tensor<1x4x2x2x8xf16>, tensor<1x6x2x8xf16>, tensor<1x6x2x16xf16>) mask(%mask : tensor<4x6xi1>) query_positions(%pos : tensor<1x4xi32>) outs(%acc, %max, %sum : tensor<1x4x2x2x16xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) attributes {indexing_maps = [#gq, #gk, #gv, #gmask, #gpos, #go], scale = 0.5 : f64, causal, window = 3 : i64, query_dim = 1 : i64} -> tensor<1x4x2x2x16xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
  return %a, %mx, %s : tensor<1x4x2x2x16xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A float mask is converted to the accumulator type and added; offsets are
// added to the indices; an f16 output of f32 operands is truncated after
// the division; the running state starts in f32.
// CHECK-LABEL: func.func @attention_float_mask_offsets_f16_out(
//  CHECK-SAME:     %[[QO:[a-z0-9]+]]: index, %[[KO:[a-z0-9]+]]: index
//       CHECK:   linalg.fill {{.*}} -> tensor<1x2x4x16xf32>
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x4x6xf32>, tensor<1x2x4x6xf64>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: f32, %[[M:.*]]: f64, %{{.*}}: f32):
//       CHECK:     %[[MT:.*]] = arith.truncf %[[M]] : f64 to f32
//       CHECK:     arith.addf %{{.*}}, %[[MT]] : f32
//       CHECK:     %[[KI:.*]] = linalg.index 3 : index
//       CHECK:     arith.addi %[[KI]], %[[KO]] : index
//       CHECK:     %[[MI:.*]] = linalg.index 2 : index
//       CHECK:     arith.addi %[[MI]], %[[QO]] : index
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x16xf16>)
//       CHECK:     %[[DIV:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:     arith.truncf %[[DIV]] : f32 to f16
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#mask = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k2)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @attention_float_mask_offsets_f16_out(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x16xf32>, %mask: tensor<1x2x4x6xf64>, %qoff: index, %koff: index, %init: tensor<1x2x4x16xf16>) -> tensor<1x2x4x16xf16> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x16xf32>) mask(%mask : tensor<1x2x4x6xf64>) query_offset(%qoff) key_offset(%koff) outs(%init : tensor<1x2x4x16xf16>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 1.0 : f64, causal} -> tensor<1x2x4x16xf16>
  return %o : tensor<1x2x4x16xf16>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// f16 operands with an f64 output accumulate in f32 (Q, K and V decide the
// accumulator, not the output, which is only converted to): the online step
// runs in f32 on the f16 operands as they are, and the normalization writes
// f64.
// CHECK-LABEL: func.func @attention_f64_output(
//  CHECK-SAME:     %[[V:[a-z0-9]+]]: tensor<1x2x6x16xf16>
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x6xf32>)
//       CHECK:     arith.extf %{{.*}} : f16 to f32
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[V]] : tensor<1x2x4x6xf32>, tensor<1x2x6x16xf16>)
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x16xf64>)
//       CHECK:     arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:     arith.extf %{{.*}} : f32 to f64
// STEP-LABEL: func.func @attention_f64_output(
//       STEP:   rope.online_attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x16xf16>) outs({{.*}} : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @attention_f64_output(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x6x8xf16>, %v: tensor<1x2x6x16xf16>, %init: tensor<1x2x4x16xf64>) -> tensor<1x2x4x16xf64> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x16xf16>) outs(%init : tensor<1x2x4x16xf64>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x16xf64>
  return %o : tensor<1x2x4x16xf64>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Sinks (one bf16 logit per head of [B, S, H, D]) start the state: max is
// the sink converted to the accumulator type, sum exp(t - t) (1, or 0 for
// t = -inf through the finite shift), acc 0; the online step has no sinks.
// STEP-LABEL: func.func @attention_sinks(
//  STEP-SAME:     %[[S:[a-z0-9]+]]: tensor<4xbf16>
//       STEP:   %[[ACC0:.*]] = linalg.fill {{.*}} -> tensor<1x6x4x16xf32>
//       STEP:   %[[MAX0:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<4xbf16>) outs(%{{.*}} : tensor<1x6x4xf32>)
//  STEP-NEXT:   ^bb0(%[[T:.*]]: bf16, %{{.*}}: f32):
//  STEP-NEXT:     %[[TE:.*]] = arith.extf %[[T]] : bf16 to f32
//  STEP-NEXT:     linalg.yield %[[TE]] : f32
//       STEP:   %[[SUM0:.*]] = linalg.generic {{.*}} ins(%[[MAX0]] : tensor<1x6x4xf32>) outs(%{{.*}} : tensor<1x6x4xf32>)
//       STEP:     arith.cmpf oeq
//       STEP:     arith.select
//       STEP:     arith.subf
//       STEP:     math.exp
//       STEP:   %[[A:.*]], %{{.*}}, %[[SU:.*]] = rope.online_attention ins({{.*}}) outs(%[[ACC0]], %[[MAX0]], %[[SUM0]] : {{.*}}) attributes {causal, {{.*}}}
//       STEP:   linalg.generic {{.*}} ins(%[[A]], %[[SU]] : tensor<1x6x4x16xf32>, tensor<1x6x4xf32>)
//       STEP:     arith.divf
// Fully decomposed: no rope op left.
// CHECK-LABEL: func.func @attention_sinks(
//   CHECK-NOT:   rope.
//       CHECK:   return
#q = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, k1)>
#k = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, k1)>
#v = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, n)>
#s = affine_map<(b, m, h, k1, k2, n) -> (h)>
#o = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, n)>
func.func @attention_sinks(%q: tensor<1x6x4x8xf32>, %k: tensor<1x6x4x8xf32>, %v: tensor<1x6x4x16xf32>, %sinks: tensor<4xbf16>, %init: tensor<1x6x4x16xf32>) -> tensor<1x6x4x16xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x6x4x8xf32>, tensor<1x6x4x8xf32>, tensor<1x6x4x16xf32>) sinks(%sinks : tensor<4xbf16>) outs(%init : tensor<1x6x4x16xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 0.5 : f64, causal} -> tensor<1x6x4x16xf32>
  return %o : tensor<1x6x4x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["rope.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
