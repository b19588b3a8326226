// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector --canonicalize -split-input-file | FileCheck %s --check-prefix=AXES
// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --check-prefix=PORTABLE
// PORTABLE-NOT: affine_map<{{.*}}-d{{[0-9]}}

// M-RoPE (SEMANTICS.md §2): the three position axes (t, h, w) of
// positions [3, tokens...] become three token-shaped slices; the axis of
// each of the P/2 frequencies follows from the sections by arithmetic on
// the frequency index (RotationCore::mropeAxis, the one encoding of every
// lowering), and the cos/sin table generic picks one of the three
// positions per element with two selects. The AXES run lowers to vector
// code, where the pair indices are constants and the axis arithmetic folds
// to the i1 masks of the pairs reading w and h: this checks the encoding
// pair by pair.

// Chunked, section [2, 3, 3]: pairs 0-1 from t, 2-4 from h, 5-7 from w.
// CHECK-LABEL: func.func @mrope_chunked(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x16xf32>, %[[P:[^:]*]]: tensor<3x2x8xi64>
//       CHECK:   %[[T:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[H:.*]] = tensor.extract_slice %[[P]][1, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[W:.*]] = tensor.extract_slice %[[P]][2, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xi64> to tensor<2x8xi64>
//       CHECK:   %[[THETA:.*]] = arith.constant dense<{{.*}}> : tensor<8xf64>
//       CHECK:   %[[TABLE:.*]]:2 = linalg.generic
//  CHECK-SAME:     ins(%[[T]], %[[H]], %[[W]], %[[THETA]] : tensor<2x8xi64>, tensor<2x8xi64>, tensor<2x8xi64>, tensor<8xf64>)
//  CHECK-SAME:     outs(%{{.*}}, %{{.*}} : tensor<2x8x8xf32>, tensor<2x8x8xf32>)
//  CHECK-NEXT:   ^bb0(%[[PT:[^:]*]]: i64, %[[PH:[^:]*]]: i64, %[[PW:[^:]*]]: i64, %[[TH:[^:]*]]: f64,
//       CHECK:     %[[J:.*]] = linalg.index 2 : index
//       CHECK:     %[[PAST_T:.*]] = arith.cmpi sge, %[[J]], %c2{{(_[0-9]+)?}} : index
//       CHECK:     %[[PAST_H:.*]] = arith.cmpi sge, %[[J]], %c5{{(_[0-9]+)?}} : index
//       CHECK:     %[[TH_AXIS:.*]] = arith.select %[[PAST_T]]
//       CHECK:     %[[AXIS:.*]] = arith.select %[[PAST_H]], %{{.*}}, %[[TH_AXIS]] : index
//       CHECK:     %[[IS_H:.*]] = arith.cmpi eq, %[[AXIS]], %{{.*}} : index
//       CHECK:     %[[IS_W:.*]] = arith.cmpi eq, %[[AXIS]], %{{.*}} : index
//       CHECK:     %[[WT:.*]] = arith.select %[[IS_W]], %[[PW]], %[[PT]] : i64
//       CHECK:     %[[POS:.*]] = arith.select %[[IS_H]], %[[PH]], %[[WT]] : i64
//       CHECK:     %[[POSF:.*]] = arith.sitofp %[[POS]] : i64 to f64
//       CHECK:     arith.mulf %[[POSF]], %[[TH]] : f64
//       CHECK:     math.cos
//       CHECK:     math.sin
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[TABLE]]#0, %[[TABLE]]#1 : tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
// AXES-LABEL: func.func @mrope_chunked(
//   AXES-DAG:   arith.constant dense<[false, false, false, false, false, true, true, true]> : vector<8xi1>
//   AXES-DAG:   arith.constant dense<[false, false, true, true, true, false, false, false]> : vector<8xi1>
func.func @mrope_chunked(%x: tensor<2x8x4x16xf32>, %p: tensor<3x2x8xi64>) -> tensor<2x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x16xf32>) positions(%p : tensor<3x2x8xi64>) outs(%x : tensor<2x8x4x16xf32>) {mrope = #rope.mrope<section = [2, 3, 3]>} -> tensor<2x8x4x16xf32>
  return %y : tensor<2x8x4x16xf32>
}

// -----

// Frequency-interleaved (Qwen3-VL), section [4, 2, 2] over 8 pairs: h takes
// j % 3 == 1 for j < 6 (1, 4), w takes j % 3 == 2 for j < 6 (2, 5), t the
// rest (0, 3, 6, 7).
// CHECK-LABEL: func.func @mrope_interleaved(
//       CHECK:     %[[J:.*]] = linalg.index 1 : index
//       CHECK:     %[[PHASE:.*]] = arith.remui %[[J]], %{{.*}} : index
//       CHECK:     arith.cmpi eq, %[[PHASE]]
//       CHECK:     %[[C6:.*]] = arith.constant 6 : index
//       CHECK:     arith.cmpi ult, %[[J]], %[[C6]] : index
// AXES-LABEL: func.func @mrope_interleaved(
//   AXES-DAG:   arith.constant dense<[false, false, true, false, false, true, false, false]> : vector<8xi1>
//   AXES-DAG:   arith.constant dense<[false, true, false, false, true, false, false, false]> : vector<8xi1>
func.func @mrope_interleaved(%x: tensor<8x4x16xf32>, %p: tensor<3x8xi32>) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<3x8xi32>) outs(%x : tensor<8x4x16xf32>) {mrope = #rope.mrope<section = [4, 2, 2], interleaved = true>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Qwen3-VL's own split: section [24, 20, 20] over 64 pairs.
// CHECK-LABEL: func.func @mrope_qwen3_vl(
//       CHECK:     arith.remui
//       CHECK:     %[[C60:.*]] = arith.constant 60 : index
//       CHECK:     arith.cmpi ult, %{{.*}}, %[[C60]] : index
// AXES-LABEL: func.func @mrope_qwen3_vl(
//   AXES-DAG:   arith.constant dense<[false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, false, false]> : vector<64xi1>
//   AXES-DAG:   arith.constant dense<[false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, false, false, false]> : vector<64xi1>
func.func @mrope_qwen3_vl(%x: tensor<8x4x128xbf16>, %p: tensor<3x8xi64>) -> tensor<8x4x128xbf16> {
  %y = rope.apply ins(%x : tensor<8x4x128xbf16>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x4x128xbf16>) {freqs = #rope.default<base = 5000000.0>, mrope = #rope.mrope<section = [24, 20, 20], interleaved = true>} -> tensor<8x4x128xbf16>
  return %y : tensor<8x4x128xbf16>
}

// -----

// A zero-sized section: no pair reads h (its mask folds away).
// CHECK-LABEL: func.func @mrope_empty_section(
//       CHECK:     %[[C3:.*]] = arith.constant 3 : index
//       CHECK:     arith.cmpi sge, %{{.*}}, %[[C3]] : index
//       CHECK:     %[[C3B:.*]] = arith.constant 3 : index
//       CHECK:     arith.cmpi sge, %{{.*}}, %[[C3B]] : index
// AXES-LABEL: func.func @mrope_empty_section(
//   AXES-NOT:   arith.constant dense<{{.*}}> : vector<8xi1>
//       AXES:   arith.constant dense<[false, false, false, true, true, true, true, true]> : vector<8xi1>
//   AXES-NOT:   arith.constant dense<{{.*}}> : vector<8xi1>
//       AXES:   scf.forall
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
//       CHECK:   %[[RED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<3x?xi32>)
//       CHECK:   tensor.extract %[[RED]][] : tensor<i64>
//       CHECK:   %[[THETA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf64>)
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[T]], %[[H]], %[[W]], %[[THETA]] : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<4xf64>)
//       CHECK:     arith.extsi %{{.*}} : i32 to i64
//       CHECK:     arith.select
//       CHECK:     arith.select
//   CHECK-NOT:   math.exp
//       CHECK:   return
// AXES-LABEL: func.func @mrope_dynamic_ntk(
//   AXES-DAG:   arith.constant dense<[false, false, true, true]> : vector<4xi1>
//   AXES-DAG:   arith.constant dense<[false, true, false, false]> : vector<4xi1>
func.func @mrope_dynamic_ntk(%x: tensor<?x4x16xf32>, %p: tensor<3x?xi32>) -> tensor<?x4x16xf32> {
  %y = rope.apply ins(%x : tensor<?x4x16xf32>) positions(%p : tensor<3x?xi32>) outs(%x : tensor<?x4x16xf32>) {rotary_dim = 8 : i64, freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>, mrope = #rope.mrope<section = [1, 1, 2]>} -> tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}

