// RUN: rope-opt --rope-split-complex-constants %s | FileCheck %s

// CHECK-LABEL: func.func @table
// CHECK-DAG: %[[RE:.*]] = arith.constant dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[IM:.*]] = arith.constant dense<[0.000000e+00, -2.500000e-01]> : tensor<2xf32>
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[RE]], %[[IM]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: complex.create
// CHECK: return %[[Z]]
func.func @table() -> tensor<2xcomplex<f32>> {
  %t = arith.constant dense<[(1.0, 0.0), (0.5, -0.25)]> : tensor<2xcomplex<f32>>
  return %t : tensor<2xcomplex<f32>>
}

// A dense_resource blob (as torch-mlir exports freqs_cis): interleaved parts.
// CHECK-LABEL: func.func @blob
// CHECK-DAG: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: arith.constant dense<[-1.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NOT: dense_resource<
func.func @blob() -> tensor<2xcomplex<f32>> {
  %t = arith.constant dense_resource<freqs> : tensor<2xcomplex<f32>>
  return %t : tensor<2xcomplex<f32>>
}

{-#
  dialect_resources: {
    builtin: {
      freqs: "0x040000000000803F000080BF000000400000003F"
    }
  }
#-}
