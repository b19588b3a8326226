// RUN: rope-opt %s --convert-rope-to-vector --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --enable-var-scope

// The vector form is destination-passing: after one-shot bufferization each
// token's rows are read from a subview of the input and written straight into
// a subview of the destination (a function argument here), in chunks of one
// cache line of f32 (16 lanes). Nothing is allocated or copied, not even per
// token.

// CHECK-LABEL: func.func @out_of_place_partial(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x8x4x64xf32>, %[[P:[^:]*]]: memref<2x8xi64>, %[[INIT:[^:]*]]: memref<2x8x4x64xf32>) -> memref<2x8x4x64xf32>
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8) {
//       CHECK:     memref.load %[[P]][%[[B]], %[[S]]] : memref<2x8xi64>
//   CHECK-NOT:     memref.alloc
//       CHECK:     %[[DST:.*]] = memref.subview %[[INIT]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1]
//       CHECK:     %[[SRC:.*]] = memref.subview %[[X]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//       CHECK:       vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], {{.*}} vector<16xf32>
//       CHECK:       vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], {{.*}} vector<16xf32>
//       CHECK:       vector.transfer_write %{{.*}}, %[[DST]][%[[H]], %{{.*}}] {{.*}} : vector<16xf32>, memref<4x64xf32, strided<[64, 1], offset: ?>>
//       CHECK:       vector.transfer_write %{{.*}}, %[[DST]][%[[H]], %{{.*}}] {{.*}} : vector<16xf32>, memref<4x64xf32, strided<[64, 1], offset: ?>>
//       CHECK:       %[[PASS:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], {{.*}} vector<16xf32>
//       CHECK:       vector.transfer_write %[[PASS]], %[[DST]][%[[H]], %{{.*}}] {{.*}} : vector<16xf32>, memref<4x64xf32, strided<[64, 1], offset: ?>>
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[INIT]] : memref<2x8x4x64xf32>
func.func @out_of_place_partial(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%init : tensor<2x8x4x64xf32>) {rotary_dim = 32 : i64} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// In place (outs(%x)): rows are read and written through the same subview of
// the argument.

// CHECK-LABEL: func.func @in_place_half(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x8x4x64xf32>, %[[P:[^:]*]]: memref<2x8xi64>) -> memref<2x8x4x64xf32>
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8) {
//       CHECK:     %[[ROW:.*]] = memref.subview %[[X]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1]
//   CHECK-NOT:     memref.subview
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//       CHECK:       vector.transfer_read %[[ROW]][%[[H]], %{{.*}}], {{.*}} vector<16xf32>
//       CHECK:       vector.transfer_read %[[ROW]][%[[H]], %{{.*}}], {{.*}} vector<16xf32>
//       CHECK:       vector.transfer_write %{{.*}}, %[[ROW]][%[[H]], %{{.*}}] {{.*}} : vector<16xf32>,
//       CHECK:       vector.transfer_write %{{.*}}, %[[ROW]][%[[H]], %{{.*}}] {{.*}} : vector<16xf32>,
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[X]] : memref<2x8x4x64xf32>
func.func @in_place_half(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%x : tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// In place, interleaved, f16 data, cache gathered at a per-row offset: the
// cache rows are read straight from the cache arguments.

// CHECK-LABEL: func.func @in_place_interleaved_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x8x4x64xf16>, %[[O:[^:]*]]: memref<2xi64>, %[[COS:[^:]*]]: memref<64x32xf32>, %[[SIN:[^:]*]]: memref<64x32xf32>) -> memref<2x8x4x64xf16>
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8) {
//       CHECK:     memref.load %[[O]][%[[B]]] : memref<2xi64>
//       CHECK:     vector.transfer_read %[[COS]][%{{.*}}, %{{.*}}], {{.*}} : memref<64x32xf32>, vector<32xf32>
//       CHECK:     vector.transfer_read %[[SIN]][%{{.*}}, %{{.*}}], {{.*}} : memref<64x32xf32>, vector<32xf32>
//       CHECK:     %[[ROW:.*]] = memref.subview %[[X]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//       CHECK:       vector.transfer_read %[[ROW]][%[[H]], %{{.*}}], {{.*}} vector<16xf16>
//       CHECK:       vector.transfer_write %{{.*}}, %[[ROW]][%[[H]], %{{.*}}] {{.*}} : vector<16xf16>,
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[X]] : memref<2x8x4x64xf16>
func.func @in_place_interleaved_cache(%x: tensor<2x8x4x64xf16>, %o: tensor<2xi64>, %cos: tensor<64x32xf32>, %sin: tensor<64x32xf32>) -> tensor<2x8x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf16>) offset(%o : tensor<2xi64>) cache(%cos, %sin : tensor<64x32xf32>, tensor<64x32xf32>) outs(%x : tensor<2x8x4x64xf16>) {layout = #rope.layout<interleaved>} -> tensor<2x8x4x64xf16>
  return %y : tensor<2x8x4x64xf16>
}
