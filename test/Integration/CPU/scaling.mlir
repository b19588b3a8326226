// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Dynamic frequency schemes executed (SEMANTICS.md §4): dynamic NTK and
// LongRoPE below and above their switch length, and with the runtime
// `length` operand. P = D = 4, base 10000, half layout, x = (1, 1, 0, 0) per
// token, so each token prints (a cos(p theta_0), a cos(p theta_1),
// a sin(p theta_0), a sin(p theta_1)). Expected values: the float64
// reference (python/rope_mlir/reference.py, inv_frequencies with seq_len =
// l, then cos_sin), matched to the digits that are stable under a 2e-6
// relative perturbation.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]> : tensor<2x4xf32>
  %init = tensor.empty() : tensor<2x4xf32>

  // dynamic_ntk, l = 14 <= M = 16: the unscaled theta = [1, 0.01].
  %p0 = arith.constant dense<[7, 13]> : tensor<2xi64>
  %y0 = rope.apply ins(%x : tensor<2x4xf32>) positions(%p0 : tensor<2xi64>) outs(%init : tensor<2x4xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>} -> tensor<2x4xf32>
  %u0 = tensor.cast %y0 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}0.75390{{[0-9]*}}, 0.9975{{[0-9]*}}, 0.65698{{[0-9]*}}, 0.06994{{[0-9]*}}],
  // CHECK-NEXT: {{\[}}0.90744{{[0-9]*}}, 0.99156{{[0-9]*}}, 0.42016{{[0-9]*}}, 0.129634]]

  // dynamic_ntk, l = 41 > M: base' = 10^4 (2 * 41 / 16 - 1)^2, theta_1 = 0.0024242; position 7
  // is rotated by the scaled frequency too (one theta per call).
  %p1 = arith.constant dense<[7, 40]> : tensor<2xi64>
  %y1 = rope.apply ins(%x : tensor<2x4xf32>) positions(%p1 : tensor<2xi64>) outs(%init : tensor<2x4xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>} -> tensor<2x4xf32>
  %u1 = tensor.cast %y1 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}0.75390{{[0-9]*}}, 0.99985{{[0-9]*}}, 0.65698{{[0-9]*}}, 0.016968{{[0-9]*}}],
  // CHECK-NEXT: {{\[}}-0.66693{{[0-9]*}}, 0.9953{{[0-9]*}}, 0.74511{{[0-9]*}}, 0.09681{{[0-9]*}}]]

  // dynamic_ntk, the length operand (100) overrides max position + 1: theta_1 = 1 / 1150.
  %l2 = arith.constant 100 : i64
  %p2 = arith.constant dense<[7, 13]> : tensor<2xi64>
  %y2 = rope.apply ins(%x : tensor<2x4xf32>) positions(%p2 : tensor<2xi64>) length(%l2 : i64) outs(%init : tensor<2x4xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>} -> tensor<2x4xf32>
  %u2 = tensor.cast %y2 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}0.75390{{[0-9]*}}, 0.9999{{[0-9]*}}, 0.65698{{[0-9]*}}, 0.0060869{{[0-9]*}}],
  // CHECK-NEXT: {{\[}}0.90744{{[0-9]*}}, 0.99993{{[0-9]*}}, 0.42016{{[0-9]*}}, 0.0113041]]

  // longrope, l = 8 = L: short factors, theta = [1, 0.01 / 1.5]; a = 1.5.
  %p3 = arith.constant dense<[2, 7]> : tensor<2xi64>
  %y3 = rope.apply ins(%x : tensor<2x4xf32>) positions(%p3 : tensor<2xi64>) outs(%init : tensor<2x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 8, attention_factor = 1.5>, magnitude = 1.5} -> tensor<2x4xf32>
  %u3 = tensor.cast %y3 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}-0.6242{{[0-9]*}}, 1.4998{{[0-9]*}}, 1.3639{{[0-9]*}}, 0.0199994],
  // CHECK-NEXT: {{\[}}1.1308{{[0-9]*}}, 1.4983{{[0-9]*}}, 0.9854{{[0-9]*}}, 0.069974{{[0-9]*}}]]

  // longrope, l = 9 > L: long factors, theta = [0.5, 0.0025]; a = 1.5.
  %p4 = arith.constant dense<[2, 8]> : tensor<2xi64>
  %y4 = rope.apply ins(%x : tensor<2x4xf32>) positions(%p4 : tensor<2xi64>) outs(%init : tensor<2x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 8, attention_factor = 1.5>, magnitude = 1.5} -> tensor<2x4xf32>
  %u4 = tensor.cast %y4 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}0.81045{{[0-9]*}}, 1.49998, 1.2622{{[0-9]*}}, 0.0074999{{[0-9]*}}],
  // CHECK-NEXT: {{\[}}-0.98046{{[0-9]*}}, 1.4997, -1.1352, 0.02999{{[0-9]*}}]]
  return
}
