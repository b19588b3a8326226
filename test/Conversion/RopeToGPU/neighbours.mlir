// RUN: rope-opt %s --convert-rope-to-gpu -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-gpu="vectorize=false block-size=8" -split-input-file | FileCheck %s --enable-var-scope --check-prefix=TINY

// rope.apply's fused neighbours in the GPU kernel (the PTX path:
// test/GPU/neighbours-ptxas.mlir; numerics:
// python/tests/numerics/test_gpu_emulation.py).
// QK-norm: cos/sin and the norm weights of the thread's frequency group
// once per token, then per (token, head) row the sum of squares over all D
// channels (16-byte loads, a vector accumulator), the factor
// rsqrt(sum / D + eps), the rotated pairs as w * (x * factor), and the
// pass-through channels [P, D) normalized too.

// CHECK-LABEL: func.func @norm_partial(
//  CHECK-SAME:     %[[XT:[^:]*]]: tensor<2x8x4x64xf32>, %{{[^:]*}}: tensor<2x8xi64>, %[[WT:[^:]*]]: tensor<64xbf16>, %[[IT:[^:]*]]: tensor<2x8x4x64xf32>)
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %[[IT]] :
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %[[XT]] read_only
//       CHECK:   %[[W:.*]] = bufferization.to_buffer %[[WT]] read_only : tensor<64xbf16> to memref<64xbf16>
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c4{{.*}}, {{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}})
//   CHECK-NOT:   gpu.barrier
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       math.cos %{{.*}} : vector<4xf32>
//       CHECK:       %[[W1:.*]] = vector.load %[[W]][%[[J:[a-z0-9]+]]] {alignment = 8 : i64} : memref<64xbf16>, vector<4xbf16>
//       CHECK:       %[[J2:.*]] = arith.addi %[[J]], %c16
//       CHECK:       %[[W2:.*]] = vector.load %[[W]][%[[J2]]] {alignment = 8 : i64} : memref<64xbf16>, vector<4xbf16>
//       CHECK:       scf.for %[[H:[a-z0-9]+]] =
//   CHECK-NOT:         math.cos
//       CHECK:         %[[SUM:.*]] = scf.for %[[CH:[a-z0-9]+]] = %{{.*}} to %c64{{.*}} step %c4{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4xf32>) {
//       CHECK:           %[[XV:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[CH]]] {alignment = 16 : i64} : memref<2x8x4x64xf32>, vector<4xf32>
//       CHECK:           %[[SQ:.*]] = math.fma %[[XV]], %[[XV]], %[[ACC]] : vector<4xf32>
//       CHECK:           scf.yield %[[SQ]]
//       CHECK:         %[[RED:.*]] = vector.reduction <add>, %[[SUM]] : vector<4xf32> into f32
//       CHECK:         %[[MEAN:.*]] = arith.divf %[[RED]], %{{.*}} : f32
//       CHECK:         %[[SHIFT:.*]] = arith.addf %[[MEAN]], %{{.*}} : f32
//       CHECK:         %[[F:.*]] = math.rsqrt %[[SHIFT]] : f32
//       CHECK:         %[[J2H:.*]] = arith.addi %[[J]], %c16
//       CHECK:         %[[X1:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[J]]]
//       CHECK:         %[[FV:.*]] = vector.broadcast %[[F]] : f32 to vector<4xf32>
//       CHECK:         %[[N1:.*]] = arith.mulf %[[X1]], %[[FV]] : vector<4xf32>
//       CHECK:         arith.mulf %{{.*}}, %[[N1]] : vector<4xf32>
//       CHECK:         %[[X2:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[J2H]]]
//       CHECK:         %[[N2:.*]] = arith.mulf %[[X2]], %{{.*}} : vector<4xf32>
//       CHECK:         arith.mulf %{{.*}}, %[[N2]] : vector<4xf32>
//       CHECK:         math.fma
//       CHECK:         math.fma
//       CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[H]], %[[J]]] {alignment = 16 : i64}
//       CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[H]], %[[J2H]]] {alignment = 16 : i64}
// Pass-through channels ch = P + tx, step TX, normalized.
//       CHECK:         scf.for %[[C:[a-z0-9]+]] = %{{.*}} to %c64{{.*}} step %c4{{.*}} {
//       CHECK:           %[[XP:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[C]]]
//       CHECK:           %[[WP:.*]] = memref.load %[[W]][%[[C]]] : memref<64xbf16>
//       CHECK:           %[[NP:.*]] = arith.mulf %[[XP]], %[[F]] : f32
//       CHECK:           %[[WPF:.*]] = arith.extf %[[WP]] : bf16 to f32
//       CHECK:           %[[YP:.*]] = arith.mulf %[[WPF]], %[[NP]] : f32
//       CHECK:           memref.store %[[YP]], %[[OUT]][%{{.*}}, %{{.*}}, %[[H]], %[[C]]]
//       CHECK:     gpu.terminator
func.func @norm_partial(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %w: tensor<64xbf16>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) norm(%w : tensor<64xbf16>) outs(%init : tensor<2x8x4x64xf32>) {rotary_dim = 32 : i64, norm_epsilon = 1.0e-06} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// In place: one thread per row (TX = 1), which reads the whole row for its
// sum before it stores any channel of it; its 32 pairs' cos/sin are
// recomputed per row in a loop (too many to keep in registers); the
// pass-through channels are written (normalized) although in place.
// CHECK-LABEL: func.func @norm_in_place(
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4x128xbf16> to memref<?x4x128xbf16>
//   CHECK-NOT:   read_only : tensor<?x4x128xbf16>
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}})
//       CHECK:     scf.for
//   CHECK-NOT:       math.cos
//       CHECK:       scf.for %[[H:[a-z0-9]+]] =
//       CHECK:         scf.for {{.*}} iter_args
//       CHECK:         math.rsqrt
//       CHECK:         scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %c32{{.*}} step %c8{{.*}} {
//       CHECK:           math.cos %{{.*}} : vector<8xf32>
//       CHECK:           vector.store %{{.*}}, %[[X]][%{{.*}}, %[[H]], %[[J]]] {alignment = 16 : i64} : memref<?x4x128xbf16>, vector<8xbf16>
//       CHECK:         scf.for %[[C:[a-z0-9]+]] = %{{.*}} to %c128{{.*}} step %c1{{.*}} {
//       CHECK:           memref.store %{{.*}}, %[[X]][%{{.*}}, %[[H]], %[[C]]] : memref<?x4x128xbf16>
func.func @norm_in_place(%x: tensor<?x4x128xbf16>, %p: tensor<?xi64>, %w: tensor<128xbf16>) -> tensor<?x4x128xbf16> {
  %y = rope.apply ins(%x : tensor<?x4x128xbf16>) positions(%p : tensor<?xi64>) norm(%w : tensor<128xbf16>) outs(%x : tensor<?x4x128xbf16>) {rotary_dim = 64 : i64, norm_epsilon = 1.0e-06} -> tensor<?x4x128xbf16>
  return %y : tensor<?x4x128xbf16>
}

// -----

// i8 with one scale per head: scale[h] read in the head loop; each half of
// the pair group is stored as 8 i8 lanes (8 bytes: the alignment follows the
// stored type); pass-through channels quantized too.
// CHECK-LABEL: func.func @quant_i8_per_head(
//  CHECK-SAME:     %[[ST:[^:]*]]: tensor<4xf32>
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4x64xi8> to memref<?x4x64xi8>
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %[[ST]] read_only : tensor<4xf32> to memref<4xf32>
//       CHECK:   gpu.launch
//       CHECK:     scf.for
//       CHECK:       scf.for
//       CHECK:         math.cos
//       CHECK:         scf.for %[[H:[a-z0-9]+]] =
//       CHECK:         %[[SH:.*]] = memref.load %[[S]][%[[H]]] : memref<4xf32>
//       CHECK:         %[[SV:.*]] = vector.broadcast %[[SH]] : f32 to vector<8xf32>
//       CHECK:         %[[V:.*]] = arith.mulf %{{.*}}, %[[SV]] : vector<8xf32>
//       CHECK:         %[[R:.*]] = math.roundeven %[[V]] : vector<8xf32>
//       CHECK:         arith.minimumf %[[R]], %{{.*}} : vector<8xf32>
//       CHECK:         arith.maximumf
//       CHECK:         arith.cmpf uno
//       CHECK:         arith.select
//       CHECK:         %[[Q:.*]] = arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi8>
//       CHECK:         vector.store %[[Q]], %[[OUT]][%{{.*}}, %[[H]], %{{.*}}] {alignment = 8 : i64} : memref<?x4x64xi8>, vector<8xi8>
//       CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}, %[[H]], %{{.*}}] {alignment = 8 : i64} : memref<?x4x64xi8>, vector<8xi8>
//       CHECK:       scf.for %[[C:[a-z0-9]+]] =
//       CHECK:         scf.for %[[H2:[a-z0-9]+]] =
//       CHECK:           %[[SH2:.*]] = memref.load %[[S]][%[[H2]]] : memref<4xf32>
//       CHECK:           arith.mulf %{{.*}}, %[[SH2]] : f32
//       CHECK:           math.roundeven
//       CHECK:           %[[QP:.*]] = arith.fptosi %{{.*}} : f32 to i8
//       CHECK:           memref.store %[[QP]], %[[OUT]][%{{.*}}, %[[H2]], %[[C]]] : memref<?x4x64xi8>
func.func @quant_i8_per_head(%x: tensor<?x4x64xbf16>, %p: tensor<?xi64>, %s: tensor<4xf32>, %init: tensor<?x4x64xi8>) -> tensor<?x4x64xi8> {
  %y = rope.apply ins(%x : tensor<?x4x64xbf16>) positions(%p : tensor<?xi64>) quant_scale(%s : tensor<4xf32>) outs(%init : tensor<?x4x64xi8>) {rotary_dim = 32 : i64} -> tensor<?x4x64xi8>
  return %y : tensor<?x4x64xi8>
}

// -----

// f8E4M3FN, interleaved, one scale per tensor: the scale is read once per
// thread, before the token loop; the rotated lanes are clamped to +-448 and
// truncated (rope-expand-f8 rounds them in rope-to-nvvm), 4 bytes a store.
// CHECK-LABEL: func.func @quant_e4m3_per_tensor(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4x64xf8E4M3FN> to memref<?x4x64xf8E4M3FN>
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<f32> to memref<f32>
//       CHECK:   gpu.launch
//       CHECK:     %[[SCALE:.*]] = memref.load %[[S]][] : memref<f32>
//       CHECK:     scf.for
//       CHECK:       scf.for
//       CHECK:         scf.for %[[H:[a-z0-9]+]] =
//   CHECK-NOT:           memref.load %[[S]]
//       CHECK:           %[[SV:.*]] = vector.broadcast %[[SCALE]] : f32 to vector<4xf32>
//       CHECK:           %[[V:.*]] = arith.mulf %{{.*}}, %[[SV]] : vector<4xf32>
//       CHECK:           %[[HI:.*]] = arith.minimumf %[[V]], %{{.*}} : vector<4xf32>
//       CHECK:           %[[LO:.*]] = arith.maximumf %[[HI]], %{{.*}} : vector<4xf32>
//       CHECK:           %[[Q:.*]] = arith.truncf %[[LO]] : vector<4xf32> to vector<4xf8E4M3FN>
//       CHECK:           vector.store %[[Q]], %[[OUT]][%{{.*}}, %[[H]], %{{.*}}] {alignment = 4 : i64} : memref<?x4x64xf8E4M3FN>, vector<4xf8E4M3FN>
func.func @quant_e4m3_per_tensor(%x: tensor<?x4x64xf32>, %p: tensor<?xi64>, %s: tensor<f32>, %init: tensor<?x4x64xf8E4M3FN>) -> tensor<?x4x64xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<?xi64>) quant_scale(%s : tensor<f32>) outs(%init : tensor<?x4x64xf8E4M3FN>) {layout = #rope.layout<interleaved>} -> tensor<?x4x64xf8E4M3FN>
  return %y : tensor<?x4x64xf8E4M3FN>
}

// -----

// 12 pairs on 8 threads (vectorize=false: one pair per thread): each owns two
// frequency groups, computed before the head loop; the second exists in
// threads 0-3 only, so it is computed at a clamped index and rotated under
// a guard.
// TINY-LABEL: func.func @norm_ragged(
//       TINY:   gpu.launch {{.*}} threads(%[[TX:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
//       TINY:     scf.for
//       TINY:       %[[J1:.*]] = arith.addi %[[TX]], %c8{{.*}} : index
//       TINY:       %[[IN:.*]] = arith.cmpi ult, %[[J1]], %c12{{.*}} : index
//       TINY:       %[[JC:.*]] = arith.select %[[IN]], %[[J1]], %c0{{.*}} : index
//       TINY:       math.cos %{{.*}} : f32
//       TINY:       scf.for %[[H:[a-z0-9]+]] =
//       TINY:         math.rsqrt
//       TINY:         memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[H]], %[[TX]]]
//       TINY:         scf.if %[[IN]] {
//       TINY:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[H]], %[[JC]]]
func.func @norm_ragged(%x: tensor<?x2x40xf32>, %p: tensor<?xi64>, %w: tensor<40xf32>, %init: tensor<?x2x40xf32>) -> tensor<?x2x40xf32> {
  %y = rope.apply ins(%x : tensor<?x2x40xf32>) positions(%p : tensor<?xi64>) norm(%w : tensor<40xf32>) outs(%init : tensor<?x2x40xf32>) {rotary_dim = 24 : i64, norm_epsilon = 1.0e-05} -> tensor<?x2x40xf32>
  return %y : tensor<?x2x40xf32>
}
