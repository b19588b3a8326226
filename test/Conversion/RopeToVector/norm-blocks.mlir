// RUN: rope-opt %s --convert-rope-to-vector -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector="vector-bytes=16" -split-input-file | FileCheck %s --enable-var-scope --check-prefix=NARROW

// QK-norm in the per-token form, rows that convert (bf16 data here): the
// heads loop takes 4 rows at a time (the chunk's lanes, at most 4, when
// chunks are a power of two dividing D). A block's rows are read and
// squared chunk by chunk, each row's chunks added into one vector, and the
// rows' vectors reduced together: two rows' vectors become one holding both
// (lanes [0, 8) the first row's halves added, [8, 16) the second's), then
// four rows in four lanes each; with 16 lanes two more steps fold each
// row's lanes onto themselves, and lane r is row r's sum. One vector rsqrt
// gives the 4 factors; the rows are then rotated one by one, each with its
// lane. The 10 - 10 % 4 = 2 heads left over are normalized row by row (a
// horizontal reduction and a scalar rsqrt each).

// CHECK-LABEL: func.func @blocks(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x3x10x64xbf16>
//       CHECK:   scf.forall
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]]{{.*}} [1, 1, 10, 64]
//       CHECK:     %[[DIM:.*]] = tensor.dim
//       CHECK:     %[[C4:.*]] = arith.constant 4 : index
//       CHECK:     %[[REM:.*]] = arith.remui %[[DIM]], %[[C4]] : index
//       CHECK:     %[[WHOLE:.*]] = arith.subi %[[DIM]], %[[REM]] : index
//       CHECK:     %[[BLOCKED:.*]] = scf.for %[[FIRST:.*]] = %{{.*}} to %[[WHOLE]] step %[[C4]] iter_args(%{{.*}} = %{{.*}}) -> (tensor<10x64xbf16>) {
//   CHECK-NOT:       vector.reduction
//       CHECK:       %[[R0:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
//       CHECK:       vector.transfer_read %[[SRC]][%[[R0]], %{{.*}}]
//       CHECK:       %[[R1:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
//       CHECK:       vector.transfer_read %[[SRC]][%[[R1]], %{{.*}}]
//       CHECK:       %[[LO1:.*]] = vector.shuffle %[[ROW0:.*]], %[[ROW1:.*]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
//       CHECK:       %[[HI1:.*]] = vector.shuffle %[[ROW0]], %[[ROW1]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
//       CHECK:       arith.addf %[[LO1]], %[[HI1]] : vector<16xf32>
//       CHECK:       vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
//       CHECK:       %[[FOUR:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
//       CHECK:       vector.shuffle %[[FOUR]], %[[FOUR]] [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29]
//       CHECK:       %[[EIGHT:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
//       CHECK:       %[[LO:.*]] = vector.shuffle %[[EIGHT]], %[[EIGHT]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
//       CHECK:       %[[HI:.*]] = vector.shuffle %[[EIGHT]], %[[EIGHT]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
//       CHECK:       %[[SUMS:.*]] = arith.addf %[[LO]], %[[HI]] : vector<16xf32>
//       CHECK:       %[[MEAN:.*]] = arith.divf %[[SUMS]], %{{.*}} : vector<16xf32>
//       CHECK:       %[[SHIFTED:.*]] = arith.addf %[[MEAN]], %{{.*}} : vector<16xf32>
//       CHECK:       %[[FACTORS:.*]] = math.rsqrt %[[SHIFTED]] : vector<16xf32>
//       CHECK:       %[[END:.*]] = arith.addi %[[FIRST]], %[[C4]] : index
//       CHECK:       scf.for %[[ROW:.*]] = %[[FIRST]] to %[[END]] step %{{.*}} iter_args
//  CHECK-NEXT:         %[[LANE:.*]] = arith.subi %[[ROW]], %[[FIRST]] : index
//  CHECK-NEXT:         %[[F:.*]] = vector.extract %[[FACTORS]][%[[LANE]]] : f32 from vector<16xf32>
//   CHECK-NOT:         vector.reduction
//       CHECK:         vector.transfer_read %[[SRC]][%[[ROW]], %{{.*}}]
//       CHECK:         vector.broadcast %[[F]] : f32 to vector<16xf32>
//       CHECK:         math.fma
//       CHECK:     scf.for %{{.*}} = %[[WHOLE]] to %[[DIM]] step %{{.*}} iter_args(%{{.*}} = %[[BLOCKED]])
//       CHECK:       vector.reduction <add>
//       CHECK:       math.rsqrt %{{.*}} : f32

// With 8-lane chunks (bf16 at vector-bytes=16) two merges leave each row in
// two lanes, and one fold puts row r in lane r.
// NARROW-LABEL: func.func @blocks(
//       NARROW:     scf.for %{{.*}} step %c4
//       NARROW:       vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
//       NARROW:       vector.shuffle {{.*}} [0, 1, 4, 5, 8, 9, 12, 13]
//       NARROW:       %[[FOUR:.*]] = arith.addf %{{.*}} : vector<8xf32>
//       NARROW:       vector.shuffle %[[FOUR]], %[[FOUR]] [0, 2, 4, 6, 8, 10, 12, 14]
//       NARROW:       vector.shuffle %[[FOUR]], %[[FOUR]] [1, 3, 5, 7, 9, 11, 13, 15]
//   NARROW-NOT:       vector.shuffle
//       NARROW:       math.rsqrt %{{.*}} : vector<8xf32>
func.func @blocks(%x: tensor<2x3x10x64xbf16>, %p: tensor<2x3xi64>, %w: tensor<64xf32>, %init: tensor<2x3x10x64xbf16>) -> tensor<2x3x10x64xbf16> {
  %y = rope.apply ins(%x : tensor<2x3x10x64xbf16>) positions(%p : tensor<2x3xi64>) norm(%w : tensor<64xf32>) outs(%init : tensor<2x3x10x64xbf16>) {norm_epsilon = 1.0e-06} -> tensor<2x3x10x64xbf16>
  return %y : tensor<2x3x10x64xbf16>
}

// -----

// f32 rows normalized into an fp8 destination convert too: blocks.

// CHECK-LABEL: func.func @f32_to_fp8(
//       CHECK:     scf.for %{{.*}} step %c4
//       CHECK:       math.rsqrt %{{.*}} : vector<16xf32>
//       CHECK:       arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E4M3FN>
func.func @f32_to_fp8(%x: tensor<6x9x64xf32>, %p: tensor<6xi64>, %w: tensor<64xf32>, %s: tensor<f32>, %init: tensor<6x9x64xf8E4M3FN>) -> tensor<6x9x64xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<6x9x64xf32>) positions(%p : tensor<6xi64>) norm(%w : tensor<64xf32>) quant_scale(%s : tensor<f32>) outs(%init : tensor<6x9x64xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<6x9x64xf8E4M3FN>
  return %y : tensor<6x9x64xf8E4M3FN>
}

// -----

// No blocks for rows of the compute type in and out (f32 here: LLVM keeps
// such a row in registers from its sum to its rotation), nor where the
// chunks do not divide D (bf16, D = 40): every row is normalized on its own.

// CHECK-LABEL: func.func @no_blocks_f32(
//       CHECK:   scf.forall
//   CHECK-NOT:     vector.shuffle
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
//   CHECK-NOT:       {{vector.shuffle|scf.for}}
//       CHECK:       vector.reduction <add>
//   CHECK-NOT:       {{vector.shuffle|scf.for}}
//       CHECK:     scf.forall.in_parallel
// NARROW-LABEL: func.func @no_blocks_f32(
//   NARROW-NOT:     vector.shuffle
//       NARROW:     vector.reduction <add>
//   NARROW-NOT:     {{vector.shuffle|scf.for}}
//       NARROW:     scf.forall.in_parallel
func.func @no_blocks_f32(%x: tensor<4x9x64xf32>, %p: tensor<4xi64>, %w: tensor<64xf32>, %init: tensor<4x9x64xf32>) -> tensor<4x9x64xf32> {
  %y = rope.apply ins(%x : tensor<4x9x64xf32>) positions(%p : tensor<4xi64>) norm(%w : tensor<64xf32>) outs(%init : tensor<4x9x64xf32>) {norm_epsilon = 1.0e-06} -> tensor<4x9x64xf32>
  return %y : tensor<4x9x64xf32>
}

// -----

// CHECK-LABEL: func.func @no_blocks_d40(
//       CHECK:   scf.forall
//   CHECK-NOT:     vector.shuffle
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
//   CHECK-NOT:       {{vector.shuffle|scf.for}}
//       CHECK:       vector.reduction <add>
//   CHECK-NOT:       {{vector.shuffle|scf.for}}
//       CHECK:     scf.forall.in_parallel
func.func @no_blocks_d40(%x: tensor<4x9x40xbf16>, %p: tensor<4xi64>, %w: tensor<40xf32>, %init: tensor<4x9x40xbf16>) -> tensor<4x9x40xbf16> {
  %y = rope.apply ins(%x : tensor<4x9x40xbf16>) positions(%p : tensor<4xi64>) norm(%w : tensor<40xf32>) outs(%init : tensor<4x9x40xbf16>) {norm_epsilon = 1.0e-06} -> tensor<4x9x40xbf16>
  return %y : tensor<4x9x40xbf16>
}
