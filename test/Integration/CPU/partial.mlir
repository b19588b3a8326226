// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Partial rotary: P = 4 of D = 6 channels rotate (theta = [1, 0.01]);
// channels 4 and 5 pass through unchanged.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // Half layout: pairs (0, 2) and (1, 3). At position 1, pair 0 = (1, 0) ->
  // (cos 1, sin 1) and pair 1 = (0, 2) -> (-2 sin 0.01, 2 cos 0.01).
  %x = arith.constant dense<[[1.0, 0.0, 0.0, 2.0, 5.0, 6.0], [1.0, 0.0, 0.0, 2.0, 7.0, 8.0]]> : tensor<2x6xf32>
  %p = arith.constant dense<[0, 1]> : tensor<2xi64>
  %init = arith.constant dense<-1.0> : tensor<2x6xf32>
  %y = rope.apply ins(%x : tensor<2x6xf32>) positions(%p : tensor<2xi64>) outs(%init : tensor<2x6xf32>)
         {rotary_dim = 4 : i64} -> tensor<2x6xf32>
  %u = tensor.cast %y : tensor<2x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 6]
  // CHECK-NEXT: {{\[\[}}1, 0, 0, 2, 5, 6],
  // CHECK-NEXT: [0.54030{{[0-9]}}, -0.019999{{[0-9]}}, 0.84147{{[0-9]}}, 1.999{{[0-9]*}}, 7, 8]]

  // Interleaved layout, P = 2 of D = 4 over [S, H, D] = [2, 2, 4]: pair 0 =
  // channels (0, 1) at pos = s; channels 2, 3 pass through.
  %x2 = arith.constant dense<[[[1.0, 0.0, 3.0, 4.0], [0.0, 1.0, 5.0, 6.0]], [[1.0, 0.0, 3.0, 4.0], [0.0, 1.0, 5.0, 6.0]]]> : tensor<2x2x4xf32>
  %init2 = tensor.empty() : tensor<2x2x4xf32>
  %y2 = rope.apply ins(%x2 : tensor<2x2x4xf32>) outs(%init2 : tensor<2x2x4xf32>)
          {layout = #rope.layout<interleaved>, rotary_dim = 2 : i64} -> tensor<2x2x4xf32>
  %u2 = tensor.cast %y2 : tensor<2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2, 4]
  // CHECK-NEXT: {{\[\[\[}}1, 0, 3, 4],
  // CHECK-NEXT: [0, 1, 5, 6]],
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}, 3, 4],
  // CHECK-NEXT: [-0.84147{{[0-9]}}, 0.54030{{[0-9]}}, 5, 6]]]
  return
}
