// RUN: rope-opt %s --rope-to-llvm-cpu | FileCheck %s --check-prefix=CPU
// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-translate --mlir-to-llvmir -o /dev/null

// rope-to-llvm-cpu expands f32 -> fp8 rounding (rope-expand-f8) before the
// conversion to LLVM, which would otherwise leave the truncation behind an
// unrealized cast: vectors stay vectors and the module translates to LLVM
// IR. test/GPU/expand-f8-ptx.mlir checks rope-to-nvvm.

// CPU-LABEL: llvm.func @quantize_vector
// CPU-NOT:     unrealized_conversion_cast
// CPU-NOT:     llvm.fptrunc
// CPU:         llvm.intr.umin(%{{.*}}) : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CPU:         llvm.fadd %{{.*}} : vector<8xf32>
// CPU:         llvm.trunc %{{.*}} : vector<8xi32> to vector<8xi8>
// CPU:         llvm.store %{{.*}} : vector<8xi8>, !llvm.ptr
func.func @quantize_vector(%x: memref<8xf32>, %y: memref<8xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<8xf32>, vector<8xf32>
  %q = arith.truncf %v : vector<8xf32> to vector<8xf8E4M3FN>
  vector.store %q, %y[%c0] : memref<8xf8E4M3FN>, vector<8xf8E4M3FN>
  return
}
