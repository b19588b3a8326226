// RUN: rope-opt %s -rope-outline-chunks=max-ops=4 | FileCheck %s

// No cut lets a stack allocation (or a view of it) leave a chunk: the
// alloca, its subview and their uses stay in one chunk.

// The cut with the fewest live values would follow the alloca or its
// subview (max-ops=4: from the second op on); the first allowed is after the
// last use of the view.

// CHECK-LABEL: func.func @stack(
// CHECK-SAME:      %[[X:.*]]: memref<8xf32>, %[[I:.*]]: index)
// CHECK:         %[[B:.*]]:2 = call @stack__chunk0(%[[X]], %[[I]]) : (memref<8xf32>, index) -> (f32, f32)
// CHECK:         call @stack__chunk1(%[[B]]#0, %[[B]]#1)
// CHECK:       func.func private @stack__chunk0(
// CHECK-NEXT:    memref.alloca
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    return
func.func @stack(%x: memref<8xf32>, %i: index) -> f32 {
  %s = memref.alloca() : memref<8xf32>
  %v = memref.subview %s[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %a = memref.load %x[%i] : memref<8xf32>
  memref.store %a, %s[%i] : memref<8xf32>
  %b = memref.load %v[%i] : memref<4xf32, strided<[1]>>
  %c = arith.addf %a, %b : f32
  %d = arith.mulf %c, %c : f32
  %e = arith.addf %d, %c : f32
  %f = arith.mulf %e, %d : f32
  return %f : f32
}
