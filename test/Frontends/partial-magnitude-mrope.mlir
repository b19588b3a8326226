// Partial rotation (Phi-2: 16 of 40 channels, the rest concatenated back),
// a magnitude (Qwen2 with YaRN: cos and sin times attention_scaling, folded
// table), and M-RoPE (Qwen2-VL: three position streams of one [3, B, S]
// tensor picked per section by slices and concats: #rope.mrope).
// RUN: rope-opt --rope-raise %S/Inputs/phi2_partial.mlir | FileCheck %s --check-prefix=PHI
// RUN: rope-opt --rope-raise %S/Inputs/qwen2_yarn.mlir | FileCheck %s --check-prefix=YARN
// RUN: rope-opt --rope-raise %S/Inputs/qwen2_vl_mrope.mlir | FileCheck %s --check-prefix=MROPE

// PHI-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<2x{{[42]}}x8x40xf32>) positions(%arg2 : tensor<2x8xi64>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, rotary_dim = 16 : i64, token_dims = array<i64: 0, 2>}
// PHI-NOT: tensor.concat

// YARN-COUNT-2: rope.apply {{.*}} {freqs = #rope.table<inv_freq = [1.000000e+00, 0.42175596952438354, {{.*}}]>, magnitude = 1.{{[0-9]+}} : f64, token_dims = array<i64: 0, 2>}

// MROPE-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<2x{{[42]}}x8x32xf32>) positions(%arg2 : tensor<3x2x8xi64>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, mrope = #rope.mrope<section = [4, 6, 6]>, token_dims = array<i64: 0, 2>}
