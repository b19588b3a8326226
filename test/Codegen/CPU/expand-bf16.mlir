// RUN: rope-opt %s --rope-expand-bf16 -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s --check-prefix=LLVM

// Rounding to bf16 becomes integer arithmetic on the bits, vectors stay
// vectors (no per-lane call of __truncsfbf2 once lowered).
// CHECK-LABEL: func.func @round_vector
// CHECK-NOT:     arith.truncf
// CHECK:         arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:         arith.shrui
// CHECK:         arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK:         arith.bitcast %{{.*}} : vector<16xi16> to vector<16xbf16>
// LLVM-LABEL: llvm.func @round_vector
// LLVM-NOT:     llvm.fptrunc
// LLVM-NOT:     llvm.call
func.func @round_vector(%x: vector<16xf32>) -> vector<16xbf16> {
  %y = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %y : vector<16xbf16>
}

// -----

// Widening from bf16 is a shift; other float truncations are left alone.
// CHECK-LABEL: func.func @widen_and_others
// CHECK-NOT:     arith.extf %{{.*}} : vector<8xbf16>
// CHECK:         arith.shli
// CHECK:         arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// LLVM-LABEL: llvm.func @widen_and_others
// LLVM-NOT:     llvm.fpext %{{.*}} : vector<8xbf16>
func.func @widen_and_others(%x: vector<8xbf16>) -> vector<8xf16> {
  %w = arith.extf %x : vector<8xbf16> to vector<8xf32>
  %h = arith.truncf %w : vector<8xf32> to vector<8xf16>
  return %h : vector<8xf16>
}
