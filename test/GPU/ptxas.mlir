// REQUIRES: ptxas, cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" -o %t.sm90.mlir
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_80" -o %t.sm80.mlir
// RUN: %extract_ptx %t.sm90.mlir --name half_f32_kernel -o %t.a90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name interleaved_f16_partial_kernel -o %t.b90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name bf16_gathered_kernel -o %t.c90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name pregathered_offset_kernel -o %t.d90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name bhsd_scalar_offset_kernel -o %t.e90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name mrope_dynamic_kernel -o %t.f90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name yarn_f64_kernel -o %t.g90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name dynamic_ntk_positions_kernel -o %t.h90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name longrope_row_offset_kernel -o %t.i90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.a90.ptx -o %t.a90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.b90.ptx -o %t.b90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.c90.ptx -o %t.c90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.d90.ptx -o %t.d90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.e90.ptx -o %t.e90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.f90.ptx -o %t.f90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.g90.ptx -o %t.g90.cubin 2>&1 | FileCheck %s --check-prefix=F64
// RUN: %ptxas -arch=sm_90 -v %t.h90.ptx -o %t.h90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.i90.ptx -o %t.i90.cubin 2>&1 | FileCheck %s
// RUN: %extract_ptx %t.sm80.mlir --name half_f32_kernel -o %t.a80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name interleaved_f16_partial_kernel -o %t.b80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name bf16_gathered_kernel -o %t.c80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name pregathered_offset_kernel -o %t.d80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name bhsd_scalar_offset_kernel -o %t.e80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name mrope_dynamic_kernel -o %t.f80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name yarn_f64_kernel -o %t.g80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name dynamic_ntk_positions_kernel -o %t.h80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name longrope_row_offset_kernel -o %t.i80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.a80.ptx -o %t.a80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.b80.ptx -o %t.b80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.c80.ptx -o %t.c80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.d80.ptx -o %t.d80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.e80.ptx -o %t.e80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.f80.ptx -o %t.f80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.g80.ptx -o %t.g80.cubin 2>&1 | FileCheck %s --check-prefix=F64
// RUN: %ptxas -arch=sm_80 -v %t.h80.ptx -o %t.h80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.i80.ptx -o %t.i80.cubin 2>&1 | FileCheck %s
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90 format=bin" | FileCheck %s --check-prefix=CUBIN

// The PTX of every form (layouts, partial rotary, f32/f16/bf16/f64, computed
// and cached cos/sin, explicit, offset and M-RoPE positions, dynamic sizes,
// the length-dependent schemes dynamic NTK and LongRoPE without caches)
// assembles with CUDA's ptxas for sm_80 and sm_90, with no spills and no
// stack frame (libdevice is linked, nothing is left external). f64 data uses
// libdevice's f64 cos/sin, whose Payne-Hanek fallback for huge arguments
// keeps a 40-byte local array (never reached: the angle is already reduced
// to [-pi, pi]), so only that kernel has a stack frame.

// CHECK: Compiling entry function '{{.*}}_kernel' for 'sm_{{[89]}}0'
// CHECK-NOT: {{[1-9][0-9]*}} bytes stack frame
// CHECK: {{^ +}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers

// F64: Compiling entry function 'yarn_f64_kernel'
// F64: bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// format=bin runs ptxas through the toolkit and embeds a cubin.
// CUBIN: gpu.binary @half_f32_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF

func.func @half_f32(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

func.func @interleaved_f16_partial(%x: tensor<8x4x128xf16>, %p: tensor<8xi32>, %init: tensor<8x4x128xf16>) -> tensor<8x4x128xf16> {
  %y = rope.apply ins(%x : tensor<8x4x128xf16>) positions(%p : tensor<8xi32>) outs(%init : tensor<8x4x128xf16>) {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64, inverse} -> tensor<8x4x128xf16>
  return %y : tensor<8x4x128xf16>
}

func.func @bf16_gathered(%x: tensor<2x16x4x64xbf16>, %p: tensor<2x16xi64>, %cos: tensor<2048x32xf32>, %sin: tensor<2048x32xf32>, %init: tensor<2x16x4x64xbf16>) -> tensor<2x16x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xbf16>) positions(%p : tensor<2x16xi64>) cache(%cos, %sin : tensor<2048x32xf32>, tensor<2048x32xf32>) outs(%init : tensor<2x16x4x64xbf16>) -> tensor<2x16x4x64xbf16>
  return %y : tensor<2x16x4x64xbf16>
}

func.func @pregathered_offset(%x: tensor<2x16x4x64xf16>, %cos: tensor<2x16x32xf16>, %sin: tensor<2x16x32xf16>, %init: tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf16>) cache(%cos, %sin : tensor<2x16x32xf16>, tensor<2x16x32xf16>) outs(%init : tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16>
  return %y : tensor<2x16x4x64xf16>
}

func.func @bhsd_scalar_offset(%x: tensor<2x8x16x64xf32>, %o: i64, %init: tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x16x64xf32>) offset(%o : i64) outs(%init : tensor<2x8x16x64xf32>) {token_dims = array<i64: 0, 2>, freqs = #rope.llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192, base = 500000.0>} -> tensor<2x8x16x64xf32>
  return %y : tensor<2x8x16x64xf32>
}

func.func @mrope_dynamic(%x: tensor<?x4x64xf32>, %p: tensor<3x?xi64>, %init: tensor<?x4x64xf32>) -> tensor<?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<3x?xi64>) outs(%init : tensor<?x4x64xf32>) {mrope = #rope.mrope<section = [16, 8, 8], interleaved = true>} -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}

func.func @yarn_f64(%x: tensor<8x2x64xf64>, %init: tensor<8x2x64xf64>) -> tensor<8x2x64xf64> {
  %y = rope.apply ins(%x : tensor<8x2x64xf64>) outs(%init : tensor<8x2x64xf64>) {freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>, magnitude = 1.1386294361119891 : f64} -> tensor<8x2x64xf64>
  return %y : tensor<8x2x64xf64>
}

func.func @dynamic_ntk_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 4.0, max_position_embeddings = 2048>} -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

func.func @longrope_row_offset(%x: tensor<2x?x4x8xf16>, %o: tensor<2xi64>, %init: tensor<2x?x4x8xf16>) -> tensor<2x?x4x8xf16> {
  %y = rope.apply ins(%x : tensor<2x?x4x8xf16>) offset(%o : tensor<2xi64>) outs(%init : tensor<2x?x4x8xf16>) {magnitude = 1.1902380714238083, freqs = #rope.longrope<short_factor = [1.0, 1.5, 1.25, 2.0], long_factor = [2.0, 4.0, 3.0, 8.0], original_max_position_embeddings = 4096, factor = 32.0>} -> tensor<2x?x4x8xf16>
  return %y : tensor<2x?x4x8xf16>
}
