// RUN: rope-opt %s --rope-expand-bf16 -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s --check-prefix=LLVM

// Rounding to bf16 becomes integer arithmetic on the bits, vectors stay
// vectors (no per-lane call of __truncsfbf2 once lowered). NaN is found on
// the bits and the quiet NaN selected among i32 values, before the
// truncation: a select of i16 under an f32 compare becomes, in LLVM, a
// select of bf16 vectors, scalarized on x86 (a vucomiss/cmov per element).
// CHECK-LABEL: func.func @round_vector
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     arith.cmpf
// CHECK:         %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]]
// CHECK:         %[[NAN:.*]] = arith.cmpi ugt, %[[ABS]], %{{.*}} : vector<16xi32>
// CHECK:         %[[BIASED:.*]] = arith.addi %[[BITS]], %{{.*}} : vector<16xi32>
// CHECK:         %[[ROUNDED:.*]] = arith.shrui %[[BIASED]], %{{.*}} : vector<16xi32>
// CHECK:         %[[SEL:.*]] = arith.select %[[NAN]], %{{.*}}, %[[ROUNDED]] : vector<16xi1>, vector<16xi32>
// CHECK:         %[[NARROW:.*]] = arith.trunci %[[SEL]] : vector<16xi32> to vector<16xi16>
// CHECK:         arith.bitcast %[[NARROW]] : vector<16xi16> to vector<16xbf16>
// CHECK-NOT:     arith.select
// LLVM-LABEL: llvm.func @round_vector
// LLVM-NOT:     llvm.fptrunc
// LLVM-NOT:     llvm.call
// LLVM-NOT:     llvm.select {{.*}} vector<16xi16>
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

// -----

// Loads and stores of bf16 vectors are of i16 vectors once in the LLVM
// dialect: a bf16 row copy is otherwise partly 2-byte moves on x86.
// CHECK-LABEL: func.func @copy_rows
// LLVM-LABEL: llvm.func @copy_rows
// LLVM-NOT:     llvm.load {{.*}} -> vector<{{.*}}xbf16>
// LLVM:         %[[ROW:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<32xi16>
// LLVM:         %[[BF:.*]] = llvm.bitcast %[[ROW]] : vector<32xi16> to vector<32xbf16>
// LLVM:         %[[BACK:.*]] = llvm.bitcast %[[BF]] : vector<32xbf16> to vector<32xi16>
// LLVM:         llvm.store %[[BACK]], %{{.*}} {alignment = 2 : i64} : vector<32xi16>, !llvm.ptr
// LLVM-NOT:     llvm.store {{.*}} : vector<{{.*}}xbf16>
// LLVM:         llvm.return
func.func @copy_rows(%src: memref<?x256xbf16>, %dst: memref<?x256xbf16>, %i: index, %j: index) {
  %v = vector.load %src[%i, %j] : memref<?x256xbf16>, vector<32xbf16>
  vector.store %v, %dst[%i, %j] : memref<?x256xbf16>, vector<32xbf16>
  return
}
