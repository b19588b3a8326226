// RUN: rope-opt %s --rope-check-allocation-sizes -split-input-file -verify-diagnostics | FileCheck %s --enable-var-scope

// A dynamic size is checked once, before the allocation: non-negative, and
// size * 4 bytes must not wrap (size <= INT64_MAX / 4).
// CHECK-LABEL: func.func @dynamic(
//  CHECK-SAME:   %[[N:.*]]: index)
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[MAX:.*]] = arith.constant 9223372036854775807 : index
//   CHECK-DAG:   %[[FOUR:.*]] = arith.constant 4 : index
//       CHECK:   %[[NONNEG:.*]] = arith.cmpi sge, %[[N]], %[[ZERO]]
//       CHECK:   %[[LIMIT:.*]] = arith.divui %[[MAX]], %[[FOUR]]
//       CHECK:   %[[FITS:.*]] = arith.cmpi ule, %[[N]], %[[LIMIT]]
//       CHECK:   cf.assert %{{.*}}, "out of memory: allocating memref<?xf32>: a size is negative or the byte count overflows int64
//  CHECK-SAME:   {rope.trap = "out-of-memory"}
//       CHECK:   memref.alloc(%[[N]]) : memref<?xf32>
func.func @dynamic(%n: index) -> f32 {
  %b = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0] : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  return %v : f32
}

// -----

// Static allocations need no run-time check.
// CHECK-LABEL: func.func @static(
//   CHECK-NOT:   cf.assert
//       CHECK:   memref.alloc() : memref<16x4xf32>
func.func @static() -> f32 {
  %b = memref.alloc() : memref<16x4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0, %c0] : memref<16x4xf32>
  memref.dealloc %b : memref<16x4xf32>
  return %v : f32
}

// -----

// Two dynamic sizes: the second is bounded by what the first left.
// CHECK-LABEL: func.func @two(
//  CHECK-SAME:   %[[A:.*]]: index, %[[B:.*]]: index)
//       CHECK:   arith.cmpi ule, %[[A]],
//       CHECK:   %[[FACTOR:.*]] = arith.maxsi %[[A]],
//       CHECK:   %[[BYTES:.*]] = arith.muli %{{.*}}, %[[FACTOR]]
//       CHECK:   arith.divui %{{.*}}, %[[BYTES]]
//       CHECK:   arith.cmpi ule, %[[B]],
//       CHECK:   cf.assert
//       CHECK:   memref.alloc(%[[A]], %[[B]]) : memref<?x8x?xf64>
func.func @two(%a: index, %b: index) -> f64 {
  %m = memref.alloc(%a, %b) : memref<?x8x?xf64>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0, %c0, %c0] : memref<?x8x?xf64>
  memref.dealloc %m : memref<?x8x?xf64>
  return %v : f64
}

// -----

// A static byte size past int64 is refused outright.
func.func @huge() {
  // expected-error @+1 {{allocates 'memref<4611686018427387904xf32>', whose byte size overflows int64}}
  %b = memref.alloc() : memref<4611686018427387904xf32>
  memref.dealloc %b : memref<4611686018427387904xf32>
  return
}
