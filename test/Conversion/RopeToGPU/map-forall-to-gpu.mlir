// RUN: rope-opt %s --rope-map-forall-to-gpu=block-size=8 -split-input-file -verify-diagnostics | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-map-forall-to-gpu=block-size=8 --convert-parallel-loops-to-gpu -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=LAUNCH --enable-var-scope

// An outermost bufferized scf.forall becomes two scf.parallel loops mapped
// to blockIdx.x and threadIdx.x (its 4 x 5 iterations collapsed row-major,
// tiled by 8, a guard for the tail), each iteration one thread: buffers it
// allocates become allocas at the start of the thread's body (hoisted out
// of the inner scf.for), its copies linalg.copy, and the global it reads is
// read inside. convert-parallel-loops-to-gpu then makes the launch.

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @rows(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: memref<4x5x4xf32>
//       CHECK:   %[[N:.*]] = arith.constant 20 : index
//       CHECK:   scf.parallel (%[[B:[a-z0-9]+]]) = (%{{.*}}) to (%[[N]]) step (%[[BLOCK:[a-z0-9_]+]]) {
//       CHECK:     scf.parallel (%[[T:[a-z0-9]+]]) = (%{{.*}}) to (%[[BLOCK]]) step (%{{.*}}) {
//       CHECK:       %[[TABLE:.*]] = memref.get_global @table : memref<4xf32>
//       CHECK:       %[[TMP:.*]] = memref.alloca() : memref<4xf32>
//       CHECK:       %[[ACC:.*]] = memref.alloca() : memref<4xf32>
//       CHECK:       %[[ROW:.*]] = arith.addi %[[T]], %[[B]] : index
//       CHECK:       %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
//       CHECK:       scf.if
//       CHECK:         %[[J:.*]] = arith.remsi %[[ROW]], %c5
//       CHECK:         %[[I:.*]] = arith.divsi %[[ROW]], %c5
//       CHECK:         memref.subview %[[X]][%[[I]], %[[J]], 0]
//       CHECK:         linalg.copy ins(%{{.*}} : memref<4xf32, strided<[1], offset: ?>>) outs(%[[ACC]] : memref<4xf32>)
//       CHECK:         scf.for
//   CHECK-NOT:           memref.alloc
//       CHECK:           linalg.mul ins(%[[ACC]], %[[TABLE]] : memref<4xf32>, memref<4xf32>) outs(%[[TMP]] : memref<4xf32>)
//       CHECK:           linalg.copy ins(%[[TMP]] : memref<4xf32>) outs(%[[ACC]] : memref<4xf32>)
//       CHECK:     } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
//       CHECK:   } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}

// LAUNCH-LABEL: func.func @rows(
//       LAUNCH:   gpu.launch blocks(%[[BX:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID:[a-z0-9_]+]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS:[a-z0-9_]+]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
//       LAUNCH:     affine.apply #{{.*}}(%[[BX]])
//       LAUNCH:     affine.apply #{{.*}}(%[[TX]])
//       LAUNCH:     memref.get_global @table
//       LAUNCH:     memref.alloca() : memref<4xf32>
//       LAUNCH:     memref.alloca() : memref<4xf32>
//       LAUNCH:     scf.if
//   LAUNCH-NOT:   scf.parallel
func.func @rows(%x: memref<4x5x4xf32>, %y: memref<4x5x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.get_global @table : memref<4xf32>
  scf.forall (%i, %j) in (4, 5) {
    %row = memref.subview %x[%i, %j, 0] [1, 1, 4] [1, 1, 1] : memref<4x5x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %out = memref.subview %y[%i, %j, 0] [1, 1, 4] [1, 1, 1] : memref<4x5x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %acc = memref.alloc() : memref<4xf32>
    memref.copy %row, %acc : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
    scf.for %k = %c0 to %c4 step %c1 {
      %tmp = memref.alloc() : memref<4xf32>
      linalg.mul ins(%acc, %t : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>)
      memref.copy %tmp, %acc : memref<4xf32> to memref<4xf32>
    }
    memref.copy %acc, %out : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// Fewer iterations than the block size: the block is the iteration count,
// and no guard is needed.
// CHECK-LABEL: func.func @exact(
//       CHECK:   scf.parallel
//       CHECK:     scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
//   CHECK-NOT:     scf.if
//       CHECK:       memref.store
// LAUNCH-LABEL: func.func @exact(
//       LAUNCH:   gpu.launch
//   LAUNCH-NOT:     scf.if
//       LAUNCH:     memref.store
func.func @exact(%y: memref<6xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (6) {
    memref.store %one, %y[%i] : memref<6xf32>
  }
  return
}

// -----

// A dynamic trip count with a step: normalized, then guarded. A buffer of
// dynamic size bounded by a constant (a partial tile) is an alloca of the
// bound, viewed with the tile's size.
// CHECK-LABEL: func.func @dynamic(
//       CHECK:   scf.parallel
//       CHECK:     scf.parallel
//       CHECK:       %[[TILE:.*]] = memref.alloca() : memref<2x4x8xf32>
//       CHECK:       %[[FLAT:.*]] = memref.collapse_shape %[[TILE]] {{\[}}[0, 1, 2]] : memref<2x4x8xf32> into memref<64xf32>
//       CHECK:       scf.if
//       CHECK:         %[[SIZE:.*]] = affine.min
//       CHECK:         %[[STRIDE:.*]] = arith.muli %{{.*}}, %[[SIZE]] : index
//       CHECK:         %[[VIEW:.*]] = memref.reinterpret_cast %[[FLAT]] to offset: [0], sizes: [2, %[[SIZE]], 8], strides: [%[[STRIDE]], 8, 1] : memref<64xf32> to memref<2x?x8xf32>
//       CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<2x?x8xf32>)
#min = affine_map<(d0)[s0] -> (4, s0 - d0)>
func.func @dynamic(%n: index) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (0) to (%n) step (4) {
    %size = affine.min #min(%i)[%n]
    %tile = memref.alloc(%size) : memref<2x?x8xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<2x?x8xf32>)
  }
  return
}

// -----

func.func @unbounded(%n: index) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (4) {
    // expected-error @+1 {{inside a loop mapped to GPU threads needs a static size or a constant upper bound}}
    %tile = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<?xf32>)
  }
  return
}

// -----

func.func @escapes(%c: i1, %y: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %b = scf.if %c -> memref<4xf32> {
      // expected-error @+1 {{inside a loop mapped to GPU threads leaves the block it is allocated in}}
      %tile = memref.alloc() : memref<4xf32>
      scf.yield %tile : memref<4xf32>
    } else {
      scf.yield %y : memref<4xf32>
    }
    memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

func.func @tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be bufferized (no results) to be mapped to the GPU}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
  }
  return %r : tensor<4xf32>
}
