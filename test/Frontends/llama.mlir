// Hugging Face Llama (transformers 5.24) through torch-mlir: rotate_half with
// cos/sin computed from position ids (a broadcast multiply, and the
// batch_matmul + transpose of older transformers), or gathered from cos/sin
// caches by position ids (torch-mlir wraps negative indices; kept explicit).
// HF's f32 inv_freq, 1 / 10000 ** (arange(0, 32, 2) / 32), is off the f32
// rounding of 10000^(-2i/32) by one ulp in 4 of 16 entries, so the raised op
// keeps those values (#rope.table, SEMANTICS.md §7), not #rope.default.
// RUN: rope-opt --rope-raise %S/Inputs/llama_computed.mlir | FileCheck %s --check-prefix=COMPUTED
// RUN: rope-opt --rope-raise %S/Inputs/llama_computed_matmul.mlir | FileCheck %s --check-prefix=COMPUTED
// RUN: rope-opt --rope-raise %S/Inputs/llama_cache.mlir | FileCheck %s --check-prefix=CACHE

// COMPUTED-LABEL: func.func @main(
// COMPUTED-SAME: %[[Q:.*]]: tensor<2x4x8x32xf32>, %[[K:.*]]: tensor<2x2x8x32xf32>, %[[POS:.*]]: tensor<2x8xi64>
// COMPUTED-NOT: math.cos
// COMPUTED: %[[RQ:.*]] = rope.apply ins(%[[Q]] : tensor<2x4x8x32xf32>) positions(%[[POS]] : tensor<2x8xi64>)
// COMPUTED-SAME: {freqs = #rope.table<inv_freq = [{{.*}}]>, token_dims = array<i64: 0, 2>}
// COMPUTED: %[[RK:.*]] = rope.apply ins(%[[K]] : tensor<2x2x8x32xf32>) positions(%[[POS]] : tensor<2x8xi64>)
// COMPUTED-SAME: {freqs = #rope.table<inv_freq = [{{.*}}]>, token_dims = array<i64: 0, 2>}
// COMPUTED-NOT: math.sin
// COMPUTED: return %[[RQ]], %[[RK]]

// CACHE-LABEL: func.func @main(
// CACHE-SAME: %[[Q:.*]]: tensor<2x4x8x32xf32>, %[[K:.*]]: tensor<2x2x8x32xf32>, %[[POS:.*]]: tensor<2x8xi64>
// CACHE: %[[WRAP:.*]] = linalg.generic {{.*}} ins(%[[POS]] : tensor<2x8xi64>)
// CACHE: arith.cmpi slt
// CACHE: arith.addi %{{.*}}, %c64_i64
// CACHE: %[[COS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [64, 16] [1, 1] : tensor<64x32xf32> to tensor<64x16xf32>
// CACHE: %[[SIN:.*]] = tensor.extract_slice %{{.*}}[0, 0] [64, 16] [1, 1] : tensor<64x32xf32> to tensor<64x16xf32>
// CACHE: rope.apply ins(%[[Q]] : tensor<2x4x8x32xf32>) positions(%[[WRAP]] : tensor<2x8xi64>) cache(%[[COS]], %[[SIN]] : tensor<64x16xf32>, tensor<64x16xf32>)
// CACHE-SAME: {token_dims = array<i64: 0, 2>}
// CACHE: rope.apply ins(%[[K]] : tensor<2x2x8x32xf32>)
// CACHE-NOT: tensor.extract %

// The same module exported with dynamic batch and sequence: torch-mlir adds
// cf.assert checks of the sizes and slices the channels with tensor.dim
// sizes; raised the same way, on the dynamic shapes.
// RUN: rope-opt --rope-raise %S/Inputs/llama_dynamic.mlir | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC-LABEL: func.func @main(
// DYNAMIC-SAME: %[[Q:.*]]: tensor<?x4x?x32xf32>, %[[K:.*]]: tensor<?x2x?x32xf32>, %[[POS:.*]]: tensor<?x?xi64>
// DYNAMIC: cf.assert
// DYNAMIC: rope.apply ins(%[[Q]] : tensor<?x4x?x32xf32>) positions(%[[POS]] : tensor<?x?xi64>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>, token_dims = array<i64: 0, 2>}
// DYNAMIC: rope.apply ins(%[[K]] : tensor<?x2x?x32xf32>) positions(%[[POS]] : tensor<?x?xi64>)
// DYNAMIC-NOT: math.cos
