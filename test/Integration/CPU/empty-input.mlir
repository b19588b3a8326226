// An empty input returns at once, whatever its other sizes: x of shape
// [2^40, 0, 4] has 2^40 tokens and no head; a token loop over it (cos/sin
// per token) would run for hours. The timeout turns such a loop into a
// failure; with the guard (EmptyGuard.h) the call returns in microseconds.
//
// RUN: rope-opt %s --rope-to-llvm-cpu | timeout 60 mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: rope-opt %s --rope-to-llvm-cpu=vectorize=false | timeout 60 mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

// The result's sizes (printMemrefF32 would walk the 2^40 empty rows).
func.func @print_sizes(%y: tensor<?x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %y, %c0 : tensor<?x?x4xf32>
  %h = tensor.dim %y, %c1 : tensor<?x?x4xf32>
  vector.print %t : index
  vector.print %h : index
  return
}

// Computed cos/sin at offset + s (a dynamic scheme: its length is computed
// from the offset and the token count, once per call).
func.func @rotate(%x: tensor<?x?x4xf32>, %o: i64) {
  %y = rope.apply ins(%x : tensor<?x?x4xf32>) offset(%o : i64) outs(%x : tensor<?x?x4xf32>)
         {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 16>}
         -> tensor<?x?x4xf32>
  call @print_sizes(%y) : (tensor<?x?x4xf32>) -> ()
  return
}

// A cos/sin cache gathered at offset + s.
func.func @rotate_cache(%x: tensor<?x?x4xf32>, %o: i64, %c: tensor<?x2xf32>) {
  %y = rope.apply ins(%x : tensor<?x?x4xf32>) offset(%o : i64) cache(%c, %c : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%x : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  call @print_sizes(%y) : (tensor<?x?x4xf32>) -> ()
  return
}

func.func @rotate_cache_values(%x: tensor<?x?x4xf32>, %o: i64, %c: tensor<?x2xf32>) -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c0 : tensor<?x?x4xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x4xf32>
  %init = tensor.empty(%t, %h) : tensor<?x?x4xf32>
  %y = rope.apply ins(%x : tensor<?x?x4xf32>) offset(%o : i64) cache(%c, %c : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%init : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

func.func @main() {
  %tokens = arith.constant 1099511627776 : index
  %c0 = arith.constant 0 : index
  %x = tensor.empty(%tokens, %c0) : tensor<?x?x4xf32>
  %o = arith.constant 0 : i64
  call @rotate(%x, %o) : (tensor<?x?x4xf32>, i64) -> ()
  // CHECK: 1099511627776
  // CHECK-NEXT: 0
  %cs = arith.constant dense<1.0> : tensor<8x2xf32>
  %c = tensor.cast %cs : tensor<8x2xf32> to tensor<?x2xf32>
  call @rotate_cache(%x, %o, %c) : (tensor<?x?x4xf32>, i64, tensor<?x2xf32>) -> ()
  // CHECK-NEXT: 1099511627776
  // CHECK-NEXT: 0

  // Still computed when there is a head.
  %one = arith.constant dense<[[[1.0, 0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0, 0.0]]]> : tensor<2x1x4xf32>
  %x1 = tensor.cast %one : tensor<2x1x4xf32> to tensor<?x?x4xf32>
  %y1 = call @rotate_cache_values(%x1, %o, %c) : (tensor<?x?x4xf32>, i64, tensor<?x2xf32>) -> tensor<?x?x4xf32>
  %u = tensor.cast %y1 : tensor<?x?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 1, 4]
  // CHECK-NEXT: {{\[\[\[}}1, 0, 1, 0]],
  // CHECK-NEXT: {{\[\[}}1, 0, 1, 0]]]
  return
}
