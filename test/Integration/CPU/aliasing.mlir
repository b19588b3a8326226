// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// The destination is the input itself (outs(%x)). Each output element reads
// its partner, so a rotation done in place must not clobber a partner before
// it is read; and %x keeps its value (tensor semantics).

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x0 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  // A writable buffer (constants are read-only).
  %x = linalg.copy ins(%x0 : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p = arith.constant dense<[1, 2]> : tensor<2xi64>
  // Interleaved, P = 2 of 4: pair (x0, x1) = (1, 2) by p rad ->
  // (cos p - 2 sin p, 2 cos p + sin p); channels 2, 3 pass through.
  %y = rope.apply ins(%x : tensor<2x4xf32>) positions(%p : tensor<2xi64>) outs(%x : tensor<2x4xf32>)
         {layout = #rope.layout<interleaved>, rotary_dim = 2 : i64} -> tensor<2x4xf32>
  %uy = tensor.cast %y : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%uy) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}-1.1426{{[0-9]}}, 1.9220{{[0-9]}}, 3, 4],
  // CHECK-NEXT: [-2.2347{{[0-9]}}, 0.077003{{[0-9]}}, 3, 4]]
  %ux = tensor.cast %x : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%ux) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}1, 2, 3, 4],
  // CHECK-NEXT: [1, 2, 3, 4]]
  return
}
