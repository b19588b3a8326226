// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Dynamic token dims: the shapes are only known at run time. The rotations
// live in functions taking dynamically shaped arguments (so that no static
// shape can be propagated into them) and print their results.

func.func private @printMemrefF32(tensor<*xf32>)

// [B, S, H, D] = [?, ?, 1, 4], half layout, P = 2 of 4, index offset.
func.func @rotate_offset(%x: tensor<?x?x1x4xf32>, %o: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x1x4xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x1x4xf32>
  %init = tensor.empty(%b, %s) : tensor<?x?x1x4xf32>
  %y = rope.apply ins(%x : tensor<?x?x1x4xf32>) offset(%o : index) outs(%init : tensor<?x?x1x4xf32>)
         {rotary_dim = 2 : i64} -> tensor<?x?x1x4xf32>
  %u = tensor.cast %y : tensor<?x?x1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// [T, D] = [?, 2] with dynamic positions and a dynamic-length cache gathered
// by position.
func.func @rotate_cache(%x: tensor<?x2xf32>, %p: tensor<?xi32>, %c: tensor<?x1xf32>, %s: tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2xf32>
  %init = tensor.empty(%t) : tensor<?x2xf32>
  %y = rope.apply ins(%x : tensor<?x2xf32>) positions(%p : tensor<?xi32>) cache(%c, %s : tensor<?x1xf32>, tensor<?x1xf32>)
         outs(%init : tensor<?x2xf32>) -> tensor<?x2xf32>
  %u = tensor.cast %y : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  // Offset 1: positions 1, 2 in the row; channels 2, 3 pass through.
  %xs = arith.constant dense<[[[[1.0, 0.0, 3.0, 4.0]], [[1.0, 0.0, 5.0, 6.0]]]]> : tensor<1x2x1x4xf32>
  %x = tensor.cast %xs : tensor<1x2x1x4xf32> to tensor<?x?x1x4xf32>
  %o = arith.constant 1 : index
  call @rotate_offset(%x, %o) : (tensor<?x?x1x4xf32>, index) -> ()
  // CHECK: sizes = [1, 2, 1, 4]
  // CHECK-NEXT: {{\[\[\[\[}}0.54030{{[0-9]}}, 0.84147{{[0-9]}}, 3, 4]],
  // CHECK-NEXT: {{\[\[}}-0.41614{{[0-9]}}, 0.90929{{[0-9]}}, 5, 6]]]]

  // The same function on [2, 3, 1, 4] with offset 0: positions 0, 1, 2.
  %xs3 = arith.constant dense<1.0> : tensor<2x3x1x4xf32>
  %x3 = tensor.cast %xs3 : tensor<2x3x1x4xf32> to tensor<?x?x1x4xf32>
  %o0 = arith.constant 0 : index
  call @rotate_offset(%x3, %o0) : (tensor<?x?x1x4xf32>, index) -> ()
  // (1, 1) at position p -> (cos p - sin p, cos p + sin p).
  // CHECK: sizes = [2, 3, 1, 4]
  // CHECK-NEXT: {{\[\[\[\[}}1, 1, 1, 1]],
  // CHECK-NEXT: {{\[\[}}-0.30116{{[0-9]}}, 1.3817{{[0-9]}}, 1, 1]],
  // CHECK-NEXT: {{\[\[}}-1.3254{{[0-9]}}, 0.49315{{[0-9]}}, 1, 1]]],
  // CHECK-NEXT: {{\[\[\[}}1, 1, 1, 1]],
  // CHECK-NEXT: {{\[\[}}-0.30116{{[0-9]}}, 1.3817{{[0-9]}}, 1, 1]],
  // CHECK-NEXT: {{\[\[}}-1.3254{{[0-9]}}, 0.49315{{[0-9]}}, 1, 1]]]]

  // Cache rows (c, s) = (1, 0), (0.5, 0.75); x = (1, 2) -> (c - 2s, 2c + s);
  // position 2 is out of range of the 2-row cache.
  %xs2 = arith.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<3x2xf32>
  %x2 = tensor.cast %xs2 : tensor<3x2xf32> to tensor<?x2xf32>
  %ps = arith.constant dense<[1, 0, 2]> : tensor<3xi32>
  %p = tensor.cast %ps : tensor<3xi32> to tensor<?xi32>
  %cs = arith.constant dense<[[1.0], [0.5]]> : tensor<2x1xf32>
  %ss = arith.constant dense<[[0.0], [0.75]]> : tensor<2x1xf32>
  %c = tensor.cast %cs : tensor<2x1xf32> to tensor<?x1xf32>
  %s = tensor.cast %ss : tensor<2x1xf32> to tensor<?x1xf32>
  call @rotate_cache(%x2, %p, %c, %s) : (tensor<?x2xf32>, tensor<?xi32>, tensor<?x1xf32>, tensor<?x1xf32>) -> ()
  // CHECK: sizes = [3, 2]
  // CHECK-NEXT: {{\[\[}}-1, 1.75],
  // CHECK-NEXT: [1, 2],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}]]
  return
}
