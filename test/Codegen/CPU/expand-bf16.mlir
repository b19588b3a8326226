// RUN: rope-opt %s --rope-expand-bf16 -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s --check-prefix=LLVM

// Rounding to bf16 becomes integer arithmetic on the bits, vectors stay
// vectors (no per-lane call of __truncsfbf2 once lowered). The quiet NaN is
// selected among i32 values, before the truncation: a select of i16 under an
// f32 compare becomes, in LLVM, a select of bf16 vectors, scalarized on x86
// (a vucomiss/cmov per element). NaN is an unordered compare of x with
// itself (one vcmpps).
// CHECK-LABEL: func.func @round_vector
// CHECK-SAME:    (%[[X:.*]]: vector<16xf32>)
// CHECK-NOT:     arith.truncf
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<16xf32>
// CHECK:         %[[BIASED:.*]] = arith.addi %[[BITS]], %{{.*}} : vector<16xi32>
// CHECK:         %[[SEL:.*]] = arith.select %[[NAN]], %{{.*}}, %[[BIASED]] : vector<16xi1>, vector<16xi32>
// CHECK:         %[[ROUNDED:.*]] = arith.shrui %[[SEL]], %{{.*}} : vector<16xi32>
// CHECK:         %[[NARROW:.*]] = arith.trunci %[[ROUNDED]] : vector<16xi32> to vector<16xi16>
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

// -----

// Word lanes (convert-rope-to-vector's bf16 rows): the even and odd lanes of
// a bf16 vector, widened, are a shift and a mask of its 32-bit words; two
// roundings interleaved are one or of the words (the first shifted down, the
// second masked). No lane moves: no shuffle, no interleave left.
// CHECK-LABEL: func.func @word_lanes
// CHECK-SAME:    (%[[V:.*]]: vector<32xbf16>, %[[A:.*]]: vector<16xf32>, %[[B:.*]]: vector<16xf32>)
// CHECK-NOT:     vector.deinterleave
// CHECK:         %[[W:.*]] = vector.bitcast %[[V]] : vector<32xbf16> to vector<16xi32>
// CHECK:         %[[E:.*]] = arith.shli %[[W]], %{{.*}} : vector<16xi32>
// CHECK:         arith.bitcast %[[E]] : vector<16xi32> to vector<16xf32>
// CHECK:         %[[W2:.*]] = vector.bitcast %[[V]] : vector<32xbf16> to vector<16xi32>
// CHECK:         %[[O:.*]] = arith.andi %[[W2]], %{{.*}} : vector<16xi32>
// CHECK:         arith.bitcast %[[O]] : vector<16xi32> to vector<16xf32>
// CHECK:         arith.cmpf uno, %[[A]], %[[A]]
// CHECK:         %[[SELA:.*]] = arith.select
// CHECK:         %[[LOW:.*]] = arith.shrui %[[SELA]], %{{.*}} : vector<16xi32>
// CHECK:         arith.cmpf uno, %[[B]], %[[B]]
// CHECK:         %[[SELB:.*]] = arith.select
// CHECK:         %[[HIGH:.*]] = arith.andi %[[SELB]], %{{.*}} : vector<16xi32>
// CHECK:         %[[OR:.*]] = arith.ori %[[LOW]], %[[HIGH]] : vector<16xi32>
// CHECK:         %[[J:.*]] = vector.bitcast %[[OR]] : vector<16xi32> to vector<32xbf16>
// CHECK-NOT:     vector.interleave
// CHECK:         return %{{.*}}, %{{.*}}, %[[J]]
// LLVM-LABEL: llvm.func @word_lanes
// LLVM-NOT:     llvm.fptrunc
// LLVM-NOT:     llvm.fpext
// LLVM-NOT:     llvm.shufflevector
// LLVM:         llvm.return
func.func @word_lanes(%v: vector<32xbf16>, %a: vector<16xf32>, %b: vector<16xf32>)
    -> (vector<16xf32>, vector<16xf32>, vector<32xbf16>) {
  %even, %odd = vector.deinterleave %v : vector<32xbf16> -> vector<16xbf16>
  %e = arith.extf %even : vector<16xbf16> to vector<16xf32>
  %o = arith.extf %odd : vector<16xbf16> to vector<16xf32>
  %ta = arith.truncf %a : vector<16xf32> to vector<16xbf16>
  %tb = arith.truncf %b : vector<16xf32> to vector<16xbf16>
  %j = vector.interleave %ta, %tb : vector<16xbf16> -> vector<32xbf16>
  return %e, %o, %j : vector<16xf32>, vector<16xf32>, vector<32xbf16>
}

// -----

// Not word lanes: an interleave of one rounding and one other value, and an
// extension of a deinterleaved f16 vector, keep their lane moves (and the
// rounding its one-op form).
// CHECK-LABEL: func.func @not_word_lanes
// CHECK:         vector.interleave
// CHECK:         vector.deinterleave %{{.*}} : vector<16xf16>
// CHECK:         arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// LLVM-LABEL: llvm.func @not_word_lanes
func.func @not_word_lanes(%a: vector<8xf32>, %b: vector<8xbf16>, %h: vector<16xf16>)
    -> (vector<16xbf16>, vector<8xf32>) {
  %ta = arith.truncf %a : vector<8xf32> to vector<8xbf16>
  %j = vector.interleave %ta, %b : vector<8xbf16> -> vector<16xbf16>
  %even, %odd = vector.deinterleave %h : vector<16xf16> -> vector<8xf16>
  %e = arith.extf %even : vector<8xf16> to vector<8xf32>
  return %j, %e : vector<16xbf16>, vector<8xf32>
}

// -----

// On a big-endian data layout lane 2j is not the low half of word j: the
// word-lane forms are not taken, and the lanes move as written (each
// rounding and widening in its one-op form).
// CHECK-LABEL: func.func @word_lanes_big_endian
// CHECK:         vector.deinterleave
// CHECK:         vector.interleave
// CHECK-NOT:     vector.bitcast
// CHECK:         return
module attributes {dlti.dl_spec = #dlti.dl_spec<"dlti.endianness" = "big">} {
  func.func @word_lanes_big_endian(%v: vector<32xbf16>, %a: vector<16xf32>, %b: vector<16xf32>)
      -> (vector<16xf32>, vector<32xbf16>) {
    %even, %odd = vector.deinterleave %v : vector<32xbf16> -> vector<16xbf16>
    %e = arith.extf %even : vector<16xbf16> to vector<16xf32>
    %ta = arith.truncf %a : vector<16xf32> to vector<16xbf16>
    %tb = arith.truncf %b : vector<16xf32> to vector<16xbf16>
    %j = vector.interleave %ta, %tb : vector<16xbf16> -> vector<32xbf16>
    return %e, %j : vector<16xf32>, vector<32xbf16>
  }
}
