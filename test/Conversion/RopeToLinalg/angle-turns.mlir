// RUN: rope-opt %s --split-input-file --convert-rope-to-linalg=angle=turns | FileCheck %s --check-prefix=LINALG
// RUN: rope-opt %s --split-input-file --convert-rope-to-vector=angle=turns | FileCheck %s --check-prefix=VECTOR
// RUN: rope-opt %s --split-input-file --convert-rope-to-gpu=angle=turns | FileCheck %s --check-prefix=GPU
// RUN: rope-opt %s --split-input-file --convert-rope-to-linalg | FileCheck %s --check-prefix=F64
// RUN: rope-opt %s --split-input-file --convert-rope-to-linalg=angle=turns-or-f64 | FileCheck %s --check-prefix=LINALG
// RUN: rope-opt %s --split-input-file --rope-to-nvvm="chip=sm_89 format=isa" | FileCheck %s --check-prefix=SM89
// RUN: rope-opt %s --split-input-file --rope-to-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=SM90

// angle=turns (RopeArith.h, AngleMethod::Turns): the angle with no float
// wider than f32. theta_i is an i64 phase step, round(frac(theta_i / 2pi) *
// 2^52) (theta_0 = 1: 716770142402832); the product with the i64 position
// wraps, its low 52 bits are the phase, centred by a shift up and an
// arithmetic shift down, split for an exact conversion to f32, and made
// radians by FMAs. Every lowering reads the same steps; no f64 anywhere
// (the default method forms the angle in f64).

// LINALG-LABEL: func.func @default_f32
// LINALG-NOT: f64
// LINALG: arith.constant dense<[716770142402832, {{.*}}]> : tensor<32xi64>
// LINALG: arith.muli {{.*}} : i64
// LINALG: arith.shli {{.*}} : i64
// LINALG: arith.shrsi {{.*}} : i64
// LINALG: math.fma {{.*}} : f32
// LINALG-NOT: f64
// LINALG: return
// VECTOR-LABEL: func.func @default_f32
// VECTOR-NOT: f64
// VECTOR: arith.muli {{.*}} : vector<32xi64>
// VECTOR-NOT: f64
// VECTOR: return
// GPU: memref.global "private" constant @__rope_phase_step : memref<32xi64> = dense<[716770142402832,
// GPU-LABEL: func.func @default_f32
// GPU-NOT: f64
// GPU: return
// F64-LABEL: func.func @default_f32
// F64: tensor<32xf64>
// The chip decides rope-to-nvvm's default: sm_89 (1/64-rate f64) gets
// turns, sm_90 keeps the f64 angle.
// SM89-NOT: .f64
// SM89: // -----
// SM90: .f64
// SM90: // -----
func.func @default_f32(%x: tensor<4x8x64xf32>, %p: tensor<4xi64>) -> tensor<4x8x64xf32> {
  %e = tensor.empty() : tensor<4x8x64xf32>
  %y = rope.apply ins(%x : tensor<4x8x64xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// -----

// LongRoPE's two tables are two tables of steps, one picked per call by
// the length (an integer compare). In the linalg form the positions'
// maximum stays a 0-d tensor read by the table generic, which picks per
// element (no scalar extracted outside linalg: a read back to the host in
// IREE).
// LINALG-LABEL: func.func @longrope_bf16
// LINALG-NOT: f64
// LINALG: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]
// LINALG-NOT: tensor.extract %[[MAX]]
// LINALG: linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] : tensor<6xi32>, tensor<i64>)
// LINALG: %[[LONG:.*]] = arith.cmpi sgt
// LINALG: arith.select %[[LONG]], %{{.*}}, %{{.*}} : i64
// LINALG-NOT: f64
// LINALG: return
// VECTOR-LABEL: func.func @longrope_bf16
// VECTOR-NOT: f64
// VECTOR: arith.select {{.*}} : vector<4xi64>
// VECTOR-NOT: f64
// VECTOR: return
// GPU-LABEL: func.func @longrope_bf16
// GPU-NOT: f64
// GPU: return
// SM89-NOT: .f64
// SM89: // -----
func.func @longrope_bf16(%x: tensor<6x2x8xbf16>, %p: tensor<6xi32>) -> tensor<6x2x8xbf16> {
  %e = tensor.empty() : tensor<6x2x8xbf16>
  %y = rope.apply ins(%x : tensor<6x2x8xbf16>) positions(%p : tensor<6xi32>) outs(%e : tensor<6x2x8xbf16>) {freqs = #rope.longrope<base = 10000.0, short_factor = [1.0, 1.5, 2.0, 2.5], long_factor = [1.0, 3.0, 5.0, 7.0], original_max_position_embeddings = 4>} -> tensor<6x2x8xbf16>
  return %y : tensor<6x2x8xbf16>
}

// -----

// f64 data computes in f64 whatever the method: the f64 angle.
// LINALG-LABEL: func.func @f64_data
// LINALG: tensor<32xf64>
// VECTOR-LABEL: func.func @f64_data
// VECTOR: vector<32xf64>
func.func @f64_data(%x: tensor<4x64xf64>, %p: tensor<4xi64>) -> tensor<4x64xf64> {
  %e = tensor.empty() : tensor<4x64xf64>
  %y = rope.apply ins(%x : tensor<4x64xf64>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x64xf64>) -> tensor<4x64xf64>
  return %y : tensor<4x64xf64>
}

// -----

// dynamic_ntk's steps depend on the call's length: computed once per call
// in fixed point, integers only (RopeFrequencies.cpp: d * s/M as a 128-bit
// product, log2 r and 2^-t digit by digit, the unscaled steps times w^i),
// so no float of any width before the f32 angle. The linalg form computes
// the P/2 steps in one generic over the pairs.
// LINALG-LABEL: func.func @dynamic_ntk_f32
// LINALG-NOT: f64
// LINALG: math.ctlz {{.*}} : i64
// LINALG: arith.mului_extended {{.*}} : i64
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}}outs(%{{.*}} : tensor<32xi64>)
// LINALG: arith.mului_extended {{.*}} : i64
// LINALG-NOT: f64
// LINALG: return
// VECTOR-LABEL: func.func @dynamic_ntk_f32
// VECTOR-NOT: f64
// VECTOR: arith.mului_extended {{.*}} : vector<32xi64>
// VECTOR-NOT: f64
// VECTOR: return
// GPU-LABEL: func.func @dynamic_ntk_f32
// GPU-NOT: f64
// GPU: arith.mului_extended
// GPU-NOT: f64
// GPU: return
// F64-LABEL: func.func @dynamic_ntk_f32
// F64: math.exp {{.*}} : f64
// SM89-NOT: .f64
// SM89: // -----
func.func @dynamic_ntk_f32(%x: tensor<4x8x64xf32>, %p: tensor<4xi64>) -> tensor<4x8x64xf32> {
  %e = tensor.empty() : tensor<4x8x64xf32>
  %y = rope.apply ins(%x : tensor<4x8x64xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x8x64xf32>) {freqs = #rope.dynamic_ntk<base = 10000.0, factor = 2.0, max_position_embeddings = 64>} -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}
