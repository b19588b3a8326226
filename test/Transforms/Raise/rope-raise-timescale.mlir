// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s

// MaxText's RoPE as a JAX Llama exports it through StableHLO (llama_jax in
// the zoo): the frequencies are not multiplied in but divided out,
// angle = position / timescale with timescale = base^(2i/D) computed in the
// graph from an iota (fraction = 2i/D, then powf), and the two halves
// rotated as first * cos - second * sin, second * cos + first * sin. The
// frequency is 1 / timescale; every timescale is 10000^(2i/8) rounded to
// f32, so the op states #rope.default. T = 8 tokens (i32 positions),
// D = 8.

#id1 = affine_map<(d0) -> (d0)>
#tok = affine_map<(d0, d1) -> (d0)>
#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @timescale(
// CHECK-SAME: %[[X:.*]]: tensor<8x8xf32>, %[[P:.*]]: tensor<8xi32>
// CHECK: %[[R:.*]] = rope.apply ins(%[[X]] : tensor<8x8xf32>) positions(%[[P]] : tensor<8xi32>) outs(%{{.*}} : tensor<8x8xf32>) {freqs = #rope.default<>} -> tensor<8x8xf32>
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
func.func @timescale(%x: tensor<8x8xf32>, %p: tensor<8xi32>) -> tensor<8x8xf32> {
  %base = arith.constant 10000.0 : f32
  %two = arith.constant 2.0 : f32
  %dim = arith.constant 8.0 : f32
  %f0 = tensor.empty() : tensor<4xf32>
  %frac = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%f0 : tensor<4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %f2 = arith.mulf %fi, %two : f32
    %fr = arith.divf %f2, %dim : f32
    linalg.yield %fr : f32
  } -> tensor<4xf32>
  %ts = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%frac : tensor<4xf32>) outs(%f0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.powf %base, %in : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %ts : tensor<8xi32>, tensor<4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%pi: i32, %w: f32, %o: f32):
    %qf = arith.sitofp %pi : i32 to f32
    %a = arith.divf %qf, %w : f32
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %cos = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ang : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8x4xf32>
  %sin = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ang : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.sin %a : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %x1 = tensor.extract_slice %x[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %first = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x1, %x2, %cos, %sin : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %v: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %bv = arith.mulf %b, %v : f32
    %r = arith.subf %ac, %bv : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %second = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x2, %x1, %cos, %sin : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %v: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %bv = arith.mulf %b, %v : f32
    %r = arith.addf %ac, %bv : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %y = tensor.concat dim(1) %first, %second : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// Variants and negatives: each RUN line changes one thing (in the IR, not
// in these comments).
//
// Another base (500000): the timescales are 500000^(2i/8) -> its default.
// RUN: sed '/^\/\//!s/%base = arith.constant 10000.0 : f32/%base = arith.constant 500000.0 : f32/' %s \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=BASE
// BASE: rope.apply {{.*}}{freqs = #rope.default<base = 5.000000e+05>}
//
// The positions multiplied by the timescale, not divided: theta is the
// timescale, not base^(-2i/8).
// RUN: sed '/^\/\//!s/%a = arith.divf %qf, %w : f32/%a = arith.mulf %qf, %w : f32/' %s \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=MUL
// MUL: rope.apply {{.*}}{freqs = #rope.table<inv_freq = [1.000000e+00, 1.000000e+01, 1.000000e+02, 1.000000e+03]>}
//
// The timescale divided by the positions (t / p): not an angle of the
// positions; not raised.
// RUN: sed '/^\/\//!s/%a = arith.divf %qf, %w : f32/%a = arith.divf %w, %qf : f32/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=INVERTED
// INVERTED: remark: rope-raise: not raised: cos/sin are not proven
// INVERTED-NOT: rope.apply
//
// One sign: second = second * cos - first * sin.
// RUN: sed '/^\/\//!s/%r = arith.addf %ac, %bv : f32/%r = arith.subf %ac, %bv : f32/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SIGN
// SIGN: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// SIGN-NOT: rope.apply
