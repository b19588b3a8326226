// RUN: rope-opt %s -split-input-file -rope-outline-repeats=min-ops=1 | FileCheck %s
// RUN: rope-opt %s -split-input-file -rope-outline-repeats | FileCheck %s --check-prefix=SMALL

// Four layers, each a loop over the previous layer's buffer and its own
// weights: the last three (the first reads the argument and frees nothing)
// become one function, called once per layer with the layer's input and
// global; the index constants are cloned into it. Below min-ops (64 by
// default) the layers stay inline.

memref.global "private" constant @w0 : memref<4xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<4xf32> = dense<2.0>
memref.global "private" constant @w2 : memref<4xf32> = dense<3.0>
memref.global "private" constant @w3 : memref<4xf32> = dense<4.0>

// CHECK-LABEL: func.func @layers(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>)
// CHECK:         %[[A0:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           memref.load %[[X]]
// CHECK:         %[[W1:.*]] = memref.get_global @w1
// CHECK-NEXT:    %[[A1:.*]] = call @layers__repeat(%[[A0]], %[[W1]]) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT:    %[[W2:.*]] = memref.get_global @w2
// CHECK-NEXT:    %[[A2:.*]] = call @layers__repeat(%[[A1]], %[[W2]])
// CHECK-NEXT:    %[[W3:.*]] = memref.get_global @w3
// CHECK-NEXT:    %[[A3:.*]] = call @layers__repeat(%[[A2]], %[[W3]])
// CHECK-NEXT:    return %[[A3]]
// CHECK:       func.func private @layers__repeat(%[[IN:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>) -> memref<4xf32> attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:     arith.constant 0 : index
// CHECK-DAG:     arith.constant 4 : index
// CHECK-DAG:     arith.constant 1 : index
// CHECK:         %[[OUT:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           memref.load %[[IN]]
// CHECK:           memref.load %[[W]]
// CHECK:           arith.mulf
// CHECK:           memref.store {{.*}}, %[[OUT]]
// CHECK:         memref.dealloc %[[IN]]
// CHECK-NEXT:    return %[[OUT]]
// CHECK-NOT:   func.func
// SMALL-LABEL: func.func @layers(
// SMALL-NOT:     call
func.func @layers(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %w0 = memref.get_global @w0 : memref<4xf32>
  %a0 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = memref.load %w0[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a0[%i] : memref<4xf32>
  }
  %w1 = memref.get_global @w1 : memref<4xf32>
  %a1 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a0[%i] : memref<4xf32>
    %w = memref.load %w1[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a1[%i] : memref<4xf32>
  }
  memref.dealloc %a0 : memref<4xf32>
  %w2 = memref.get_global @w2 : memref<4xf32>
  %a2 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a1[%i] : memref<4xf32>
    %w = memref.load %w2[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a2[%i] : memref<4xf32>
  }
  memref.dealloc %a1 : memref<4xf32>
  %w3 = memref.get_global @w3 : memref<4xf32>
  %a3 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a2[%i] : memref<4xf32>
    %w = memref.load %w3[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a3[%i] : memref<4xf32>
  }
  memref.dealloc %a2 : memref<4xf32>
  return %a3 : memref<4xf32>
}

// -----

// The third layer multiplies the other way round: its loop reads the
// weight where the others read the input, so it is not the others' code
// and stays inline between the calls of the second and the fourth, reading
// the one's result and feeding the other.

memref.global "private" constant @w0 : memref<4xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<4xf32> = dense<2.0>
memref.global "private" constant @w2 : memref<4xf32> = dense<3.0>
memref.global "private" constant @w3 : memref<4xf32> = dense<4.0>

// CHECK-LABEL: func.func @swapped(
// CHECK:         %[[A1:.*]] = call @swapped__repeat(
// CHECK:         %[[W2:.*]] = memref.get_global @w2
// CHECK:         %[[A2:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           %[[V:.*]] = memref.load %[[A1]]
// CHECK:           %[[W:.*]] = memref.load %[[W2]]
// CHECK:           arith.mulf %[[W]], %[[V]]
// CHECK:         memref.dealloc %[[A1]]
// CHECK:         %[[W3:.*]] = memref.get_global @w3
// CHECK-NEXT:    %[[A3:.*]] = call @swapped__repeat(%[[A2]], %[[W3]])
// CHECK-NEXT:    return %[[A3]]
// CHECK:       func.func private @swapped__repeat(
func.func @swapped(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %w0 = memref.get_global @w0 : memref<4xf32>
  %a0 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = memref.load %w0[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a0[%i] : memref<4xf32>
  }
  %w1 = memref.get_global @w1 : memref<4xf32>
  %a1 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a0[%i] : memref<4xf32>
    %w = memref.load %w1[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a1[%i] : memref<4xf32>
  }
  memref.dealloc %a0 : memref<4xf32>
  %w2 = memref.get_global @w2 : memref<4xf32>
  %a2 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a1[%i] : memref<4xf32>
    %w = memref.load %w2[%i] : memref<4xf32>
    %m = arith.mulf %w, %v : f32
    memref.store %m, %a2[%i] : memref<4xf32>
  }
  memref.dealloc %a1 : memref<4xf32>
  %w3 = memref.get_global @w3 : memref<4xf32>
  %a3 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a2[%i] : memref<4xf32>
    %w = memref.load %w3[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a3[%i] : memref<4xf32>
  }
  memref.dealloc %a2 : memref<4xf32>
  return %a3 : memref<4xf32>
}

// -----

// The second and third layers add a constant each, not the same one: they
// are not one function, so nothing is outlined.

memref.global "private" constant @w0 : memref<4xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<4xf32> = dense<2.0>
memref.global "private" constant @w2 : memref<4xf32> = dense<3.0>
memref.global "private" constant @w3 : memref<4xf32> = dense<4.0>

// CHECK-LABEL: func.func @constants(
// CHECK-NOT:     call
// CHECK-NOT:   func.func private @constants__repeat
func.func @constants(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %w0 = memref.get_global @w0 : memref<4xf32>
  %a0 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = memref.load %w0[%i] : memref<4xf32>
    %m = arith.mulf %v, %w : f32
    memref.store %m, %a0[%i] : memref<4xf32>
  }
  %w1 = memref.get_global @w1 : memref<4xf32>
  %a1 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a0[%i] : memref<4xf32>
    %w = memref.load %w1[%i] : memref<4xf32>
    %m = arith.addf %v, %two : f32
    memref.store %m, %a1[%i] : memref<4xf32>
  }
  memref.dealloc %a0 : memref<4xf32>
  %w2 = memref.get_global @w2 : memref<4xf32>
  %a2 = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a1[%i] : memref<4xf32>
    %w = memref.load %w2[%i] : memref<4xf32>
    %m = arith.addf %v, %three : f32
    memref.store %m, %a2[%i] : memref<4xf32>
  }
  memref.dealloc %a1 : memref<4xf32>
  return %a2 : memref<4xf32>
}

// -----

// Each layer writes a stack buffer the next layer reads: wherever a layer
// starts, a stack value would leave the function it became (a dangling
// pointer), so nothing is outlined.

// CHECK-LABEL: func.func @stack(
// CHECK-NOT:     call
func.func @stack(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s0 = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %s0[%i] : memref<4xf32>
  }
  %s1 = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %s0[%i] : memref<4xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %s1[%i] : memref<4xf32>
  }
  %s2 = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %s1[%i] : memref<4xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %s2[%i] : memref<4xf32>
  }
  %s3 = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %s2[%i] : memref<4xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %s3[%i] : memref<4xf32>
  }
  %s4 = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %s3[%i] : memref<4xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %s4[%i] : memref<4xf32>
  }
  %out = memref.alloc() : memref<4xf32>
  memref.copy %s4, %out : memref<4xf32> to memref<4xf32>
  return %out : memref<4xf32>
}
