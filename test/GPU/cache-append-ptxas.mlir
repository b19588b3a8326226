// REQUIRES: ptxas, cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" -o %t.sm90.mlir
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_80" -o %t.sm80.mlir
// RUN: %extract_ptx %t.sm90.mlir --name contiguous_bf16_kernel -o %t.a90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name hf_partial_f32_kernel -o %t.b90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name paged_norm_e4m3_kernel -o %t.c90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name write_v_bf16_kernel -o %t.d90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name write_v_i8_kernel -o %t.e90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name mla_concatenated_kernel -o %t.f90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name mla_concatenated_kernel_0 -o %t.g90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name paged_mla_view_kernel -o %t.h90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.a90.ptx -o %t.a90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.b90.ptx -o %t.b90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.c90.ptx -o %t.c90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.d90.ptx -o %t.d90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.e90.ptx -o %t.e90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.f90.ptx -o %t.f90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.g90.ptx -o %t.g90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.h90.ptx -o %t.h90.cubin 2>&1 | FileCheck %s
// RUN: %extract_ptx %t.sm80.mlir --name contiguous_bf16_kernel -o %t.a80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name hf_partial_f32_kernel -o %t.b80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name paged_norm_e4m3_kernel -o %t.c80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name write_v_bf16_kernel -o %t.d80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name write_v_i8_kernel -o %t.e80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name mla_concatenated_kernel -o %t.f80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name mla_concatenated_kernel_0 -o %t.g80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name paged_mla_view_kernel -o %t.h80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.a80.ptx -o %t.a80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.b80.ptx -o %t.b80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.c80.ptx -o %t.c80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.d80.ptx -o %t.d80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.e80.ptx -o %t.e80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.f80.ptx -o %t.f80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.g80.ptx -o %t.g80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.h80.ptx -o %t.h80.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t.a80.ptx
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" --mlir-print-ir-before=gpu-kernel-outlining --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPLACE
// RUN: FileCheck %s --check-prefix=COPY < %t.d90.ptx
// RUN: FileCheck %s --check-prefix=MLA < %t.f90.ptx
// RUN: FileCheck %s --check-prefix=MLA2 < %t.g90.ptx

// The PTX of the KV-cache append kernels (structure:
// test/Conversion/RopeToGPU/cache-append.mlir) assembles with CUDA's ptxas
// for sm_80 and sm_90 with no spills, no stack frame and no barrier:
// rope.apply with slots into a contiguous bf16 cache (decode, one token per
// row), Hugging Face's [B, Hkv, max_len, D] with partial rotary and i32
// slots, a paged fp8 cache after QK-norm with a per-head scale;
// rope.cache_write plain (bf16) and quantized (i8, per-head scale); MLA's
// concatenated cache written through slices of it (strided buffers), also
// paged ([pages, 16, 576] collapsed, the rope slice viewed [N, 1, 64]).

// CHECK: Compiling entry function '{{.*}}_kernel' for 'sm_{{[89]}}0'
// CHECK-NOT: {{[1-9][0-9]*}} bytes stack frame
// CHECK: {{^ +}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 0 barriers

// A token's rows are stored only for a valid slot: a branch on the slot's
// two comparisons, then 16-byte stores.
// PTX: .entry contiguous_bf16_kernel
// PTX: setp.{{[a-z]+}}.s64
// PTX: @{{%p[0-9]+}} bra
// PTX: st.global.v4.b32

// The copy: a 16-byte load and a 16-byte store per piece of a row.
// COPY: .entry write_v_bf16_kernel
// COPY: ld.global.v4.b32
// COPY: st.global.v4.b32

// The MLA kernels store into the cache's own buffer (the rotated k_pe at
// byte offset 1024 of a row: channel 512) 16 bytes at a time.
// MLA: .entry mla_concatenated_kernel
// MLA: st.global.v4.b32 [%rd{{[0-9]+}}+1024]
// MLA2: .entry mla_concatenated_kernel
// MLA2: ld.global.v4.b32
// MLA2: st.global.v4.b32

// The whole pipeline's bufferization (and deallocation), just before
// outlining: MLA's caches written in place, the K cache through the
// subview of its rope channels, the V part through [0, 512), q's rope
// channels rotated in place; nothing allocated or copied (a function that
// returns its tensor argument gets a clone from ownership-based
// deallocation, so this one writes its memref arguments).
// INPLACE-LABEL: func.func @mla_in_place(
//  INPLACE-SAME:     %[[Q:[^:]*]]: memref<?x16x192xbf16>, %{{[^:]*}}: memref<?x1x512xbf16>, %{{[^:]*}}: memref<?x1x64xbf16>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: memref<?xi64>, %[[C:[^:]*]]: memref<?x1x576xbf16>)
//   INPLACE-NOT:   memref.alloc
//   INPLACE-NOT:   memref.copy
//       INPLACE:   memref.subview %[[Q]][0, 0, 128]
//       INPLACE:   gpu.launch
//       INPLACE:   memref.subview %[[C]][0, 0, 512]
//       INPLACE:   gpu.launch
//       INPLACE:   memref.subview %[[C]][0, 0, 0]
//       INPLACE:   gpu.launch
//   INPLACE-NOT:   memref.alloc
//   INPLACE-NOT:   memref.copy
//       INPLACE:   return

func.func @contiguous_bf16(%k: tensor<?x1x8x128xbf16>, %pos: tensor<?x1xi64>, %slots: tensor<?x1xi64>, %cache: tensor<?x4096x8x128xbf16>) -> tensor<?x4096x8x128xbf16> {
  %r = rope.apply ins(%k : tensor<?x1x8x128xbf16>) positions(%pos : tensor<?x1xi64>) slots(%slots : tensor<?x1xi64>) outs(%cache : tensor<?x4096x8x128xbf16>) {freqs = #rope.default<base = 500000.0>} -> tensor<?x4096x8x128xbf16>
  return %r : tensor<?x4096x8x128xbf16>
}

func.func @hf_partial_f32(%k: tensor<?x8x?x128xf32>, %slots: tensor<?x?xi32>, %cache: tensor<?x8x?x128xf32>) -> tensor<?x8x?x128xf32> {
  %r = rope.apply ins(%k : tensor<?x8x?x128xf32>) slots(%slots : tensor<?x?xi32>) outs(%cache : tensor<?x8x?x128xf32>) {token_dims = array<i64: 0, 2>, rotary_dim = 64 : i64} -> tensor<?x8x?x128xf32>
  return %r : tensor<?x8x?x128xf32>
}

func.func @paged_norm_e4m3(%k: tensor<?x8x128xbf16>, %pos: tensor<?xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %slots: tensor<?xi64>, %cache: tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN> {
  %r = rope.apply ins(%k : tensor<?x8x128xbf16>) positions(%pos : tensor<?xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) slots(%slots : tensor<?xi64>) outs(%cache : tensor<?x8x128xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<?x8x128xf8E4M3FN>
  return %r : tensor<?x8x128xf8E4M3FN>
}

func.func @write_v_bf16(%v: tensor<?x8x128xbf16>, %slots: tensor<?xi64>, %cache: tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16> {
  %r = rope.cache_write ins(%v : tensor<?x8x128xbf16>) slots(%slots : tensor<?xi64>) outs(%cache : tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16>
  return %r : tensor<?x8x128xbf16>
}

func.func @write_v_i8(%v: tensor<?x8x128xbf16>, %slots: tensor<?xi32>, %s: tensor<8xf32>, %cache: tensor<?x8x128xi8>) -> tensor<?x8x128xi8> {
  %r = rope.cache_write ins(%v : tensor<?x8x128xbf16>) slots(%slots : tensor<?xi32>) quant_scale(%s : tensor<8xf32>) outs(%cache : tensor<?x8x128xi8>) -> tensor<?x8x128xi8>
  return %r : tensor<?x8x128xi8>
}

func.func @mla_concatenated(%kpe: tensor<?x1x64xbf16>, %ckv: tensor<?x1x512xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %cache: tensor<?x1x576xbf16>) -> tensor<?x1x576xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %cache, %c0 : tensor<?x1x576xbf16>
  %pe = tensor.extract_slice %cache[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x64xbf16>
  %r = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%slots : tensor<?xi64>) outs(%pe : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %c1 = tensor.insert_slice %r into %cache[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
  %kv = tensor.extract_slice %c1[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x512xbf16>
  %w = rope.cache_write ins(%ckv : tensor<?x1x512xbf16>) slots(%slots : tensor<?xi64>) outs(%kv : tensor<?x1x512xbf16>) -> tensor<?x1x512xbf16>
  %c2 = tensor.insert_slice %w into %c1[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x512xbf16> into tensor<?x1x576xbf16>
  return %c2 : tensor<?x1x576xbf16>
}

func.func @paged_mla_view(%kpe: tensor<?x1x64xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %pages: tensor<?x16x576xbf16>) -> tensor<?x16x576xbf16> {
  %rows = tensor.collapse_shape %pages [[0, 1], [2]] : tensor<?x16x576xbf16> into tensor<?x576xbf16>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %rows, %c0 : tensor<?x576xbf16>
  %np = tensor.dim %pages, %c0 : tensor<?x16x576xbf16>
  %pe = tensor.extract_slice %rows[0, 512] [%n, 64] [1, 1] : tensor<?x576xbf16> to tensor<?x64xbf16>
  %pe3 = tensor.expand_shape %pe [[0], [1, 2]] output_shape [%n, 1, 64] : tensor<?x64xbf16> into tensor<?x1x64xbf16>
  %r = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%slots : tensor<?xi64>) outs(%pe3 : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %r2 = tensor.collapse_shape %r [[0], [1, 2]] : tensor<?x1x64xbf16> into tensor<?x64xbf16>
  %rows2 = tensor.insert_slice %r2 into %rows[0, 512] [%n, 64] [1, 1] : tensor<?x64xbf16> into tensor<?x576xbf16>
  %out = tensor.expand_shape %rows2 [[0, 1], [2]] output_shape [%np, 16, 576] : tensor<?x576xbf16> into tensor<?x16x576xbf16>
  return %out : tensor<?x16x576xbf16>
}

func.func @mla_in_place(%qm: memref<?x16x192xbf16>, %ckvm: memref<?x1x512xbf16>, %kpem: memref<?x1x64xbf16>, %posm: memref<?xi64>, %slotsm: memref<?xi64>, %cachem: memref<?x1x576xbf16>) {
  %q = bufferization.to_tensor %qm restrict writable : memref<?x16x192xbf16> to tensor<?x16x192xbf16>
  %ckv = bufferization.to_tensor %ckvm restrict : memref<?x1x512xbf16> to tensor<?x1x512xbf16>
  %kpe = bufferization.to_tensor %kpem restrict : memref<?x1x64xbf16> to tensor<?x1x64xbf16>
  %pos = bufferization.to_tensor %posm restrict : memref<?xi64> to tensor<?xi64>
  %slots = bufferization.to_tensor %slotsm restrict : memref<?xi64> to tensor<?xi64>
  %cache = bufferization.to_tensor %cachem restrict writable : memref<?x1x576xbf16> to tensor<?x1x576xbf16>
  %c0 = arith.constant 0 : index
  %t = tensor.dim %q, %c0 : tensor<?x16x192xbf16>
  %n = tensor.dim %cache, %c0 : tensor<?x1x576xbf16>
  %qs = tensor.extract_slice %q[0, 0, 128] [%t, 16, 64] [1, 1, 1] : tensor<?x16x192xbf16> to tensor<?x16x64xbf16>
  %qr = rope.apply ins(%qs : tensor<?x16x64xbf16>) positions(%pos : tensor<?xi64>) outs(%qs : tensor<?x16x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x16x64xbf16>
  %q2 = tensor.insert_slice %qr into %q[0, 0, 128] [%t, 16, 64] [1, 1, 1] : tensor<?x16x64xbf16> into tensor<?x16x192xbf16>
  %pe = tensor.extract_slice %cache[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x64xbf16>
  %kr = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%slots : tensor<?xi64>) outs(%pe : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %c1 = tensor.insert_slice %kr into %cache[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
  %kv = tensor.extract_slice %c1[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x512xbf16>
  %w = rope.cache_write ins(%ckv : tensor<?x1x512xbf16>) slots(%slots : tensor<?xi64>) outs(%kv : tensor<?x1x512xbf16>) -> tensor<?x1x512xbf16>
  %c2 = tensor.insert_slice %w into %c1[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x512xbf16> into tensor<?x1x576xbf16>
  bufferization.materialize_in_destination %q2 in restrict writable %qm : (tensor<?x16x192xbf16>, memref<?x16x192xbf16>) -> ()
  bufferization.materialize_in_destination %c2 in restrict writable %cachem : (tensor<?x1x576xbf16>, memref<?x1x576xbf16>) -> ()
  return
}
