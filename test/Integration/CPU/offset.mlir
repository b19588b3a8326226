// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Offset form: pos = offset + s along the last token dim. P = D = 2
// (theta_0 = 1) and x = (1, 0), so each token prints (cos pos, sin pos).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[[[1.0, 0.0]], [[1.0, 0.0]]], [[[1.0, 0.0]], [[1.0, 0.0]]]]> : tensor<2x2x1x2xf32>
  %init = tensor.empty() : tensor<2x2x1x2xf32>

  // Scalar i64 offset 1: positions 1, 2 in both batch rows.
  %o = arith.constant 1 : i64
  %y = rope.apply ins(%x : tensor<2x2x1x2xf32>) offset(%o : i64) outs(%init : tensor<2x2x1x2xf32>) -> tensor<2x2x1x2xf32>
  %u = tensor.cast %y : tensor<2x2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2, 1, 2]
  // CHECK-NEXT: {{\[\[\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]]],
  // CHECK-NEXT: {{\[\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]]]]

  // Index offset 2: positions 2, 3.
  %oi = arith.constant 2 : index
  %yi = rope.apply ins(%x : tensor<2x2x1x2xf32>) offset(%oi : index) outs(%init : tensor<2x2x1x2xf32>) -> tensor<2x2x1x2xf32>
  %ui = tensor.cast %yi : tensor<2x2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ui) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2, 1, 2]
  // CHECK-NEXT: {{\[\[\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.98999{{[0-9]}}, 0.1411{{[0-9]*}}]]],
  // CHECK-NEXT: {{\[\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.98999{{[0-9]}}, 0.1411{{[0-9]*}}]]]]

  // Rank-0 i32 tensor offset 0: positions 0, 1.
  %o0 = arith.constant dense<0> : tensor<i32>
  %y0 = rope.apply ins(%x : tensor<2x2x1x2xf32>) offset(%o0 : tensor<i32>) outs(%init : tensor<2x2x1x2xf32>) -> tensor<2x2x1x2xf32>
  %u0 = tensor.cast %y0 : tensor<2x2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2, 1, 2]
  // CHECK-NEXT: {{\[\[\[\[}}1, 0]],
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}]]],
  // CHECK-NEXT: {{\[\[\[}}1, 0]],
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}]]]]

  // Per-row offsets [0, 2]: row 0 at positions 0, 1; row 1 at 2, 3.
  %or = arith.constant dense<[0, 2]> : tensor<2xi64>
  %yr = rope.apply ins(%x : tensor<2x2x1x2xf32>) offset(%or : tensor<2xi64>) outs(%init : tensor<2x2x1x2xf32>) -> tensor<2x2x1x2xf32>
  %ur = tensor.cast %yr : tensor<2x2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ur) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2, 1, 2]
  // CHECK-NEXT: {{\[\[\[\[}}1, 0]],
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}]]],
  // CHECK-NEXT: {{\[\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.98999{{[0-9]}}, 0.1411{{[0-9]*}}]]]]
  return
}
