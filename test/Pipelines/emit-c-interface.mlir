// RUN: rope-opt %s --rope-to-llvm-cpu=emit-c-interface=true | FileCheck %s
// RUN: rope-opt %s --rope-to-llvm-cpu | FileCheck %s --check-prefix=NOCIFACE

// emit-c-interface=true adds an _mlir_ciface_ wrapper per function (memref
// descriptors passed by pointer); it is off by default.

// CHECK-LABEL: llvm.func @rotate(
//  CHECK-SAME:     attributes {llvm.emit_c_interface}
//       CHECK: llvm.func @_mlir_ciface_rotate(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
//       CHECK:   llvm.call @rotate(
// CHECK-LABEL: llvm.func @rotate_no_result(
//       CHECK: llvm.func @_mlir_ciface_rotate_no_result(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
//       CHECK:   llvm.call @rotate_no_result(

// NOCIFACE-NOT: _mlir_ciface_
// NOCIFACE-NOT: llvm.emit_c_interface
// NOCIFACE: llvm.func @rotate(
// NOCIFACE-NOT: _mlir_ciface_
// NOCIFACE-NOT: llvm.emit_c_interface

func.func @rotate(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

func.func @rotate_no_result(%x: tensor<8x4x64xf32>, %out: memref<8x4x64xf32>) {
  %init = tensor.empty() : tensor<8x4x64xf32>
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  bufferization.materialize_in_destination %y in restrict writable %out : (tensor<8x4x64xf32>, memref<8x4x64xf32>) -> ()
  return
}
