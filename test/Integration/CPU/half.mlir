// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Half layout (pair i = channels (i, i + P/2)), base 10000, P = D = 4:
// theta = [1, 0.01]. With x = [1, 1, 0, 0], pair 0 is (1, 0) -> (cos p, sin p)
// in channels (0, 2) and pair 1 is (1, 0) -> (cos 0.01p, sin 0.01p) in
// channels (1, 3).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // [S, H, D] with implicit positions pos = s = 0, 1, 2.
  %x = arith.constant dense<[[[1.0, 1.0, 0.0, 0.0]], [[1.0, 1.0, 0.0, 0.0]], [[1.0, 1.0, 0.0, 0.0]]]> : tensor<3x1x4xf32>
  %init = tensor.empty() : tensor<3x1x4xf32>
  %y = rope.apply ins(%x : tensor<3x1x4xf32>) outs(%init : tensor<3x1x4xf32>) -> tensor<3x1x4xf32>
  %u = tensor.cast %y : tensor<3x1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [3, 1, 4]
  // CHECK-NEXT: {{\[\[\[}}1, 1, 0, 0]],
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.9999{{[0-9]*}}, 0.84147{{[0-9]}}, 0.0099998{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.41614{{[0-9]}}, 0.999{{[0-9]*}}, 0.90929{{[0-9]}}, 0.019998{{[0-9]}}]]]

  // [B, H, S, D] = [1, 2, 2, 2], token_dims [0, 2], positions [[1, 2]]: both
  // heads of a token rotate by the same angle. Head 1 is (0, 1) ->
  // (-sin p, cos p).
  %x2 = arith.constant dense<[[[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]]]> : tensor<1x2x2x2xf32>
  %p2 = arith.constant dense<[[1, 2]]> : tensor<1x2xi64>
  %init2 = tensor.empty() : tensor<1x2x2x2xf32>
  %y2 = rope.apply ins(%x2 : tensor<1x2x2x2xf32>) positions(%p2 : tensor<1x2xi64>) outs(%init2 : tensor<1x2x2x2xf32>)
          {token_dims = array<i64: 0, 2>} -> tensor<1x2x2x2xf32>
  %u2 = tensor.cast %y2 : tensor<1x2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 2, 2]
  // CHECK-NEXT: {{\[\[\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}],
  // CHECK-NEXT: [-0.41614{{[0-9]}}, 0.90929{{[0-9]}}]],
  // CHECK-NEXT: {{\[\[}}-0.84147{{[0-9]}}, 0.54030{{[0-9]}}],
  // CHECK-NEXT: [-0.90929{{[0-9]}}, -0.41614{{[0-9]}}]]]]

  // Magnitude 2 scales cos and sin: position 1, base 500000, P = D = 2
  // (theta_0 = 1 whatever the base).
  %x3 = arith.constant dense<[[1.0, 0.0]]> : tensor<1x2xf32>
  %p3 = arith.constant dense<[1]> : tensor<1xi32>
  %init3 = tensor.empty() : tensor<1x2xf32>
  %y3 = rope.apply ins(%x3 : tensor<1x2xf32>) positions(%p3 : tensor<1xi32>) outs(%init3 : tensor<1x2xf32>)
          {magnitude = 2.0, freqs = #rope.default<base = 500000.0>} -> tensor<1x2xf32>
  %u3 = tensor.cast %y3 : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2]
  // CHECK-NEXT: {{\[\[}}1.080{{[0-9]*}}, 1.6829{{[0-9]}}]]
  return
}
