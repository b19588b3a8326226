// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// The usual calling form: a function takes the input and the destination and
// returns the rotated tensor (the destination, written in place).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @rotate(%x: tensor<2x2xf32>, %p: tensor<2xi64>, %init: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = rope.apply ins(%x : tensor<2x2xf32>) positions(%p : tensor<2xi64>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 0.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %p = arith.constant dense<[1, 2]> : tensor<2xi64>
  %init = tensor.empty() : tensor<2x2xf32>
  %y = call @rotate(%x, %p, %init) : (tensor<2x2xf32>, tensor<2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %u = tensor.cast %y : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}],
  // CHECK-NEXT: [-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]]
  return
}
