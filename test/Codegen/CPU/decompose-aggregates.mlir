// RUN: rope-opt %s --rope-decompose-aggregates | FileCheck %s --enable-var-scope

// linalg.softmax becomes structured ops the loop lowering handles.
// CHECK-LABEL: func.func @softmax(
//   CHECK-NOT:   linalg.softmax
//       CHECK:   linalg.generic
//       CHECK:     arith.maxnumf
//       CHECK:   math.exp
//       CHECK:   arith.divf
func.func @softmax(%s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
