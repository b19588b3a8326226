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

// -----

// rope.apply's quantized store, truncf(maximumf(minimumf(x, 448), -448)):
// the clamp is done on the magnitude, one minimumf with 448 (NaN stays NaN,
// inf becomes 448), of which the bits are rounded as usual (also in the
// subnormal sum); the overflow clamp to 0x7f is now only reached by NaN.
// The clamp of x goes.
// CHECK-LABEL: func.func @e4m3fn_clamped_scalar
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-DAG:     %[[LARGEST:.*]] = arith.constant 4.480000e+02 : f32
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 524287 : i32
// CHECK-DAG:     %[[SHIFT:.*]] = arith.constant 20 : i32
// CHECK-DAG:     %[[REBIAS:.*]] = arith.constant 960 : i32
// CHECK-DAG:     %[[NAN:.*]] = arith.constant 127 : i32
// CHECK-DAG:     %[[MAGIC:.*]] = arith.constant 1.638400e+04 : f32
// CHECK-DAG:     %[[MAGICBITS:.*]] = arith.constant 1182793728 : i32
// CHECK-DAG:     %[[MINNORMAL:.*]] = arith.constant 1015021568 : i32
// CHECK-DAG:     %[[SIGNMASK:.*]] = arith.constant -128 : i8
// CHECK-NOT:     arith.maximumf
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]]
// CHECK:         %[[SIGN:.*]] = arith.andi %{{.*}}, %[[SIGNMASK]] : i8
// CHECK:         %[[ABSF:.*]] = arith.bitcast %[[ABS]] : i32 to f32
// CHECK:         %[[SATF:.*]] = arith.minimumf %[[ABSF]], %[[LARGEST]] : f32
// CHECK:         %[[SAT:.*]] = arith.bitcast %[[SATF]] : f32 to i32
// CHECK:         %[[KEPT:.*]] = arith.shrui %[[SAT]], %[[SHIFT]]
// CHECK:         %[[ODD:.*]] = arith.andi %[[KEPT]]
// CHECK:         %[[UP:.*]] = arith.addi %[[SAT]], %[[HALF]]
// CHECK:         %[[RNE:.*]] = arith.addi %[[UP]], %[[ODD]]
// CHECK:         %[[SHIFTED:.*]] = arith.shrui %[[RNE]], %[[SHIFT]]
// CHECK:         %[[REBIASED:.*]] = arith.subi %[[SHIFTED]], %[[REBIAS]]
// CHECK:         %[[NORMAL:.*]] = arith.minui %[[REBIASED]], %[[NAN]]
// CHECK:         %[[SUM:.*]] = arith.addf %[[SATF]], %[[MAGIC]] : f32
// CHECK:         %[[SUMBITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK:         %[[SUB:.*]] = arith.subi %[[SUMBITS]], %[[MAGICBITS]]
// CHECK:         %[[ISSUB:.*]] = arith.cmpi ult, %[[SAT]], %[[MINNORMAL]]
// CHECK:         %[[MAG:.*]] = arith.select %[[ISSUB]], %[[SUB]], %[[NORMAL]]
// CHECK-NOT:     arith.select
// CHECK:         %[[MAG8:.*]] = arith.trunci %[[MAG]] : i32 to i8
// CHECK:         %[[ENC:.*]] = arith.ori %[[MAG8]], %[[SIGN]] : i8
// CHECK:         %[[Y:.*]] = arith.bitcast %[[ENC]] : i8 to f8E4M3FN
// CHECK-NOT:     arith.maximumf
// CHECK:         return %[[Y]]
func.func @e4m3fn_clamped_scalar(%x: f32) -> f8E4M3FN {
  %hi = arith.constant 448.0 : f32
  %lo = arith.constant -448.0 : f32
  %a = arith.minimumf %x, %hi : f32
  %b = arith.maximumf %a, %lo : f32
  %y = arith.truncf %b : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

// f8E5M2, vectors, the other order (maximumf first) and the bounds as the
// first operands (fastmath flags do not matter: the result is the clamp's
// for every input): the magnitude's minimumf with 57344; no overflow clamp
// to infinity (nothing above 57344 is left but NaN), the NaN select on the
// unclamped magnitude gives the quiet NaN 0x7e.
// CHECK-LABEL: func.func @e5m2_clamped_vector
// CHECK-SAME:    (%[[X:.*]]: vector<16xf32>)
// CHECK-DAG:     %[[LARGEST:.*]] = arith.constant dense<5.734400e+04> : vector<16xf32>
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant dense<126> : vector<16xi32>
// CHECK-DAG:     %[[INF:.*]] = arith.constant dense<2139095040> : vector<16xi32>
// CHECK-DAG:     %[[MINNORMAL:.*]] = arith.constant dense<947912704> : vector<16xi32>
// CHECK-DAG:     %[[MAGIC:.*]] = arith.constant dense<1.280000e+02> : vector<16xf32>
// CHECK-DAG:     %[[REBIAS:.*]] = arith.constant dense<448> : vector<16xi32>
// CHECK-NOT:     arith.maximumf
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]]
// CHECK:         %[[ABSF:.*]] = arith.bitcast %[[ABS]] : vector<16xi32> to vector<16xf32>
// CHECK:         %[[SATF:.*]] = arith.minimumf %[[ABSF]], %[[LARGEST]] : vector<16xf32>
// CHECK:         %[[SAT:.*]] = arith.bitcast %[[SATF]] : vector<16xf32> to vector<16xi32>
// CHECK:         arith.addi %[[SAT]]
// CHECK:         %[[NORMAL:.*]] = arith.subi %{{.*}}, %[[REBIAS]]
// CHECK-NOT:     arith.minui
// CHECK:         arith.addf %[[SATF]], %[[MAGIC]] : vector<16xf32>
// CHECK:         %[[ISSUB:.*]] = arith.cmpi ult, %[[SAT]], %[[MINNORMAL]]
// CHECK:         %[[FINITE:.*]] = arith.select %[[ISSUB]], %{{.*}}, %[[NORMAL]]
// CHECK:         %[[ISNAN:.*]] = arith.cmpi ugt, %[[ABS]], %[[INF]]
// CHECK:         %[[MAG:.*]] = arith.select %[[ISNAN]], %[[QNAN]], %[[FINITE]]
// CHECK:         arith.trunci %[[MAG]] : vector<16xi32> to vector<16xi8>
// CHECK:         %[[Y:.*]] = arith.bitcast %{{.*}} : vector<16xi8> to vector<16xf8E5M2>
// CHECK-NOT:     arith.maximumf
// CHECK:         return %[[Y]]
func.func @e5m2_clamped_vector(%x: vector<16xf32>) -> vector<16xf8E5M2> {
  %hi = arith.constant dense<57344.0> : vector<16xf32>
  %lo = arith.constant dense<-57344.0> : vector<16xf32>
  %a = arith.maximumf %lo, %x fastmath<nnan> : vector<16xf32>
  %b = arith.minimumf %hi, %a : vector<16xf32>
  %y = arith.truncf %b : vector<16xf32> to vector<16xf8E5M2>
  return %y : vector<16xf8E5M2>
}

// -----

// The remaining operand orders: minimumf first with the bounds first,
// maximumf first with the bounds second. Both clamps go.
// CHECK-LABEL: func.func @clamped_orders
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Z:.*]]: f32)
// CHECK-DAG:     %[[L4:.*]] = arith.constant 4.480000e+02 : f32
// CHECK-DAG:     %[[L5:.*]] = arith.constant 5.734400e+04 : f32
// CHECK-NOT:     arith.maximumf
// CHECK:         arith.bitcast %[[X]] : f32 to i32
// CHECK:         arith.minimumf %{{.*}}, %[[L4]] : f32
// CHECK:         arith.bitcast %[[Z]] : f32 to i32
// CHECK:         arith.minimumf %{{.*}}, %[[L5]] : f32
// CHECK-NOT:     arith.maximumf
// CHECK:         return
func.func @clamped_orders(%x: f32, %z: f32) -> (f8E4M3FN, f8E5M2) {
  %hi = arith.constant 448.0 : f32
  %lo = arith.constant -448.0 : f32
  %a = arith.minimumf %hi, %x : f32
  %b = arith.maximumf %lo, %a : f32
  %y = arith.truncf %b : f32 to f8E4M3FN
  %hi5 = arith.constant 57344.0 : f32
  %lo5 = arith.constant -57344.0 : f32
  %c = arith.maximumf %z, %lo5 : f32
  %d = arith.minimumf %c, %hi5 : f32
  %w = arith.truncf %d : f32 to f8E5M2
  return %y, %w : f8E4M3FN, f8E5M2
}

// -----

// Not the saturating form, so the plain expansion (its overflow minui, of
// the clamp's result) with the clamp kept: a bound that is not the largest
// finite value (f8E5M2's for f8E4M3FN, 447, a positive lower bound),
// a clamp with another user (inner, outer), maxnumf/minnumf (which send NaN
// to a bound).
// CHECK-LABEL: func.func @not_clamped
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-DAG:     %[[OVERFLOW:.*]] = arith.constant 127 : i32
// CHECK:         %[[A0:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B0:.*]] = arith.maximumf %[[A0]]
// CHECK:         arith.bitcast %[[B0]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A1:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B1:.*]] = arith.maximumf %[[A1]]
// CHECK:         arith.bitcast %[[B1]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A2:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B2:.*]] = arith.maximumf %[[A2]]
// CHECK:         arith.bitcast %[[B2]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A3:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B3:.*]] = arith.maximumf %[[A3]]
// CHECK:         arith.bitcast %[[B3]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A4:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B4:.*]] = arith.maximumf %[[A4]]
// CHECK:         arith.bitcast %[[B4]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A5:.*]] = arith.minimumf %[[X]]
// CHECK:         %[[B5:.*]] = arith.maxnumf %[[A5]]
// CHECK:         arith.bitcast %[[B5]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         %[[A6:.*]] = arith.minnumf %[[X]]
// CHECK:         %[[B6:.*]] = arith.maximumf %[[A6]]
// CHECK:         arith.bitcast %[[B6]] : f32 to i32
// CHECK:         arith.minui %{{.*}}, %[[OVERFLOW]] : i32
// CHECK:         return
func.func @not_clamped(%x: f32) -> (f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN,
                                    f32, f8E4M3FN, f32, f8E4M3FN, f8E4M3FN) {
  %hi = arith.constant 448.0 : f32
  %lo = arith.constant -448.0 : f32
  %hi5 = arith.constant 57344.0 : f32
  %lo5 = arith.constant -57344.0 : f32
  %a0 = arith.minimumf %x, %hi5 : f32
  %b0 = arith.maximumf %a0, %lo5 : f32
  %y0 = arith.truncf %b0 : f32 to f8E4M3FN
  %hi447 = arith.constant 447.0 : f32
  %a1 = arith.minimumf %x, %hi447 : f32
  %b1 = arith.maximumf %a1, %lo : f32
  %y1 = arith.truncf %b1 : f32 to f8E4M3FN
  %a2 = arith.minimumf %x, %hi : f32
  %b2 = arith.maximumf %a2, %hi : f32
  %y2 = arith.truncf %b2 : f32 to f8E4M3FN
  %a3 = arith.minimumf %x, %hi : f32
  %b3 = arith.maximumf %a3, %lo : f32
  %y3 = arith.truncf %b3 : f32 to f8E4M3FN
  %a4 = arith.minimumf %x, %hi : f32
  %b4 = arith.maximumf %a4, %lo : f32
  %y4 = arith.truncf %b4 : f32 to f8E4M3FN
  %a5 = arith.minimumf %x, %hi : f32
  %b5 = arith.maxnumf %a5, %lo : f32
  %y5 = arith.truncf %b5 : f32 to f8E4M3FN
  %a6 = arith.minnumf %x, %hi : f32
  %b6 = arith.maximumf %a6, %lo : f32
  %y6 = arith.truncf %b6 : f32 to f8E4M3FN
  return %y0, %y1, %y2, %y3, %a3, %y4, %b4, %y5, %y6
      : f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f32, f8E4M3FN, f32, f8E4M3FN,
        f8E4M3FN
}
