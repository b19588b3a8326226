// RUN: rope-opt %s --rope-emulate-bf16-products -split-input-file -verify-diagnostics | FileCheck %s --enable-var-scope

// AMX tiles as 2-D vectors: a load is one row load per tile row (the view's
// own row stride), tdpbf16ps f32 FMAs of the widened bf16 products, the
// even product of each pair first, a store one row store per tile row.
// CHECK-LABEL: func.func @tile(
//  CHECK-SAME:     %[[A:.*]]: memref<16x32xbf16>, %[[B:.*]]: memref<16x32xbf16>, %[[C:.*]]: memref<16x16xf32>
//   CHECK-NOT:   amx.
//       CHECK:   vector.load %[[A]][%c0, %c0] : memref<16x32xbf16>, vector<32xbf16>
//       CHECK:   %[[C0:.*]] = vector.load %[[C]][%c0, %c0] : memref<16x16xf32>, vector<16xf32>
//       CHECK:   vector.insert %[[C0]], %{{.*}} [0] : vector<16xf32> into vector<16x16xf32>
//       CHECK:   %[[PAIRS:.*]] = vector.extract %{{.*}}[0] : vector<32xbf16> from vector<16x32xbf16>
//       CHECK:   %[[WIDE:.*]] = arith.extf %[[PAIRS]] : vector<32xbf16> to vector<32xf32>
//       CHECK:   %[[EVEN:.*]] = vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
//       CHECK:   %[[ODD:.*]] = vector.shuffle %[[WIDE]], %[[WIDE]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
//       CHECK:   %[[X0:.*]] = vector.extract %[[ROW:.*]][0] : f32 from vector<32xf32>
//       CHECK:   %[[S0:.*]] = vector.broadcast %[[X0]] : f32 to vector<16xf32>
//       CHECK:   %[[F0:.*]] = vector.fma %[[S0]], %[[EVEN]], %{{.*}} : vector<16xf32>
//       CHECK:   %[[X1:.*]] = vector.extract %[[ROW]][1] : f32 from vector<32xf32>
//       CHECK:   %[[S1:.*]] = vector.broadcast %[[X1]] : f32 to vector<16xf32>
//       CHECK:   vector.fma %[[S1]], %[[ODD]], %[[F0]] : vector<16xf32>
//       CHECK:   %[[OUT0:.*]] = vector.extract %{{.*}}[0] : vector<16xf32> from vector<16x16xf32>
//       CHECK:   vector.store %[[OUT0]], %[[C]][%c0, %c0] : memref<16x16xf32>, vector<16xf32>
func.func @tile(%a: memref<16x32xbf16>, %b: memref<16x32xbf16>, %c: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %ta = amx.tile_load %a[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %tb = amx.tile_load %b[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %tc = amx.tile_load %c[%c0, %c0] : memref<16x16xf32> into !amx.tile<16x16xf32>
  %r = amx.tile_mulf %ta, %tb, %tc : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  amx.tile_store %c[%c0, %c0], %r : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// vdpbf16ps: the odd products added first, then the even ones (bitwise the
// instruction's result: python/tests/compiler/test_contractions.py,
// test_emulated_pairs_bitwise).
// CHECK-LABEL: func.func @pairs(
//  CHECK-SAME:     %[[ACC:.*]]: vector<16xf32>, %[[X:.*]]: vector<32xbf16>, %[[Y:.*]]: vector<32xbf16>
//       CHECK:   %[[XW:.*]] = arith.extf %[[X]] : vector<32xbf16> to vector<32xf32>
//       CHECK:   %[[YW:.*]] = arith.extf %[[Y]] : vector<32xbf16> to vector<32xf32>
//       CHECK:   %[[XO:.*]] = vector.shuffle %[[XW]], %[[XW]] [1, 3,
//       CHECK:   %[[YO:.*]] = vector.shuffle %[[YW]], %[[YW]] [1, 3,
//       CHECK:   %[[ODD:.*]] = vector.fma %[[XO]], %[[YO]], %[[ACC]] : vector<16xf32>
//       CHECK:   %[[XE:.*]] = vector.shuffle %[[XW]], %[[XW]] [0, 2,
//       CHECK:   %[[YE:.*]] = vector.shuffle %[[YW]], %[[YW]] [0, 2,
//       CHECK:   %[[R:.*]] = vector.fma %[[XE]], %[[YE]], %[[ODD]] : vector<16xf32>
//       CHECK:   return %[[R]]
func.func @pairs(%acc: vector<16xf32>, %x: vector<32xbf16>, %y: vector<32xbf16>) -> vector<16xf32> {
  %r = x86vector.avx512.dot %acc, %x, %y : vector<32xbf16> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// A tile load with an explicit stride is not emulated: an error, not a
// silently wrong read.
func.func @explicit_stride(%a: memref<512xbf16>, %stride: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{failed to legalize operation 'amx.tile_load'}}
  %ta = amx.tile_load %a[%c0], %stride : memref<512xbf16> into !amx.tile<16x32xbf16>
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  %r = amx.tile_mulf %ta, %ta, %z : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  amx.tile_store %a[%c0], %r, %stride : memref<512xbf16>, !amx.tile<16x16xf32>
  return
}
