// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: rope-opt %s --convert-rope-to-linalg --transform-interpreter -split-input-file | FileCheck %s --check-prefix=VECTOR
// RUN: rope-opt %s --convert-rope-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -canonicalize -split-input-file | FileCheck %s --check-prefix=BUFFER --enable-var-scope
// PORTABLE-NOT: affine_map<{{.*}}-d{{[0-9]}}

// rope.apply's fused neighbours in the linalg form (docs/FUSIONS.md), built from
// RotationCore's buildRmsNormFactor / applyRmsNorm / buildStoredValue. Every
// map is a projected permutation (the PORTABLE run: no negated dim) and
// upstream's vectorizer takes every linalg op (the VECTOR run: none left
// after transform.structured.vectorize). Numerics:
// python/tests/numerics/test_neighbours.py (lowering="scalar").

// QK-norm: the sum of squares of each row over its D channels (a reduction
// generic from a zero fill), the row's factor once per row, then both
// members of each pair normalized (factor, then their weight channels) in
// the rotation's body: x' is never materialized. f16 data: compute in f32.
// CHECK-DAG: #[[$ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$MEMBER:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$ROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[$PAIR:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @norm_half_f16(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<4x8x64xf16>, %[[P:[^:]*]]: tensor<4xi64>, %[[W:[^:]*]]: tensor<64xbf16>, %[[INIT:[^:]*]]: tensor<4x8x64xf16>)
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//       CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
//       CHECK:   %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x8xf32>)
//       CHECK:   %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:       ins(%[[X]] : tensor<4x8x64xf16>) outs(%[[FILL]] : tensor<4x8xf32>)
//  CHECK-NEXT:   ^bb0(%[[XS:[^:]*]]: f16, %[[ACC:[^:]*]]: f32):
//  CHECK-NEXT:     %[[XF:.*]] = arith.extf %[[XS]] : f16 to f32
//  CHECK-NEXT:     %[[SQ:.*]] = arith.mulf %[[XF]], %[[XF]] : f32
//  CHECK-NEXT:     %[[ADD:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
//  CHECK-NEXT:     linalg.yield %[[ADD]] : f32
//       CHECK:   %[[FACTOR:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[SUM]] : tensor<4x8xf32>)
//  CHECK-NEXT:   ^bb0(%[[S:[^:]*]]: f32, %{{.*}}: f32):
//  CHECK-NEXT:     %[[D:.*]] = arith.constant 6.400000e+01 : f32
//  CHECK-NEXT:     %[[MEAN:.*]] = arith.divf %[[S]], %[[D]] : f32
//  CHECK-NEXT:     %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
//  CHECK-NEXT:     %[[SHIFTED:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
//  CHECK-NEXT:     %[[RS:.*]] = math.rsqrt %[[SHIFTED]] : f32
//  CHECK-NEXT:     linalg.yield %[[RS]] : f32
//   CHECK-DAG:   %[[W1:.*]] = tensor.extract_slice %[[W]][0] [32] [1] : tensor<64xbf16> to tensor<32xbf16>
//   CHECK-DAG:   %[[W2:.*]] = tensor.extract_slice %[[W]][32] [32] [1] : tensor<64xbf16> to tensor<32xbf16>
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#[[$MEMBER]], #[[$MEMBER]], #{{.*}}, #{{.*}}, #[[$ROW4]], #[[$PAIR]], #[[$PAIR]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1, %[[FACTOR]], %[[W1]], %[[W2]] : tensor<4x8x32xf16>, tensor<4x8x32xf16>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x8xf32>, tensor<32xbf16>, tensor<32xbf16>)
//  CHECK-SAME:       outs(%{{.*}} : tensor<4x8x2x32xf16>)
//  CHECK-NEXT:   ^bb0(%[[A1:[^:]*]]: f16, %[[A2:[^:]*]]: f16, %{{.*}}: f32, %{{.*}}: f32, %[[F:[^:]*]]: f32, %[[WA:[^:]*]]: bf16, %[[WB:[^:]*]]: bf16, %{{.*}}: f16):
//  CHECK-NEXT:     %[[X1:.*]] = arith.extf %[[A1]] : f16 to f32
//  CHECK-NEXT:     %[[X2:.*]] = arith.extf %[[A2]] : f16 to f32
//  CHECK-NEXT:     %[[N1:.*]] = arith.mulf %[[X1]], %[[F]] : f32
//  CHECK-NEXT:     %[[WA32:.*]] = arith.extf %[[WA]] : bf16 to f32
//  CHECK-NEXT:     %[[Y1:.*]] = arith.mulf %[[WA32]], %[[N1]] : f32
//  CHECK-NEXT:     %[[N2:.*]] = arith.mulf %[[X2]], %[[F]] : f32
//  CHECK-NEXT:     %[[WB32:.*]] = arith.extf %[[WB]] : bf16 to f32
//  CHECK-NEXT:     %[[Y2:.*]] = arith.mulf %[[WB32]], %[[N2]] : f32
//       CHECK:     %[[SELF:.*]] = arith.select %{{.*}}, %[[Y1]], %[[Y2]] : f32
//  CHECK-NEXT:     %[[PARTNER:.*]] = arith.select %{{.*}}, %[[Y2]], %[[Y1]] : f32
//       CHECK:     %[[OUT:.*]] = math.fma %[[PARTNER]], %{{.*}}, %{{.*}} : f32
//  CHECK-NEXT:     %[[H:.*]] = arith.truncf %[[OUT]] : f32 to f16
//  CHECK-NEXT:     linalg.yield %[[H]] : f16
//       CHECK:   tensor.collapse_shape %[[R]]
//   CHECK-NOT:   linalg.copy
//       CHECK:   return
// VECTOR-LABEL: func.func @norm_half_f16(
//   VECTOR-NOT:   linalg.
//       VECTOR:   vector.multi_reduction <add>, {{.*}} [2] : vector<4x8x64xf32> to vector<4x8xf32>
//   VECTOR-NOT:   linalg.
//       VECTOR:   return
func.func @norm_half_f16(%x: tensor<4x8x64xf16>, %p: tensor<4xi64>, %w: tensor<64xbf16>, %init: tensor<4x8x64xf16>) -> tensor<4x8x64xf16> {
  %y = rope.apply ins(%x : tensor<4x8x64xf16>) positions(%p : tensor<4xi64>) norm(%w : tensor<64xbf16>) outs(%init : tensor<4x8x64xf16>) {norm_epsilon = 1.0e-05} -> tensor<4x8x64xf16>
  return %y : tensor<4x8x64xf16>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy", "linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// fp8 output, one scale for the tensor: the scale is a rank-0 operand read
// through a broadcast map; y * s is clamped to +-448 (NaN stays NaN) and
// truncated (round to nearest even) into the f8E4M3FN destination, which the
// rotation's single output writes in place.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1, d2, d3, d4) -> ()>
// CHECK-DAG: #[[$ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @quant_f8_per_tensor(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x16x4x64xbf16>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[S:[^:]*]]: tensor<f32>, %[[INIT:[^:]*]]: tensor<2x16x4x64xf8E4M3FN>)
//   CHECK-NOT:   iterator_types = [{{.*}}"reduction"
//       CHECK:   %[[PAIRS:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 16, 4, 2, 32] : tensor<2x16x4x64xf8E4M3FN> into tensor<2x16x4x2x32xf8E4M3FN>
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #[[$SCALAR]], #[[$ID5]]]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]] : tensor<2x16x4x32xbf16>, tensor<2x16x4x32xbf16>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<f32>)
//  CHECK-SAME:       outs(%[[PAIRS]] : tensor<2x16x4x2x32xf8E4M3FN>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32, %{{.*}}: f32, %[[SV:[^:]*]]: f32, %{{.*}}: f8E4M3FN):
//       CHECK:     %[[Y:.*]] = math.fma
//  CHECK-NEXT:     %[[SCALED:.*]] = arith.mulf %[[Y]], %[[SV]] : f32
//  CHECK-NEXT:     %[[HI:.*]] = arith.constant 4.480000e+02 : f32
//  CHECK-NEXT:     %[[MIN:.*]] = arith.minimumf %[[SCALED]], %[[HI]] : f32
//  CHECK-NEXT:     %[[LO:.*]] = arith.constant -4.480000e+02 : f32
//  CHECK-NEXT:     %[[MAX:.*]] = arith.maximumf %[[MIN]], %[[LO]] : f32
//  CHECK-NEXT:     %[[Q:.*]] = arith.truncf %[[MAX]] : f32 to f8E4M3FN
//  CHECK-NEXT:     linalg.yield %[[Q]] : f8E4M3FN
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[R]] {{.*}} into tensor<2x16x4x64xf8E4M3FN>
//  CHECK-NEXT:   return %[[C]]
// VECTOR-LABEL: func.func @quant_f8_per_tensor(
//   VECTOR-NOT:   linalg.
//       VECTOR:   arith.truncf {{.*}} : vector<2x16x4x2x32xf32> to vector<2x16x4x2x32xf8E4M3FN>
//   VECTOR-NOT:   linalg.
//       VECTOR:   return
func.func @quant_f8_per_tensor(%x: tensor<2x16x4x64xbf16>, %p: tensor<2x16xi64>, %s: tensor<f32>, %init: tensor<2x16x4x64xf8E4M3FN>) -> tensor<2x16x4x64xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xbf16>) positions(%p : tensor<2x16xi64>) quant_scale(%s : tensor<f32>) outs(%init : tensor<2x16x4x64xf8E4M3FN>) -> tensor<2x16x4x64xf8E4M3FN>
  return %y : tensor<2x16x4x64xf8E4M3FN>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy", "linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// i8 output, one scale per head, on [B, H, S, D] (token_dims (0, 2)): the
// scale is indexed by the head dim d1; round to nearest even, clamp to
// [-128, 127], NaN -> 0, then fptosi.
// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1)>
// CHECK-LABEL: func.func @quant_i8_per_head_bhsd(
//  CHECK-SAME:     %[[S:[^:]*]]: tensor<4xf32>, %[[INIT:[^:]*]]: tensor<2x4x16x64xi8>)
//       CHECK:   %[[PAIRS:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 4, 16, 32, 2] : tensor<2x4x16x64xi8> into tensor<2x4x16x32x2xi8>
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #[[$HEAD]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]] : {{.*}}, tensor<4xf32>) outs(%[[PAIRS]] : tensor<2x4x16x32x2xi8>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[SV:[^:]*]]: f32, %{{.*}}: i8):
//       CHECK:     %[[Y:.*]] = math.fma
//  CHECK-NEXT:     %[[SCALED:.*]] = arith.mulf %[[Y]], %[[SV]] : f32
//  CHECK-NEXT:     %[[RE:.*]] = math.roundeven %[[SCALED]] : f32
//  CHECK-NEXT:     %[[HI:.*]] = arith.constant 1.270000e+02 : f32
//  CHECK-NEXT:     %[[MIN:.*]] = arith.minimumf %[[RE]], %[[HI]] : f32
//  CHECK-NEXT:     %[[LO:.*]] = arith.constant -1.280000e+02 : f32
//  CHECK-NEXT:     %[[MAX:.*]] = arith.maximumf %[[MIN]], %[[LO]] : f32
//  CHECK-NEXT:     %[[NAN:.*]] = arith.cmpf uno, %[[MAX]], %[[MAX]] : f32
//  CHECK-NEXT:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//  CHECK-NEXT:     %[[SEL:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[MAX]] : f32
//  CHECK-NEXT:     %[[Q:.*]] = arith.fptosi %[[SEL]] : f32 to i8
//  CHECK-NEXT:     linalg.yield %[[Q]] : i8
// VECTOR-LABEL: func.func @quant_i8_per_head_bhsd(
//   VECTOR-NOT:   linalg.
//       VECTOR:   arith.fptosi {{.*}} : vector<2x4x16x32x2xf32> to vector<2x4x16x32x2xi8>
//   VECTOR-NOT:   linalg.
//       VECTOR:   return
func.func @quant_i8_per_head_bhsd(%x: tensor<2x4x16x64xf32>, %p: tensor<2x16xi64>, %s: tensor<4xf32>, %init: tensor<2x4x16x64xi8>) -> tensor<2x4x16x64xi8> {
  %y = rope.apply ins(%x : tensor<2x4x16x64xf32>) positions(%p : tensor<2x16xi64>) quant_scale(%s : tensor<4xf32>) outs(%init : tensor<2x4x16x64xi8>) {layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>} -> tensor<2x4x16x64xi8>
  return %y : tensor<2x4x16x64xi8>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy", "linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// QK-norm and an i8 output per head, interleaved, partial rotary (P = 32 of
// D = 64): the weight's pair members are the strided slices w[0::2] and
// w[1::2] of its first P channels; the pass-through channels [P, D) are not
// copied but normalized (same row factor, weight channels [P, D)) and
// quantized by a generic of their own.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$CH3:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$HEAD3:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$ROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[$PAIR:.+]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG: #[[$HEAD4:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @norm_quant_partial(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<4x8x64xf32>, %[[P:[^:]*]]: tensor<4xi64>, %[[W:[^:]*]]: tensor<64xbf16>, %[[S:[^:]*]]: tensor<8xf32>, %[[INIT:[^:]*]]: tensor<4x8x64xi8>)
//       CHECK:   %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:       ins(%[[X]] : tensor<4x8x64xf32>)
//       CHECK:   %[[FACTOR:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4x8xf32>)
//       CHECK:     math.rsqrt
//   CHECK-DAG:   %[[W1:.*]] = tensor.extract_slice %[[W]][0] [16] [2] : tensor<64xbf16> to tensor<16xbf16>
//   CHECK-DAG:   %[[W2:.*]] = tensor.extract_slice %[[W]][1] [16] [2] : tensor<64xbf16> to tensor<16xbf16>
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #[[$ROW4]], #[[$PAIR]], #[[$PAIR]], #[[$HEAD4]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FACTOR]], %[[W1]], %[[W2]], %[[S]] : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>, tensor<16xbf16>, tensor<16xbf16>, tensor<8xf32>)
//  CHECK-SAME:       outs(%{{.*}} : tensor<4x8x16x2xi8>)
//       CHECK:     arith.fptosi %{{.*}} : f32 to i8
//       CHECK:   %[[ROT:.*]] = tensor.insert_slice %{{.*}} into %[[INIT]][0, 0, 0] [4, 8, 32] [1, 1, 1] : tensor<4x8x32xi8> into tensor<4x8x64xi8>
//   CHECK-DAG:   %[[XP:.*]] = tensor.extract_slice %[[X]][0, 0, 32] [4, 8, 32] [1, 1, 1] : tensor<4x8x64xf32> to tensor<4x8x32xf32>
//   CHECK-DAG:   %[[DP:.*]] = tensor.extract_slice %[[ROT]][0, 0, 32] [4, 8, 32] [1, 1, 1] : tensor<4x8x64xi8> to tensor<4x8x32xi8>
//   CHECK-DAG:   %[[WP:.*]] = tensor.extract_slice %[[W]][32] [32] [1] : tensor<64xbf16> to tensor<32xbf16>
//   CHECK-NOT:   linalg.copy
//       CHECK:   %[[PASS:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$ROW3]], #[[$CH3]], #[[$HEAD3]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[XP]], %[[FACTOR]], %[[WP]], %[[S]] : tensor<4x8x32xf32>, tensor<4x8xf32>, tensor<32xbf16>, tensor<8xf32>) outs(%[[DP]] : tensor<4x8x32xi8>)
//  CHECK-NEXT:   ^bb0(%[[PX:[^:]*]]: f32, %[[PF:[^:]*]]: f32, %[[PW:[^:]*]]: bf16, %[[PS:[^:]*]]: f32, %{{.*}}: i8):
//  CHECK-NEXT:     %[[N:.*]] = arith.mulf %[[PX]], %[[PF]] : f32
//  CHECK-NEXT:     %[[PW32:.*]] = arith.extf %[[PW]] : bf16 to f32
//  CHECK-NEXT:     %[[XN:.*]] = arith.mulf %[[PW32]], %[[N]] : f32
//  CHECK-NEXT:     %[[XS:.*]] = arith.mulf %[[XN]], %[[PS]] : f32
//  CHECK-NEXT:     math.roundeven %[[XS]] : f32
//       CHECK:     %[[Q:.*]] = arith.fptosi %{{.*}} : f32 to i8
//  CHECK-NEXT:     linalg.yield %[[Q]] : i8
//       CHECK:   %[[OUT:.*]] = tensor.insert_slice %[[PASS]] into %[[ROT]][0, 0, 32] [4, 8, 32] [1, 1, 1]
//  CHECK-NEXT:   return %[[OUT]]
// Bufferized, the op writes straight into its destination (rotated channels
// through the pairs view, pass-through channels through their subview);
// only the cos/sin table and the per-row sums and factors are allocated.
// BUFFER-LABEL: func.func @norm_quant_partial(
//  BUFFER-SAME:     %[[X:[^:]*]]: memref<4x8x64xf32>, %{{.*}}: memref<4xi64>, %{{.*}}: memref<64xbf16>, %[[S:[^:]*]]: memref<8xf32>, %[[INIT:[^:]*]]: memref<4x8x64xi8>) -> memref<4x8x64xi8>
//   BUFFER-NOT:   memref.copy
//   BUFFER-NOT:   memref.alloc() {{.*}} : memref<4x8x{{[0-9]}}
//       BUFFER:   %[[ROWS:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
//       BUFFER:   %[[FACTOR:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
//       BUFFER:   %[[ROT:.*]] = memref.subview %[[INIT]][0, 0, 0] [4, 8, 32]
//       BUFFER:   %[[PAIRS:.*]] = memref.expand_shape %[[ROT]]
//       BUFFER:   linalg.generic {{.*}} outs(%[[PAIRS]] : memref<4x8x16x2xi8, {{.*}}>)
//       BUFFER:   %[[PASS:.*]] = memref.subview %[[INIT]][0, 0, 32] [4, 8, 32]
//       BUFFER:   linalg.generic {{.*}} ins(%{{.*}}, %[[FACTOR]], %{{.*}}, %[[S]] : {{.*}}) outs(%[[PASS]] : memref<4x8x32xi8, {{.*}}>)
//   BUFFER-NOT:   memref.copy
//   BUFFER-NOT:   memref.alloc
//       BUFFER:   return %[[INIT]] : memref<4x8x64xi8>
// VECTOR-LABEL: func.func @norm_quant_partial(
//   VECTOR-NOT:   linalg.
//       VECTOR:   return
func.func @norm_quant_partial(%x: tensor<4x8x64xf32>, %p: tensor<4xi64>, %w: tensor<64xbf16>, %s: tensor<8xf32>, %init: tensor<4x8x64xi8>) -> tensor<4x8x64xi8> {
  %y = rope.apply ins(%x : tensor<4x8x64xf32>) positions(%p : tensor<4xi64>) norm(%w : tensor<64xbf16>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<4x8x64xi8>) {layout = #rope.layout<interleaved>, rotary_dim = 32 : i64, norm_epsilon = 1.0e-06} -> tensor<4x8x64xi8>
  return %y : tensor<4x8x64xi8>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy", "linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}

// -----

// Partial rotary with a quantized output and no norm: the pass-through
// channels are stored quantized (f8E5M2: clamped to +-57344), by a generic,
// not copied.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$SCALAR3:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @partial_quant_f8e5m2(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x2x64xf16>, %[[S:[^:]*]]: tensor<f32>, %[[INIT:[^:]*]]: tensor<8x2x64xf8E5M2>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   linalg.generic
//       CHECK:     arith.truncf %{{.*}} : f32 to f8E5M2
//       CHECK:   %[[ROT:.*]] = tensor.insert_slice %{{.*}} into %[[INIT]][0, 0, 0] [8, 2, 16] [1, 1, 1]
//   CHECK-DAG:   %[[XP:.*]] = tensor.extract_slice %[[X]][0, 0, 16] [8, 2, 48] [1, 1, 1]
//   CHECK-DAG:   %[[DP:.*]] = tensor.extract_slice %[[ROT]][0, 0, 16] [8, 2, 48] [1, 1, 1]
//   CHECK-NOT:   linalg.copy
//       CHECK:   %[[PASS:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$SCALAR3]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[XP]], %[[S]] : tensor<8x2x48xf16>, tensor<f32>) outs(%[[DP]] : tensor<8x2x48xf8E5M2>)
//  CHECK-NEXT:   ^bb0(%[[PX:[^:]*]]: f16, %[[PS:[^:]*]]: f32, %{{.*}}: f8E5M2):
//  CHECK-NEXT:     %[[XF:.*]] = arith.extf %[[PX]] : f16 to f32
//  CHECK-NEXT:     %[[XS:.*]] = arith.mulf %[[XF]], %[[PS]] : f32
//  CHECK-NEXT:     %[[HI:.*]] = arith.constant 5.734400e+04 : f32
//  CHECK-NEXT:     %[[MIN:.*]] = arith.minimumf %[[XS]], %[[HI]] : f32
//  CHECK-NEXT:     %[[LO:.*]] = arith.constant -5.734400e+04 : f32
//  CHECK-NEXT:     %[[MAX:.*]] = arith.maximumf %[[MIN]], %[[LO]] : f32
//  CHECK-NEXT:     %[[Q:.*]] = arith.truncf %[[MAX]] : f32 to f8E5M2
//  CHECK-NEXT:     linalg.yield %[[Q]] : f8E5M2
//       CHECK:   %[[OUT:.*]] = tensor.insert_slice %[[PASS]] into %[[ROT]][0, 0, 16] [8, 2, 48] [1, 1, 1]
//  CHECK-NEXT:   return %[[OUT]]
// VECTOR-LABEL: func.func @partial_quant_f8e5m2(
//   VECTOR-NOT:   linalg.
//       VECTOR:   arith.truncf {{.*}} : vector<8x2x48xf32> to vector<8x2x48xf8E5M2>
//   VECTOR-NOT:   linalg.
//       VECTOR:   return
func.func @partial_quant_f8e5m2(%x: tensor<8x2x64xf16>, %s: tensor<f32>, %init: tensor<8x2x64xf8E5M2>) -> tensor<8x2x64xf8E5M2> {
  %y = rope.apply ins(%x : tensor<8x2x64xf16>) quant_scale(%s : tensor<f32>) outs(%init : tensor<8x2x64xf8E5M2>) {rotary_dim = 16 : i64} -> tensor<8x2x64xf8E5M2>
  return %y : tensor<8x2x64xf8E5M2>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic", "linalg.copy", "linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g : !transform.any_op
    transform.yield
  }
}
