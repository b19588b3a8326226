// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// M-RoPE executed (SEMANTICS.md §2): two tokens with positions
// t = [1, 2], h = [30, 40], w = [500, 600]; P = D = 8, base 100, so
// theta = [1, 10^-0.5, 0.1, 10^-1.5]; half layout, x = (1, 1, 1, 1, 0, 0, 0, 0),
// so each token prints cos then sin of (position of pair j's axis) * theta_j.
// Expected values: the float64 reference (python/rope_mlir/reference.py),
// matched to the digits that are stable under a 2e-6 relative perturbation.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x8xf32>
  %init = tensor.empty() : tensor<2x8xf32>
  %p = arith.constant dense<[[1, 2], [30, 40], [500, 600]]> : tensor<3x2xi64>

  // Chunked, section [1, 1, 2]: pair 0 from t, 1 from h, 2-3 from w.
  %y0 = rope.apply ins(%x : tensor<2x8xf32>) positions(%p : tensor<3x2xi64>) outs(%init : tensor<2x8xf32>) {freqs = #rope.default<base = 100.0>, mrope = #rope.mrope<section = [1, 1, 2]>} -> tensor<2x8xf32>
  %u0 = tensor.cast %y0 : tensor<2x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 8]
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]*}}, -0.99807{{[0-9]*}}, 0.96496{{[0-9]*}}, -0.99465{{[0-9]*}}, 0.8414{{[0-9]*}}, -0.062015{{[0-9]*}}, -0.26237{{[0-9]*}}, -0.103241],
  // CHECK-NEXT: {{\[}}-0.41614{{[0-9]*}}, 0.9965{{[0-9]*}}, -0.95241{{[0-9]*}}, 0.9923{{[0-9]*}}, 0.90929{{[0-9]*}}, 0.082645{{[0-9]*}}, -0.30481{{[0-9]*}}, 0.12379{{[0-9]*}}]]

  // Interleaved, section [2, 1, 1]: pair 0 from t, 1 from h, 2 from w, 3 from t.
  %y1 = rope.apply ins(%x : tensor<2x8xf32>) positions(%p : tensor<3x2xi64>) outs(%init : tensor<2x8xf32>) {freqs = #rope.default<base = 100.0>, mrope = #rope.mrope<section = [2, 1, 1], interleaved = true>} -> tensor<2x8xf32>
  %u1 = tensor.cast %y1 : tensor<2x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 8]
  // CHECK-NEXT: {{\[\[}}0.54030{{[0-9]*}}, -0.99807{{[0-9]*}}, 0.96496{{[0-9]*}}, 0.999{{[0-9]*}}, 0.8414{{[0-9]*}}, -0.062015{{[0-9]*}}, -0.26237{{[0-9]*}}, 0.031617{{[0-9]*}}],
  // CHECK-NEXT: {{\[}}-0.41614{{[0-9]*}}, 0.9965{{[0-9]*}}, -0.95241{{[0-9]*}}, 0.99{{[0-9]*}}, 0.90929{{[0-9]*}}, 0.082645{{[0-9]*}}, -0.30481{{[0-9]*}}, 0.063203{{[0-9]*}}]]
  return
}
