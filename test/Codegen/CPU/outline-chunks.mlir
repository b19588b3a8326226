// RUN: rope-opt %s -split-input-file -rope-outline-chunks=max-ops=6 | FileCheck %s
// RUN: rope-opt %s -split-input-file -rope-outline-chunks=max-ops=0 | FileCheck %s --check-prefix=OFF

// Three steps of 3 ops each (alloc, fill-like loop): cut into chunks; the
// values crossing a cut (%a, then %b) are threaded as results and
// arguments, constants are cloned, the argument is passed.

// CHECK-LABEL: func.func @steps(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>) -> memref<4xf32>
// CHECK-NOT:     scf.for
// CHECK:         %[[A:.*]] = call @steps__chunk0(%[[X]]) : (memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT:    %[[B:.*]] = call @steps__chunk1(%[[A]]) : (memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT:    %[[C:.*]] = call @steps__chunk2(%[[A]], %[[B]], %[[X]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT:    call @steps__chunk3(%[[B]]) : (memref<4xf32>) -> ()
// CHECK-NEXT:    return %[[C]]
// CHECK:       func.func private @steps__chunk0(%[[X0:.*]]: memref<4xf32>) -> memref<4xf32> attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[A0:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]]
// CHECK:           memref.load %[[X0]][%[[I]]]
// CHECK:           memref.store {{.*}}, %[[A0]][%[[I]]]
// CHECK:         return %[[A0]]
// CHECK:       func.func private @steps__chunk1(%[[A1:.*]]: memref<4xf32>) -> memref<4xf32>
// CHECK:         %[[B1:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         scf.for
// CHECK:           memref.load %[[A1]]
// CHECK:           memref.store {{.*}}, %[[B1]]
// CHECK:         return %[[B1]]
// CHECK:       func.func private @steps__chunk2(%[[A2:.*]]: memref<4xf32>, %[[B2:.*]]: memref<4xf32>, %[[X2:.*]]: memref<4xf32>) -> memref<4xf32>
// CHECK:         memref.dealloc %[[A2]]
// CHECK:         %[[C2:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         scf.for
// CHECK:           memref.load %[[B2]]
// CHECK:           memref.load %[[X2]]
// CHECK:         return %[[C2]]
// CHECK:       func.func private @steps__chunk3(%[[B3:.*]]: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-NEXT:    memref.dealloc %[[B3]]
// CHECK-NEXT:    return
// OFF-LABEL:   func.func @steps(
// OFF-NOT:       call
func.func @steps(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<4xf32>
  }
  memref.dealloc %a : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    %u = memref.load %x[%i] : memref<4xf32>
    %w = arith.subf %v, %u : f32
    memref.store %w, %c[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  return %c : memref<4xf32>
}

// -----

// A body within max-ops is left alone.

// CHECK-LABEL: func.func @small(
// CHECK-NOT:     call
// CHECK:         return
// CHECK-NOT:   func.func private
func.func @small(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}

