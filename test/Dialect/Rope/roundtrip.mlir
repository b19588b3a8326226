// RUN: rope-opt %s | rope-opt | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --mlir-print-op-generic | rope-opt | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every syntactic form of rope.apply survives printing and parsing, in the
// custom and in the generic form.

// CHECK-LABEL: func.func @implicit_positions(
//  CHECK-SAME:     %[[X:.*]]: tensor<4x8x64xf32>, %[[INIT:.*]]: tensor<4x8x64xf32>)
//       CHECK:   %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<4x8x64xf32>) outs(%[[INIT]] : tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
//       CHECK:   return %[[Y]]
// GENERIC-LABEL: sym_name = "implicit_positions"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}) <{layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 1>}> : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
func.func @implicit_positions(%x: tensor<4x8x64xf32>, %init: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %y = rope.apply ins(%x : tensor<4x8x64xf32>) outs(%init : tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// Attributes equal to their defaults are elided.
// CHECK-LABEL: func.func @explicit_defaults(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<4x8x64xf32>) outs(%{{.*}} : tensor<4x8x64xf32>) {freqs = #rope.default<>} -> tensor<4x8x64xf32>
func.func @explicit_defaults(%x: tensor<4x8x64xf32>, %init: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %y = rope.apply ins(%x : tensor<4x8x64xf32>) outs(%init : tensor<4x8x64xf32>)
         {layout = #rope.layout<half>, magnitude = 1.0, freqs = #rope.default<base = 10000.0>} -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// CHECK-LABEL: func.func @interleaved_partial(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x1x16x256xf32>) outs(%{{.*}} : tensor<1x1x16x256xf32>)
//  CHECK-SAME:     {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64} -> tensor<1x1x16x256xf32>
// GENERIC-LABEL: sym_name = "interleaved_partial"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}) <{layout = #rope.layout<interleaved>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 1>, rotary_dim = 64 : i64}>
func.func @interleaved_partial(%x: tensor<1x1x16x256xf32>, %init: tensor<1x1x16x256xf32>) -> tensor<1x1x16x256xf32> {
  %y = rope.apply ins(%x : tensor<1x1x16x256xf32>) outs(%init : tensor<1x1x16x256xf32>)
         {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64} -> tensor<1x1x16x256xf32>
  return %y : tensor<1x1x16x256xf32>
}

// [B, H, S, D] with positions [B, S].
// CHECK-LABEL: func.func @token_dims_bhsd(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x32x16x128xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[INIT:[^:]*]]: tensor<2x32x16x128xf32>)
//       CHECK:   rope.apply ins(%[[X]] : tensor<2x32x16x128xf32>) positions(%[[P]] : tensor<2x16xi64>) outs(%[[INIT]] : tensor<2x32x16x128xf32>)
//  CHECK-SAME:     {token_dims = array<i64: 0, 2>} -> tensor<2x32x16x128xf32>
// GENERIC-LABEL: sym_name = "token_dims_bhsd"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}) <{layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 1>, token_dims = array<i64: 0, 2>}>
func.func @token_dims_bhsd(%x: tensor<2x32x16x128xf32>, %p: tensor<2x16xi64>, %init: tensor<2x32x16x128xf32>) -> tensor<2x32x16x128xf32> {
  %y = rope.apply ins(%x : tensor<2x32x16x128xf32>) positions(%p : tensor<2x16xi64>)
         outs(%init : tensor<2x32x16x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x32x16x128xf32>
  return %y : tensor<2x32x16x128xf32>
}

// [B, S, H, D] (default token dims [0, 1]) with i32 positions.
// CHECK-LABEL: func.func @positions_i32(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x16x4x64xf32>) positions(%{{.*}} : tensor<2x16xi32>) outs(%{{.*}} : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
func.func @positions_i32(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi32>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi32>)
         outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// Ragged [T, H, D] with positions [T].
// CHECK-LABEL: func.func @ragged_tokens(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<7x4x64xbf16>) positions(%{{.*}} : tensor<7xi64>) outs(%{{.*}} : tensor<7x4x64xbf16>)
//  CHECK-SAME:     {token_dims = array<i64: 0>} -> tensor<7x4x64xbf16>
func.func @ragged_tokens(%x: tensor<7x4x64xbf16>, %p: tensor<7xi64>, %init: tensor<7x4x64xbf16>) -> tensor<7x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<7x4x64xbf16>) positions(%p : tensor<7xi64>)
         outs(%init : tensor<7x4x64xbf16>) {token_dims = array<i64: 0>} -> tensor<7x4x64xbf16>
  return %y : tensor<7x4x64xbf16>
}

// CHECK-LABEL: func.func @offset_i64(
//  CHECK-SAME:     %[[O:[^:]*]]: i64
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x1x8x64xf16>) offset(%[[O]] : i64) outs(%{{.*}} : tensor<1x1x8x64xf16>) -> tensor<1x1x8x64xf16>
// GENERIC-LABEL: sym_name = "offset_i64"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}) <{layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 1, 0, 0, 0, 0, 0, 0, 1>}> : (tensor<1x1x8x64xf16>, i64, tensor<1x1x8x64xf16>)
func.func @offset_i64(%x: tensor<1x1x8x64xf16>, %o: i64, %init: tensor<1x1x8x64xf16>) -> tensor<1x1x8x64xf16> {
  %y = rope.apply ins(%x : tensor<1x1x8x64xf16>) offset(%o : i64) outs(%init : tensor<1x1x8x64xf16>) -> tensor<1x1x8x64xf16>
  return %y : tensor<1x1x8x64xf16>
}

// CHECK-LABEL: func.func @offset_index(
//  CHECK-SAME:     %[[O:[^:]*]]: index
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x8x64xf32>) offset(%[[O]] : index) outs(%{{.*}} : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
func.func @offset_index(%x: tensor<1x8x64xf32>, %o: index, %init: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %y = rope.apply ins(%x : tensor<1x8x64xf32>) offset(%o : index) outs(%init : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// CHECK-LABEL: func.func @offset_rank0(
//  CHECK-SAME:     %[[O:[^:]*]]: tensor<i32>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x8x64xf32>) offset(%[[O]] : tensor<i32>) outs(%{{.*}} : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
func.func @offset_rank0(%x: tensor<1x8x64xf32>, %o: tensor<i32>, %init: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %y = rope.apply ins(%x : tensor<1x8x64xf32>) offset(%o : tensor<i32>) outs(%init : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// One offset per batch row.
// CHECK-LABEL: func.func @offset_per_row(
//  CHECK-SAME:     %[[O:[^:]*]]: tensor<3xi64>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<3x1x8x64xf32>) offset(%[[O]] : tensor<3xi64>) outs(%{{.*}} : tensor<3x1x8x64xf32>) -> tensor<3x1x8x64xf32>
func.func @offset_per_row(%x: tensor<3x1x8x64xf32>, %o: tensor<3xi64>, %init: tensor<3x1x8x64xf32>) -> tensor<3x1x8x64xf32> {
  %y = rope.apply ins(%x : tensor<3x1x8x64xf32>) offset(%o : tensor<3xi64>) outs(%init : tensor<3x1x8x64xf32>) -> tensor<3x1x8x64xf32>
  return %y : tensor<3x1x8x64xf32>
}

// cos/sin caches [M, P/2] gathered by position.
// CHECK-LABEL: func.func @gathered_cache(
//  CHECK-SAME:     %[[P:[^:]*]]: tensor<2x16xi64>, %[[COS:[^:]*]]: tensor<2048x32xf32>, %[[SIN:[^:]*]]: tensor<2048x32xf32>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x16x4x64xf16>) positions(%[[P]] : tensor<2x16xi64>) cache(%[[COS]], %[[SIN]] : tensor<2048x32xf32>, tensor<2048x32xf32>) outs(%{{.*}} : tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16>
// GENERIC-LABEL: sym_name = "gathered_cache"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0, 1>}>
func.func @gathered_cache(%x: tensor<2x16x4x64xf16>, %p: tensor<2x16xi64>, %cos: tensor<2048x32xf32>, %sin: tensor<2048x32xf32>, %init: tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf16>) positions(%p : tensor<2x16xi64>)
         cache(%cos, %sin : tensor<2048x32xf32>, tensor<2048x32xf32>)
         outs(%init : tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16>
  return %y : tensor<2x16x4x64xf16>
}

// GPT-J decode step: offset-gathered cache, interleaved, partial rotary.
// CHECK-LABEL: func.func @offset_gathered_cache(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x1x16x256xf16>) offset(%{{.*}} : i64) cache(%{{.*}}, %{{.*}} : tensor<2048x32xf16>, tensor<2048x32xf16>) outs(%{{.*}} : tensor<1x1x16x256xf16>)
//  CHECK-SAME:     {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64} -> tensor<1x1x16x256xf16>
// GENERIC-LABEL: sym_name = "offset_gathered_cache"
//       GENERIC:   operandSegmentSizes = array<i32: 1, 0, 1, 0, 1, 1, 0, 0, 0, 1>
func.func @offset_gathered_cache(%x: tensor<1x1x16x256xf16>, %o: i64, %cos: tensor<2048x32xf16>, %sin: tensor<2048x32xf16>, %init: tensor<1x1x16x256xf16>) -> tensor<1x1x16x256xf16> {
  %y = rope.apply ins(%x : tensor<1x1x16x256xf16>) offset(%o : i64)
         cache(%cos, %sin : tensor<2048x32xf16>, tensor<2048x32xf16>)
         outs(%init : tensor<1x1x16x256xf16>)
         {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64} -> tensor<1x1x16x256xf16>
  return %y : tensor<1x1x16x256xf16>
}

// Pre-gathered caches shaped like the token dims plus P/2 (ONNX without
// position ids).
// CHECK-LABEL: func.func @pregathered_cache(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x4x16x64xf32>) cache(%{{.*}}, %{{.*}} : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%{{.*}} : tensor<2x4x16x64xf32>)
//  CHECK-SAME:     {token_dims = array<i64: 0, 2>} -> tensor<2x4x16x64xf32>
// GENERIC-LABEL: sym_name = "pregathered_cache"
//       GENERIC:   operandSegmentSizes = array<i32: 1, 0, 0, 0, 1, 1, 0, 0, 0, 1>
func.func @pregathered_cache(%x: tensor<2x4x16x64xf32>, %cos: tensor<2x16x32xf32>, %sin: tensor<2x16x32xf32>, %init: tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32> {
  %y = rope.apply ins(%x : tensor<2x4x16x64xf32>) cache(%cos, %sin : tensor<2x16x32xf32>, tensor<2x16x32xf32>)
         outs(%init : tensor<2x4x16x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x16x64xf32>
  return %y : tensor<2x4x16x64xf32>
}

// CHECK-LABEL: func.func @freqs_base(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<16x4x128xf32>) outs(%{{.*}} : tensor<16x4x128xf32>) {freqs = #rope.default<base = 5.000000e+05>} -> tensor<16x4x128xf32>
// GENERIC-LABEL: sym_name = "freqs_base"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}) <{freqs = #rope.default<base = 5.000000e+05>, layout = #rope.layout<half>
func.func @freqs_base(%x: tensor<16x4x128xf32>, %init: tensor<16x4x128xf32>) -> tensor<16x4x128xf32> {
  %y = rope.apply ins(%x : tensor<16x4x128xf32>) outs(%init : tensor<16x4x128xf32>)
         {freqs = #rope.default<base = 500000.0>} -> tensor<16x4x128xf32>
  return %y : tensor<16x4x128xf32>
}

// Non-integral base values print exactly.
// CHECK-LABEL: func.func @freqs_fractional_base(
//       CHECK:   {freqs = #rope.default<base = 1.234500e+04>}
func.func @freqs_fractional_base(%x: tensor<16x4x128xf32>, %init: tensor<16x4x128xf32>) -> tensor<16x4x128xf32> {
  %y = rope.apply ins(%x : tensor<16x4x128xf32>) outs(%init : tensor<16x4x128xf32>)
         {freqs = #rope.default<base = 12345.0>} -> tensor<16x4x128xf32>
  return %y : tensor<16x4x128xf32>
}

// CHECK-LABEL: func.func @magnitude_inverse(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<16x4x64xf64>) positions(%{{.*}} : tensor<16xi64>) outs(%{{.*}} : tensor<16x4x64xf64>)
//  CHECK-SAME:     {inverse, magnitude = 1.250000e+00 : f64} -> tensor<16x4x64xf64>
// GENERIC-LABEL: sym_name = "magnitude_inverse"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}) <{inverse, layout = #rope.layout<half>, magnitude = 1.250000e+00 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 1>}>
func.func @magnitude_inverse(%x: tensor<16x4x64xf64>, %p: tensor<16xi64>, %init: tensor<16x4x64xf64>) -> tensor<16x4x64xf64> {
  %y = rope.apply ins(%x : tensor<16x4x64xf64>) positions(%p : tensor<16xi64>) outs(%init : tensor<16x4x64xf64>)
         {magnitude = 1.25, inverse} -> tensor<16x4x64xf64>
  return %y : tensor<16x4x64xf64>
}

// Every supported element type.
// CHECK-LABEL: func.func @element_types(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<8x64xf16>) outs(%{{.*}} : tensor<8x64xf16>) -> tensor<8x64xf16>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<8x64xbf16>) outs(%{{.*}} : tensor<8x64xbf16>) -> tensor<8x64xbf16>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>) -> tensor<8x64xf32>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<8x64xf64>) outs(%{{.*}} : tensor<8x64xf64>) -> tensor<8x64xf64>
func.func @element_types(%a: tensor<8x64xf16>, %b: tensor<8x64xbf16>, %c: tensor<8x64xf32>, %d: tensor<8x64xf64>)
    -> (tensor<8x64xf16>, tensor<8x64xbf16>, tensor<8x64xf32>, tensor<8x64xf64>) {
  %0 = rope.apply ins(%a : tensor<8x64xf16>) outs(%a : tensor<8x64xf16>) -> tensor<8x64xf16>
  %1 = rope.apply ins(%b : tensor<8x64xbf16>) outs(%b : tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %2 = rope.apply ins(%c : tensor<8x64xf32>) outs(%c : tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = rope.apply ins(%d : tensor<8x64xf64>) outs(%d : tensor<8x64xf64>) -> tensor<8x64xf64>
  return %0, %1, %2, %3 : tensor<8x64xf16>, tensor<8x64xbf16>, tensor<8x64xf32>, tensor<8x64xf64>
}

// Dynamic token dims (the head dim is static).
// CHECK-LABEL: func.func @dynamic_dims(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<?x?x8x64xf32>) positions(%{{.*}} : tensor<?x?xi64>) cache(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x32xf32>) outs(%{{.*}} : tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<?x?x8x64xf32>) offset(%{{.*}} : tensor<?xi32>) outs(%{{.*}} : tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32>
func.func @dynamic_dims(%x: tensor<?x?x8x64xf32>, %p: tensor<?x?xi64>, %o: tensor<?xi32>, %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>, %init: tensor<?x?x8x64xf32>)
    -> (tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>) {
  %0 = rope.apply ins(%x : tensor<?x?x8x64xf32>) positions(%p : tensor<?x?xi64>)
         cache(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>)
         outs(%init : tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32>
  %1 = rope.apply ins(%x : tensor<?x?x8x64xf32>) offset(%o : tensor<?xi32>) outs(%init : tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32>
  return %0, %1 : tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>
}

// The same op in generic form parses.
// CHECK-LABEL: func.func @generic_form_input(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<4x8x64xf32>) positions(%{{.*}} : tensor<4xi32>) outs(%{{.*}} : tensor<4x8x64xf32>)
//  CHECK-SAME:     {layout = #rope.layout<interleaved>, rotary_dim = 32 : i64} -> tensor<4x8x64xf32>
func.func @generic_form_input(%x: tensor<4x8x64xf32>, %p: tensor<4xi32>, %init: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %y = "rope.apply"(%x, %p, %init) <{layout = #rope.layout<interleaved>, rotary_dim = 32 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 1>}>
         : (tensor<4x8x64xf32>, tensor<4xi32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// -----

// The fused neighbours: QK-norm before, a per-head fp8 output after.
// CHECK-LABEL: func.func @norm_and_quant(
//       CHECK:   rope.apply ins(%{{.*}} : tensor<?x8x128xbf16>) positions(%{{.*}} : tensor<?xi64>) norm(%{{.*}} : tensor<128xbf16>) quant_scale(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<?x8x128xf8E4M3FN>) {freqs = #rope.default<base = 1.000000e+06>, norm_epsilon = 9.9999999999999995E-7 : f64} -> tensor<?x8x128xf8E4M3FN>
//       GENERIC:   operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 1, 1, 0, 1>
func.func @norm_and_quant(%k: tensor<?x8x128xbf16>, %pos: tensor<?xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %init: tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN> {
  %k8 = rope.apply ins(%k : tensor<?x8x128xbf16>) positions(%pos : tensor<?xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<?x8x128xf8E4M3FN>) {freqs = #rope.default<base = 1000000.0>, norm_epsilon = 1.0e-06} -> tensor<?x8x128xf8E4M3FN>
  return %k8 : tensor<?x8x128xf8E4M3FN>
}
