// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --check-prefix=PORTABLE
// PORTABLE-NOT: affine_map<{{.*}}-d{{[0-9]}}

// Explicit positions [B, S] on [B, S, H, D], half layout: the cos/sin table is
// computed over [B, S, P/2] only (never over heads), with the angle formed in
// f64 and range-reduced (roundeven + two FMAs) before one cos and one sin.

// CHECK-DAG: #[[$POS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$FREQ:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$TBL:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$MEMBER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-LABEL: func.func @half_positions(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x16x4x64xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[INIT:[^:]*]]: tensor<2x16x4x64xf32>)
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[1.000000e+00, 0.74989420933245587, {{.*}}, 1.333521432163324E-4]> : tensor<32xf64>
//       CHECK:   %[[E0:.*]] = tensor.empty() : tensor<2x16x32xf32>
//       CHECK:   %[[E1:.*]] = tensor.empty() : tensor<2x16x32xf32>
//       CHECK:   %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[$POS]], #[[$FREQ]], #[[$TBL]], #[[$TBL]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[P]], %[[THETA]] : tensor<2x16xi64>, tensor<32xf64>) outs(%[[E0]], %[[E1]] : tensor<2x16x32xf32>, tensor<2x16x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[POSV:[^:]*]]: i64, %[[INV:[^:]*]]: f64, %{{.*}}: f32, %{{.*}}: f32):
//       CHECK:     %[[PF:.*]] = arith.sitofp %[[POSV]] : i64 to f64
//       CHECK:     %[[ANGLE:.*]] = arith.mulf %[[PF]], %[[INV]] : f64
//       CHECK:     %[[INV2PI:.*]] = arith.constant 0.15915494309189535 : f64
//       CHECK:     %[[Q:.*]] = arith.mulf %[[ANGLE]], %[[INV2PI]] : f64
//       CHECK:     %[[TURNS:.*]] = math.roundeven %[[Q]] : f64
//       CHECK:     %[[NEG:.*]] = arith.negf %[[TURNS]] : f64
//       CHECK:     %[[HI:.*]] = arith.constant 6.2831853071795862 : f64
//       CHECK:     %[[R1:.*]] = math.fma %[[NEG]], %[[HI]], %[[ANGLE]] : f64
//       CHECK:     %[[LO:.*]] = arith.constant 2.4492935982947064E-16 : f64
//       CHECK:     %[[R2:.*]] = math.fma %[[NEG]], %[[LO]], %[[R1]] : f64
//       CHECK:     %[[R:.*]] = arith.truncf %[[R2]] : f64 to f32
//       CHECK:     %[[C:.*]] = math.cos %[[R]] : f32
//       CHECK:     %[[S:.*]] = math.sin %[[R]] : f32
//       CHECK:     linalg.yield %[[C]], %[[S]] : f32, f32
//   CHECK-NOT:   math.cos
//   CHECK-NOT:   math.sin
//       CHECK:   %[[XP:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 16, 4, 2, 32] : tensor<2x16x4x64xf32> into tensor<2x16x4x2x32xf32>
//       CHECK:   %[[IP:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 16, 4, 2, 32] : tensor<2x16x4x64xf32> into tensor<2x16x4x2x32xf32>
//       CHECK:   %[[X1S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 0, 0] [2, 16, 4, 1, 32] [1, 1, 1, 1, 1] : tensor<2x16x4x2x32xf32> to tensor<2x16x4x1x32xf32>
//       CHECK:   %[[X1:.*]] = tensor.collapse_shape %[[X1S]] {{\[}}[0], [1], [2], [3, 4]] : tensor<2x16x4x1x32xf32> into tensor<2x16x4x32xf32>
//       CHECK:   %[[X2S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 1, 0] [2, 16, 4, 1, 32] [1, 1, 1, 1, 1] : tensor<2x16x4x2x32xf32> to tensor<2x16x4x1x32xf32>
//       CHECK:   %[[X2:.*]] = tensor.collapse_shape %[[X2S]] {{\[}}[0], [1], [2], [3, 4]] : tensor<2x16x4x1x32xf32> into tensor<2x16x4x32xf32>
//       CHECK:   %[[ROT:.*]] = linalg.generic {indexing_maps = [#[[$MEMBER]], #[[$MEMBER]], #[[$CS]], #[[$CS]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[X1]], %[[X2]], %[[T]]#0, %[[T]]#1 : tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%[[IP]] : tensor<2x16x4x2x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[X1V:[^:]*]]: f32, %[[X2V:[^:]*]]: f32, %[[CV:[^:]*]]: f32, %[[SV:[^:]*]]: f32, %{{.*}}: f32):
//       CHECK:     %[[K:.*]] = linalg.index 3 : index
//       CHECK:     %[[ZERO:.*]] = arith.constant 0 : index
//       CHECK:     %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %[[ZERO]] : index
//       CHECK:     %[[SELF:.*]] = arith.select %[[FIRST]], %[[X1V]], %[[X2V]] : f32
//       CHECK:     %[[PV:.*]] = arith.select %[[FIRST]], %[[X2V]], %[[X1V]] : f32
//       CHECK:     %[[NSV:.*]] = arith.negf %[[SV]] : f32
//       CHECK:     %[[SSV:.*]] = arith.select %[[FIRST]], %[[NSV]], %[[SV]] : f32
//       CHECK:     %[[XC:.*]] = arith.mulf %[[SELF]], %[[CV]] : f32
//       CHECK:     %[[Y:.*]] = math.fma %[[PV]], %[[SSV]], %[[XC]] : f32
//       CHECK:     linalg.yield %[[Y]] : f32
//       CHECK:   %[[OUT:.*]] = tensor.collapse_shape %[[ROT]] {{\[}}[0], [1], [2], [3, 4]] : tensor<2x16x4x2x32xf32> into tensor<2x16x4x64xf32>
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[OUT]]
func.func @half_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// [B, H, S, D] with token_dims = [0, 2]: the table is [B, S, P/2] and the
// rotation reads it at (b, s, j), broadcasting over heads (d1). i32 positions
// are sign-extended.

// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-LABEL: func.func @bhsd_token_dims(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x4x16x64xf32>, %[[P:[^:]*]]: tensor<2x16xi32>
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//  CHECK-SAME:       ins(%[[P]], %{{.*}} : tensor<2x16xi32>, tensor<32xf64>) outs(%{{.*}}, %{{.*}} : tensor<2x16x32xf32>, tensor<2x16x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[POSV:[^:]*]]: i32,
//       CHECK:     %[[POS64:.*]] = arith.extsi %[[POSV]] : i32 to i64
//       CHECK:     arith.sitofp %[[POS64]] : i64 to f64
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[$CS]], #[[$CS]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>)
func.func @bhsd_token_dims(%x: tensor<2x4x16x64xf32>, %p: tensor<2x16xi32>, %init: tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32> {
  %y = rope.apply ins(%x : tensor<2x4x16x64xf32>) positions(%p : tensor<2x16xi32>) outs(%init : tensor<2x4x16x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x16x64xf32>
  return %y : tensor<2x4x16x64xf32>
}

// -----

// Interleaved layout, 16 of 64 channels rotated, f16 data, implicit positions
// (pos = index along dim 0): the rotated channels [0, 16) are viewed as
// [..., 8, 2] pairs (partner 1 - k on the last dim), computed in f32, rounded
// once to f16 and inserted into the destination; channels [16, 64) are copied
// from the input.

// CHECK-DAG: #[[$FREQ:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$TBL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$MEMBER:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-LABEL: func.func @interleaved_partial_f16(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf16>, %[[INIT:[^:]*]]: tensor<8x4x64xf16>)
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[1.000000e+00, 0.31622776601683794, 1.000000e-01, {{.*}}]> : tensor<8xf64>
//       CHECK:   %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[$FREQ]], #[[$TBL]], #[[$TBL]]], iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[THETA]] : tensor<8xf64>) outs(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
//       CHECK:     %[[S:.*]] = linalg.index 0 : index
//       CHECK:     %[[POS:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
//       CHECK:     math.cos %{{.*}} : f32
//       CHECK:     math.sin %{{.*}} : f32
//       CHECK:   %[[XR:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [8, 4, 16] [1, 1, 1] : tensor<8x4x64xf16> to tensor<8x4x16xf16>
//       CHECK:   %[[IR:.*]] = tensor.extract_slice %[[INIT]][0, 0, 0] [8, 4, 16] [1, 1, 1] : tensor<8x4x64xf16> to tensor<8x4x16xf16>
//       CHECK:   %[[XP:.*]] = tensor.expand_shape %[[XR]] {{\[}}[0], [1], [2, 3]] output_shape [8, 4, 8, 2] : tensor<8x4x16xf16> into tensor<8x4x8x2xf16>
//       CHECK:   %[[IP:.*]] = tensor.expand_shape %[[IR]] {{\[}}[0], [1], [2, 3]] output_shape [8, 4, 8, 2] : tensor<8x4x16xf16> into tensor<8x4x8x2xf16>
//       CHECK:   %[[X1S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 0] [8, 4, 8, 1] [1, 1, 1, 1] : tensor<8x4x8x2xf16> to tensor<8x4x8x1xf16>
//       CHECK:   %[[X1:.*]] = tensor.collapse_shape %[[X1S]] {{\[}}[0], [1], [2, 3]] : tensor<8x4x8x1xf16> into tensor<8x4x8xf16>
//       CHECK:   %[[X2S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 1] [8, 4, 8, 1] [1, 1, 1, 1] : tensor<8x4x8x2xf16> to tensor<8x4x8x1xf16>
//       CHECK:   %[[X2:.*]] = tensor.collapse_shape %[[X2S]] {{\[}}[0], [1], [2, 3]] : tensor<8x4x8x1xf16> into tensor<8x4x8xf16>
//       CHECK:   %[[ROT:.*]] = linalg.generic {indexing_maps = [#[[$MEMBER]], #[[$MEMBER]], #[[$CS]], #[[$CS]], #[[$ID]]]
//  CHECK-SAME:       ins(%[[X1]], %[[X2]], %[[T]]#0, %[[T]]#1 : tensor<8x4x8xf16>, tensor<8x4x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[IP]] : tensor<8x4x8x2xf16>)
//  CHECK-NEXT:   ^bb0(%[[SELF:[^:]*]]: f16, %[[PV:[^:]*]]: f16, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f16):
//       CHECK:     arith.extf %[[SELF]] : f16 to f32
//       CHECK:     arith.extf %[[PV]] : f16 to f32
//       CHECK:     linalg.index 3 : index
//       CHECK:     %[[Y:.*]] = arith.truncf %{{.*}} : f32 to f16
//       CHECK:     linalg.yield %[[Y]] : f16
//       CHECK:   %[[ROTC:.*]] = tensor.collapse_shape %[[ROT]] {{\[}}[0], [1], [2, 3]] : tensor<8x4x8x2xf16> into tensor<8x4x16xf16>
//       CHECK:   %[[INS:.*]] = tensor.insert_slice %[[ROTC]] into %[[INIT]][0, 0, 0] [8, 4, 16] [1, 1, 1] : tensor<8x4x16xf16> into tensor<8x4x64xf16>
//       CHECK:   %[[XPASS:.*]] = tensor.extract_slice %[[X]][0, 0, 16] [8, 4, 48] [1, 1, 1] : tensor<8x4x64xf16> to tensor<8x4x48xf16>
//       CHECK:   %[[DPASS:.*]] = tensor.extract_slice %[[INS]][0, 0, 16] [8, 4, 48] [1, 1, 1] : tensor<8x4x64xf16> to tensor<8x4x48xf16>
//       CHECK:   %[[PASS:.*]] = linalg.copy ins(%[[XPASS]] : tensor<8x4x48xf16>) outs(%[[DPASS]] : tensor<8x4x48xf16>) -> tensor<8x4x48xf16>
//       CHECK:   %[[OUT:.*]] = tensor.insert_slice %[[PASS]] into %[[INS]][0, 0, 16] [8, 4, 48] [1, 1, 1] : tensor<8x4x48xf16> into tensor<8x4x64xf16>
//       CHECK:   return %[[OUT]]
func.func @interleaved_partial_f16(%x: tensor<8x4x64xf16>, %init: tensor<8x4x64xf16>) -> tensor<8x4x64xf16> {
  %y = rope.apply ins(%x : tensor<8x4x64xf16>) outs(%init : tensor<8x4x64xf16>) {layout = #rope.layout<interleaved>, rotary_dim = 16 : i64} -> tensor<8x4x64xf16>
  return %y : tensor<8x4x64xf16>
}

// -----

// Cache [M, P/2] gathered by position, bf16 data and f16 cache: a position
// in [0, M) reads its row, an out-of-range one reads nothing and yields NaN;
// no trig.

// CHECK-DAG: #[[$POS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$TBL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gathered_cache_bf16(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xbf16>, %[[P:[^:]*]]: tensor<8xi64>, %[[COS:[^:]*]]: tensor<128x32xf16>, %[[SIN:[^:]*]]: tensor<128x32xf16>
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[M:.*]] = tensor.dim %[[COS]], %[[C0]] : tensor<128x32xf16>
//       CHECK:   %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
//       CHECK:   %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[$POS]], #[[$TBL]], #[[$TBL]]], iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[P]] : tensor<8xi64>) outs(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<8x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[POSV:[^:]*]]: i64,
//       CHECK:     %[[J:.*]] = linalg.index 1 : index
//       CHECK:     %[[ZERO:.*]] = arith.constant 0 : i64
//       CHECK:     %[[GE:.*]] = arith.cmpi sge, %[[POSV]], %[[ZERO]] : i64
//       CHECK:     %[[LT:.*]] = arith.cmpi slt, %[[POSV]], %[[M64]] : i64
//       CHECK:     %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       CHECK:     %[[CS:.*]]:2 = scf.if %[[OK]] -> (f32, f32) {
//       CHECK:       %[[ROW:.*]] = arith.index_cast %[[POSV]] : i64 to index
//       CHECK:       %[[CH:.*]] = tensor.extract %[[COS]][%[[ROW]], %[[J]]] : tensor<128x32xf16>
//       CHECK:       %[[CF:.*]] = arith.extf %[[CH]] : f16 to f32
//       CHECK:       %[[SH:.*]] = tensor.extract %[[SIN]][%[[ROW]], %[[J]]] : tensor<128x32xf16>
//       CHECK:       %[[SF:.*]] = arith.extf %[[SH]] : f16 to f32
//       CHECK:       scf.yield %[[CF]], %[[SF]] : f32, f32
//       CHECK:     } else {
//       CHECK:       %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
//       CHECK:       scf.yield %[[NAN]], %[[NAN]] : f32, f32
//       CHECK:     }
//       CHECK:     linalg.yield %[[CS]]#0, %[[CS]]#1 : f32, f32
//   CHECK-NOT:   math.cos
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<8x4x32xbf16>, tensor<8x4x32xbf16>, tensor<8x32xf32>, tensor<8x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[SELF:[^:]*]]: bf16, %[[PV:[^:]*]]: bf16,
//       CHECK:     arith.extf %[[SELF]] : bf16 to f32
//       CHECK:     arith.extf %[[PV]] : bf16 to f32
//       CHECK:     %[[Y:.*]] = arith.truncf %{{.*}} : f32 to bf16
//       CHECK:     linalg.yield %[[Y]] : bf16
func.func @gathered_cache_bf16(%x: tensor<8x4x64xbf16>, %p: tensor<8xi64>, %cos: tensor<128x32xf16>, %sin: tensor<128x32xf16>, %init: tensor<8x4x64xbf16>) -> tensor<8x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<8x4x64xbf16>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<128x32xf16>, tensor<128x32xf16>) outs(%init : tensor<8x4x64xbf16>) -> tensor<8x4x64xbf16>
  return %y : tensor<8x4x64xbf16>
}

// -----

// Pre-gathered f32 caches for f32 data are read as the table directly.

// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-LABEL: func.func @pregathered_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x16x4x64xf32>, %[[COS:[^:]*]]: tensor<2x16x32xf32>, %[[SIN:[^:]*]]: tensor<2x16x32xf32>
//   CHECK-NOT:   tensor.empty
//   CHECK-NOT:   math.cos
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[$CS]], #[[$CS]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[COS]], %[[SIN]] : tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
func.func @pregathered_cache(%x: tensor<2x16x4x64xf32>, %cos: tensor<2x16x32xf32>, %sin: tensor<2x16x32xf32>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) cache(%cos, %sin : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// Pre-gathered f16 caches, magnitude and inverse: converted to f32, scaled
// and sin negated once per (token, frequency), not per head.

// CHECK-LABEL: func.func @pregathered_cache_convert(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x16x4x64xf32>, %[[COS:[^:]*]]: tensor<2x16x32xf16>, %[[SIN:[^:]*]]: tensor<2x16x32xf16>
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//  CHECK-SAME:       ins(%[[COS]], %[[SIN]] : tensor<2x16x32xf16>, tensor<2x16x32xf16>) outs(%{{.*}}, %{{.*}} : tensor<2x16x32xf32>, tensor<2x16x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[CH:[^:]*]]: f16, %[[SH:[^:]*]]: f16,
//       CHECK:     %[[CF:.*]] = arith.extf %[[CH]] : f16 to f32
//       CHECK:     %[[SF:.*]] = arith.extf %[[SH]] : f16 to f32
//       CHECK:     %[[A:.*]] = arith.constant 5.000000e-01 : f32
//       CHECK:     %[[CA:.*]] = arith.mulf %[[CF]], %[[A]] : f32
//       CHECK:     %[[SA:.*]] = arith.mulf %[[SF]], %[[A]] : f32
//       CHECK:     %[[NS:.*]] = arith.negf %[[SA]] : f32
//       CHECK:     linalg.yield %[[CA]], %[[NS]] : f32, f32
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>)
func.func @pregathered_cache_convert(%x: tensor<2x16x4x64xf32>, %cos: tensor<2x16x32xf16>, %sin: tensor<2x16x32xf16>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) cache(%cos, %sin : tensor<2x16x32xf16>, tensor<2x16x32xf16>) outs(%init : tensor<2x16x4x64xf32>) {magnitude = 0.5, inverse} -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// f64 data is computed in f64 end to end: no truncation of the reduced angle.
// The magnitude scales cos and sin, and the inverse negates sin.

// CHECK-LABEL: func.func @f64_magnitude_inverse(
//       CHECK:   arith.constant dense<[1.000000e+00, 1.000000e-02]> : tensor<2xf64>
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//  CHECK-SAME:       outs(%{{.*}}, %{{.*}} : tensor<8x2xf64>, tensor<8x2xf64>)
//   CHECK-NOT:     arith.truncf
//       CHECK:     %[[R:.*]] = math.fma
//       CHECK:     %[[R2:.*]] = math.fma %{{.*}}, %{{.*}}, %[[R]] : f64
//   CHECK-NOT:     arith.truncf
//       CHECK:     %[[C:.*]] = math.cos %[[R2]] : f64
//       CHECK:     %[[S:.*]] = math.sin %[[R2]] : f64
//       CHECK:     %[[A:.*]] = arith.constant 2.000000e+00 : f64
//       CHECK:     %[[CA:.*]] = arith.mulf %[[C]], %[[A]] : f64
//       CHECK:     %[[SA:.*]] = arith.mulf %[[S]], %[[A]] : f64
//       CHECK:     %[[NS:.*]] = arith.negf %[[SA]] : f64
//       CHECK:     linalg.yield %[[CA]], %[[NS]] : f64, f64
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<8x2x2xf64>, tensor<8x2x2xf64>, tensor<8x2xf64>, tensor<8x2xf64>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64):
//   CHECK-NOT:     arith.extf
//   CHECK-NOT:     arith.truncf
//       CHECK:     linalg.yield %{{.*}} : f64
func.func @f64_magnitude_inverse(%x: tensor<8x2x4xf64>, %init: tensor<8x2x4xf64>) -> tensor<8x2x4xf64> {
  %y = rope.apply ins(%x : tensor<8x2x4xf64>) outs(%init : tensor<8x2x4xf64>) {magnitude = 2.0, inverse} -> tensor<8x2x4xf64>
  return %y : tensor<8x2x4xf64>
}

// -----

// One offset per batch row: the table is [B, S, P/2] with pos = o[b] + s.

// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[$FREQ:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-LABEL: func.func @per_row_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x64xf32>, %[[O:[^:]*]]: tensor<2xi32>
//       CHECK:   %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[$ROW]], #[[$FREQ]], #{{.*}}, #{{.*}}]
//  CHECK-SAME:       ins(%[[O]], %{{.*}} : tensor<2xi32>, tensor<32xf64>) outs(%{{.*}}, %{{.*}} : tensor<2x8x32xf32>, tensor<2x8x32xf32>)
//  CHECK-NEXT:   ^bb0(%[[OV:[^:]*]]: i32,
//       CHECK:     %[[S:.*]] = linalg.index 1 : index
//       CHECK:     %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     %[[O64:.*]] = arith.extsi %[[OV]] : i32 to i64
//       CHECK:     %[[POS:.*]] = arith.addi %[[O64]], %[[S64]] : i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[$CS]], #[[$CS]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<2x8x4x32xf32>, tensor<2x8x4x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>)
func.func @per_row_offset(%x: tensor<2x8x4x64xf32>, %o: tensor<2xi32>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : tensor<2xi32>) outs(%init : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// A rank-0 offset tensor is read once; the table is [S, P/2], shared by the
// batch rows and heads.

// CHECK-DAG: #[[$CS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-LABEL: func.func @scalar_offset_tensor(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x64xf32>, %[[O:[^:]*]]: tensor<i32>
//       CHECK:   %[[OE:.*]] = tensor.extract %[[O]][] : tensor<i32>
//       CHECK:   %[[O64:.*]] = arith.extsi %[[OE]] : i32 to i64
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//  CHECK-SAME:       outs(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<8x32xf32>)
//       CHECK:     %[[S:.*]] = linalg.index 0 : index
//       CHECK:     %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     %[[POS:.*]] = arith.addi %[[O64]], %[[S64]] : i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[$CS]], #[[$CS]], #{{.*}}]
//  CHECK-SAME:       ins(%{{.*}}, %{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<2x8x4x32xf32>, tensor<2x8x4x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>)
func.func @scalar_offset_tensor(%x: tensor<2x8x4x64xf32>, %o: tensor<i32>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : tensor<i32>) outs(%init : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// Dynamic batch and sequence sizes, index offset, partial rotary: sizes come
// from tensor.dim of the input.

// CHECK-LABEL: func.func @dynamic_offset_index(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x4x64xf32>, %[[O:[^:]*]]: index, %[[INIT:[^:]*]]: tensor<?x?x4x64xf32>)
//       CHECK:   %[[O64:.*]] = arith.index_cast %[[O]] : index to i64
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x4x64xf32>
//       CHECK:   %[[E0:.*]] = tensor.empty(%[[S]]) : tensor<?x16xf32>
//       CHECK:   %[[T:.*]]:2 = linalg.generic
//  CHECK-SAME:       outs(%[[E0]], %{{.*}} : tensor<?x16xf32>, tensor<?x16xf32>)
//       CHECK:     arith.addi %[[O64]], %{{.*}} : i64
//       CHECK:   %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x4x64xf32>
//       CHECK:   %[[D1:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x4x64xf32>
//       CHECK:   %[[XR:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [%[[D0]], %[[D1]], 4, 32] [1, 1, 1, 1] : tensor<?x?x4x64xf32> to tensor<?x?x4x32xf32>
//       CHECK:   tensor.extract_slice %[[INIT]][0, 0, 0, 0]
//       CHECK:   %[[XP:.*]] = tensor.expand_shape %[[XR]] {{\[}}[0], [1], [2], [3, 4]] output_shape [%[[D0]], %[[D1]], 4, 2, 16] : tensor<?x?x4x32xf32> into tensor<?x?x4x2x16xf32>
//       CHECK:   %[[X1S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 0, 0]
//       CHECK:   %[[X1:.*]] = tensor.collapse_shape %[[X1S]]
//       CHECK:   %[[X2S:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 1, 0]
//       CHECK:   %[[X2:.*]] = tensor.collapse_shape %[[X2S]]
//       CHECK:   %[[ROT:.*]] = linalg.generic
//  CHECK-SAME:       ins(%[[X1]], %[[X2]], %[[T]]#0, %[[T]]#1 : tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
//       CHECK:   tensor.collapse_shape %[[ROT]]
//       CHECK:   %[[INS:.*]] = tensor.insert_slice %{{.*}} into %[[INIT]][0, 0, 0, 0] [%{{.*}}, %{{.*}}, 4, 32] [1, 1, 1, 1] : tensor<?x?x4x32xf32> into tensor<?x?x4x64xf32>
//       CHECK:   tensor.extract_slice %[[X]][0, 0, 0, 32]
//       CHECK:   linalg.copy
//       CHECK:   %[[OUT:.*]] = tensor.insert_slice %{{.*}} into %[[INS]][0, 0, 0, 32] [%{{.*}}, %{{.*}}, 4, 32] [1, 1, 1, 1] : tensor<?x?x4x32xf32> into tensor<?x?x4x64xf32>
//       CHECK:   return %[[OUT]]
func.func @dynamic_offset_index(%x: tensor<?x?x4x64xf32>, %o: index, %init: tensor<?x?x4x64xf32>) -> tensor<?x?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x?x4x64xf32>) offset(%o : index) outs(%init : tensor<?x?x4x64xf32>) {rotary_dim = 32 : i64} -> tensor<?x?x4x64xf32>
  return %y : tensor<?x?x4x64xf32>
}

// -----

// Dynamic positions and a dynamic cache length: the bound is the runtime
// size of the cache, and an out-of-range position reads nothing (the cache
// may be empty at run time): the gather is inside a branch.

// CHECK-LABEL: func.func @dynamic_gathered_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x4x64xf32>, %[[P:[^:]*]]: tensor<?xi64>, %[[COS:[^:]*]]: tensor<?x32xf32>, %[[SIN:[^:]*]]: tensor<?x32xf32>
//       CHECK:   %[[M:.*]] = tensor.dim %[[COS]], %{{.*}} : tensor<?x32xf32>
//       CHECK:   %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
//       CHECK:   %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x64xf32>
//       CHECK:   tensor.empty(%[[T]]) : tensor<?x32xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%[[P]] : tensor<?xi64>)
//       CHECK:     arith.cmpi slt, %{{.*}}, %[[M64]] : i64
//       CHECK:     %[[OK:.*]] = arith.andi
//       CHECK:     scf.if %[[OK]] -> (f32, f32) {
//       CHECK:       tensor.extract %[[COS]]
//       CHECK:       tensor.extract %[[SIN]]
//       CHECK:     } else {
//   CHECK-NOT:       tensor.extract
//       CHECK:       arith.constant 0x7FC00000 : f32
//       CHECK:     }
func.func @dynamic_gathered_cache(%x: tensor<?x4x64xf32>, %p: tensor<?xi64>, %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>, %init: tensor<?x4x64xf32>) -> tensor<?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<?xi64>) cache(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) outs(%init : tensor<?x4x64xf32>) -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}
