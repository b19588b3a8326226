// RUN: rope-opt %s | rope-opt | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --mlir-print-op-generic | rope-opt | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every frequency-scheme attribute (SEMANTICS.md §4), the M-RoPE attribute
// and the runtime `length` operand survive printing and parsing, in the
// custom and in the generic form. Parameters equal to their defaults are
// elided; non-default ones print in declaration order whatever order they
// were written in.

// CHECK-LABEL: func.func @default_base(
//       CHECK:   rope.apply {{.*}} {freqs = #rope.default<base = 5.000000e+05>} -> tensor<2x64xf32>
// GENERIC-LABEL: sym_name = "default_base"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}) <{freqs = #rope.default<base = 5.000000e+05>, layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 1>}>
func.func @default_base(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.default<base = 500000.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// A base that needs all 17 digits prints exactly.
// CHECK-LABEL: func.func @default_exact_base(
//       CHECK:   {freqs = #rope.default<base = 1.0000000000000002>}
func.func @default_exact_base(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.default<base = 1.0000000000000002>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// Integral parameters may be written as integers, as config.json does.
// CHECK-LABEL: func.func @integer_literals(
//       CHECK:   {freqs = #rope.linear<base = 5.000000e+05, factor = 8.000000e+00>}
func.func @integer_literals(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.linear<base = 500000, factor = 8>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @linear(
//       CHECK:   {freqs = #rope.linear<factor = 4.000000e+00>}
// GENERIC-LABEL: sym_name = "linear"
//       GENERIC:   <{freqs = #rope.linear<factor = 4.000000e+00>,
func.func @linear(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.linear<base = 10000.0, factor = 4.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// All defaults: an empty parameter list.
// CHECK-LABEL: func.func @linear_defaults(
//       CHECK:   {freqs = #rope.linear<>}
func.func @linear_defaults(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.linear<factor = 1.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @ntk(
//       CHECK:   {freqs = #rope.ntk<base = 1.000000e+06, factor = 8.000000e+00>}
// GENERIC-LABEL: sym_name = "ntk"
//       GENERIC:   <{freqs = #rope.ntk<base = 1.000000e+06, factor = 8.000000e+00>,
func.func @ntk(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.ntk<factor = 8.0, base = 1000000.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @dynamic_ntk(
//       CHECK:   {freqs = #rope.dynamic_ntk<factor = 2.000000e+00, max_position_embeddings = 4096>}
// GENERIC-LABEL: sym_name = "dynamic_ntk"
//       GENERIC:   <{freqs = #rope.dynamic_ntk<factor = 2.000000e+00, max_position_embeddings = 4096>,
func.func @dynamic_ntk(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.dynamic_ntk<base = 10000.0, factor = 2.0, max_position_embeddings = 4096>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// The runtime length operand, with a dynamic scheme.
// CHECK-LABEL: func.func @dynamic_ntk_length(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x4x64xf32>, %[[O:[^:]*]]: i64, %[[L:[^:]*]]: i64)
//       CHECK:   rope.apply ins(%[[X]] : tensor<1x4x64xf32>) offset(%[[O]] : i64) length(%[[L]] : i64) outs(%[[X]] : tensor<1x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 4.000000e+00, max_position_embeddings = 2048>} -> tensor<1x4x64xf32>
// GENERIC-LABEL: sym_name = "dynamic_ntk_length"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{freqs = #rope.dynamic_ntk<factor = 4.000000e+00, max_position_embeddings = 2048>, layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 0, 0, 0, 0, 1>}> : (tensor<1x4x64xf32>, i64, i64, tensor<1x4x64xf32>)
func.func @dynamic_ntk_length(%x: tensor<1x4x64xf32>, %o: i64, %l: i64) -> tensor<1x4x64xf32> {
  %y = rope.apply ins(%x : tensor<1x4x64xf32>) offset(%o : i64) length(%l : i64) outs(%x : tensor<1x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 4.0, max_position_embeddings = 2048>} -> tensor<1x4x64xf32>
  return %y : tensor<1x4x64xf32>
}

// An index length with explicit positions.
// CHECK-LABEL: func.func @longrope_index_length(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4xf32>, %[[P:[^:]*]]: tensor<8xi32>, %[[L:[^:]*]]: index)
//       CHECK:   rope.apply ins(%[[X]] : tensor<8x4xf32>) positions(%[[P]] : tensor<8xi32>) length(%[[L]] : index) outs(%[[X]] : tensor<8x4xf32>)
// GENERIC-LABEL: sym_name = "longrope_index_length"
//       GENERIC:   operandSegmentSizes = array<i32: 1, 1, 0, 1, 0, 0, 0, 0, 0, 1>}> : (tensor<8x4xf32>, tensor<8xi32>, index, tensor<8x4xf32>)
func.func @longrope_index_length(%x: tensor<8x4xf32>, %p: tensor<8xi32>, %l: index) -> tensor<8x4xf32> {
  %y = rope.apply ins(%x : tensor<8x4xf32>) positions(%p : tensor<8xi32>) length(%l : index) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// YaRN with its defaults (beta_fast = 32, beta_slow = 1, truncate = true)
// spelled out: they are elided. The magnitude is g(4) = 0.1 ln 4 + 1.
// CHECK-LABEL: func.func @yarn(
//       CHECK:   {freqs = #rope.yarn<base = 1.000000e+06, factor = 4.000000e+00, original_max_position_embeddings = 32768>, magnitude = 1.1386294361119891 : f64}
// GENERIC-LABEL: sym_name = "yarn"
//       GENERIC:   <{freqs = #rope.yarn<base = 1.000000e+06, factor = 4.000000e+00, original_max_position_embeddings = 32768>, layout = #rope.layout<half>, magnitude = 1.1386294361119891 : f64,
func.func @yarn(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.yarn<base = 1000000.0, factor = 4.0, original_max_position_embeddings = 32768, beta_fast = 32.0, beta_slow = 1.0, truncate = true>, magnitude = 1.1386294361119891} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// Every YaRN parameter non-default; the magnitude is the explicit
// attention_factor.
// CHECK-LABEL: func.func @yarn_all_parameters(
//       CHECK:   {freqs = #rope.yarn<base = 5.000000e+04, factor = 1.600000e+01, original_max_position_embeddings = 4096, beta_fast = 1.600000e+01, beta_slow = 2.000000e+00, truncate = false, attention_factor = 1.250000e+00, mscale = 7.070000e-01, mscale_all_dim = 1.000000e+00>, magnitude = 1.250000e+00 : f64}
func.func @yarn_all_parameters(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.yarn<base = 50000.0, factor = 16.0, original_max_position_embeddings = 4096, beta_fast = 16.0, beta_slow = 2.0, truncate = false, attention_factor = 1.25, mscale = 0.707, mscale_all_dim = 1.0>, magnitude = 1.25} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// DeepSeek: mscale = mscale_all_dim gives g / g = 1, the default magnitude.
// CHECK-LABEL: func.func @yarn_deepseek(
//       CHECK:   {freqs = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 1.000000e+00, mscale_all_dim = 1.000000e+00>}
func.func @yarn_deepseek(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.yarn<factor = 40.0, original_max_position_embeddings = 4096, mscale = 1.0, mscale_all_dim = 1.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// Llama 3.1's values are the defaults: only the base is printed.
// CHECK-LABEL: func.func @llama3_defaults(
//       CHECK:   {freqs = #rope.llama3<base = 5.000000e+05>}
// GENERIC-LABEL: sym_name = "llama3_defaults"
//       GENERIC:   <{freqs = #rope.llama3<base = 5.000000e+05>,
func.func @llama3_defaults(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %y = rope.apply ins(%x : tensor<2x128xf32>) outs(%x : tensor<2x128xf32>) {freqs = #rope.llama3<base = 500000.0, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>} -> tensor<2x128xf32>
  return %y : tensor<2x128xf32>
}

// CHECK-LABEL: func.func @llama3_all_parameters(
//       CHECK:   {freqs = #rope.llama3<base = 5.000000e+05, factor = 3.200000e+01, low_freq_factor = 2.000000e+00, high_freq_factor = 8.000000e+00, original_max_position_embeddings = 4096>}
func.func @llama3_all_parameters(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %y = rope.apply ins(%x : tensor<2x128xf32>) outs(%x : tensor<2x128xf32>) {freqs = #rope.llama3<base = 500000.0, factor = 32.0, low_freq_factor = 2.0, high_freq_factor = 8.0, original_max_position_embeddings = 4096>} -> tensor<2x128xf32>
  return %y : tensor<2x128xf32>
}

// LongRoPE with no factor and no attention_factor: magnitude 1.
// CHECK-LABEL: func.func @longrope(
//       CHECK:   {freqs = #rope.longrope<short_factor = [1.000000e+00, 1.500000e+00], long_factor = [2.000000e+00, 4.000000e+00], original_max_position_embeddings = 4096>, rotary_dim = 4 : i64}
// GENERIC-LABEL: sym_name = "longrope"
//       GENERIC:   <{freqs = #rope.longrope<short_factor = [1.000000e+00, 1.500000e+00], long_factor = [2.000000e+00, 4.000000e+00], original_max_position_embeddings = 4096>, layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 1>, rotary_dim = 4 : i64}>
func.func @longrope(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {rotary_dim = 4 : i64, freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// Phi-3 style: factor 32 over L = 4096 gives sqrt(1 + ln 32 / ln 4096).
// CHECK-LABEL: func.func @longrope_factor(
//       CHECK:   {freqs = #rope.longrope<base = 5.000000e+04, short_factor = [1.000000e+00, 1.250000e+00], long_factor = [3.000000e+00, 5.000000e+00], original_max_position_embeddings = 4096, factor = 3.200000e+01>, magnitude = 1.1902380714238083 : f64, rotary_dim = 4 : i64}
func.func @longrope_factor(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {rotary_dim = 4 : i64, magnitude = 1.1902380714238083, freqs = #rope.longrope<base = 50000.0, short_factor = [1.0, 1.25], long_factor = [3.0, 5.0], original_max_position_embeddings = 4096, factor = 32.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @longrope_attention_factor(
//       CHECK:   {freqs = #rope.longrope<short_factor = [1.000000e+00], long_factor = [2.000000e+00], original_max_position_embeddings = 2, factor = 8.000000e+00, attention_factor = 7.500000e-01>, magnitude = 7.500000e-01 : f64, rotary_dim = 2 : i64}
func.func @longrope_attention_factor(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {rotary_dim = 2 : i64, magnitude = 0.75, freqs = #rope.longrope<short_factor = [1.0], long_factor = [2.0], original_max_position_embeddings = 2, factor = 8.0, attention_factor = 0.75>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @proportional(
//       CHECK:   {freqs = #rope.proportional<factor = 2.000000e+00, partial_rotary_factor = 2.500000e-01>}
// GENERIC-LABEL: sym_name = "proportional"
//       GENERIC:   <{freqs = #rope.proportional<factor = 2.000000e+00, partial_rotary_factor = 2.500000e-01>,
func.func @proportional(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.proportional<partial_rotary_factor = 0.25, factor = 2.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// CHECK-LABEL: func.func @proportional_defaults(
//       CHECK:   {freqs = #rope.proportional<>}
func.func @proportional_defaults(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = rope.apply ins(%x : tensor<2x64xf32>) outs(%x : tensor<2x64xf32>) {freqs = #rope.proportional<base = 10000.0, factor = 1.0, partial_rotary_factor = 1.0>} -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// M-RoPE, chunked (interleaved = false is the default and elided), with
// Qwen2-VL's section [16, 24, 24] and positions [3, B, S].
// CHECK-LABEL: func.func @mrope_chunked(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x128xbf16>, %[[P:[^:]*]]: tensor<3x2x8xi64>)
//       CHECK:   rope.apply ins(%[[X]] : tensor<2x8x4x128xbf16>) positions(%[[P]] : tensor<3x2x8xi64>) outs(%[[X]] : tensor<2x8x4x128xbf16>) {freqs = #rope.default<base = 1.000000e+06>, mrope = #rope.mrope<section = [16, 24, 24]>} -> tensor<2x8x4x128xbf16>
// GENERIC-LABEL: sym_name = "mrope_chunked"
//       GENERIC:   "rope.apply"(%{{.*}}, %{{.*}}, %{{.*}}) <{freqs = #rope.default<base = 1.000000e+06>, layout = #rope.layout<half>, magnitude = 1.000000e+00 : f64, mrope = #rope.mrope<section = [16, 24, 24]>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 1>}> : (tensor<2x8x4x128xbf16>, tensor<3x2x8xi64>, tensor<2x8x4x128xbf16>)
func.func @mrope_chunked(%x: tensor<2x8x4x128xbf16>, %p: tensor<3x2x8xi64>) -> tensor<2x8x4x128xbf16> {
  %y = rope.apply ins(%x : tensor<2x8x4x128xbf16>) positions(%p : tensor<3x2x8xi64>) outs(%x : tensor<2x8x4x128xbf16>) {freqs = #rope.default<base = 1000000.0>, mrope = #rope.mrope<section = [16, 24, 24], interleaved = false>} -> tensor<2x8x4x128xbf16>
  return %y : tensor<2x8x4x128xbf16>
}

// M-RoPE, frequency-interleaved (Qwen3-VL), ragged tokens [T] with dynamic
// T, a zero-sized section and a dynamic scheme.
// CHECK-LABEL: func.func @mrope_interleaved(
//       CHECK:   positions(%{{.*}} : tensor<3x?xi32>)
//  CHECK-SAME:     {freqs = #rope.dynamic_ntk<factor = 2.000000e+00, max_position_embeddings = 128>, mrope = #rope.mrope<section = [22, 0, 10], interleaved = true>}
// GENERIC-LABEL: sym_name = "mrope_interleaved"
//       GENERIC:   mrope = #rope.mrope<section = [22, 0, 10], interleaved = true>
func.func @mrope_interleaved(%x: tensor<?x4x64xf32>, %p: tensor<3x?xi32>) -> tensor<?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<3x?xi32>) outs(%x : tensor<?x4x64xf32>) {mrope = #rope.mrope<interleaved = true, section = [22, 0, 10]>, freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 128>} -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}

// The attributes also stand alone (outside rope.apply).
// CHECK-LABEL: func.func @standalone_attributes()
//  CHECK-SAME:     attributes {a = #rope.yarn<factor = 2.000000e+00, original_max_position_embeddings = 4096, truncate = false>, b = #rope.mrope<section = [1, 2, 3]>, c = #rope.dynamic_ntk<max_position_embeddings = 1>}
func.func @standalone_attributes() attributes {a = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, truncate = false>, b = #rope.mrope<section = [1, 2, 3]>, c = #rope.dynamic_ntk<max_position_embeddings = 1>} {
  return
}
