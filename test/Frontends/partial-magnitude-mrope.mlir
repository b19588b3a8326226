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

// M-RoPE at one token (decode): the same module at B = S = 1, the position
// ids read through constant indices as torch-mlir emits them for size-1
// dims. The [3, 1, 1] stream keeps its axis and becomes [3, 1], read along
// the size-1 sequence dim.
// RUN: sed 's/#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>/#map1 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>/; s/2x4x8x/1x4x1x/g; s/2x2x8x/1x2x1x/g; s/3x2x8x/3x1x1x/g; s/3x2x8xi64/3x1x1xi64/g; s/1x2x8x/1x1x1x/g; s/tensor<2x8x/tensor<1x1x/g; s/2x1x8x32/1x1x1x32/g; s/\[1, 2, 8, /[1, 1, 1, /g; s/\[3, 2, 8, /[3, 1, 1, /g; s/\[2, 1, 8, 32\]/[1, 1, 1, 32]/g; s/\[2, 4, 8, /[1, 4, 1, /g; s/\[2, 2, 8, /[1, 2, 1, /g' %S/Inputs/qwen2_vl_mrope.mlir | rope-opt --rope-raise | FileCheck %s --check-prefix=MROPE1
// MROPE1: %[[P:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0], [1, 2]] : tensor<3x1x1xi64> into tensor<3x1xi64>
// MROPE1: rope.apply ins(%arg0 : tensor<1x4x1x32xf32>) positions(%[[P]] : tensor<3x1xi64>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, mrope = #rope.mrope<section = [4, 6, 6]>, token_dims = array<i64: 2>}
// MROPE1-COUNT-1: rope.apply ins(%arg1 : tensor<1x2x1x32xf32>)
