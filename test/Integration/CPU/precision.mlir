// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// SEMANTICS.md §5: f32 outputs match the float64 reference to ~1e-6 at
// positions up to 2^24. P = D = 4, base 10000: theta = [1, 0.01]; x = (1, 1,
// 0, 0) at position 2^24 = 16777216 prints (cos 16777216, cos 167772.16,
// sin 16777216, sin 167772.16) =
//   (0.626323, 0.116459, -0.779564, -0.993195)   (float64 reference)
// whereas f32(pos) * f32(theta) would give cos(167772.16) ~ 0.1127.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 1.0, 0.0, 0.0]]> : tensor<1x4xf32>
  %p = arith.constant dense<[16777216]> : tensor<1xi64>
  %init = tensor.empty() : tensor<1x4xf32>
  %y = rope.apply ins(%x : tensor<1x4xf32>) positions(%p : tensor<1xi64>) outs(%init : tensor<1x4xf32>) -> tensor<1x4xf32>
  %u = tensor.cast %y : tensor<1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 4]
  // CHECK-NEXT: {{\[\[}}0.62632{{[0-9]}}, 0.11645{{[0-9]}}, -0.77956{{[0-9]}}, -0.99319{{[0-9]}}]]
  return
}
