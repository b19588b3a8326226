// REQUIRES: ptxas, cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" -o %t.sm90.mlir
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_80" -o %t.sm80.mlir
// RUN: %extract_ptx %t.sm90.mlir --name norm_bf16_partial_kernel -o %t.a90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name norm_in_place_kernel -o %t.b90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name i8_per_head_kernel -o %t.c90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name norm_e4m3_per_head_kernel -o %t.d90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name e5m2_interleaved_kernel -o %t.e90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.a90.ptx -o %t.a90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.b90.ptx -o %t.b90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.c90.ptx -o %t.c90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.d90.ptx -o %t.d90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.e90.ptx -o %t.e90.cubin 2>&1 | FileCheck %s
// RUN: %extract_ptx %t.sm80.mlir --name norm_bf16_partial_kernel -o %t.a80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name norm_in_place_kernel -o %t.b80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name i8_per_head_kernel -o %t.c80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name norm_e4m3_per_head_kernel -o %t.d80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name e5m2_interleaved_kernel -o %t.e80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.a80.ptx -o %t.a80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.b80.ptx -o %t.b80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.c80.ptx -o %t.c80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.d80.ptx -o %t.d80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.e80.ptx -o %t.e80.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t.d80.ptx

// The PTX of rope.apply with its fused neighbours (structure:
// test/Conversion/RopeToGPU/neighbours.mlir) assembles with CUDA's ptxas for
// sm_80 and sm_90 with no spills, no stack frame and no barrier: QK-norm
// (bf16, partial rotary; in place), i8 with a per-head scale, f8E4M3FN
// after QK-norm with a per-head scale and f8E5M2 on interleaved f32 with a
// per-tensor scale. The fp8 rounding is integer arithmetic (rope-expand-f8),
// not PTX's cvt to fp8 (sm_89+, and it saturates), so sm_80 takes it too.

// CHECK: Compiling entry function '{{.*}}_kernel' for 'sm_{{[89]}}0'
// CHECK-NOT: {{[1-9][0-9]*}} bytes stack frame
// CHECK: {{^ +}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 0 barriers

// PTX: .entry norm_e4m3_per_head_kernel
// PTX-NOT: cvt.{{.*}}e4m3
// PTX: rsqrt.approx
// PTX: st.global.v2.b32

func.func @norm_bf16_partial(%x: tensor<?x8x128xbf16>, %p: tensor<?xi64>, %w: tensor<128xbf16>, %init: tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16> {
  %y = rope.apply ins(%x : tensor<?x8x128xbf16>) positions(%p : tensor<?xi64>) norm(%w : tensor<128xbf16>) outs(%init : tensor<?x8x128xbf16>) {rotary_dim = 64 : i64, norm_epsilon = 1.0e-06} -> tensor<?x8x128xbf16>
  return %y : tensor<?x8x128xbf16>
}

func.func @norm_in_place(%x: tensor<?x8x128xf32>, %p: tensor<?xi64>, %w: tensor<128xf32>) -> tensor<?x8x128xf32> {
  %y = rope.apply ins(%x : tensor<?x8x128xf32>) positions(%p : tensor<?xi64>) norm(%w : tensor<128xf32>) outs(%x : tensor<?x8x128xf32>) {norm_epsilon = 1.0e-06} -> tensor<?x8x128xf32>
  return %y : tensor<?x8x128xf32>
}

func.func @i8_per_head(%x: tensor<?x8x128xbf16>, %p: tensor<?xi64>, %s: tensor<8xf32>, %init: tensor<?x8x128xi8>) -> tensor<?x8x128xi8> {
  %y = rope.apply ins(%x : tensor<?x8x128xbf16>) positions(%p : tensor<?xi64>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<?x8x128xi8>) {rotary_dim = 64 : i64} -> tensor<?x8x128xi8>
  return %y : tensor<?x8x128xi8>
}

func.func @norm_e4m3_per_head(%x: tensor<?x8x128xbf16>, %p: tensor<?xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %init: tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<?x8x128xbf16>) positions(%p : tensor<?xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) outs(%init : tensor<?x8x128xf8E4M3FN>) {freqs = #rope.default<base = 1000000.0>, norm_epsilon = 1.0e-06} -> tensor<?x8x128xf8E4M3FN>
  return %y : tensor<?x8x128xf8E4M3FN>
}

func.func @e5m2_interleaved(%x: tensor<?x8x128xf32>, %p: tensor<?xi64>, %s: tensor<f32>, %init: tensor<?x8x128xf8E5M2>) -> tensor<?x8x128xf8E5M2> {
  %y = rope.apply ins(%x : tensor<?x8x128xf32>) positions(%p : tensor<?xi64>) quant_scale(%s : tensor<f32>) outs(%init : tensor<?x8x128xf8E5M2>) {layout = #rope.layout<interleaved>, rotary_dim = 96 : i64} -> tensor<?x8x128xf8E5M2>
  return %y : tensor<?x8x128xf8E5M2>
}
