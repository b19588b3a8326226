// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the frequency-scheme attribute verifiers
// (RopeFrequencies.cpp: every call site of the shared "must be a positive
// finite number" check, and each scheme's own checks), of
// MRopeAttr::verify (RopeAttrs.cpp), of the rope.apply verifier's M-RoPE,
// length and magnitude-vs-scheme checks (RopeOps.cpp), and of the attribute
// parsers. Not reachable from IR text, so not covered: "yarn: g(factor) must
// be positive" (g(s) = 0.1 ln s + 1 > 1 for every s > 1 and is 1 otherwise)
// and "longrope: short_factor and long_factor are required" (the struct
// parser rejects a missing parameter first, see @missing_parameter).

// Attribute verifiers.

func.func @default_base_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{default: base must be a positive finite number, got -1.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.default<base = -1.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @default_base_nan(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{default: base must be a positive finite number, got nan}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.default<base = 0x7FF8000000000000>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @linear_base_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{linear: base must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.linear<base = 0.0, factor = 2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @linear_factor_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{linear: factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.linear<factor = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @ntk_base_infinite(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{ntk: base must be a positive finite number, got INF}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.ntk<base = 0x7FF0000000000000, factor = 2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @ntk_factor_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{ntk: factor must be a positive finite number, got -2.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.ntk<factor = -2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dynamic_ntk_base_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{dynamic_ntk: base must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.dynamic_ntk<base = 0.0, factor = 2.0, max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dynamic_ntk_factor_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{dynamic_ntk: factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.dynamic_ntk<factor = 0.0, max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dynamic_ntk_max_positions_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{dynamic_ntk: max_position_embeddings must be positive, got 0}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_base_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: base must be a positive finite number, got -1.000000e+01}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<base = -10.0, factor = 2.0, original_max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_factor_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 0.0, original_max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_beta_slow_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: beta_slow must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, beta_slow = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_attention_factor_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: attention_factor must be a positive finite number, got -1.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, attention_factor = -1.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_base_one(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: base must be > 1 (the correction range divides by ln base), got 1.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<base = 1.0, factor = 2.0, original_max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_original_max_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: original_max_position_embeddings must be positive, got 0}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_beta_order(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: beta_fast (1.000000e+00) must be greater than beta_slow (2.000000e+00)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, beta_fast = 1.0, beta_slow = 2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_beta_fast_infinite(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: beta_fast (INF) must be greater than beta_slow (1.000000e+00)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, beta_fast = 0x7FF0000000000000>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_mscale_infinite(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: mscale values must be finite}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, mscale = 0x7FF0000000000000, mscale_all_dim = 1.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_mscale_alone(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: mscale and mscale_all_dim are used together (g(s, mscale) / g(s, mscale_all_dim)); give both or neither}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, mscale = 0.707>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_mscale_all_dim_nonpositive(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: g(factor, mscale_all_dim) must be positive}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = 1.0, mscale_all_dim = -100.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @yarn_mscale_nonpositive(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{yarn: g(factor, mscale) must be positive}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = -100.0, mscale_all_dim = 1.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @llama3_base_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{llama3: base must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.llama3<base = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @llama3_factor_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{llama3: factor must be a positive finite number, got -8.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.llama3<factor = -8.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @llama3_low_freq_factor_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{llama3: low_freq_factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.llama3<low_freq_factor = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @llama3_freq_factor_order(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{llama3: high_freq_factor (4.000000e+00) must be greater than low_freq_factor (4.000000e+00)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.llama3<low_freq_factor = 4.0, high_freq_factor = 4.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @llama3_original_max_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{llama3: original_max_position_embeddings must be positive, got -1}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.llama3<original_max_position_embeddings = -1>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @longrope_base_negative(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: base must be a positive finite number, got -1.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<base = -1.0, short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_factor_zero(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096, factor = 0.0>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_attention_factor_zero(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: attention_factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096, attention_factor = 0.0>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_short_factor_entry(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: short_factor entries must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 0.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_long_factor_entry(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: long_factor entries must be a positive finite number, got -2.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [-2.0, 1.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_original_max_zero(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: original_max_position_embeddings must be positive, got 0}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 0>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @longrope_magnitude_needs_ln_l(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{longrope: the magnitude sqrt(1 + ln s / ln L) needs original_max_position_embeddings > 1}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 1, factor = 2.0>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @proportional_base_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{proportional: base must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.proportional<base = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @proportional_factor_zero(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{proportional: factor must be a positive finite number, got 0.000000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.proportional<factor = 0.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @proportional_partial_rotary_factor(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{proportional: partial_rotary_factor must be in [0, 1], got 1.500000e+00}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.proportional<partial_rotary_factor = 1.5>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
// -----

// Scheme checks against the rotary dimension (verifyForRotaryDim).

// NTK's exponent P/(P-2) at P = 2.
func.func @ntk_rotary_dim_two(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op ntk frequencies are undefined for rotary_dim = 2 (the base exponent P/(P-2) divides by zero)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 2 : i64, freqs = #rope.ntk<factor = 2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dynamic_ntk_rotary_dim_two(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'rope.apply' op dynamic_ntk frequencies are undefined for rotary_dim = 2 (the base exponent P/(P-2) divides by zero)}}
  %y = rope.apply ins(%x : tensor<8x2xf32>) outs(%x : tensor<8x2xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>} -> tensor<8x2xf32>
  return %y : tensor<8x2xf32>
}

// -----

func.func @longrope_factor_count(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op longrope: short_factor and long_factor must have rotary_dim / 2 = 3 entries, got 2 and 3}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 6 : i64, freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0, 3.0], original_max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// MRopeAttr::verify.
func.func @mrope_section_size(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{M-RoPE section must have three entries [t, h, w]}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 16]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @mrope_section_negative(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{M-RoPE section entries must be in [0, 32768] (pairs of a head), got -8}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [24, -8, 16]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// The op verifier: M-RoPE.
func.func @mrope_positions_rank(%x: tensor<2x8x4x64xf32>, %p: tensor<3x16xi64>) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE positions must be [3, token dims...]: expected rank 3, got 2}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<3x16xi64>) outs(%x : tensor<2x8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

func.func @mrope_positions_leading_axis(%x: tensor<8x64xf32>, %p: tensor<2x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE positions must have a leading axis of static size 3 (t, h, w), got 2}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<2x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @mrope_positions_dynamic_leading_axis(%x: tensor<8x64xf32>, %p: tensor<?x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE positions must have a leading axis of static size 3 (t, h, w), got ?}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<?x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// After the leading axis, positions must match the token dims.
func.func @mrope_positions_token_size(%x: tensor<8x64xf32>, %p: tensor<3x4xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op positions dim 0 has size 4, expected 8}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x4xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @mrope_offset(%x: tensor<2x8x4x64xf32>, %o: i64) -> tensor<2x8x4x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE needs explicit positions (three axes per token)}}
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) offset(%o : i64) outs(%x : tensor<2x8x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

func.func @mrope_cache(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>, %c: tensor<16x32xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE computes cos/sin per axis from freqs; it cannot be combined with a cache}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) cache(%c, %c : tensor<16x32xf32>, tensor<16x32xf32>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @mrope_section_sum(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op M-RoPE section sums to 32, expected rotary_dim / 2 = 16}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {rotary_dim = 32 : i64, mrope = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// The op verifier: the runtime length.
func.func @length_type(%x: tensor<8x64xf32>, %l: f32) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op length must be an integer or an index, got 'f32'}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) length(%l : f32) outs(%x : tensor<8x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @length_static_scheme(%x: tensor<8x64xf32>, %l: i64) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op length is only used by dynamic frequency schemes (dynamic_ntk, longrope); the frequencies here are static}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) length(%l : i64) outs(%x : tensor<8x64xf32>) {freqs = #rope.linear<factor = 2.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @length_cache(%x: tensor<8x64xf32>, %p: tensor<8xi64>, %c: tensor<16x32xf32>, %l: i64) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op length is only used by dynamic frequency schemes (dynamic_ntk, longrope); cos/sin come from a cache}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<8xi64>) length(%l : i64) cache(%c, %c : tensor<16x32xf32>, tensor<16x32xf32>) outs(%x : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// The op verifier: magnitude against the scheme. YaRN's default g(4) =
// 0.1 ln 4 + 1 may not be dropped.
func.func @yarn_magnitude_missing(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op magnitude (1) must equal the magnitude the frequency scheme defines (1.1386294361119891)}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// LongRoPE's sqrt(1 + ln 32 / ln 4096) may not be applied twice.
func.func @longrope_magnitude_doubled(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'rope.apply' op magnitude (1.4166666666666667) must equal the magnitude the frequency scheme defines (1.1902380714238083)}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {magnitude = 1.4166666666666667, freqs = #rope.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096, factor = 32.0>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Parser errors.
func.func @bad_bool(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+2 {{expected 'true' or 'false'}}
  // expected-error @+1 {{failed to parse Rope_MRopeAttr parameter 'interleaved' which is to be a `bool`}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8], interleaved = 1>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @bad_bool_yarn(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+2 {{expected 'true' or 'false'}}
  // expected-error @+1 {{failed to parse Rope_YarnFrequenciesAttr parameter 'truncate' which is to be a `bool`}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.yarn<factor = 2.0, original_max_position_embeddings = 4096, truncate = yes>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @bad_float_array(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+2 {{expected floating point literal}}
  // expected-error @+1 {{failed to parse Rope_LongRopeFrequenciesAttr parameter 'short_factor' which is to be a `::mlir::DenseF64ArrayAttr`}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, one], long_factor = [1.0, 1.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @bad_int_array(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+3 {{expected integer value}}
  // expected-error @+2 {{expected ']'}}
  // expected-error @+1 {{failed to parse Rope_MRopeAttr parameter 'section' which is to be a `::mlir::DenseI64ArrayAttr`}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {mrope = #rope.mrope<section = [16, 8.5, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @integer_literal_for_a_count(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // Integral floats are accepted (config.json writes `rope_theta: 500000`),
  // but a float where an integer count is expected is not.
  // expected-error @+2 {{expected integer value}}
  // expected-error @+1 {{failed to parse Rope_DynamicNtkFrequenciesAttr parameter 'max_position_embeddings' which is to be a `int64_t`}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.dynamic_ntk<base = 10000, factor = 2, max_position_embeddings = 4096.5>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @missing_parameter(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{struct is missing required parameter: short_factor}}
  %y = rope.apply ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) {freqs = #rope.longrope<long_factor = [1.0, 1.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @unknown_parameter(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{duplicate or unknown struct parameter name: beta}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {freqs = #rope.linear<factor = 2.0, beta = 1.0>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @freqs_not_a_scheme(%x: tensor<8x64xf32>, %p: tensor<3x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'rope.apply' op attribute 'freqs' failed to satisfy constraint}}
  %y = rope.apply ins(%x : tensor<8x64xf32>) positions(%p : tensor<3x8xi64>) outs(%x : tensor<8x64xf32>) {freqs = #rope.mrope<section = [16, 8, 8]>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @proportional_partial_rotary_dim(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'rope.apply' op frequencies #rope.proportional<partial_rotary_factor = 5.000000e-01> rotate the whole head: rotary_dim (8) must equal the head dimension (64); their partial rotation is zero frequencies}}
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {rotary_dim = 8 : i64, freqs = #rope.proportional<partial_rotary_factor = 0.5>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

func.func @mrope_interleaved_overrun(%x: tensor<1x64xf32>, %p: tensor<3x1xi64>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'rope.apply' op interleaved M-RoPE section [2, 3, 3] splits the 8 pairs as [3, 3, 2]}}
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<3x1xi64>) outs(%x : tensor<1x64xf32>) {rotary_dim = 16 : i64, mrope = #rope.mrope<section = [2, 3, 3], interleaved = true>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}
