// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// cos/sin read from caches instead of computed. P = D = 2, x = (1, 2):
//   y = (x1 c - x2 s, x2 c + x1 s) = (c - 2s, 2c + s).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // Caches [M = 3, P/2 = 1]: rows (c, s) = (1, 0), (0.5, 0.75), (0.25, -1).
  %cos = arith.constant dense<[[1.0], [0.5], [0.25]]> : tensor<3x1xf32>
  %sin = arith.constant dense<[[0.0], [0.75], [-1.0]]> : tensor<3x1xf32>
  %x = arith.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<6x2xf32>
  %init = tensor.empty() : tensor<6x2xf32>

  // Positions 3, -1 and 1000000 are out of [0, 3): those tokens become NaN,
  // without reading out of bounds.
  %p = arith.constant dense<[0, 1, 2, 3, -1, 1000000]> : tensor<6xi64>
  %y = rope.apply ins(%x : tensor<6x2xf32>) positions(%p : tensor<6xi64>) cache(%cos, %sin : tensor<3x1xf32>, tensor<3x1xf32>)
         outs(%init : tensor<6x2xf32>) -> tensor<6x2xf32>
  %u = tensor.cast %y : tensor<6x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [6, 2]
  // CHECK-NEXT: {{\[\[}}1, 2],
  // CHECK-NEXT: [-1, 1.75],
  // CHECK-NEXT: [2.25, -0.5],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}]]

  // Offset-gathered f16 cache, offset 1: tokens at positions 1, 2 and 3 (out
  // of range).
  %cos16 = arith.constant dense<[[1.0], [0.5], [0.25]]> : tensor<3x1xf16>
  %sin16 = arith.constant dense<[[0.0], [0.75], [-1.0]]> : tensor<3x1xf16>
  %x3 = arith.constant dense<[[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]]> : tensor<1x3x2xf32>
  %init3 = tensor.empty() : tensor<1x3x2xf32>
  %o = arith.constant 1 : i32
  %y3 = rope.apply ins(%x3 : tensor<1x3x2xf32>) offset(%o : i32) cache(%cos16, %sin16 : tensor<3x1xf16>, tensor<3x1xf16>)
          outs(%init3 : tensor<1x3x2xf32>) {token_dims = array<i64: 1>} -> tensor<1x3x2xf32>
  %u3 = tensor.cast %y3 : tensor<1x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 3, 2]
  // CHECK-NEXT: {{\[\[\[}}-1, 1.75],
  // CHECK-NEXT: [2.25, -0.5],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}]]]

  // Pre-gathered caches [S, P/2] with the inverse rotation (s -> -s):
  // token 0 (c, s) = (0.5, 0.75) -> (0.5 + 1.5, 1 - 0.75);
  // token 1 (c, s) = (0, 1)      -> (2, -1).
  %pc = arith.constant dense<[[0.5], [0.0]]> : tensor<2x1xf32>
  %ps = arith.constant dense<[[0.75], [1.0]]> : tensor<2x1xf32>
  %x4 = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %init4 = tensor.empty() : tensor<2x2xf32>
  %y4 = rope.apply ins(%x4 : tensor<2x2xf32>) cache(%pc, %ps : tensor<2x1xf32>, tensor<2x1xf32>)
          outs(%init4 : tensor<2x2xf32>) {inverse} -> tensor<2x2xf32>
  %u4 = tensor.cast %y4 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}2, 0.25],
  // CHECK-NEXT: [2, -1]]
  return
}
