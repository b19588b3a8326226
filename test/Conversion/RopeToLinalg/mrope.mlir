// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// M-RoPE (ROPE.md section 2): the three position axes (t, h, w) of
// positions [3, tokens...] become three token-shaped slices, and a constant
// i64 table gives the axis of each of the P/2 frequencies. The cos/sin table
// generic picks one of the three positions per element with two selects.

// Chunked, section [2, 3, 3]: pairs 0-1 from t, 2-4 from h, 5-7 from w.
// CHECK-LABEL: func.func @mrope_chunked(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x16xf32>, %[[P:[^:]*]]: tensor<3x2x8xi64>
//       CHECK:   %[[T:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[H:.*]] = tensor.extract_slice %[[P]][1, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[W:.*]] = tensor.extract_slice %[[P]][2, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[AXES:.*]] = arith.constant dense<[0, 0, 1, 1, 1, 2, 2, 2]> : tensor<8xi64>
//       CHECK:   %[[THETA:.*]] = arith.constant dense<{{.*}}> : tensor<8xf64>
//       CHECK:   %[[TABLE:.*]]:2 = linalg.generic
//  CHECK-SAME:     ins(%[[T]], %[[H]], %[[W]], %[[AXES]], %[[THETA]] : tensor<2x8xi64>, tensor<2x8xi64>, tensor<2x8xi64>, tensor<8xi64>, tensor<8xf64>)
//  CHECK-SAME:     outs(%{{.*}}, %{{.*}} : tensor<2x8x8xf32>, tensor<2x8x8xf32>)
//  CHECK-NEXT:   ^bb0(%[[PT:[^:]*]]: i64, %[[PH:[^:]*]]: i64, %[[PW:[^:]*]]: i64, %[[AXIS:[^:]*]]: i64, %[[TH:[^:]*]]: f64,
//       CHECK:     %[[ONE:.*]] = arith.constant 1 : i64
//       CHECK:     %[[IS_H:.*]] = arith.cmpi eq, %[[AXIS]], %[[ONE]] : i64
//       CHECK:     %[[TWO:.*]] = arith.constant 2 : i64
//       CHECK:     %[[IS_W:.*]] = arith.cmpi eq, %[[AXIS]], %[[TWO]] : i64
//       CHECK:     %[[WT:.*]] = arith.select %[[IS_W]], %[[PW]], %[[PT]] : i64
//       CHECK:     %[[POS:.*]] = arith.select %[[IS_H]], %[[PH]], %[[WT]] : i64
//       CHECK:     %[[POSF:.*]] = arith.sitofp %[[POS]] : i64 to f64
//       CHECK:     arith.mulf %[[POSF]], %[[TH]] : f64
//       CHECK:     math.cos
//       CHECK:     math.sin
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[TABLE]]#0, %[[TABLE]]#1 : tensor<2x8x4x2x8xf32>, tensor<2x8x4x2x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
func.func @mrope_chunked(%x: tensor<2x8x4x16xf32>, %p: tensor<3x2x8xi64>) -> tensor<2x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x16xf32>) positions(%p : tensor<3x2x8xi64>) outs(%x : tensor<2x8x4x16xf32>) {mrope = #rope.mrope<section = [2, 3, 3]>} -> tensor<2x8x4x16xf32>
  return %y : tensor<2x8x4x16xf32>
}

// -----

// Frequency-interleaved (Qwen3-VL), section [4, 2, 2] over 8 pairs: h takes
// j % 3 == 1 for j < 6 (1, 4), w takes j % 3 == 2 for j < 6 (2, 5), t the
// rest (0, 3, 6, 7).
// CHECK-LABEL: func.func @mrope_interleaved(
//       CHECK:   arith.constant dense<[0, 1, 2, 0, 1, 2, 0, 0]> : tensor<8xi64>
func.func @mrope_interleaved(%x: tensor<8x4x16xf32>, %p: tensor<3x8xi32>) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<3x8xi32>) outs(%x : tensor<8x4x16xf32>) {mrope = #rope.mrope<section = [4, 2, 2], interleaved = true>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Qwen3-VL's own split: section [24, 20, 20] over 64 pairs.
// CHECK-LABEL: func.func @mrope_qwen3_vl(
//       CHECK:   arith.constant dense<[0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 0]> : tensor<64xi64>
func.func @mrope_qwen3_vl(%x: tensor<8x4x128xbf16>, %p: tensor<3x8xi64>) -> tensor<8x4x128xbf16> {
  %y = rope.apply ins(%x : tensor<8x4x128xbf16>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x4x128xbf16>) {freqs = #rope.default<base = 5000000.0>, mrope = #rope.mrope<section = [24, 20, 20], interleaved = true>} -> tensor<8x4x128xbf16>
  return %y : tensor<8x4x128xbf16>
}

// -----

// A zero-sized section: no pair reads h.
// CHECK-LABEL: func.func @mrope_empty_section(
//       CHECK:   arith.constant dense<[0, 0, 0, 2, 2, 2, 2, 2]> : tensor<8xi64>
func.func @mrope_empty_section(%x: tensor<8x4x16xf32>, %p: tensor<3x8xi64>) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x4x16xf32>) {mrope = #rope.mrope<section = [3, 0, 5]>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Ragged tokens [T] with dynamic T, i32 positions, partial rotary
// (P = 8 of D = 16) and a dynamic scheme: the runtime length is a reduction
// over all three axes of the positions, and the position slices keep T
// dynamic.
// CHECK-LABEL: func.func @mrope_dynamic_ntk(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x4x16xf32>, %[[P:[^:]*]]: tensor<3x?xi32>
//       CHECK:   %[[T:.*]] = tensor.extract_slice %[[P]][0, 0] [1, %{{.*}}] [1, 1] : tensor<3x?xi32> to tensor<?xi32>
//       CHECK:   %[[H:.*]] = tensor.extract_slice %[[P]][1, 0] [1, %{{.*}}] [1, 1] : tensor<3x?xi32> to tensor<?xi32>
//       CHECK:   %[[W:.*]] = tensor.extract_slice %[[P]][2, 0] [1, %{{.*}}] [1, 1] : tensor<3x?xi32> to tensor<?xi32>
//       CHECK:   %[[AXES:.*]] = arith.constant dense<[0, 1, 2, 2]> : tensor<4xi64>
//       CHECK:   %[[RED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<3x?xi32>)
//       CHECK:   tensor.extract %[[RED]][] : tensor<i64>
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf64>)
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[T]], %[[H]], %[[W]], %[[AXES]], %[[THETA]] : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<4xi64>, tensor<4xf64>)
//       CHECK:     arith.select
//       CHECK:     arith.select
//       CHECK:     arith.extsi %{{.*}} : i32 to i64
//   CHECK-NOT:   math.exp
//       CHECK:   return
func.func @mrope_dynamic_ntk(%x: tensor<?x4x16xf32>, %p: tensor<3x?xi32>) -> tensor<?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<?x4x16xf32>) positions(%p : tensor<3x?xi32>) outs(%x : tensor<?x4x16xf32>) {rotary_dim = 8 : i64, freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>, mrope = #rope.mrope<section = [1, 1, 2]>} -> tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}
