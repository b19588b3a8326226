// RUN: rope-opt %s --convert-rope-to-linalg | %python %S/check_frequency_tables.py | FileCheck %s --check-prefix=TABLES
// RUN: rope-opt %s | %python %S/check_frequency_tables.py | FileCheck %s --check-prefix=MAGNITUDES
// RUN: rope-opt %s --convert-rope-to-linalg | FileCheck %s --enable-var-scope
// The checker must notice one entry off by 5e-12 relative.
// RUN: rope-opt %s --convert-rope-to-linalg | sed -e '/@linear_p8(/{n;s/2.000000e-01/2.000000000001e-01/;}' | not %python %S/check_frequency_tables.py 2>&1 | FileCheck %s --check-prefix=MISMATCH

// Static frequency schemes fold to a constant tensor<P/2 x f64> theta table
// at compile time. Each function below holds one rope.apply and, in its
// `rope.expected` attribute, the same configuration as a Hugging Face style
// rope_scaling dict (`rope_theta` = base). check_frequency_tables.py
// recomputes theta' (and the magnitude a) from that dict with the float64
// reference python/rope_mlir/reference.py and requires a relative
// difference <= 1e-13 for every entry; see that script for the convention.
// Several configurations per scheme, P in {2 (where defined), 8, 64, 128}.
// LongRoPE is dynamic, but its two tables (short, long) are constants too.

// TABLES: OK: 35 functions, 39 tables, 0 magnitudes
// MAGNITUDES: OK: 35 functions, 0 tables, 35 magnitudes
// MISMATCH: error: @linear_p8 theta (P = 8)[1]: got 0.2000000000001, reference 0.2 (relative difference 5e-13 > 1e-13)
// MISMATCH: FAILED: 1 mismatches

// The table is an operand of the per-(position, frequency) cos/sin generic;
// nothing is computed at run time to get theta.
// CHECK-LABEL: func.func @linear_p8(
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   math.powf
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[2.000000e+00, 2.000000e-01, 2.000000e-02, 2.000000e-03]> : tensor<4xf64>
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[THETA]] : tensor<1xi64>, tensor<4xf64>)
//       CHECK:   return

// Proportional: frequencies past k = int(f P / 2) are 0 (identity pairs).
// CHECK-LABEL: func.func @proportional_p8_1(
//       CHECK:   arith.constant dense<[5.000000e-01, 5.000000e-02, 0.000000e+00, 0.000000e+00]> : tensor<4xf64>

func.func @default_p2(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"default\", \"rope_theta\": 10000.0}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.default<base = 10000.0>} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @default_p8(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"default\", \"rope_theta\": 500000.0}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.default<base = 500000.0>} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @default_p64(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"default\", \"rope_theta\": 1000000.0}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.default<base = 1000000.0>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @default_p128(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"default\", \"rope_theta\": 12345.678}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.default<base = 12345.678>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @linear_p2(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"linear\", \"rope_theta\": 10000.0, \"factor\": 2.0}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.linear<base = 10000.0, factor = 2.0>} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @linear_p8(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"linear\", \"rope_theta\": 10000.0, \"factor\": 0.5}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.linear<base = 10000.0, factor = 0.5>} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @linear_p64(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"linear\", \"rope_theta\": 500000.0, \"factor\": 4.0}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.linear<base = 500000.0, factor = 4.0>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @linear_p128(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"linear\", \"rope_theta\": 75000.0, \"factor\": 3.7}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.linear<base = 75000.0, factor = 3.7>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @ntk_p4_s2_0(%x: tensor<1x4xf32>, %p: tensor<1xi64>) -> tensor<1x4xf32> attributes {rope.expected = "{\"rope_type\": \"ntk\", \"rope_theta\": 10000.0, \"factor\": 2.0}"} {
  %y = rope.apply ins(%x : tensor<1x4xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x4xf32>) {freqs = #rope.ntk<base = 10000.0, factor = 2.0>} -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

func.func @ntk_p8_s8_0(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"ntk\", \"rope_theta\": 10000.0, \"factor\": 8.0}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.ntk<base = 10000.0, factor = 8.0>} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @ntk_p64_s1_3(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"ntk\", \"rope_theta\": 1000000.0, \"factor\": 1.3}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.ntk<base = 1000000.0, factor = 1.3>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @ntk_p128_s0_75(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"ntk\", \"rope_theta\": 10000.0, \"factor\": 0.75}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.ntk<base = 10000.0, factor = 0.75>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @ntk_p128_s16_0(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"ntk\", \"rope_theta\": 500000.0, \"factor\": 16.0}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.ntk<base = 500000.0, factor = 16.0>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @yarn_p2_0(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 2.0, \"original_max_position_embeddings\": 2048}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.yarn<base = 10000.0, factor = 2.0, original_max_position_embeddings = 2048>, magnitude = 1.0693147180559945} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @yarn_p8_1(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 4.0, \"original_max_position_embeddings\": 4096, \"truncate\": false}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.yarn<base = 10000.0, factor = 4.0, original_max_position_embeddings = 4096, truncate = false>, magnitude = 1.138629436111989} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @yarn_p64_2(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 1000000.0, \"factor\": 4.0, \"original_max_position_embeddings\": 32768}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.yarn<base = 1000000.0, factor = 4.0, original_max_position_embeddings = 32768>, magnitude = 1.138629436111989} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @yarn_p64_3(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 40.0, \"original_max_position_embeddings\": 4096, \"beta_fast\": 32.0, \"beta_slow\": 1.0, \"mscale\": 0.707, \"mscale_all_dim\": 1.0}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.yarn<base = 10000.0, factor = 40.0, original_max_position_embeddings = 4096, beta_fast = 32.0, beta_slow = 1.0, mscale = 0.707, mscale_all_dim = 1.0>, magnitude = 0.9210423553163399} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @yarn_p128_4(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 50000.0, \"factor\": 16.0, \"original_max_position_embeddings\": 8192, \"beta_fast\": 24.0, \"beta_slow\": 1.5, \"truncate\": false}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.yarn<base = 50000.0, factor = 16.0, original_max_position_embeddings = 8192, beta_fast = 24.0, beta_slow = 1.5, truncate = false>, magnitude = 1.2772588722239782} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @yarn_p128_5(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 150000.0, \"factor\": 8.0, \"original_max_position_embeddings\": 4096, \"attention_factor\": 1.25}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.yarn<base = 150000.0, factor = 8.0, original_max_position_embeddings = 4096, attention_factor = 1.25>, magnitude = 1.25} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @yarn_p128_6(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 0.8, \"original_max_position_embeddings\": 100000}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.yarn<base = 10000.0, factor = 0.8, original_max_position_embeddings = 100000>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @llama3_p2_0(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"llama3\", \"rope_theta\": 500000.0, \"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.llama3<base = 500000.0, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @llama3_p8_1(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"llama3\", \"rope_theta\": 10000.0, \"factor\": 4.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.llama3<base = 10000.0, factor = 4.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 64>} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @llama3_p64_2(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"llama3\", \"rope_theta\": 500000.0, \"factor\": 32.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.llama3<base = 500000.0, factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @llama3_p128_3(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"llama3\", \"rope_theta\": 500000.0, \"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.llama3<base = 500000.0, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @llama3_p128_4(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"llama3\", \"rope_theta\": 10000.0, \"factor\": 2.5, \"low_freq_factor\": 0.5, \"high_freq_factor\": 3.0, \"original_max_position_embeddings\": 2048}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.llama3<base = 10000.0, factor = 2.5, low_freq_factor = 0.5, high_freq_factor = 3.0, original_max_position_embeddings = 2048>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @proportional_p2_0(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 10000.0, \"factor\": 1.0, \"partial_rotary_factor\": 1.0}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.proportional<base = 10000.0, factor = 1.0, partial_rotary_factor = 1.0>} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @proportional_p8_1(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 10000.0, \"factor\": 2.0, \"partial_rotary_factor\": 0.5}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.proportional<base = 10000.0, factor = 2.0, partial_rotary_factor = 0.5>} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @proportional_p64_2(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 1000000.0, \"factor\": 1.0, \"partial_rotary_factor\": 0.25}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.proportional<base = 1000000.0, factor = 1.0, partial_rotary_factor = 0.25>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @proportional_p64_3(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 10000.0, \"factor\": 3.0, \"partial_rotary_factor\": 0.3}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.proportional<base = 10000.0, factor = 3.0, partial_rotary_factor = 0.3>} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @proportional_p128_4(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 10000.0, \"factor\": 1.5, \"partial_rotary_factor\": 0.0}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.proportional<base = 10000.0, factor = 1.5, partial_rotary_factor = 0.0>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @proportional_p128_5(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"proportional\", \"rope_theta\": 500000.0, \"factor\": 1.0, \"partial_rotary_factor\": 1.0}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.proportional<base = 500000.0, factor = 1.0, partial_rotary_factor = 1.0>} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

func.func @longrope_p2_0(%x: tensor<1x2xf32>, %p: tensor<1xi64>) -> tensor<1x2xf32> attributes {rope.expected = "{\"rope_type\": \"longrope\", \"rope_theta\": 10000.0, \"short_factor\": [1.3039], \"long_factor\": [46.4836], \"original_max_position_embeddings\": 4096}"} {
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x2xf32>) {freqs = #rope.longrope<base = 10000.0, short_factor = [1.3039], long_factor = [46.4836], original_max_position_embeddings = 4096>} -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @longrope_p8_1(%x: tensor<1x8xf32>, %p: tensor<1xi64>) -> tensor<1x8xf32> attributes {rope.expected = "{\"rope_type\": \"longrope\", \"rope_theta\": 10000.0, \"short_factor\": [1.1294, 1.0749, 1.3591, 1.4325], \"long_factor\": [20.7447, 14.6645, 41.0019, 54.1755], \"original_max_position_embeddings\": 4096, \"factor\": 32.0}"} {
  %y = rope.apply ins(%x : tensor<1x8xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x8xf32>) {freqs = #rope.longrope<base = 10000.0, short_factor = [1.1294, 1.0749, 1.3591, 1.4325], long_factor = [20.7447, 14.6645, 41.0019, 54.1755], original_max_position_embeddings = 4096, factor = 32.0>, magnitude = 1.1902380714238083} -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

func.func @longrope_p64_2(%x: tensor<1x64xf32>, %p: tensor<1xi64>) -> tensor<1x64xf32> attributes {rope.expected = "{\"rope_type\": \"longrope\", \"rope_theta\": 10000.0, \"short_factor\": [1.0621, 1.025, 1.1791, 1.1497, 1.3009, 1.0908, 1.0155, 1.1634, 1.1175, 1.1505, 1.2075, 1.1051, 1.4869, 1.3109, 1.3651, 1.1872, 1.4678, 1.4199, 1.1233, 1.3554, 1.4725, 1.2857, 1.1852, 1.1885, 1.417, 1.2671, 1.4676, 1.3433, 1.4091, 1.3329, 1.1881, 1.1645], \"long_factor\": [57.5849, 42.2316, 24.9663, 6.6244, 25.4899, 43.3044, 20.5383, 52.8582, 7.873, 36.5949, 41.3561, 4.6745, 39.9738, 40.5294, 43.1111, 43.86, 42.4337, 58.5327, 54.8256, 20.7316, 32.9777, 57.0558, 15.6509, 22.2039, 46.541, 43.8476, 26.1299, 3.6892, 46.2337, 55.0313, 53.5625, 44.8404], \"original_max_position_embeddings\": 4096, \"factor\": 32.0}"} {
  %y = rope.apply ins(%x : tensor<1x64xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x64xf32>) {freqs = #rope.longrope<base = 10000.0, short_factor = [1.0621, 1.025, 1.1791, 1.1497, 1.3009, 1.0908, 1.0155, 1.1634, 1.1175, 1.1505, 1.2075, 1.1051, 1.4869, 1.3109, 1.3651, 1.1872, 1.4678, 1.4199, 1.1233, 1.3554, 1.4725, 1.2857, 1.1852, 1.1885, 1.417, 1.2671, 1.4676, 1.3433, 1.4091, 1.3329, 1.1881, 1.1645], long_factor = [57.5849, 42.2316, 24.9663, 6.6244, 25.4899, 43.3044, 20.5383, 52.8582, 7.873, 36.5949, 41.3561, 4.6745, 39.9738, 40.5294, 43.1111, 43.86, 42.4337, 58.5327, 54.8256, 20.7316, 32.9777, 57.0558, 15.6509, 22.2039, 46.541, 43.8476, 26.1299, 3.6892, 46.2337, 55.0313, 53.5625, 44.8404], original_max_position_embeddings = 4096, factor = 32.0>, magnitude = 1.1902380714238083} -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

func.func @longrope_p128_3(%x: tensor<1x128xf32>, %p: tensor<1xi64>) -> tensor<1x128xf32> attributes {rope.expected = "{\"rope_type\": \"longrope\", \"rope_theta\": 500000.0, \"short_factor\": [1.4354, 1.3855, 1.1314, 1.3122, 1.2269, 1.311, 1.3093, 1.0433, 1.4294, 1.1572, 1.2195, 1.188, 1.039, 1.1109, 1.2465, 1.4912, 1.3458, 1.0928, 1.1425, 1.0289, 1.4417, 1.2775, 1.4817, 1.0257, 1.2227, 1.3787, 1.3964, 1.3369, 1.4052, 1.1876, 1.4449, 1.0489, 1.3478, 1.0013, 1.3547, 1.0836, 1.1614, 1.4587, 1.2036, 1.4547, 1.2986, 1.0373, 1.2978, 1.2128, 1.4535, 1.0397, 1.4977, 1.2068, 1.2374, 1.3193, 1.1493, 1.3926, 1.2075, 1.2713, 1.4241, 1.0445, 1.152, 1.1519, 1.1109, 1.3639, 1.1916, 1.3426, 1.3876, 1.2118], \"long_factor\": [40.2735, 28.2773, 2.5394, 1.4531, 50.5327, 22.4427, 34.7177, 19.6417, 21.2963, 43.4037, 32.0904, 56.3209, 32.0695, 37.798, 48.8408, 49.1036, 47.209, 51.4918, 26.9134, 37.0791, 2.8471, 31.6775, 4.1903, 25.7651, 17.7744, 47.4111, 43.7401, 40.979, 17.7994, 11.8259, 16.0704, 48.2231, 3.4858, 38.1072, 37.5102, 6.8532, 45.9533, 56.3999, 9.7835, 7.2208, 49.3333, 20.2868, 30.3176, 42.907, 47.0028, 23.0287, 9.1834, 24.1447, 34.8365, 41.5608, 37.2498, 53.5152, 29.4717, 56.3262, 24.621, 5.1366, 42.77, 15.3829, 46.1579, 44.1214, 52.8301, 54.9761, 18.0937, 10.8372], \"original_max_position_embeddings\": 8192, \"attention_factor\": 1.2}"} {
  %y = rope.apply ins(%x : tensor<1x128xf32>) positions(%p : tensor<1xi64>) outs(%x : tensor<1x128xf32>) {freqs = #rope.longrope<base = 500000.0, short_factor = [1.4354, 1.3855, 1.1314, 1.3122, 1.2269, 1.311, 1.3093, 1.0433, 1.4294, 1.1572, 1.2195, 1.188, 1.039, 1.1109, 1.2465, 1.4912, 1.3458, 1.0928, 1.1425, 1.0289, 1.4417, 1.2775, 1.4817, 1.0257, 1.2227, 1.3787, 1.3964, 1.3369, 1.4052, 1.1876, 1.4449, 1.0489, 1.3478, 1.0013, 1.3547, 1.0836, 1.1614, 1.4587, 1.2036, 1.4547, 1.2986, 1.0373, 1.2978, 1.2128, 1.4535, 1.0397, 1.4977, 1.2068, 1.2374, 1.3193, 1.1493, 1.3926, 1.2075, 1.2713, 1.4241, 1.0445, 1.152, 1.1519, 1.1109, 1.3639, 1.1916, 1.3426, 1.3876, 1.2118], long_factor = [40.2735, 28.2773, 2.5394, 1.4531, 50.5327, 22.4427, 34.7177, 19.6417, 21.2963, 43.4037, 32.0904, 56.3209, 32.0695, 37.798, 48.8408, 49.1036, 47.209, 51.4918, 26.9134, 37.0791, 2.8471, 31.6775, 4.1903, 25.7651, 17.7744, 47.4111, 43.7401, 40.979, 17.7994, 11.8259, 16.0704, 48.2231, 3.4858, 38.1072, 37.5102, 6.8532, 45.9533, 56.3999, 9.7835, 7.2208, 49.3333, 20.2868, 30.3176, 42.907, 47.0028, 23.0287, 9.1834, 24.1447, 34.8365, 41.5608, 37.2498, 53.5152, 29.4717, 56.3262, 24.621, 5.1366, 42.77, 15.3829, 46.1579, 44.1214, 52.8301, 54.9761, 18.0937, 10.8372], original_max_position_embeddings = 8192, attention_factor = 1.2>, magnitude = 1.2} -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}
