// RUN: rope-opt %s --convert-rope-to-gpu="vectorize=false" -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-gpu="vectorize=false block-size=128 max-blocks=64" -split-input-file | FileCheck %s --enable-var-scope --check-prefix=GEOM
// RUN: rope-opt %s --convert-rope-to-gpu -split-input-file | FileCheck %s --enable-var-scope --check-prefix=VEC

// One gpu.launch per rope.apply on the buffers of its operands. Threads own
// frequencies (x) of tokens (y) in a grid-stride token loop; cos/sin are
// computed once per (token, frequency), before the head loop, and the head
// loop does nothing but loads, FMAs and stores.

// CHECK: memref.global "private" constant @[[$THETA:__rope_theta.*]] : memref<32xf64> = dense<[1.000000e+00,
// Vectorized (the default): 4 pairs per thread, 8 threads per token, 32
// tokens per block; theta, cos and sin are vector<4>, and each half of a row
// is one 16-byte load and store.
// VEC-LABEL: func.func @half_f32(
//       VEC:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c32{{.*}}, {{.*}} = %c1{{.*}})
//       VEC:     %[[J0:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
//       VEC:     scf.for %[[J:.*]] = %[[J0]] to %c32{{.*}} step %c32{{.*}} {
//       VEC:       vector.load %{{.*}}[%[[J]]] {alignment = 8 : i64} : memref<32xf64>, vector<4xf64>
//       VEC:       math.cos %{{.*}} : vector<4xf32>
//       VEC:       math.sin %{{.*}} : vector<4xf32>
//       VEC:       scf.for
//       VEC:         vector.load %{{.*}} {alignment = 16 : i64} : memref<2x16x4x64xf32>, vector<4xf32>
//       VEC:         vector.load %{{.*}} {alignment = 16 : i64} : memref<2x16x4x64xf32>, vector<4xf32>
//       VEC:         vector.store %{{.*}} {alignment = 16 : i64} : memref<2x16x4x64xf32>, vector<4xf32>
//       VEC:         vector.store %{{.*}} {alignment = 16 : i64} : memref<2x16x4x64xf32>, vector<4xf32>
// CHECK-LABEL: func.func @half_f32(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<2x16x4x64xf32> to memref<2x16x4x64xf32>
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x16x4x64xf32> to memref<2x16x4x64xf32>
//       CHECK:   %[[P:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x16xi64> to memref<2x16xi64>
//       CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}) {
//       CHECK:     %[[T0:.*]] = arith.addi %{{.*}}, %[[TY]] : index
//       CHECK:     %[[TSTEP:.*]] = arith.muli %[[GX]], %{{.*}} : index
//       CHECK:     scf.for %[[T:.*]] = %[[T0]] to %{{.*}} step %[[TSTEP]] {
//       CHECK:       scf.for %[[J:.*]] = %[[TX]] to %{{.*}} step %{{.*}} {
//       CHECK:         %[[TAB:.*]] = memref.get_global @[[$THETA]] : memref<32xf64>
//       CHECK:         memref.load %[[TAB]][%[[J]]] : memref<32xf64>
//       CHECK:         memref.load %[[P]][%{{.*}}, %{{.*}}] : memref<2x16xi64>
//       CHECK:         arith.sitofp %{{.*}} : i64 to f64
//       CHECK:         math.roundeven %{{.*}} : f64
//       CHECK:         math.fma %{{.*}} : f64
//       CHECK:         math.fma %{{.*}} : f64
//       CHECK:         arith.truncf %{{.*}} : f64 to f32
//       CHECK:         math.cos %{{.*}} : f32
//       CHECK:         math.sin %{{.*}} : f32
//       CHECK:         scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//   CHECK-NOT:           math.cos
//   CHECK-NOT:           math.sin
//       CHECK:           memref.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[J]]] : memref<2x16x4x64xf32>
//       CHECK:           memref.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %{{.*}}] : memref<2x16x4x64xf32>
//       CHECK:           math.fma
//       CHECK:           memref.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[H]], %[[J]]] : memref<2x16x4x64xf32>
//       CHECK:           memref.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[H]], %{{.*}}] : memref<2x16x4x64xf32>
//       CHECK:     gpu.terminator
//       CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[R]]

// block-size=128: 32 frequency threads x 4 tokens; the grid is capped.
// GEOM-LABEL: func.func @half_f32(
//       GEOM:   arith.minui %{{.*}}, %c64
//       GEOM:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}})
func.func @half_f32(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// Interleaved bf16: each pair is one aligned 2-element vector, math in f32.

// Vectorized: 4 pairs (8 channels, 16 bytes) per thread; cos/sin spread over
// the lanes once per (token, frequency group), a pair swap per row.
// VEC-LABEL: func.func @interleaved_bf16(
//       VEC:   math.cos %{{.*}} : vector<4xf32>
//       VEC:   vector.shuffle %{{.*}} [0, 0, 1, 1, 2, 2, 3, 3] : vector<4xf32>, vector<4xf32>
//       VEC:   vector.shuffle %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
//       VEC:   scf.for
//       VEC:     vector.load %{{.*}} {alignment = 16 : i64} : memref<4x8x2x64xbf16>, vector<8xbf16>
//       VEC:     vector.shuffle %{{.*}} [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xf32>, vector<8xf32>
//       VEC:     math.fma %{{.*}} : vector<8xf32>
//       VEC:     vector.store %{{.*}} {alignment = 16 : i64} : memref<4x8x2x64xbf16>, vector<8xbf16>
// CHECK-LABEL: func.func @interleaved_bf16(
//       CHECK:   gpu.launch
//       CHECK:     math.cos %{{.*}} : f32
//       CHECK:     scf.for
//       CHECK:       %[[V:.*]] = vector.load %{{.*}} {alignment = 4 : i64} : memref<4x8x2x64xbf16>, vector<2xbf16>
//       CHECK:       vector.extract %[[V]][0] : bf16 from vector<2xbf16>
//       CHECK:       vector.extract %[[V]][1] : bf16 from vector<2xbf16>
//       CHECK:       arith.extf %{{.*}} : bf16 to f32
//       CHECK:       arith.truncf %{{.*}} : f32 to bf16
//       CHECK:       vector.from_elements %{{.*}}, %{{.*}} : vector<2xbf16>
//       CHECK:       vector.store %{{.*}} {alignment = 4 : i64} : memref<4x8x2x64xbf16>, vector<2xbf16>
func.func @interleaved_bf16(%x: tensor<4x8x2x64xbf16>, %p: tensor<4x8xi64>, %init: tensor<4x8x2x64xbf16>) -> tensor<4x8x2x64xbf16> {
  %y = rope.apply ins(%x : tensor<4x8x2x64xbf16>) positions(%p : tensor<4x8xi64>) outs(%init : tensor<4x8x2x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<4x8x2x64xbf16>
  return %y : tensor<4x8x2x64xbf16>
}

// -----

// Partial rotary out of place: the pass-through channels [P, D) are copied by
// the same threads; in place they are left alone and x is the destination.

// CHECK-LABEL: func.func @partial(
//       CHECK:   gpu.launch
//       CHECK:     math.cos
//       CHECK:     %[[C0:.*]] = arith.addi %{{.*}}, %c32{{.*}} : index
//       CHECK:     scf.for %[[CH:.*]] = %[[C0]] to %c128{{.*}} step
//       CHECK:       scf.for %[[H:.*]] =
//       CHECK:         %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[H]], %[[CH]]]
//       CHECK:         memref.store %[[V]], %{{.*}}[%{{.*}}, %{{.*}}, %[[H]], %[[CH]]]
func.func @partial(%x: tensor<2x8x4x128xf16>, %p: tensor<2x8xi32>, %init: tensor<2x8x4x128xf16>) -> tensor<2x8x4x128xf16> {
  %y = rope.apply ins(%x : tensor<2x8x4x128xf16>) positions(%p : tensor<2x8xi32>) outs(%init : tensor<2x8x4x128xf16>) {rotary_dim = 32 : i64} -> tensor<2x8x4x128xf16>
  return %y : tensor<2x8x4x128xf16>
}

// CHECK-LABEL: func.func @partial_in_place(
//       CHECK:   %[[BUF:.*]] = bufferization.to_buffer %{{.*}} : tensor<8x4x64xf32> to memref<8x4x64xf32>
//   CHECK-NOT:   read_only
//       CHECK:   gpu.launch
//       CHECK:     memref.load %[[BUF]]
//       CHECK:     memref.store %{{.*}}, %[[BUF]]
//   CHECK-NOT:     scf.for
//       CHECK:     gpu.terminator
func.func @partial_in_place(%x: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%x : tensor<8x4x64xf32>) {rotary_dim = 16 : i64} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// [B, H, S, D] (token dims 0 and 2) with a per-row offset: pos = offset[b] + s,
// and the head index goes to dim 1.

// CHECK-LABEL: func.func @bhsd_offset(
//       CHECK:   %[[O:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2xi64> to memref<2xi64>
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[T:.*]] =
//       CHECK:       %[[S:.*]] = arith.remui %[[T]], %c16{{.*}} : index
//       CHECK:       %[[B:.*]] = arith.divui %[[T]], %c16{{.*}} : index
//       CHECK:       scf.for
//       CHECK:         %[[SI:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:         %[[OB:.*]] = memref.load %[[O]][%[[B]]] : memref<2xi64>
//       CHECK:         arith.addi %[[OB]], %[[SI]] : i64
//       CHECK:         math.cos
//       CHECK:         scf.for %[[H:.*]] =
//       CHECK:           memref.load %{{.*}}[%[[B]], %[[H]], %[[S]], %{{.*}}] : memref<2x8x16x64xf32>
func.func @bhsd_offset(%x: tensor<2x8x16x64xf32>, %o: tensor<2xi64>, %init: tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x16x64xf32>) offset(%o : tensor<2xi64>) outs(%init : tensor<2x8x16x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x16x64xf32>
  return %y : tensor<2x8x16x64xf32>
}

// -----

// A gathered cache: one row per token, read once per (token, frequency); an
// out-of-range position reads nothing and yields NaN. No trig in the kernel.

// CHECK-LABEL: func.func @gathered_cache(
//       CHECK:   %[[COS:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2048x32xf32>
//       CHECK:   %[[SIN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2048x32xf32>
//       CHECK:   gpu.launch
//   CHECK-NOT:     math.cos
//       CHECK:     %[[ROWS:.*]] = arith.constant 2048 : index
//       CHECK:     %[[M:.*]] = arith.index_cast %[[ROWS]] : index to i64
//       CHECK:     arith.cmpi sge
//       CHECK:     arith.cmpi slt, %{{.*}}, %[[M]] : i64
//       CHECK:     scf.if %{{.*}} -> (f32, f32) {
//       CHECK:       %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
//       CHECK:       memref.load %[[COS]][%[[ROW]], %{{.*}}]
//       CHECK:       memref.load %[[SIN]][%[[ROW]], %{{.*}}]
//       CHECK:     } else {
//   CHECK-NOT:       memref.load
//       CHECK:       arith.constant 0x7FC00000 : f32
//       CHECK:     }
//       CHECK:     scf.for
//   CHECK-NOT:     math.cos
//       CHECK:     gpu.terminator
func.func @gathered_cache(%x: tensor<2x16x4x64xf16>, %p: tensor<2x16xi64>, %cos: tensor<2048x32xf32>, %sin: tensor<2048x32xf32>, %init: tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf16>) positions(%p : tensor<2x16xi64>) cache(%cos, %sin : tensor<2048x32xf32>, tensor<2048x32xf32>) outs(%init : tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16>
  return %y : tensor<2x16x4x64xf16>
}

// -----

// M-RoPE: the axis of each frequency follows from the sections by
// arithmetic on the pair index (RotationCore::mropeAxis: pairs >= 16 read
// h, pairs >= 24 read w), no table; dynamic token count: sizes from
// memref.dim.

// CHECK-NOT: memref.global "private" constant @__rope_mrope_axes
// CHECK-LABEL: func.func @mrope_dynamic(
//       CHECK:   %[[N:.*]] = memref.dim %{{.*}}, %c0
//       CHECK:   gpu.launch
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step
//       CHECK:       scf.for %[[J:.*]] =
//   CHECK-DAG:         %[[PT:.*]] = memref.load %{{.*}}[%c0{{.*}}, %{{.*}}] : memref<3x?xi64>
//   CHECK-DAG:         %[[PH:.*]] = memref.load %{{.*}}[%c1{{.*}}, %{{.*}}] : memref<3x?xi64>
//   CHECK-DAG:         %[[PW:.*]] = memref.load %{{.*}}[%c2{{.*}}, %{{.*}}] : memref<3x?xi64>
//       CHECK:         %[[C16:.*]] = arith.constant 16 : index
//       CHECK:         %[[PAST_T:.*]] = arith.cmpi sge, %[[J]], %[[C16]] : index
//       CHECK:         %[[C24:.*]] = arith.constant 24 : index
//       CHECK:         %[[PAST_H:.*]] = arith.cmpi sge, %[[J]], %[[C24]] : index
//       CHECK:         %[[AXIS:.*]] = arith.select %[[PAST_H]]
//       CHECK:         %[[IS_H:.*]] = arith.cmpi eq, %[[AXIS]]
//       CHECK:         %[[IS_W:.*]] = arith.cmpi eq, %[[AXIS]]
//       CHECK:         %[[HW:.*]] = arith.select %[[IS_W]], %[[PW]], %[[PT]] : i64
//       CHECK:         arith.select %[[IS_H]], %[[PH]], %[[HW]] : i64
//       CHECK:         math.cos
func.func @mrope_dynamic(%x: tensor<?x4x64xf32>, %p: tensor<3x?xi64>, %init: tensor<?x4x64xf32>) -> tensor<?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<3x?xi64>) outs(%init : tensor<?x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}

// -----

// Dynamic NTK without caches: the kernel computes the call's length from the
// positions buffer (max + 1, once per thread, before the token loop), the
// scheme's per-call state from it, and theta per pair with the per-element
// form (exp of the pair index times the state): no host-side reduction, no
// table.
// CHECK-LABEL: func.func @dynamic_ntk_positions(
//   CHECK-NOT:   linalg.generic
//       CHECK:   gpu.launch
//       CHECK:     %[[MAX:.*]] = scf.for {{.*}} iter_args({{.*}}) -> (i64) {
//       CHECK:       scf.for {{.*}} -> (i64) {
//       CHECK:         memref.load
//       CHECK:         arith.maxsi
//       CHECK:     %[[LEN:.*]] = arith.addi %[[MAX]], %{{.*}} : i64
//       CHECK:     arith.maxsi %[[LEN]], %{{.*}} : i64
//       CHECK:     math.log
//       CHECK:     %[[STATE:.*]] = arith.mulf %{{.*}} : f64
//       CHECK:     scf.for
//       CHECK:       scf.for
//       CHECK:         %[[I:.*]] = arith.sitofp %{{.*}} : i64 to f64
//       CHECK:         %[[E:.*]] = arith.mulf %[[I]], %[[STATE]] : f64
//       CHECK:         math.exp %[[E]] : f64
//   CHECK-NOT:   memref.get_global
//       CHECK:   return
// VEC-LABEL: func.func @dynamic_ntk_positions(
//       VEC:   math.exp %{{.*}} : vector<4xf64>
func.func @dynamic_ntk_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 4.0, max_position_embeddings = 2048>} -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// LongRoPE with the length operand: the kernel compares the captured length
// with L once, and selects between the short and long tables per pair.
// CHECK-LABEL: func.func @longrope_length(
//  CHECK-SAME:     %{{[^:]*}}: i64, %[[L:[^:]*]]: i64
//       CHECK:   gpu.launch
//       CHECK:     %[[IS_LONG:.*]] = arith.cmpi sgt, %[[L]], %{{.*}} : i64
//       CHECK:     scf.for
//       CHECK:       scf.for
//       CHECK:         %[[S:.*]] = memref.load %{{.*}} : memref<2xf64>
//       CHECK:         %[[LG:.*]] = memref.load %{{.*}} : memref<2xf64>
//       CHECK:         arith.select %[[IS_LONG]], %[[LG]], %[[S]] : f64
func.func @longrope_length(%x: tensor<8x2x4xf32>, %o: i64, %l: i64, %init: tensor<8x2x4xf32>) -> tensor<8x2x4xf32> {
  %y = rope.apply ins(%x : tensor<8x2x4xf32>) offset(%o : i64) length(%l : i64) outs(%init : tensor<8x2x4xf32>) {magnitude = 1.1902380714238083, freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096, factor = 32.0>} -> tensor<8x2x4xf32>
  return %y : tensor<8x2x4xf32>
}

// -----

// A symbol of the module already named like the table (with other values):
// the pass's global takes a fresh name, created through the rewriter, and
// the user's global is untouched.
// CHECK: memref.global "private" constant @[[$TAB:__rope_theta_0]] : memref<2xf64> = dense<[1.000000e+00, 1.000000e-02]>
// CHECK: memref.global "private" constant @__rope_theta : memref<2xf64> = dense<[7.000000e+00, 8.000000e+00]>
// CHECK-LABEL: func.func @table_name_taken(
//       CHECK:   memref.get_global @[[$TAB]] : memref<2xf64>
memref.global "private" constant @__rope_theta : memref<2xf64> = dense<[7.0, 8.0]>
func.func @table_name_taken(%x: tensor<8x2x4xf32>, %init: tensor<8x2x4xf32>) -> tensor<8x2x4xf32> {
  %y = rope.apply ins(%x : tensor<8x2x4xf32>) outs(%init : tensor<8x2x4xf32>) -> tensor<8x2x4xf32>
  return %y : tensor<8x2x4xf32>
}
