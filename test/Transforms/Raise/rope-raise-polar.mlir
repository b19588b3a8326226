// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s

// Meta's complex spelling as a whole model exports it (llama4_text in the
// zoo): freqs_cis = torch.polar(ones_like(freqs), freqs) computed in-graph
// (one generic: complex.create(r * cos(a), r * sin(a)) with r a splat
// constant), q viewed as complex by a gathering generic that reads lanes 0
// and 1 of the [S, H, D/2, 2] reshape of a matmul, a complex multiply, and
// view_as_real (select on the lane index) collapsed back to [S, H, D]. The
// two lane reads of the reshape are one rotated tensor whose channels are
// the row-major pairs (i, lane): the rotation is interleaved, and rope.apply
// rotates the reshape with its pair dims collapsed. S = 4, H = 2, D = 8;
// inv_freq is the f32 rounding of 10000^(-2i/8).

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tok3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#in5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// CHECK-LABEL: func.func @polar(
// CHECK-SAME: %[[Q:.*]]: tensor<4x16xf32>, %[[P:.*]]: tensor<1x4xi64>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2, 3, 4]] output_shape [1, 4, 2, 4, 2]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x2x4x2xf32> into tensor<1x4x2x8xf32>
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x2x8xf32>)
// CHECK: %[[R:.*]] = rope.apply ins(%[[X]] : tensor<1x4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x4x2x8xf32>)
// CHECK-SAME: {freqs = #rope.default<>, layout = #rope.layout<interleaved>, token_dims = array<i64: 1>}
// CHECK-NOT: complex.mul
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
func.func @polar(%q: tensor<4x16xf32>, %pos: tensor<1x4xi64>) -> tensor<1x4x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ones = arith.constant dense<1.000000e+00> : tensor<1x4x4xf32>
  %inv = arith.constant dense<[1.0, 0.100000001, 0.00999999977, 0.00100000005]> : tensor<4xf32>
  %pe = tensor.expand_shape %pos [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xi64> into tensor<1x4x1xi64>
  %pf0 = tensor.empty() : tensor<1x4x1xf32>
  %pf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pe : tensor<1x4x1xi64>) outs(%pf0 : tensor<1x4x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x4x1xf32>
  %a0 = tensor.empty() : tensor<1x4x4xf32>
  %angle = linalg.generic {indexing_maps = [#tok3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pf, %inv : tensor<1x4x1xf32>, tensor<4xf32>) outs(%a0 : tensor<1x4x4xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %m = arith.mulf %in, %f : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4xf32>
  %fc0 = tensor.empty() : tensor<1x4x4xcomplex<f32>>
  %freqs_cis = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ones, %angle : tensor<1x4x4xf32>, tensor<1x4x4xf32>) outs(%fc0 : tensor<1x4x4xcomplex<f32>>) {
  ^bb0(%r: f32, %a: f32, %out: complex<f32>):
    %cos = math.cos %a : f32
    %sin = math.sin %a : f32
    %re = arith.mulf %r, %cos : f32
    %im = arith.mulf %r, %sin : f32
    %z = complex.create %re, %im : complex<f32>
    linalg.yield %z : complex<f32>
  } -> tensor<1x4x4xcomplex<f32>>
  %qe = tensor.expand_shape %q [[0, 1], [2, 3, 4]] output_shape [1, 4, 2, 4, 2] : tensor<4x16xf32> into tensor<1x4x2x4x2xf32>
  %qc0 = tensor.empty() : tensor<1x4x2x4xcomplex<f32>>
  %qc = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%qc0 : tensor<1x4x2x4xcomplex<f32>>) {
  ^bb0(%out: complex<f32>):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %lo = tensor.extract %qe[%c0, %i1, %i2, %i3, %c0] : tensor<1x4x2x4x2xf32>
    %hi = tensor.extract %qe[%c0, %i1, %i2, %i3, %c1] : tensor<1x4x2x4x2xf32>
    %z = complex.create %lo, %hi : complex<f32>
    linalg.yield %z : complex<f32>
  } -> tensor<1x4x2x4xcomplex<f32>>
  %fe = tensor.expand_shape %freqs_cis [[0], [1], [2, 3]] output_shape [1, 4, 1, 4] : tensor<1x4x4xcomplex<f32>> into tensor<1x4x1x4xcomplex<f32>>
  %prod = linalg.generic {indexing_maps = [#id4, #bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qc, %fe : tensor<1x4x2x4xcomplex<f32>>, tensor<1x4x1x4xcomplex<f32>>) outs(%qc0 : tensor<1x4x2x4xcomplex<f32>>) {
  ^bb0(%a: complex<f32>, %b: complex<f32>, %out: complex<f32>):
    %m = complex.mul %a, %b : complex<f32>
    linalg.yield %m : complex<f32>
  } -> tensor<1x4x2x4xcomplex<f32>>
  %r0 = tensor.empty() : tensor<1x4x2x4x2xf32>
  %real = linalg.generic {indexing_maps = [#in5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%prod : tensor<1x4x2x4xcomplex<f32>>) outs(%r0 : tensor<1x4x2x4x2xf32>) {
  ^bb0(%z: complex<f32>, %out: f32):
    %re = complex.re %z : complex<f32>
    %im = complex.im %z : complex<f32>
    %lane = linalg.index 4 : index
    %first = arith.cmpi eq, %lane, %c0 : index
    %v = arith.select %first, %re, %im : f32
    linalg.yield %v : f32
  } -> tensor<1x4x2x4x2xf32>
  %y = tensor.collapse_shape %real [[0], [1], [2], [3, 4]] : tensor<1x4x2x4x2xf32> into tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}

// Negatives: each RUN line changes one thing (in the IR, not in these
// comments), and the rotation is not raised.
//
// A conjugated angle (freqs_cis.conj(): im = -r * sin) is the inverse
// rotation, not this one.
// RUN: sed '/^\/\//!s/%z = complex.create %re, %im : complex<f32>/%imn = arith.negf %im : f32\n    %z = complex.create %re, %imn : complex<f32>/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=CONJ
// CONJ: remark: rope-raise: not raised: cos/sin are not proven
// CONJ-NOT: rope.apply
//
// A magnitude that is not one constant: polar of a table of radii.
// RUN: sed '/^\/\//!s/%ones = arith.constant dense<1.000000e+00> : tensor<1x4x4xf32>/%ones = arith.constant dense<[[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 2.0]]]> : tensor<1x4x4xf32>/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=RADII
// RADII: remark: rope-raise: not raised: cos/sin are not proven
// RADII-NOT: rope.apply
//
// The lanes swapped in view_as_complex (re from lane 1, im from lane 0):
// the pairs are (x[2i+1], x[2i]), which rope.apply does not rotate.
// RUN: sed -e '/^\/\//!s/%lo = tensor.extract %qe\[%c0, %i1, %i2, %i3, %c0\]/%lo = tensor.extract %qe[%c0, %i1, %i2, %i3, %c1]/' \
// RUN:     -e '/^\/\//!s/%hi = tensor.extract %qe\[%c0, %i1, %i2, %i3, %c1\]/%hi = tensor.extract %qe[%c0, %i1, %i2, %i3, %c0]/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: remark: rope-raise: not raised:
// LANES-NOT: rope.apply
//
// One frequency of inv_freq's table negated in the angle.
// RUN: sed '/^\/\//!s/dense<\[1.0, 0.100000001, 0.00999999977, 0.00100000005\]>/dense<[1.0, -0.100000001, 0.00999999977, 0.00100000005]>/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=FREQ
// FREQ: remark: rope-raise: not raised: a frequency is negative or not finite
// FREQ-NOT: rope.apply
