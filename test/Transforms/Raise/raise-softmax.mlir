// RUN: rope-opt %s --rope-raise-softmax -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-raise-softmax="remarks=true" -split-input-file -verify-diagnostics -o /dev/null

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>

// What linalg.softmax's own decomposition produces (rope-decompose-aggregates,
// upstream's decomposeOperation): maxnumf from NaN, exp(x - max) in one
// generic, the sum, the division. Raised back; nothing else is left.
// CHECK-LABEL: func.func @upstream_decomposition(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<2x4x8xf32>
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<2x4x8xf32>
//       CHECK:   %[[P:.*]] = linalg.softmax dimension(2) ins(%[[X]] : tensor<2x4x8xf32>) outs(%[[E]] : tensor<2x4x8xf32>)
//   CHECK-NOT:   linalg.generic
//   CHECK-NOT:   linalg.fill
//       CHECK:   return %[[P]]
func.func @upstream_decomposition(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %r = tensor.empty() : tensor<2x4xf32>
  %nan = arith.constant 0xFFC00000 : f32
  %minit = linalg.fill ins(%nan : f32) outs(%r : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%minit : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p : tensor<2x4x8xf32>) outs(%sinit : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %s : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.divf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// The frontend form (torch-mlir, StableHLO): reduce max from -inf,
// broadcast, subtract, exp, reduce sum, broadcast, divide, as named ops.
// CHECK-LABEL: func.func @frontend(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x8xf32>
//       CHECK:   %[[P:.*]] = linalg.softmax dimension(1) ins(%[[X]] : tensor<4x8xf32>)
//   CHECK-NOT:   linalg.reduce
//   CHECK-NOT:   linalg.broadcast
//       CHECK:   return %[[P]]
func.func @frontend(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// Over dim 0, as generics split differently: the max from the lowest float
// (accumulator first), a broadcasting copy, the subtraction and the exp in
// two generics, and the division recomputing exp(x - max) itself while the
// sum reads a separate exp: the same elements, so still a softmax.
// CHECK-LABEL: func.func @split_generics_dim0(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<8x4xf32>
//       CHECK:   %[[P:.*]] = linalg.softmax dimension(0) ins(%[[X]] : tensor<8x4xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[P]]
func.func @split_generics_dim0(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%lowest : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %mb = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %mb : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<8x4xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<8x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%p : tensor<8x4xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %m, %s : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %c : f32
    linalg.yield %2 : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Left alone: the max is over the other dim than the sum.
// CHECK-LABEL: func.func @max_over_other_dim(
//   CHECK-NOT:   linalg.softmax
func.func @max_over_other_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r0 = tensor.empty() : tensor<8xf32>
  %r1 = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<8xf32>) dimensions = [0]
  %mb = linalg.broadcast ins(%m : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: the row max is not of x over the dim the sum reduces}}
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Left alone: the max of x is subtracted from another tensor.
// CHECK-LABEL: func.func @sub_of_other_tensor(
//   CHECK-NOT:   linalg.softmax
func.func @sub_of_other_tensor(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%z, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: the row max is not of x over the dim the sum reduces}}
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Left alone: divided by the sum of another tensor's exp.
// CHECK-LABEL: func.func @sum_of_other_tensor(
//   CHECK-NOT:   linalg.softmax
func.func @sum_of_other_tensor(%x: tensor<4x8xf32>, %q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%q : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: the divisor is not the sum of the numerator}}
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Left alone: x / sum(x) (a normalization, no exp), and a max that is also
// returned (raising would compute it twice).
// CHECK-LABEL: func.func @not_raised(
//   CHECK-NOT:   linalg.softmax
func.func @not_raised(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %n = linalg.reduce { arith.addf } ins(%x : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %nb = linalg.broadcast ins(%n : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: the numerator is not an exp}}
  %normalized = linalg.div ins(%x, %nb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>

  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{not raised to linalg.softmax: it has users outside the softmax}}
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %normalized, %y, %m : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Left alone: a division that is not by a row sum (silently), and a max
// from 0 (not its identity: the max of a negative row would be 0).
// CHECK-LABEL: func.func @not_softmax_shaped(
//   CHECK-NOT:   linalg.softmax
func.func @not_softmax_shaped(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %q = linalg.div ins(%x, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %minit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: the exp is not of x minus a row max}}
  %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %q, %y : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// torch-mlir's keepdim spelling: the row max and row sum are 4x1 tensors
// written and read through maps with a constant 0, not broadcast ops. The
// reader compares what the elements compute, so it is the same softmax;
// the chain goes, its fills with it.
#kd_id = affine_map<(d0, d1) -> (d0, d1)>
#kd_row = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @keepdim(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x8xf32>
//       CHECK:   %[[P:.*]] = linalg.softmax dimension(1) ins(%[[X]] : tensor<4x8xf32>)
//   CHECK-NOT:   linalg.generic
//   CHECK-NOT:   linalg.fill
//       CHECK:   return %[[P]]
func.func @keepdim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4x1xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4x1xf32>) -> tensor<4x1xf32>
  %m = linalg.generic {indexing_maps = [#kd_id, #kd_row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  %p = linalg.generic {indexing_maps = [#kd_id, #kd_row, #kd_id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [#kd_id, #kd_row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [#kd_id, #kd_row, #kd_id], iterator_types = ["parallel", "parallel"]} ins(%p, %s : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.divf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Left alone: the softmax is of x transposed (every read of x goes through
// a transposing map), which linalg.softmax of a 4x8 x cannot say.
#tr_id = affine_map<(d0, d1) -> (d0, d1)>
#tr_t = affine_map<(d0, d1) -> (d1, d0)>
#tr_row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @transposed_input(
//   CHECK-NOT:   linalg.softmax
func.func @transposed_input(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#tr_t, #tr_row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x4xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#tr_t, #tr_row, #tr_id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  // expected-remark @+1 {{not raised to linalg.softmax: x is not a tensor read element for element}}
  %y = linalg.generic {indexing_maps = [#tr_id, #tr_row, #tr_id], iterator_types = ["parallel", "parallel"]} ins(%p, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.divf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The keepdim row as a reshape: linalg.reduce, then tensor.expand_shape to
// 4x1, read through constant-0 maps. The views go with the chain.
#kx_id = affine_map<(d0, d1) -> (d0, d1)>
#kx_row = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @keepdim_expand(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<4x8xf32>
//       CHECK:   %[[P:.*]] = linalg.softmax dimension(1) ins(%[[X]] : tensor<4x8xf32>)
//   CHECK-NOT:   tensor.expand_shape
//   CHECK-NOT:   linalg.reduce
//       CHECK:   return %[[P]]
func.func @keepdim_expand(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) dimensions = [1]
  %mk = tensor.expand_shape %m [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %p = linalg.generic {indexing_maps = [#kx_id, #kx_row, #kx_id], iterator_types = ["parallel", "parallel"]} ins(%x, %mk : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) dimensions = [1]
  %sk = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [#kx_id, #kx_row, #kx_id], iterator_types = ["parallel", "parallel"]} ins(%p, %sk : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.divf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#sk_id = affine_map<(b, m, n) -> (b, m, n)>
#sk_row = affine_map<(b, m, n) -> (b, m)>
#sk_id4 = affine_map<(b, m, n, r) -> (b, m, n, r)>
#sk_out4 = affine_map<(b, m, n, r) -> (b, m, n)>
// Left alone: the divisor is read by the key too, s[b, m, n] = sum_r e[b, m,
// n] = 8 e[b, m, n], so p = e / s = 1/8 is no softmax. Renaming r to the key
// and comparing the summand with the numerator alone would accept it.
// CHECK-LABEL: func.func @sum_read_by_key(
//   CHECK-NOT:   linalg.softmax
func.func @sum_read_by_key(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %r = tensor.empty() : tensor<2x4xf32>
  %nan = arith.constant 0xFFC00000 : f32
  %minit = linalg.fill ins(%nan : f32) outs(%r : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.generic {indexing_maps = [#sk_id, #sk_row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%minit : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [#sk_id, #sk_row, #sk_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x8xf32>
  %eb = tensor.empty() : tensor<2x4x8x8xf32>
  %pb = linalg.broadcast ins(%p : tensor<2x4x8xf32>) outs(%eb : tensor<2x4x8x8xf32>) dimensions = [3]
  %zero = arith.constant 0.0 : f32
  %sinit = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.generic {indexing_maps = [#sk_id4, #sk_out4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%pb : tensor<2x4x8x8xf32>) outs(%sinit : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8xf32>
  // expected-remark @+1 {{not raised to linalg.softmax: the divisor is not the sum of the numerator over a dim of the result}}
  %y = linalg.generic {indexing_maps = [#sk_id, #sk_id, #sk_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %s : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.divf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
