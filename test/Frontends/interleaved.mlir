// Interleaved pairs: GPT-J's rotate_every_two (strided slices, stack and
// flatten, repeat_interleave of a gathered sincos table; 16 of 64 channels),
// GLM-4's partial interleaved rotation (16 of 32), and DeepSeek-V3's
// apply_rotary_pos_emb_interleave, whose output is in de-interleaved order:
// rope.apply followed by the explicit channel permutation.
// RUN: rope-opt --rope-raise %S/Inputs/gptj.mlir | FileCheck %s --check-prefix=GPTJ
// RUN: rope-opt --rope-raise %S/Inputs/glm4_partial_interleaved.mlir | FileCheck %s --check-prefix=GLM
// RUN: rope-opt --rope-raise %S/Inputs/deepseek_v3_interleave.mlir | FileCheck %s --check-prefix=DEEPSEEK

// GPTJ: %[[COS:.*]] = tensor.extract_slice %[[T:.*]][0, 8] [64, 8] [1, 1] : tensor<64x16xf32> to tensor<64x8xf32>
// GPTJ: %[[SIN:.*]] = tensor.extract_slice %[[T]][0, 0] [64, 8] [1, 1] : tensor<64x16xf32> to tensor<64x8xf32>
// GPTJ: rope.apply ins(%arg1 : tensor<2x8x4x64xf32>) positions(%{{.*}} : tensor<2x8xi64>) cache(%[[COS]], %[[SIN]] : tensor<64x8xf32>, tensor<64x8xf32>)
// GPTJ-SAME: {layout = #rope.layout<interleaved>, rotary_dim = 16 : i64}
// GPTJ: rope.apply ins(%arg0 : tensor<2x8x4x64xf32>)
// GPTJ-SAME: {layout = #rope.layout<interleaved>, rotary_dim = 16 : i64}

// GLM-COUNT-2: rope.apply {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, layout = #rope.layout<interleaved>, rotary_dim = 16 : i64, token_dims = array<i64: 0, 2>}

// DEEPSEEK: %[[R:.*]] = rope.apply ins(%arg0 : tensor<2x4x8x32xf32>) positions(%arg2 : tensor<2x8xi64>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>}
// DEEPSEEK: %[[P:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 4, 8, 16, 2]
// DEEPSEEK: %[[T:.*]] = linalg.transpose ins(%[[P]] : tensor<2x4x8x16x2xf32>) {{.*}} permutation = [0, 1, 2, 4, 3]
// DEEPSEEK: %[[Y:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<2x4x8x2x16xf32> into tensor<2x4x8x32xf32>
// DEEPSEEK: rope.apply ins(%arg1 : tensor<2x1x8x32xf32>)
// DEEPSEEK: return %[[Y]],

// Meta's reference Llama: pairs viewed as complex numbers times freqs_cis, a
// complex constant table sliced at start_pos (3), viewed back as real pairs:
// interleaved, offset(3), the real and imaginary parts as the cos and sin
// caches, the token dim the sequence ([B, S, H, D], batch broadcast).
// RUN: rope-opt --rope-raise %S/Inputs/meta_llama_complex.mlir | FileCheck %s --check-prefix=COMPLEX
// COMPLEX: %[[COS:.*]] = arith.constant dense<"0x0000803F{{.*}}> : tensor<64x16xf32>
// COMPLEX: %[[SIN:.*]] = arith.constant dense<"0x00000000{{.*}}> : tensor<64x16xf32>
// COMPLEX: %[[OFF:.*]] = arith.constant 3 : i64
// COMPLEX: rope.apply ins(%arg0 : tensor<2x8x4x32xf32>) offset(%[[OFF]] : i64) cache(%[[COS]], %[[SIN]] : tensor<64x16xf32>, tensor<64x16xf32>)
// COMPLEX-SAME: {layout = #rope.layout<interleaved>, token_dims = array<i64: 1>}
// COMPLEX: rope.apply ins(%arg1 : tensor<2x8x2x32xf32>) offset(
// COMPLEX-NOT: complex.mul
