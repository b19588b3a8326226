// RUN: rope-opt %s --rope-expand-f8 -split-input-file | FileCheck %s --enable-var-scope

// f32 -> f8E4M3FN: normals round to nearest even on the bits (half an ulp
// minus one plus the lowest kept bit, shifted by 23 - 3, rebiased by
// (127 - 7) << 3), everything above 448 (overflow, inf, NaN) clamps to the
// NaN 0x7f; below 2^-6 (bits 121 << 23) the f32 sum with 2^14 (ulp 2^-9)
// counts the subnormal steps. The sign is put back on the i8.
// CHECK-LABEL: func.func @e4m3fn_scalar
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 524287 : i32
// CHECK-DAG:     %[[SHIFT:.*]] = arith.constant 20 : i32
// CHECK-DAG:     %[[REBIAS:.*]] = arith.constant 960 : i32
// CHECK-DAG:     %[[NAN:.*]] = arith.constant 127 : i32
// CHECK-DAG:     %[[MAGIC:.*]] = arith.constant 1.638400e+04 : f32
// CHECK-DAG:     %[[MAGICBITS:.*]] = arith.constant 1182793728 : i32
// CHECK-DAG:     %[[MINNORMAL:.*]] = arith.constant 1015021568 : i32
// CHECK-DAG:     %[[SIGNMASK:.*]] = arith.constant -128 : i8
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]]
// CHECK:         %[[SIGN:.*]] = arith.andi %{{.*}}, %[[SIGNMASK]] : i8
// CHECK:         %[[KEPT:.*]] = arith.shrui %[[ABS]], %[[SHIFT]]
// CHECK:         %[[ODD:.*]] = arith.andi %[[KEPT]]
// CHECK:         %[[UP:.*]] = arith.addi %[[ABS]], %[[HALF]]
// CHECK:         %[[RNE:.*]] = arith.addi %[[UP]], %[[ODD]]
// CHECK:         %[[SHIFTED:.*]] = arith.shrui %[[RNE]], %[[SHIFT]]
// CHECK:         %[[REBIASED:.*]] = arith.subi %[[SHIFTED]], %[[REBIAS]]
// CHECK:         %[[NORMAL:.*]] = arith.minui %[[REBIASED]], %[[NAN]]
// CHECK:         %[[ABSF:.*]] = arith.bitcast %[[ABS]] : i32 to f32
// CHECK:         %[[SUM:.*]] = arith.addf %[[ABSF]], %[[MAGIC]] : f32
// CHECK:         %[[SUMBITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK:         %[[SUB:.*]] = arith.subi %[[SUMBITS]], %[[MAGICBITS]]
// CHECK:         %[[ISSUB:.*]] = arith.cmpi ult, %[[ABS]], %[[MINNORMAL]]
// CHECK:         %[[MAG:.*]] = arith.select %[[ISSUB]], %[[SUB]], %[[NORMAL]]
// CHECK:         %[[MAG8:.*]] = arith.trunci %[[MAG]] : i32 to i8
// CHECK:         %[[ENC:.*]] = arith.ori %[[MAG8]], %[[SIGN]] : i8
// CHECK:         %[[Y:.*]] = arith.bitcast %[[ENC]] : i8 to f8E4M3FN
// CHECK:         return %[[Y]]
func.func @e4m3fn_scalar(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

// f32 -> f8E5M2, vectors stay vectors: shift 23 - 2, rebias (127 - 15) << 2,
// overflow and inf clamp to inf (0x7c), NaN (bits above 0x7f800000) gives
// the quiet NaN 0x7e, subnormals (below 2^-14, bits 113 << 23) through
// 2^7 (ulp 2^-16). An explicit to_nearest_even is the same rounding.
// CHECK-LABEL: func.func @e5m2_vector
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant dense<126> : vector<16xi32>
// CHECK-DAG:     %[[INF:.*]] = arith.constant dense<2139095040> : vector<16xi32>
// CHECK-DAG:     %[[MINNORMAL:.*]] = arith.constant dense<947912704> : vector<16xi32>
// CHECK-DAG:     %[[MAGIC:.*]] = arith.constant dense<1.280000e+02> : vector<16xf32>
// CHECK-DAG:     %[[OVERFLOW:.*]] = arith.constant dense<124> : vector<16xi32>
// CHECK-DAG:     %[[REBIAS:.*]] = arith.constant dense<448> : vector<16xi32>
// CHECK-DAG:     %[[HALF:.*]] = arith.constant dense<1048575> : vector<16xi32>
// CHECK-DAG:     %[[SHIFT:.*]] = arith.constant dense<21> : vector<16xi32>
// CHECK-NOT:     arith.truncf
// CHECK:         %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]]
// CHECK:         arith.addi %[[ABS]], %[[HALF]]
// CHECK:         arith.shrui %{{.*}}, %[[SHIFT]]
// CHECK:         arith.subi %{{.*}}, %[[REBIAS]]
// CHECK:         %[[NORMAL:.*]] = arith.minui %{{.*}}, %[[OVERFLOW]]
// CHECK:         arith.addf %{{.*}}, %[[MAGIC]] : vector<16xf32>
// CHECK:         %[[ISSUB:.*]] = arith.cmpi ult, %[[ABS]], %[[MINNORMAL]]
// CHECK:         %[[FINITE:.*]] = arith.select %[[ISSUB]], %{{.*}}, %[[NORMAL]]
// CHECK:         %[[ISNAN:.*]] = arith.cmpi ugt, %[[ABS]], %[[INF]]
// CHECK:         %[[MAG:.*]] = arith.select %[[ISNAN]], %[[QNAN]], %[[FINITE]]
// CHECK:         arith.trunci %[[MAG]] : vector<16xi32> to vector<16xi8>
// CHECK:         arith.bitcast %{{.*}} : vector<16xi8> to vector<16xf8E5M2>
// CHECK-NOT:     arith.truncf
// CHECK:         arith.bitcast %{{.*}} : vector<16xi8> to vector<16xf8E5M2>
// CHECK:         return
func.func @e5m2_vector(%x: vector<16xf32>) -> (vector<16xf8E5M2>, vector<16xf8E5M2>) {
  %y = arith.truncf %x : vector<16xf32> to vector<16xf8E5M2>
  %z = arith.truncf %x to_nearest_even : vector<16xf32> to vector<16xf8E5M2>
  return %y, %z : vector<16xf8E5M2>, vector<16xf8E5M2>
}

// -----

// Left alone: other sources (f16 to fp8 through f32 would be exact, f64
// would round twice), other destinations, other rounding modes, tensors.
// CHECK-LABEL: func.func @others
// CHECK:         arith.truncf %{{.*}} : f16 to f8E4M3FN
// CHECK:         arith.truncf %{{.*}} : f64 to f8E5M2
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:         arith.truncf %{{.*}} : f32 to f8E4M3FNUZ
// CHECK:         arith.truncf %{{.*}} toward_zero : f32 to f8E4M3FN
// CHECK:         arith.truncf %{{.*}} : tensor<4xf32> to tensor<4xf8E4M3FN>
func.func @others(%h: f16, %d: f64, %x: f32, %t: tensor<4xf32>)
    -> (f8E4M3FN, f8E5M2, f16, f8E4M3FNUZ, f8E4M3FN, tensor<4xf8E4M3FN>) {
  %0 = arith.truncf %h : f16 to f8E4M3FN
  %1 = arith.truncf %d : f64 to f8E5M2
  %2 = arith.truncf %x : f32 to f16
  %3 = arith.truncf %x : f32 to f8E4M3FNUZ
  %4 = arith.truncf %x toward_zero : f32 to f8E4M3FN
  %5 = arith.truncf %t : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %0, %1, %2, %3, %4, %5
      : f8E4M3FN, f8E5M2, f16, f8E4M3FNUZ, f8E4M3FN, tensor<4xf8E4M3FN>
}
