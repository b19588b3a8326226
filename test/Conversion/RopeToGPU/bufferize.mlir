// RUN: rope-opt %s --convert-rope-to-gpu --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope

// After one-shot bufferization the kernel reads the argument buffers and
// writes the destination argument directly: nothing is allocated or copied.

// CHECK-LABEL: func.func @out_of_place(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<2x8x4x64xf32>, %[[P:[^:]*]]: memref<2x8xi64>, %[[INIT:[^:]*]]: memref<2x8x4x64xf32>) -> memref<2x8x4x64xf32>
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   gpu.launch
//       CHECK:     memref.load %[[P]]
//       CHECK:     {{memref|vector}}.load %[[X]]
//       CHECK:     memref.store %{{.*}}, %[[INIT]]
//       CHECK:     gpu.terminator
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[INIT]] : memref<2x8x4x64xf32>
func.func @out_of_place(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%init : tensor<2x8x4x64xf32>) {rotary_dim = 32 : i64} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @in_place(
//  CHECK-SAME:     %[[X:[^:]*]]: memref<8x4x64xf16>) -> memref<8x4x64xf16>
//   CHECK-NOT:   memref.alloc
//       CHECK:   gpu.launch
//       CHECK:     {{memref|vector}}.load %[[X]]
//       CHECK:     {{memref|vector}}.store %{{.*}}, %[[X]]
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[X]]
func.func @in_place(%x: tensor<8x4x64xf16>) -> tensor<8x4x64xf16> {
  %y = rope.apply ins(%x : tensor<8x4x64xf16>) outs(%x : tensor<8x4x64xf16>) -> tensor<8x4x64xf16>
  return %y : tensor<8x4x64xf16>
}
