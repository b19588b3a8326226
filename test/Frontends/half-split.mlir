// The expanded half-split cat(x1*c - x2*s, x2*c + x1*s): gpt-oss (YaRN, its
// table folded by the exporter: #rope.table, magnitude from the scaled
// cos/sin) and vLLM's forward_native (flat [T, H*D] viewed as [T, H, D],
// cos/sin gathered from one cos_sin_cache: the two halves of its columns).
// RUN: rope-opt --rope-raise %S/Inputs/gpt_oss.mlir | FileCheck %s --check-prefix=GPTOSS
// RUN: rope-opt --rope-raise=remarks=true %S/Inputs/vllm_forward_native.mlir 2>&1 | FileCheck %s --check-prefix=VLLM

// GPTOSS-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<2x{{[42]}}x8x32xf32>) positions(%arg2 : tensor<2x8xi64>) outs(%{{.*}}) {freqs = #rope.table<inv_freq = [1.000000e+00, 0.47478204965591431,
// GPTOSS-NOT: math.cos

// VLLM-NOT: remark
// VLLM: %[[Q:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [16, 4, 32]
// VLLM: %[[COS:.*]] = tensor.extract_slice %[[TABLE:.*]][0, 0] [64, 16] [1, 1] : tensor<64x32xf32> to tensor<64x16xf32>
// VLLM: %[[SIN:.*]] = tensor.extract_slice %[[TABLE]][0, 16] [64, 16] [1, 1] : tensor<64x32xf32> to tensor<64x16xf32>
// VLLM: %[[R:.*]] = rope.apply ins(%[[Q]] : tensor<16x4x32xf32>) positions(%{{.*}} : tensor<16xi64>) cache(%[[COS]], %[[SIN]] : tensor<64x16xf32>, tensor<64x16xf32>)
// VLLM: tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<16x4x32xf32> into tensor<16x128xf32>
// VLLM: rope.apply ins(%{{.*}} : tensor<16x2x32xf32>)
