// RUN: rope-opt %s --convert-rope-to-vector -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --enable-var-scope --check-prefix=BUF

// rope.apply's fused neighbours (issue 18) in the vector form: QK-norm before
// the rotation and a quantized output after it ride on the rows of the token
// loop. With norm, each row is read twice inside the heads loop: a first pass
// sums x^2 chunk by chunk into one vector, reduced once per row, and forms the
// factor rsqrt(sum / D + eps) (in the per-token form, rows that convert take
// blocks of 4 rows that reduce their vectors together: norm-blocks.mlir);
// the rotation pass reads each chunk again and
// scales it by the factor and the weight (read once per call, before the token
// loop) before rotating it. Nothing is materialized in between: no
// tensor.empty, no linalg op. With quant_scale, every stored chunk is
// y * scale, saturated, then truncf (fp8) or roundeven + fptosi (i8), with
// the per-tensor scale read once per call or scale[h] once per head row.

// Per token ([B, S, H, D], half, f32, D = 32: two chunks of 16 lanes).

// CHECK-LABEL: func.func @norm_per_token(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x4x3x32xf32>, %[[P:[^:]*]]: tensor<2x4xi64>, %[[W:[^:]*]]: tensor<32xf32>, %[[INIT:[^:]*]]: tensor<2x4x3x32xf32>)
//       CHECK:   %[[WV:.*]] = vector.transfer_read %[[W]][%{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<32xf32>, vector<32xf32>
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 4) shared_outs(%[[OUT:.*]] = %[[INIT]])
//       CHECK:     %[[C:.*]] = math.cos %{{.*}} : vector<16xf32>
//       CHECK:     %[[SN:.*]] = math.sin %{{.*}} : vector<16xf32>
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[B]], %[[S]], 0, 0] [1, 1, 3, 32]
//   CHECK-NOT:     %[[W]]
// f32 rows stored as f32: row by row (no blocks, norm-blocks.mlir).
//   CHECK-NOT:     vector.shuffle
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<3x32xf32>) {
//   CHECK-NOT:       {{tensor.empty|linalg\.|transfer_write|scf.for}}
//       CHECK:       %[[A0:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<3x32xf32>, vector<16xf32>
//       CHECK:       %[[Q0:.*]] = arith.mulf %[[A0]], %[[A0]] : vector<16xf32>
//       CHECK:       %[[A1:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<3x32xf32>, vector<16xf32>
//       CHECK:       %[[Q1:.*]] = arith.mulf %[[A1]], %[[A1]] : vector<16xf32>
//       CHECK:       %[[SQ:.*]] = arith.addf %[[Q0]], %[[Q1]] : vector<16xf32>
//       CHECK:       %[[SUM:.*]] = vector.reduction <add>, %[[SQ]], %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
//       CHECK:       %[[D:.*]] = arith.constant 3.200000e+01 : f32
//       CHECK:       %[[MEAN:.*]] = arith.divf %[[SUM]], %[[D]] : f32
//       CHECK:       %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
//       CHECK:       %[[SHIFTED:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
//       CHECK:       %[[F:.*]] = math.rsqrt %[[SHIFTED]] : f32
//   CHECK-NOT:       {{tensor.empty|linalg\.|transfer_write}}
//       CHECK:       %[[X1:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<3x32xf32>, vector<16xf32>
//       CHECK:       %[[W1:.*]] = vector.extract_strided_slice %[[WV]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       %[[F1:.*]] = vector.broadcast %[[F]] : f32 to vector<16xf32>
//       CHECK:       %[[XF1:.*]] = arith.mulf %[[X1]], %[[F1]] : vector<16xf32>
//       CHECK:       %[[N1:.*]] = arith.mulf %[[W1]], %[[XF1]] : vector<16xf32>
//       CHECK:       %[[X2:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<3x32xf32>, vector<16xf32>
//       CHECK:       %[[W2:.*]] = vector.extract_strided_slice %[[WV]] {offsets = [16], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       %[[F2:.*]] = vector.broadcast %[[F]] : f32 to vector<16xf32>
//       CHECK:       %[[XF2:.*]] = arith.mulf %[[X2]], %[[F2]] : vector<16xf32>
//       CHECK:       %[[N2:.*]] = arith.mulf %[[W2]], %[[XF2]] : vector<16xf32>
//       CHECK:       %[[NS:.*]] = arith.negf %[[SN]] : vector<16xf32>
//       CHECK:       %[[X1C:.*]] = arith.mulf %[[N1]], %[[C]] : vector<16xf32>
//       CHECK:       %[[Y1:.*]] = math.fma %[[N2]], %[[NS]], %[[X1C]] : vector<16xf32>
//       CHECK:       %[[X2C:.*]] = arith.mulf %[[N2]], %[[C]] : vector<16xf32>
//       CHECK:       %[[Y2:.*]] = math.fma %[[N1]], %[[SN]], %[[X2C]] : vector<16xf32>
//   CHECK-NOT:       {{tensor.empty|linalg\.}}
//       CHECK:       %[[R1:.*]] = vector.transfer_write %[[Y1]], %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<3x32xf32>
//       CHECK:       %[[R2:.*]] = vector.transfer_write %[[Y2]], %[[R1]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<3x32xf32>
//  CHECK-NEXT:       scf.yield %[[R2]] : tensor<3x32xf32>
// BUF-LABEL: func.func @norm_per_token(
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @norm_per_token(%x: tensor<2x4x3x32xf32>, %p: tensor<2x4xi64>, %w: tensor<32xf32>, %init: tensor<2x4x3x32xf32>) -> tensor<2x4x3x32xf32> {
  %y = rope.apply ins(%x : tensor<2x4x3x32xf32>) positions(%p : tensor<2x4xi64>) norm(%w : tensor<32xf32>) outs(%init : tensor<2x4x3x32xf32>) {norm_epsilon = 1.0e-06} -> tensor<2x4x3x32xf32>
  return %y : tensor<2x4x3x32xf32>
}

// -----

// Tiled ([B, H, S, D] with token_dims (0, 2)), in place, partial rotary
// (P = 32 of D = 64), a bf16 weight converted once to f32: the first pass
// reads the row from the destination (in place), the pass-through channels
// [32, 64) are normalized and written back too, and bufferization keeps it all
// in place (the one allocation is the tile's cos/sin table).

// CHECK-LABEL: func.func @norm_tiled_in_place_partial(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x4x16x64xf32>, %[[W:[^:]*]]: tensor<64xbf16>)
//       CHECK:   vector.transfer_read %[[W]][%{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<64xbf16>, vector<64xbf16>
//       CHECK:   %[[WV:.*]] = arith.bitcast %{{.*}} : vector<64xi32> to vector<64xf32>
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 16) step (1, 16) shared_outs(%[[OUT:.*]] = %[[X]])
//       CHECK:     tensor.empty() : tensor<2x16x16xf32>
//       CHECK:     %[[TILE:.*]] = tensor.extract_slice %[[OUT]]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T0:.*]] = %[[TILE]])
//       CHECK:       scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[T0]])
//   CHECK-NOT:         {{tensor.empty|linalg\.|transfer_write}}
//       CHECK:         %[[A0:.*]] = vector.transfer_read %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         arith.mulf %[[A0]], %[[A0]] : vector<16xf32>
//       CHECK:         vector.transfer_read %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         vector.transfer_read %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         %[[A3:.*]] = vector.transfer_read %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         %[[Q3:.*]] = arith.mulf %[[A3]], %[[A3]] : vector<16xf32>
// Summed in pairs: (x0^2 + x1^2) + (x2^2 + x3^2).
//  CHECK-NEXT:         %[[Q01:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
//  CHECK-NEXT:         %[[Q23:.*]] = arith.addf %{{.*}}, %[[Q3]] : vector<16xf32>
//  CHECK-NEXT:         %[[SQ:.*]] = arith.addf %[[Q01]], %[[Q23]] : vector<16xf32>
//  CHECK-NEXT:         %[[SUM:.*]] = vector.reduction <add>, %[[SQ]], %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
//       CHECK:         arith.constant 6.400000e+01 : f32
//       CHECK:         arith.constant 9.99999974E-6 : f32
//       CHECK:         %[[F:.*]] = math.rsqrt %{{.*}} : f32
//   CHECK-NOT:         {{tensor.empty|linalg\.}}
//       CHECK:         %[[R1:.*]] = vector.transfer_write %{{.*}}, %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<1x4x?x64xf32>
//       CHECK:         %[[R2:.*]] = vector.transfer_write %{{.*}}, %[[R1]][%{{.*}}, %[[H]], %[[J]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<1x4x?x64xf32>
//       CHECK:         %[[C32:.*]] = arith.constant 32 : index
//       CHECK:         %[[PT:.*]] = vector.transfer_read %[[R2]][%{{.*}}, %[[H]], %[[J]], %[[C32]]]
//       CHECK:         %[[WP:.*]] = vector.extract_strided_slice %[[WV]] {offsets = [32], sizes = [16], strides = [1]} : vector<64xf32> to vector<16xf32>
//       CHECK:         %[[FP:.*]] = vector.broadcast %[[F]] : f32 to vector<16xf32>
//       CHECK:         %[[PF:.*]] = arith.mulf %[[PT]], %[[FP]] : vector<16xf32>
//       CHECK:         %[[PN:.*]] = arith.mulf %[[WP]], %[[PF]] : vector<16xf32>
//       CHECK:         %[[R3:.*]] = vector.transfer_write %[[PN]], %[[R2]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         vector.extract_strided_slice %[[WV]] {offsets = [48], sizes = [16], strides = [1]}
//       CHECK:         %[[R4:.*]] = vector.transfer_write %{{.*}}, %[[R3]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
// The second head of the jammed pair: its own reduction.
//       CHECK:         %[[H1:.*]] = arith.addi %[[H]], %{{.*}} : index
//       CHECK:         vector.transfer_read %[[R4]][%{{.*}}, %[[H1]], %[[J]], %{{.*}}]
//       CHECK:         vector.reduction <add>
// BUF-LABEL: func.func @norm_tiled_in_place_partial(
//   BUF-NOT:   memref.copy
//       BUF:   memref.alloc() {{.*}} : memref<2x16x16xf32>
//   BUF-NOT:   memref.copy
//   BUF-NOT:   memref.alloc
//       BUF:   return
func.func @norm_tiled_in_place_partial(%x: tensor<1x4x16x64xf32>, %w: tensor<64xbf16>) -> tensor<1x4x16x64xf32> {
  %y = rope.apply ins(%x : tensor<1x4x16x64xf32>) norm(%w : tensor<64xbf16>) outs(%x : tensor<1x4x16x64xf32>) {norm_epsilon = 1.0e-05, rotary_dim = 32 : i64, token_dims = array<i64: 0, 2>} -> tensor<1x4x16x64xf32>
  return %y : tensor<1x4x16x64xf32>
}

// -----

// fp8 (f8E4M3FN) with a per-tensor scale, f16 input: the scale is read once,
// before the token loop; each rotated chunk is scaled, clamped to +-448 and
// truncated at the store.

// CHECK-LABEL: func.func @f8_per_tensor(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<4x2x32xf16>, %[[S:[^:]*]]: tensor<f32>, %[[INIT:[^:]*]]: tensor<4x2x32xf8E4M3FN>)
//       CHECK:   %[[SCALE:.*]] = tensor.extract %[[S]][] : tensor<f32>
//       CHECK:   scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %[[INIT]]) -> (tensor<4x2x32xf8E4M3FN>)
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x32xf8E4M3FN>) {
//   CHECK-NOT:       {{tensor.extract |vector.reduction|rsqrt}}
//       CHECK:       %[[Y1:.*]] = math.fma %{{.*}} : vector<16xf32>
//       CHECK:       %[[Y2:.*]] = math.fma %{{.*}} : vector<16xf32>
//       CHECK:       %[[SB:.*]] = vector.broadcast %[[SCALE]] : f32 to vector<16xf32>
//       CHECK:       %[[V:.*]] = arith.mulf %[[Y1]], %[[SB]] : vector<16xf32>
//       CHECK:       %[[HI:.*]] = arith.constant dense<4.480000e+02> : vector<16xf32>
//       CHECK:       %[[BELOW:.*]] = arith.minimumf %[[V]], %[[HI]] : vector<16xf32>
//       CHECK:       %[[LO:.*]] = arith.constant dense<-4.480000e+02> : vector<16xf32>
//       CHECK:       %[[CLAMPED:.*]] = arith.maximumf %[[BELOW]], %[[LO]] : vector<16xf32>
//       CHECK:       %[[Q:.*]] = arith.truncf %[[CLAMPED]] : vector<16xf32> to vector<16xf8E4M3FN>
//       CHECK:       %[[R1:.*]] = vector.transfer_write %[[Q]], %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf8E4M3FN>, tensor<2x32xf8E4M3FN>
//       CHECK:       %[[SB2:.*]] = vector.broadcast %[[SCALE]] : f32 to vector<16xf32>
//       CHECK:       arith.mulf %[[Y2]], %[[SB2]] : vector<16xf32>
//       CHECK:       %[[Q2:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E4M3FN>
//       CHECK:       %[[R2:.*]] = vector.transfer_write %[[Q2]], %[[R1]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf8E4M3FN>, tensor<2x32xf8E4M3FN>
//  CHECK-NEXT:       scf.yield %[[R2]]
func.func @f8_per_tensor(%x: tensor<4x2x32xf16>, %s: tensor<f32>, %init: tensor<4x2x32xf8E4M3FN>) -> tensor<4x2x32xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<4x2x32xf16>) quant_scale(%s : tensor<f32>) outs(%init : tensor<4x2x32xf8E4M3FN>) -> tensor<4x2x32xf8E4M3FN>
  return %y : tensor<4x2x32xf8E4M3FN>
}

// -----

// i8 with one scale per head, bf16 input, partial rotary (P = 32 of D = 64):
// scale[h] is read once per head row, inside the heads loop; the rotated
// chunks and the pass-through chunks [32, 64) (not rotated) are all quantized:
// scaled, rounded to nearest even, clamped to [-128, 127], NaN -> 0, fptosi.

// CHECK-LABEL: func.func @i8_per_head_partial(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<4x3x64xbf16>, %[[S:[^:]*]]: tensor<3xf32>, %[[INIT:[^:]*]]: tensor<4x3x64xi8>)
//   CHECK-NOT:   %[[S]]
//       CHECK:   scf.forall (%[[T:.*]]) in (4) shared_outs(%{{.*}} = %[[INIT]]) -> (tensor<4x3x64xi8>)
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[T]], 0, 0] [1, 3, 64]
//   CHECK-NOT:     %[[S]]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<3x64xi8>) {
//  CHECK-NEXT:       %[[SH:.*]] = tensor.extract %[[S]][%[[H]]] : tensor<3xf32>
//   CHECK-NOT:       %[[S]]
//       CHECK:       %[[Y1:.*]] = math.fma %{{.*}} : vector<16xf32>
//       CHECK:       %[[SB:.*]] = vector.broadcast %[[SH]] : f32 to vector<16xf32>
//       CHECK:       %[[V:.*]] = arith.mulf %[[Y1]], %[[SB]] : vector<16xf32>
//       CHECK:       %[[RE:.*]] = math.roundeven %[[V]] : vector<16xf32>
//       CHECK:       %[[HI:.*]] = arith.constant dense<1.270000e+02> : vector<16xf32>
//       CHECK:       %[[BELOW:.*]] = arith.minimumf %[[RE]], %[[HI]] : vector<16xf32>
//       CHECK:       %[[LO:.*]] = arith.constant dense<-1.280000e+02> : vector<16xf32>
//       CHECK:       %[[CLAMPED:.*]] = arith.maximumf %[[BELOW]], %[[LO]] : vector<16xf32>
//       CHECK:       %[[NAN:.*]] = arith.cmpf uno, %[[CLAMPED]], %[[CLAMPED]] : vector<16xf32>
//       CHECK:       %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
//       CHECK:       %[[SEL:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[CLAMPED]] : vector<16xi1>, vector<16xf32>
//       CHECK:       %[[Q:.*]] = arith.fptosi %[[SEL]] : vector<16xf32> to vector<16xi8>
//       CHECK:       %[[R1:.*]] = vector.transfer_write %[[Q]], %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xi8>, tensor<3x64xi8>
//       CHECK:       %[[R2:.*]] = vector.transfer_write %{{.*}}, %[[R1]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xi8>, tensor<3x64xi8>
// Pass-through: read, converted to f32, not rotated, quantized.
//       CHECK:       %[[C32:.*]] = arith.constant 32 : index
//       CHECK:       vector.transfer_read %[[SRC]][%[[H]], %[[C32]]], %{{.*}} {in_bounds = [true]} : tensor<3x64xbf16>, vector<16xbf16>
//       CHECK:       %[[PF:.*]] = arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
//   CHECK-NOT:       math.fma
//       CHECK:       %[[PSB:.*]] = vector.broadcast %[[SH]] : f32 to vector<16xf32>
//       CHECK:       %[[PV:.*]] = arith.mulf %[[PF]], %[[PSB]] : vector<16xf32>
//       CHECK:       math.roundeven %[[PV]] : vector<16xf32>
//       CHECK:       %[[PQ:.*]] = arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//       CHECK:       %[[R3:.*]] = vector.transfer_write %[[PQ]], %[[R2]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xi8>, tensor<3x64xi8>
//   CHECK-NOT:       math.fma
//       CHECK:       %[[PQ2:.*]] = arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//       CHECK:       %[[R4:.*]] = vector.transfer_write %[[PQ2]], %[[R3]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xi8>, tensor<3x64xi8>
//  CHECK-NEXT:       scf.yield %[[R4]]
func.func @i8_per_head_partial(%x: tensor<4x3x64xbf16>, %s: tensor<3xf32>, %init: tensor<4x3x64xi8>) -> tensor<4x3x64xi8> {
  %y = rope.apply ins(%x : tensor<4x3x64xbf16>) quant_scale(%s : tensor<3xf32>) outs(%init : tensor<4x3x64xi8>) {rotary_dim = 32 : i64} -> tensor<4x3x64xi8>
  return %y : tensor<4x3x64xi8>
}

// -----

// Both, tiled ([B, H, S, D]), interleaved, bf16 -> f8E5M2 with one scale per
// head: per row scale[h] (h + 1 for the jammed head, the remainder loop's
// index for an odd one), the norm's reduction, the normalized chunk rotated
// (the pair-swap shuffle after the normalization), scaled, clamped to
// +-57344 and truncated.

// CHECK-LABEL: func.func @norm_quant_tiled(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x4x16x32xbf16>, %[[W:[^:]*]]: tensor<32xbf16>, %[[S:[^:]*]]: tensor<4xf32>, %[[INIT:[^:]*]]: tensor<1x4x16x32xf8E5M2>)
//       CHECK:   %[[WV:.*]] = arith.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
//       CHECK:   scf.forall
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x4x?x32xf8E5M2>)
//       CHECK:       scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x4x?x32xf8E5M2>)
//  CHECK-NEXT:         %[[SH:.*]] = tensor.extract %[[S]][%[[H]]] : tensor<4xf32>
//   CHECK-NOT:         {{tensor.empty|linalg\.|transfer_write}}
//       CHECK:         vector.transfer_read %[[SRC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         %[[SUM:.*]] = vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
//       CHECK:         %[[F:.*]] = math.rsqrt %{{.*}} : f32
//       CHECK:         %[[X1:.*]] = arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
//       CHECK:         %[[W1:.*]] = vector.extract_strided_slice %[[WV]] {offsets = [0], sizes = [16], strides = [1]}
//       CHECK:         %[[FB:.*]] = vector.broadcast %[[F]] : f32 to vector<16xf32>
//       CHECK:         %[[XF:.*]] = arith.mulf %[[X1]], %[[FB]] : vector<16xf32>
//       CHECK:         %[[N:.*]] = arith.mulf %[[W1]], %[[XF]] : vector<16xf32>
//   CHECK-NOT:         {{tensor.empty|linalg\.|transfer_write}}
//       CHECK:         vector.shuffle %[[N]], %[[N]] [1, 0, 3, 2
//       CHECK:         %[[Y:.*]] = math.fma %{{.*}} : vector<16xf32>
//       CHECK:         %[[SB:.*]] = vector.broadcast %[[SH]] : f32 to vector<16xf32>
//       CHECK:         %[[V:.*]] = arith.mulf %[[Y]], %[[SB]] : vector<16xf32>
//       CHECK:         arith.constant dense<5.734400e+04> : vector<16xf32>
//       CHECK:         arith.constant dense<-5.734400e+04> : vector<16xf32>
//       CHECK:         %[[Q:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E5M2>
//       CHECK:         vector.transfer_write %[[Q]], %[[ACC]][%{{.*}}, %[[H]], %[[J]], %{{.*}}]
//       CHECK:         %[[H1:.*]] = arith.addi %[[H]], %{{.*}} : index
//  CHECK-NEXT:         tensor.extract %[[S]][%[[H1]]] : tensor<4xf32>
//       CHECK:         vector.reduction <add>
//       CHECK:         arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E5M2>
//       CHECK:     scf.for %[[HR:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x4x?x32xf8E5M2>)
//       CHECK:       scf.for
//  CHECK-NEXT:         tensor.extract %[[S]][%[[HR]]] : tensor<4xf32>
func.func @norm_quant_tiled(%x: tensor<1x4x16x32xbf16>, %w: tensor<32xbf16>, %s: tensor<4xf32>, %init: tensor<1x4x16x32xf8E5M2>) -> tensor<1x4x16x32xf8E5M2> {
  %y = rope.apply ins(%x : tensor<1x4x16x32xbf16>) norm(%w : tensor<32xbf16>) quant_scale(%s : tensor<4xf32>) outs(%init : tensor<1x4x16x32xf8E5M2>) {layout = #rope.layout<interleaved>, norm_epsilon = 1.0e-06, token_dims = array<i64: 0, 2>} -> tensor<1x4x16x32xf8E5M2>
  return %y : tensor<1x4x16x32xf8E5M2>
}

// -----

// f64 data computes in f64: chunks of 8 lanes, the sum of squares reduced from
// a vector<8xf64>, the factor in f64 (row by row: no conversion).

// CHECK-LABEL: func.func @norm_f64(
//       CHECK:   vector.transfer_read %{{.*}} : tensor<16xf32>, vector<16xf32>
//       CHECK:   %[[WV:.*]] = arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
//   CHECK-NOT:     vector.shuffle
//       CHECK:     scf.for
//       CHECK:       %[[SQ:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8xf64>
//       CHECK:       vector.reduction <add>, %[[SQ]], %{{.*}} fastmath<reassoc> : vector<8xf64> into f64
//       CHECK:       arith.constant 1.600000e+01 : f64
//       CHECK:       math.rsqrt %{{.*}} : f64
//       CHECK:       vector.extract_strided_slice %[[WV]] {offsets = [0], sizes = [8], strides = [1]} : vector<16xf64> to vector<8xf64>
func.func @norm_f64(%x: tensor<8x2x16xf64>, %w: tensor<16xf32>, %init: tensor<8x2x16xf64>) -> tensor<8x2x16xf64> {
  %y = rope.apply ins(%x : tensor<8x2x16xf64>) norm(%w : tensor<16xf32>) outs(%init : tensor<8x2x16xf64>) {norm_epsilon = 0.0} -> tensor<8x2x16xf64>
  return %y : tensor<8x2x16xf64>
}

// -----

// Siblings with neighbours: Q (QK-norm, i8 with a scale per head) and K
// (QK-norm with the same epsilon, fp8 with a per-tensor scale) in one token
// loop, cos/sin once per token; each member with its own weight (both read
// once, before the loop), its own scale and its own destination type.

// CHECK-LABEL: func.func @qk_neighbours(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<2x16x8x64xf32>, %[[K:[^:]*]]: tensor<2x16x2x64xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[WQ:[^:]*]]: tensor<64xf32>, %[[WK:[^:]*]]: tensor<64xf32>, %[[SQ:[^:]*]]: tensor<8xf32>, %[[SK:[^:]*]]: tensor<f32>, %[[QI:[^:]*]]: tensor<2x16x8x64xi8>, %[[KI:[^:]*]]: tensor<2x16x2x64xf8E4M3FN>)
//       CHECK:   %[[WQV:.*]] = vector.transfer_read %[[WQ]]
//       CHECK:   %[[WKV:.*]] = vector.transfer_read %[[WK]]
//       CHECK:   %[[SKV:.*]] = tensor.extract %[[SK]][] : tensor<f32>
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}) in (2, 16) shared_outs(%{{.*}} = %[[QI]], %{{.*}} = %[[KI]]) -> (tensor<2x16x8x64xi8>, tensor<2x16x2x64xf8E4M3FN>)
//       CHECK:     math.cos
//       CHECK:     math.sin
//   CHECK-NOT:     math.{{cos|sin}}
// Q's 8 heads (stored as i8: rows that convert) are two blocks of 4 rows,
// each block's factors in one vector.
//       CHECK:     scf.for %{{.*}} step %c4 {{.*}} -> (tensor<8x64xi8>)
//       CHECK:       vector.shuffle
//       CHECK:       math.rsqrt %{{.*}} : vector<16xf32>
//       CHECK:       scf.for %[[H:[a-z0-9_]+]] = {{.*}} -> (tensor<8x64xi8>)
//  CHECK-NEXT:         arith.subi
//  CHECK-NEXT:         vector.extract
//  CHECK-NEXT:         %[[SH:.*]] = tensor.extract %[[SQ]][%[[H]]] : tensor<8xf32>
//       CHECK:         vector.extract_strided_slice %[[WQV]]
//   CHECK-NOT:       {{%\[\[WKV\]\]|math.cos|math.sin}}
//       CHECK:       vector.broadcast %[[SH]] : f32 to vector<16xf32>
//       CHECK:       arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//   CHECK-NOT:       truncf {{.*}} to vector<16xf8E4M3FN>
//       CHECK:       scf.yield
//       CHECK:     scf.for %{{.*}} = {{.*}} -> (tensor<2x64xf8E4M3FN>)
//   CHECK-NOT:       tensor.extract
//       CHECK:       vector.reduction <add>
//       CHECK:       vector.extract_strided_slice %[[WKV]]
//   CHECK-NOT:       fptosi
//       CHECK:       vector.broadcast %[[SKV]] : f32 to vector<16xf32>
//       CHECK:       arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E4M3FN>
//       CHECK:       scf.yield
//       CHECK:     scf.forall.in_parallel
//   CHECK-NOT:   scf.forall (
//       CHECK:   return
func.func @qk_neighbours(%q: tensor<2x16x8x64xf32>, %k: tensor<2x16x2x64xf32>, %p: tensor<2x16xi64>, %wq: tensor<64xf32>, %wk: tensor<64xf32>, %sq: tensor<8xf32>, %sk: tensor<f32>, %qi: tensor<2x16x8x64xi8>, %ki: tensor<2x16x2x64xf8E4M3FN>) -> (tensor<2x16x8x64xi8>, tensor<2x16x2x64xf8E4M3FN>) {
  %yq = rope.apply ins(%q : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) norm(%wq : tensor<64xf32>) quant_scale(%sq : tensor<8xf32>) outs(%qi : tensor<2x16x8x64xi8>) {norm_epsilon = 1.0e-06} -> tensor<2x16x8x64xi8>
  %yk = rope.apply ins(%k : tensor<2x16x2x64xf32>) positions(%p : tensor<2x16xi64>) norm(%wk : tensor<64xf32>) quant_scale(%sk : tensor<f32>) outs(%ki : tensor<2x16x2x64xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<2x16x2x64xf8E4M3FN>
  return %yq, %yk : tensor<2x16x8x64xi8>, tensor<2x16x2x64xf8E4M3FN>
}

// -----

// Siblings whose neighbours differ: a plain Q beside a quantized K (a bf16
// query beside an fp8/i8 cache entry) share the loop; Q's rows are rotated
// and stored as f32, K's quantized.

// CHECK-LABEL: func.func @qk_mixed(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<2x16x8x64xf32>, %[[K:[^:]*]]: tensor<2x16x2x64xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[SK:[^:]*]]: tensor<f32>, %[[QI:[^:]*]]: tensor<2x16x8x64xf32>, %[[KI:[^:]*]]: tensor<2x16x2x64xi8>)
//       CHECK:   %[[SKV:.*]] = tensor.extract %[[SK]][] : tensor<f32>
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}) in (2, 16) shared_outs(%{{.*}} = %[[QI]], %{{.*}} = %[[KI]]) -> (tensor<2x16x8x64xf32>, tensor<2x16x2x64xi8>)
//       CHECK:     scf.for {{.*}} -> (tensor<8x64xf32>)
//   CHECK-NOT:       {{fptosi|roundeven %.*vector<16xf32>|minimumf}}
//       CHECK:       vector.transfer_write %{{.*}} : vector<16xf32>, tensor<8x64xf32>
//   CHECK-NOT:       {{fptosi|minimumf}}
//       CHECK:       scf.yield
//       CHECK:     scf.for {{.*}} -> (tensor<2x64xi8>)
//       CHECK:       vector.broadcast %[[SKV]] : f32 to vector<16xf32>
//       CHECK:       arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//       CHECK:       vector.transfer_write %{{.*}} : vector<16xi8>, tensor<2x64xi8>
//   CHECK-NOT:   scf.forall (
//       CHECK:   return
func.func @qk_mixed(%q: tensor<2x16x8x64xf32>, %k: tensor<2x16x2x64xf32>, %p: tensor<2x16xi64>, %sk: tensor<f32>, %qi: tensor<2x16x8x64xf32>, %ki: tensor<2x16x2x64xi8>) -> (tensor<2x16x8x64xf32>, tensor<2x16x2x64xi8>) {
  %yq = rope.apply ins(%q : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x8x64xf32>) -> tensor<2x16x8x64xf32>
  %yk = rope.apply ins(%k : tensor<2x16x2x64xf32>) positions(%p : tensor<2x16xi64>) quant_scale(%sk : tensor<f32>) outs(%ki : tensor<2x16x2x64xi8>) -> tensor<2x16x2x64xi8>
  return %yq, %yk : tensor<2x16x8x64xf32>, tensor<2x16x2x64xi8>
}

// -----

// Not siblings: QK-norm with different epsilons (an attribute), or on only
// one of them: each op keeps its own token loop.

// CHECK-LABEL: func.func @qk_different_eps(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x64xf32>)
//       CHECK:     arith.constant 9.99999997E-7 : f32
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x2x64xf32>)
//       CHECK:     arith.constant 9.99999974E-6 : f32
func.func @qk_different_eps(%q: tensor<2x16x8x64xf32>, %k: tensor<2x16x2x64xf32>, %p: tensor<2x16xi64>, %w: tensor<64xf32>, %qi: tensor<2x16x8x64xf32>, %ki: tensor<2x16x2x64xf32>) -> (tensor<2x16x8x64xf32>, tensor<2x16x2x64xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) norm(%w : tensor<64xf32>) outs(%qi : tensor<2x16x8x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<2x16x8x64xf32>
  %yk = rope.apply ins(%k : tensor<2x16x2x64xf32>) positions(%p : tensor<2x16xi64>) norm(%w : tensor<64xf32>) outs(%ki : tensor<2x16x2x64xf32>) {norm_epsilon = 1.0e-05} -> tensor<2x16x2x64xf32>
  return %yq, %yk : tensor<2x16x8x64xf32>, tensor<2x16x2x64xf32>
}

// -----

// CHECK-LABEL: func.func @qk_norm_on_one(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x64xf32>)
//       CHECK:     vector.reduction <add>
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x2x64xf32>)
//   CHECK-NOT:     vector.reduction
//       CHECK:   return
func.func @qk_norm_on_one(%q: tensor<2x16x8x64xf32>, %k: tensor<2x16x2x64xf32>, %p: tensor<2x16xi64>, %w: tensor<64xf32>, %qi: tensor<2x16x8x64xf32>, %ki: tensor<2x16x2x64xf32>) -> (tensor<2x16x8x64xf32>, tensor<2x16x2x64xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) norm(%w : tensor<64xf32>) outs(%qi : tensor<2x16x8x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<2x16x8x64xf32>
  %yk = rope.apply ins(%k : tensor<2x16x2x64xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x2x64xf32>) -> tensor<2x16x2x64xf32>
  return %yq, %yk : tensor<2x16x8x64xf32>, tensor<2x16x2x64xf32>
}
