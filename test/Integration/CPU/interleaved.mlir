// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Interleaved layout (pair i = channels (2i, 2i + 1)), base 10000, P = D = 4:
// theta = [1, 0.01]. x = [1, 0, 1, 0] rotates to
// [cos p, sin p, cos 0.01p, sin 0.01p]. (The half layout would pair channels
// (0, 2) and (1, 3) and give different numbers.)

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]> : tensor<3x4xf32>
  %p = arith.constant dense<[1, 2, 1]> : tensor<3xi32>
  %init = tensor.empty() : tensor<3x4xf32>
  %y = rope.apply ins(%x : tensor<3x4xf32>) positions(%p : tensor<3xi32>) outs(%init : tensor<3x4xf32>)
         {layout = #rope.layout<interleaved>} -> tensor<3x4xf32>
  %u = tensor.cast %y : tensor<3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [3, 4]
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}, 0.9999{{[0-9]*}}, 0.0099998{{[0-9]}}],
  // CHECK-NEXT: [-0.41614{{[0-9]}}, 0.90929{{[0-9]}}, 0.999{{[0-9]*}}, 0.019998{{[0-9]}}],
  // CHECK-NEXT: [-0.84147{{[0-9]}}, 0.54030{{[0-9]}}, -0.0099998{{[0-9]}}, 0.9999{{[0-9]*}}]]
  return
}
