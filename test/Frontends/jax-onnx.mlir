// Other frontends: JAX through StableHLO -> linalg (inv_freq computed in the
// graph with powf, halves joined by insert_slice into an empty tensor,
// [B, S, H, D], i32 positions) and an ONNX Slice/Neg/Concat/Mul/Add graph
// imported to linalg (caches gathered by positions flattened to [B*S], the
// negative-index wrap computed in separate ops).
// RUN: rope-opt --rope-raise %S/Inputs/jax_rotate_half.mlir | FileCheck %s --check-prefix=JAX
// RUN: rope-opt --rope-raise %S/Inputs/onnx_rotate_half.mlir | FileCheck %s --check-prefix=ONNX

// JAX: rope.apply ins(%arg0 : tensor<2x8x4x32xf32>) positions(%arg2 : tensor<2x8xi32>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>} -> tensor<2x8x4x32xf32>
// JAX: rope.apply ins(%arg1 : tensor<2x8x2x32xf32>) positions(%arg2 : tensor<2x8xi32>) {{.*}} {freqs = #rope.table<inv_freq = [{{.*}}]>} -> tensor<2x8x2x32xf32>
// JAX-NOT: math.powf

// ONNX: %[[POS:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg2 : tensor<2x8xi1>, tensor<2x8xi64>, tensor<2x8xi64>)
// ONNX: rope.apply ins(%arg0 : tensor<2x4x8x32xf32>) positions(%[[POS]] : tensor<2x8xi64>) cache(%[[COS:.*]], %[[SIN:.*]] : tensor<64x16xf32>, tensor<64x16xf32>) {{.*}} {token_dims = array<i64: 0, 2>}
// ONNX: rope.apply ins(%arg1 : tensor<2x2x8x32xf32>) positions(%[[POS]] : tensor<2x8xi64>) cache(%[[COS]], %[[SIN]]
