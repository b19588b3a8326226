// RUN: rope-opt %s --rope-expand-bf16=truncation=target | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{bf16-truncation=target})" | FileCheck %s --check-prefix=LLVM
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{bf16-truncation=target})" \
// RUN:   | mlir-translate --mlir-to-llvmir | llc -O2 -mcpu=sapphirerapids | FileCheck %s --check-prefix=ASM
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{bf16-truncation=bits})" | FileCheck %s --check-prefix=EXACT
// RUN: not rope-opt %s --rope-expand-bf16=truncation=hardware 2>&1 | FileCheck %s --check-prefix=BAD

// truncation=target leaves the f32 -> bf16 rounding to the target: with
// AVX512-BF16 one vcvtneps2bf16 per 16 lanes instead of the integer
// sequence (which rounds bf16 subnormal results instead of flushing them).
// The extension from bf16 is the same shift in both modes.
// CHECK-LABEL: func.func @round_and_widen
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: vector<16xf32>, %[[H:[a-z0-9]+]]: vector<16xbf16>)
// CHECK:         %[[Y:.*]] = arith.truncf %[[X]] : vector<16xf32> to vector<16xbf16>
// CHECK-NOT:     arith.extf
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[H]] : vector<16xbf16> to vector<16xi16>
// CHECK:         %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<16xi16> to vector<16xi32>
// CHECK:         %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : vector<16xi32>
// CHECK:         %[[F:.*]] = arith.bitcast %[[HIGH]] : vector<16xi32> to vector<16xf32>
// CHECK:         return %[[Y]], %[[F]]
// LLVM-LABEL: llvm.func @round_and_widen
// LLVM:         llvm.fptrunc %{{.*}} : vector<16xf32> to vector<16xbf16>
// LLVM-NOT:     llvm.fpext
// LLVM-NOT:     llvm.call
// ASM-LABEL: round_and_widen:
// ASM:         vcvtneps2bf16
// ASM-NOT:     call
// EXACT-LABEL: llvm.func @round_and_widen
// EXACT-NOT:     llvm.fptrunc
// EXACT-NOT:     llvm.fpext
// BAD: for the --truncation option: Cannot find option named 'hardware'
func.func @round_and_widen(%x: vector<16xf32>, %h: vector<16xbf16>)
    -> (vector<16xbf16>, vector<16xf32>) {
  %y = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %f = arith.extf %h : vector<16xbf16> to vector<16xf32>
  return %y, %f : vector<16xbf16>, vector<16xf32>
}
