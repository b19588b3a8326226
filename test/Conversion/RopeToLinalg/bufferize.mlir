// RUN: rope-opt %s --convert-rope-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -canonicalize -split-input-file | FileCheck %s --enable-var-scope

// The decomposition is destination-passing: after one-shot bufferization the
// rotation writes straight into the destination buffer (a function argument
// here). The only allocations are the small cos/sin tables; nothing of the
// size of x is allocated or copied.

// CHECK-LABEL: func.func @in_place_full(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x16x4x64xf32>, %[[P:[^:]*]]: memref<2x16xi64>, %[[INIT:[^:]*]]: memref<2x16x4x64xf32>) -> memref<2x16x4x64xf32>
//   CHECK-NOT:   memref.alloc() {{.*}} : memref<2x16x4x64xf32>
//       CHECK:   %[[COS:.*]] = memref.alloc() {{.*}} : memref<2x16x32xf32>
//       CHECK:   %[[SIN:.*]] = memref.alloc() {{.*}} : memref<2x16x32xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%[[P]], %{{.*}} : memref<2x16xi64>, memref<32xf64>) outs(%[[COS]], %[[SIN]] : memref<2x16x32xf32>, memref<2x16x32xf32>)
//       CHECK:   %[[XP:.*]] = memref.expand_shape %[[X]] {{\[}}[0], [1], [2], [3, 4]]
//       CHECK:   %[[DP:.*]] = memref.expand_shape %[[INIT]] {{\[}}[0], [1], [2], [3, 4]]
//       CHECK:   %[[X1S:.*]] = memref.subview %[[XP]][0, 0, 0, 0, 0] [2, 16, 4, 1, 32]
//       CHECK:   %[[X1:.*]] = memref.collapse_shape %[[X1S]] {{\[}}[0], [1], [2], [3, 4]]
//       CHECK:   %[[X2S:.*]] = memref.subview %[[XP]][0, 0, 0, 1, 0] [2, 16, 4, 1, 32]
//       CHECK:   %[[X2:.*]] = memref.collapse_shape %[[X2S]] {{\[}}[0], [1], [2], [3, 4]]
//       CHECK:   linalg.generic
//  CHECK-SAME:       ins(%[[X1]], %[[X2]], %[[COS]], %[[SIN]] : {{.*}}) outs(%[[DP]] : memref<2x16x4x2x32xf32>)
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[INIT]] : memref<2x16x4x64xf32>
func.func @in_place_full(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// Partial rotary: the rotated channels and the pass-through channels are both
// written into subviews of the destination, without a copy of the whole
// tensor.

// CHECK-LABEL: func.func @in_place_partial(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<8x4x64xf32>, %[[INIT:[^:]*]]: memref<8x4x64xf32>) -> memref<8x4x64xf32>
//   CHECK-NOT:   memref.alloc() {{.*}} : memref<8x4x64xf32>
//       CHECK:   %[[COS:.*]] = memref.alloc() {{.*}} : memref<8x8xf32>
//       CHECK:   %[[SIN:.*]] = memref.alloc() {{.*}} : memref<8x8xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:   %[[DROT:.*]] = memref.subview %[[INIT]][0, 0, 0] [8, 4, 16] [1, 1, 1]
//       CHECK:   %[[DP:.*]] = memref.expand_shape %[[DROT]]
//       CHECK:   linalg.generic
//  CHECK-SAME:       outs(%[[DP]] : memref<8x4x8x2xf32, strided<[256, 64, 2, 1]>>)
//       CHECK:   %[[XPASS:.*]] = memref.subview %[[X]][0, 0, 16] [8, 4, 48] [1, 1, 1]
//       CHECK:   %[[DPASS:.*]] = memref.subview %[[INIT]][0, 0, 16] [8, 4, 48] [1, 1, 1]
//       CHECK:   linalg.copy ins(%[[XPASS]] : {{.*}}) outs(%[[DPASS]] : {{.*}})
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[INIT]] : memref<8x4x64xf32>
func.func @in_place_partial(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%init : tensor<8x4x64xf32>) {layout = #rope.layout<interleaved>, rotary_dim = 16 : i64} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// A gathered cache is read in place too; the tables are the only buffers.

// CHECK-LABEL: func.func @in_place_gathered_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x8x4x64xf16>, %{{[^:]*}}: memref<2xi64>, %[[COS:[^:]*]]: memref<64x32xf32>, %[[SIN:[^:]*]]: memref<64x32xf32>, %[[INIT:[^:]*]]: memref<2x8x4x64xf16>)
//   CHECK-NOT:   memref.alloc() {{.*}} : memref<2x8x4x64xf16>
//   CHECK-NOT:   memref.alloc() {{.*}} : memref<64x32xf32>
//       CHECK:   memref.alloc() {{.*}} : memref<2x8x32xf32>
//       CHECK:   memref.alloc() {{.*}} : memref<2x8x32xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:     memref.load %[[COS]]
//       CHECK:     memref.load %[[SIN]]
//       CHECK:   %[[DP:.*]] = memref.expand_shape %[[INIT]]
//       CHECK:   linalg.generic
//  CHECK-SAME:       outs(%[[DP]] : memref<2x8x4x2x32xf16>)
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[INIT]] : memref<2x8x4x64xf16>
func.func @in_place_gathered_cache(%x: tensor<2x8x4x64xf16>, %o: tensor<2xi64>, %cos: tensor<64x32xf32>, %sin: tensor<64x32xf32>, %init: tensor<2x8x4x64xf16>) -> tensor<2x8x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf16>) offset(%o : tensor<2xi64>) cache(%cos, %sin : tensor<64x32xf32>, tensor<64x32xf32>) outs(%init : tensor<2x8x4x64xf16>) -> tensor<2x8x4x64xf16>
  return %y : tensor<2x8x4x64xf16>
}
