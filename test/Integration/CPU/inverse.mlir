// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// The inverse rotation R(-p) (s -> -s), and R(-p) R(p) = I.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // Inverse alone at position 1 on (1, 0): (cos 1, -sin 1).
  %x = arith.constant dense<[[1.0, 0.0]]> : tensor<1x2xf32>
  %p = arith.constant dense<[1]> : tensor<1xi64>
  %init = tensor.empty() : tensor<1x2xf32>
  %y = rope.apply ins(%x : tensor<1x2xf32>) positions(%p : tensor<1xi64>) outs(%init : tensor<1x2xf32>) {inverse} -> tensor<1x2xf32>
  %u = tensor.cast %y : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2]
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, -0.84147{{[0-9]}}]]

  // Forward then inverse at positions [3, 7] (half layout, D = 4) gives x
  // back; the forward result is printed too, to show it differs from x.
  %x2 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.5, 0.5, 2.5, -3.5]]> : tensor<2x4xf32>
  %p2 = arith.constant dense<[3, 7]> : tensor<2xi32>
  %init2 = tensor.empty() : tensor<2x4xf32>
  %f = rope.apply ins(%x2 : tensor<2x4xf32>) positions(%p2 : tensor<2xi32>) outs(%init2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // Both rotations come before the prints: an external call taking a tensor
  // may write it, and %f must still be read by the inverse.
  %init3 = tensor.empty() : tensor<2x4xf32>
  %b = rope.apply ins(%f : tensor<2x4xf32>) positions(%p2 : tensor<2xi32>) outs(%init3 : tensor<2x4xf32>) {inverse} -> tensor<2x4xf32>
  %uf = tensor.cast %f : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%uf) : (tensor<*xf32>) -> ()
  // Position 3, pairs (x0, x2) = (1, 3) by 3 rad and (x1, x3) = (2, 4) by
  // 0.03 rad: (cos3 - 3 sin3, 2 cos.03 - 4 sin.03, 3 cos3 + sin3, 4 cos.03 + 2 sin.03);
  // position 7 likewise by 7 and 0.07 rad.
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}-1.4133{{[0-9]}}, 1.8791{{[0-9]}}, -2.8288{{[0-9]}}, 4.0581{{[0-9]}}],
  // CHECK-NEXT: [-2.7733{{[0-9]}}, 0.74357{{[0-9]}}, 0.89927{{[0-9]}}, -3.4564{{[0-9]}}]]
  %ub = tensor.cast %b : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%ub) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}{{0.99999[0-9]*|1(.00000[0-9]*)?}}, {{1.99999[0-9]*|2(.00000[0-9]*)?}}, {{2.99999[0-9]*|3(.00000[0-9]*)?}}, {{3.99999[0-9]*|4(.00000[0-9]*)?}}],
  // CHECK-NEXT: [{{-1.49999[0-9]*|-1.5(0000[0-9]*)?}}, {{0.49999[0-9]*|0.5(0000[0-9]*)?}}, {{2.49999[0-9]*|2.5(0000[0-9]*)?}}, {{-3.49999[0-9]*|-3.5(0000[0-9]*)?}}]]
  return
}
