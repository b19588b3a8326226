// RUN: rope-opt %s --rope-keep-vector-loops -split-input-file | FileCheck %s
// RUN: rope-opt %s --rope-keep-vector-loops --convert-scf-to-cf --convert-to-llvm -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu)" -split-input-file | mlir-translate --mlir-to-llvmir -split-input-file | FileCheck %s --check-prefix=IR

// Rows of vector code (what rope-vectorize-elementwise makes): the row loop
// and the loop around it are marked not to be unrolled by LLVM; the loop of
// scalar code is not marked (LLVM unrolls and vectorizes it as it sees fit).
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @rows(
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       vector.load
//       CHECK:     } {loop_annotation = #[[KEEP]]}
//       CHECK:   } {loop_annotation = #[[KEEP]]}
//       CHECK:   scf.for
//       CHECK:     memref.load
//   CHECK-NOT:   loop_annotation
//       CHECK:   return
// The annotation reaches the back edge of each loop in the LLVM dialect.
// LLVM-LABEL: llvm.func @rows(
// LLVM-COUNT-2: llvm.br {{.*}} {loop_annotation = #{{.*}}}
// LLVM-NOT: loop_annotation
// LLVM: llvm.return
// And the loop metadata of the LLVM IR.
// IR-LABEL: define void @rows(
// IR-COUNT-2: br label %{{.*}}, !llvm.loop !{{[0-9]+}}
// IR-NOT: !llvm.loop
// IR: !{!"llvm.loop.unroll.disable"}
func.func @rows(%m: memref<4x16x64xf32>, %s: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant dense<1.0> : vector<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = vector.load %m[%i, %j, %c0] : memref<4x16x64xf32>, vector<16xf32>
      %w = arith.addf %v, %one : vector<16xf32>
      vector.store %w, %m[%i, %j, %c0] : memref<4x16x64xf32>, vector<16xf32>
    }
  }
  %f = arith.constant 2.0 : f32
  scf.for %k = %c0 to %c64 step %c1 {
    %x = memref.load %s[%k] : memref<64xf32>
    %y = arith.mulf %x, %f : f32
    memref.store %y, %s[%k] : memref<64xf32>
  }
  return
}
