// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// Dynamic frequency schemes (SEMANTICS.md §4) depend on the call's runtime
// length l: the `length` operand when given, else max position + 1 over the
// explicit positions, else offset + S (max offset for per-row offsets), else
// S. The P/2 frequencies are computed once per call, before and outside the
// per-(position, frequency) cos/sin table generic, which only reads them.

// dynamic_ntk with explicit positions: l is a max-reduction over every
// position (plus one); then ln base' = ln b + P/(P-2) ln(s l'/M - (s - 1))
// with l' = max(l, M), and one 1-D generic exponentiates.
// P = 16, s = 2, M = 4096: s/M = 2^-11, P/(P-2) = 8/7, -2/P = -1/8.
// CHECK-LABEL: func.func @dynamic_ntk_positions(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x16xf32>, %[[P:[^:]*]]: tensor<2x8xi32>
//       CHECK:   %[[LOWEST:.*]] = arith.constant -9223372036854775808 : i64
//       CHECK:   %[[FILL:.*]] = linalg.fill ins(%[[LOWEST]] : i64) outs(%{{.*}} : tensor<i64>)
//       CHECK:   %[[RED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<2x8xi32>) outs(%[[FILL]] : tensor<i64>)
//       CHECK:     arith.extsi
//       CHECK:     arith.maxsi
//       CHECK:   %[[MAXPOS:.*]] = tensor.extract %[[RED]][] : tensor<i64>
//       CHECK:   %[[LEN:.*]] = arith.addi %[[MAXPOS]], %{{.*}} : i64
//       CHECK:   %[[M:.*]] = arith.constant 4096 : i64
//       CHECK:   %[[CLAMPED:.*]] = arith.maxsi %[[LEN]], %[[M]] : i64
//       CHECK:   %[[LF:.*]] = arith.sitofp %[[CLAMPED]] : i64 to f64
//       CHECK:   %[[SM:.*]] = arith.constant 4.8828125E-4 : f64
//       CHECK:   %[[RATIO:.*]] = arith.mulf %[[LF]], %[[SM]] : f64
//       CHECK:   %[[GROWTH:.*]] = arith.subf %[[RATIO]], %{{.*}} : f64
//       CHECK:   %[[LOG:.*]] = math.log %[[GROWTH]] : f64
//       CHECK:   %[[EXPO:.*]] = arith.constant 1.1428571428571428 : f64
//       CHECK:   %[[LNB:.*]] = arith.constant 9.2103403719761836 : f64
//       CHECK:   %[[LNBP:.*]] = math.fma %[[LOG]], %[[EXPO]], %[[LNB]] : f64
//       CHECK:   %[[SCALE:.*]] = arith.mulf %[[LNBP]], %{{.*}} : f64
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%{{.*}} : tensor<8xf64>)
//       CHECK:     linalg.index 0
//       CHECK:     %[[E:.*]] = math.exp %{{.*}} : f64
//       CHECK:     linalg.yield %[[E]] : f64
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %[[THETA]] : tensor<2x8xi32>, tensor<8xf64>)
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   math.log
//   CHECK-NOT:   linalg.fill
//       CHECK:   return
func.func @dynamic_ntk_positions(%x: tensor<2x8x4x16xf32>, %p: tensor<2x8xi32>) -> tensor<2x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x16xf32>) positions(%p : tensor<2x8xi32>) outs(%x : tensor<2x8x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<2x8x4x16xf32>
  return %y : tensor<2x8x4x16xf32>
}

// -----

// A scalar offset: l = offset + S, no reduction.
// CHECK-LABEL: func.func @dynamic_ntk_scalar_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x8x4x16xf32>, %[[O:[^:]*]]: i32
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[O64:.*]] = arith.extsi %[[O]] : i32 to i64
//       CHECK:   %[[C1:.*]] = arith.constant 1 : index
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<1x8x4x16xf32>
//       CHECK:   %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:   %[[LEN:.*]] = arith.addi %[[O64]], %[[S64]] : i64
//       CHECK:   arith.maxsi %[[LEN]], %{{.*}} : i64
//       CHECK:   math.log
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf64>)
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[THETA]] : tensor<8xf64>)
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   math.log
//       CHECK:   return
func.func @dynamic_ntk_scalar_offset(%x: tensor<1x8x4x16xf32>, %o: i32) -> tensor<1x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<1x8x4x16xf32>) offset(%o : i32) outs(%x : tensor<1x8x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<1x8x4x16xf32>
  return %y : tensor<1x8x4x16xf32>
}

// -----

// Per-row offsets: l = max over the offsets + S (a dynamic S here).
// CHECK-LABEL: func.func @dynamic_ntk_per_row_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x?x4x16xf32>, %[[O:[^:]*]]: tensor<2xi64>
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<2x?x4x16xf32>
//       CHECK:   %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:   %[[RED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[O]] : tensor<2xi64>) outs(%{{.*}} : tensor<i64>)
//       CHECK:     arith.maxsi
//       CHECK:   %[[MAXO:.*]] = tensor.extract %[[RED]][] : tensor<i64>
//       CHECK:   %[[LEN:.*]] = arith.addi %[[MAXO]], %[[S64]] : i64
//       CHECK:   arith.maxsi %[[LEN]], %{{.*}} : i64
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf64>)
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[O]], %[[THETA]] : tensor<2xi64>, tensor<8xf64>)
//   CHECK-NOT:   math.exp
//       CHECK:   return
func.func @dynamic_ntk_per_row_offset(%x: tensor<2x?x4x16xf32>, %o: tensor<2xi64>) -> tensor<2x?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<2x?x4x16xf32>) offset(%o : tensor<2xi64>) outs(%x : tensor<2x?x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<2x?x4x16xf32>
  return %y : tensor<2x?x4x16xf32>
}

// -----

// A rank-0 offset tensor: its value + S.
// CHECK-LABEL: func.func @dynamic_ntk_rank0_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x4x16xf32>, %[[O:[^:]*]]: tensor<i32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[OV:.*]] = tensor.extract %[[O]][] : tensor<i32>
//       CHECK:   %[[O64:.*]] = arith.extsi %[[OV]] : i32 to i64
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x16xf32>
//       CHECK:   %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:   %[[LEN:.*]] = arith.addi %[[O64]], %[[S64]] : i64
//       CHECK:   arith.maxsi %[[LEN]], %{{.*}} : i64
//       CHECK:   return
func.func @dynamic_ntk_rank0_offset(%x: tensor<?x4x16xf32>, %o: tensor<i32>) -> tensor<?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<?x4x16xf32>) offset(%o : tensor<i32>) outs(%x : tensor<?x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}

// -----

// Implicit positions (pos = s): l = S.
// CHECK-LABEL: func.func @dynamic_ntk_implicit(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x4x16xf32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x16xf32>
//       CHECK:   %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:   arith.maxsi %[[S64]], %{{.*}} : i64
//       CHECK:   return
func.func @dynamic_ntk_implicit(%x: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<?x4x16xf32>) outs(%x : tensor<?x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}

// -----

// The length operand is used directly: no reduction over the positions.
// CHECK-LABEL: func.func @dynamic_ntk_length_operand(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x16xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[L:[^:]*]]: i64
//   CHECK-NOT:   linalg.fill
//   CHECK-NOT:   reduction
//       CHECK:   %[[M:.*]] = arith.constant 4096 : i64
//       CHECK:   arith.maxsi %[[L]], %[[M]] : i64
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf64>)
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %[[THETA]] : tensor<8xi64>, tensor<8xf64>)
//       CHECK:   return
func.func @dynamic_ntk_length_operand(%x: tensor<8x4x16xf32>, %p: tensor<8xi64>, %l: i64) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<8xi64>) length(%l : i64) outs(%x : tensor<8x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// An index length is cast to i64.
// CHECK-LABEL: func.func @dynamic_ntk_index_length(
//  CHECK-SAME:     %[[L:[^:]*]]: index)
//   CHECK-NOT:   reduction
//       CHECK:   %[[L64:.*]] = arith.index_cast %[[L]] : index to i64
//       CHECK:   arith.maxsi %[[L64]], %{{.*}} : i64
//       CHECK:   return
func.func @dynamic_ntk_index_length(%x: tensor<1x8x4x16xf32>, %o: i64, %l: index) -> tensor<1x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<1x8x4x16xf32>) offset(%o : i64) length(%l : index) outs(%x : tensor<1x8x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<1x8x4x16xf32>
  return %y : tensor<1x8x4x16xf32>
}

// -----

// LongRoPE: two constant tables theta_i / short_i and theta_i / long_i
// (base 10000, P = 4: theta = [1, 0.01]) and one select on l > L; no
// transcendental functions for the frequencies. With explicit positions
// the maximum stays a 0-d tensor that the table generic reads, and the
// choice is made inside it (no scalar extracted outside linalg: for a
// compiler placing tensors on a device, a read back to the host).
// CHECK-LABEL: func.func @longrope_positions(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4xf32>, %[[P:[^:]*]]: tensor<8xi64>
//       CHECK:   %[[RED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<8xi64>)
//   CHECK-NOT:   tensor.extract %[[RED]]
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %[[RED]] : tensor<8xi64>, tensor<i64>)
//       CHECK:     %[[LEN:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
//       CHECK:     %[[L:.*]] = arith.constant 4096 : i64
//       CHECK:     %[[IS_LONG:.*]] = arith.cmpi sgt, %[[LEN]], %[[L]] : i64
//       CHECK:     arith.constant dense<[1.000000e+00, 0.0066666666666666671]> : tensor<2xf64>
//       CHECK:     arith.constant dense<[5.000000e-01, 2.500000e-03]> : tensor<2xf64>
//       CHECK:     arith.select %[[IS_LONG]], %{{.*}}, %{{.*}} : f64
//   CHECK-NOT:   arith.select {{.*}} : tensor<2xf64>
//   CHECK-NOT:   math.exp
//       CHECK:   return
func.func @longrope_positions(%x: tensor<8x4xf32>, %p: tensor<8xi64>) -> tensor<8x4xf32> {
  %y = rope.apply ins(%x : tensor<8x4xf32>) positions(%p : tensor<8xi64>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// LongRoPE with the length operand and its magnitude applied to cos/sin.
// CHECK-LABEL: func.func @longrope_length_operand(
//  CHECK-SAME:     %[[L:[^:]*]]: i32)
//   CHECK-NOT:   reduction
//       CHECK:   %[[L64:.*]] = arith.extsi %[[L]] : i32 to i64
//       CHECK:   %[[ORIG:.*]] = arith.constant 4096 : i64
//       CHECK:   %[[IS_LONG:.*]] = arith.cmpi sgt, %[[L64]], %[[ORIG]] : i64
//       CHECK:   %[[THETA:.*]] = arith.select %[[IS_LONG]], %{{.*}}, %{{.*}} : tensor<2xf64>
//       CHECK:   linalg.generic {{.*}} ins(%[[THETA]] : tensor<2xf64>)
//       CHECK:     %[[A:.*]] = arith.constant 1.190238{{[0-9]*}} : f32
//       CHECK:     arith.mulf %{{.*}}, %[[A]] : f32
//       CHECK:   return
func.func @longrope_length_operand(%x: tensor<1x8x2x4xf32>, %o: i64, %l: i32) -> tensor<1x8x2x4xf32> {
  %y = rope.apply ins(%x : tensor<1x8x2x4xf32>) offset(%o : i64) length(%l : i32) outs(%x : tensor<1x8x2x4xf32>) {magnitude = 1.1902380714238083, freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096, factor = 32.0>} -> tensor<1x8x2x4xf32>
  return %y : tensor<1x8x2x4xf32>
}

// -----

// Static schemes never compute a runtime length.
// CHECK-LABEL: func.func @static_no_length(
//   CHECK-NOT:   reduction
//   CHECK-NOT:   tensor.dim
//   CHECK-NOT:   math.exp
//       CHECK:   arith.constant dense<{{.*}}> : tensor<8xf64>
//   CHECK-NOT:   math.exp
//       CHECK:   return
func.func @static_no_length(%x: tensor<?x4x16xf32>, %p: tensor<?xi64>) -> tensor<?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<?x4x16xf32>) positions(%p : tensor<?xi64>) outs(%x : tensor<?x4x16xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 64>, magnitude = 1.1386294361119891} -> tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}

// -----

// LongRoPE with its length operand extracted from a 0-d tensor (what
// rope-raise leaves for the frontend's own max(position_ids) + 1): the table
// generic reads that tensor and picks per element (the operand's own
// extract is left dead, for canonicalize).
// CHECK-LABEL: func.func @longrope_length_from_tensor(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[LEN:[^:]*]]: tensor<i64>
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %[[LEN]] : tensor<8xi64>, tensor<i64>)
//       CHECK:     %[[IS_LONG:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : i64
//       CHECK:     arith.select %[[IS_LONG]], %{{.*}}, %{{.*}} : f64
//   CHECK-NOT:   arith.select {{.*}} : tensor<2xf64>
//       CHECK:   return
func.func @longrope_length_from_tensor(%x: tensor<8x4xf32>, %p: tensor<8xi64>, %len: tensor<i64>) -> tensor<8x4xf32> {
  %l = tensor.extract %len[] : tensor<i64>
  %y = rope.apply ins(%x : tensor<8x4xf32>) positions(%p : tensor<8xi64>) length(%l : i64) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
