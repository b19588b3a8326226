// RUN: rope-opt %s --rope-fold-constant-transposes | FileCheck %s
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu)" | FileCheck %s --check-prefix=PIPELINE

// A weight transposed in the graph (x·Wᵀ) becomes the transposed constant.
// CHECK-LABEL: func.func @weight(
//   CHECK-NOT:   linalg.transpose
//       CHECK:   arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
//   CHECK-NOT:   linalg.transpose
// The lowered pipeline holds the transposed data and no transpose loop.
// Two functions hold a 3x2xf32 constant, and which global gets the `_0`
// suffix varies from run to run (globals are named as functions are
// bufferized, in parallel), so the name's suffix is not checked.
// PIPELINE-LABEL: llvm.mlir.global private constant @__constant_3x2xf32{{(_[0-9]+)?}}(dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]>
func.func @weight() -> tensor<3x2xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%c : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// A dense_resource blob (torch-mlir's weights), rank 3, 2-byte elements:
// [2][3][2] = [[0, 1], [2, 3], [4, 5]], [[6, 7], [8, 9], [16, 17]].
// CHECK-LABEL: func.func @resource(
//       CHECK:   arith.constant dense<{{\[}}{{\[}}[0, 2, 4], [1, 3, 5]], {{\[}}[6, 8, 16], [7, 9, 17]]]> : tensor<2x2x3xi16>
//   CHECK-NOT:   linalg.transpose
func.func @resource() -> tensor<2x2x3xi16> {
  %c = arith.constant dense_resource<blob> : tensor<2x3x2xi16>
  %e = tensor.empty() : tensor<2x2x3xi16>
  %t = linalg.transpose ins(%c : tensor<2x3x2xi16>) outs(%e : tensor<2x2x3xi16>) permutation = [0, 2, 1]
  return %t : tensor<2x2x3xi16>
}

// A splat is the splat of the new shape; a transpose of an argument stays.
// CHECK-LABEL: func.func @splat_and_argument(
//       CHECK:   arith.constant dense<7.000000e+00> : tensor<3x2xf32>
//       CHECK:   linalg.transpose ins(%{{.*}} : tensor<2x3xf32>)
func.func @splat_and_argument(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %c = arith.constant dense<7.0> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%c : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %u = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %a = arith.addf %t, %u : tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x02000000000001000200030004000500060007000800090010001100"
    }
  }
#-}
