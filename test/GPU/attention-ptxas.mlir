// REQUIRES: ptxas, cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" -o %t.sm90.mlir
// RUN: rope-opt %s --rope-to-nvvm="chip=sm_80" -o %t.sm80.mlir
// RUN: %extract_ptx %t.sm90.mlir --name decode_kernel -o %t.a90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name prefill_kernel -o %t.b90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name prefill_kernel_0 -o %t.c90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name bshd_mask_window_kernel -o %t.d90.ptx
// RUN: %extract_ptx %t.sm90.mlir --name dynamic_i1_softcap_kernel -o %t.e90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.a90.ptx -o %t.a90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.b90.ptx -o %t.b90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.c90.ptx -o %t.c90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.d90.ptx -o %t.d90.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90 -v %t.e90.ptx -o %t.e90.cubin 2>&1 | FileCheck %s
// RUN: %extract_ptx %t.sm80.mlir --name decode_kernel -o %t.a80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name prefill_kernel -o %t.b80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name prefill_kernel_0 -o %t.c80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name bshd_mask_window_kernel -o %t.d80.ptx
// RUN: %extract_ptx %t.sm80.mlir --name dynamic_i1_softcap_kernel -o %t.e80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.a80.ptx -o %t.a80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.b80.ptx -o %t.b80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.c80.ptx -o %t.c80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.d80.ptx -o %t.d80.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_80 -v %t.e80.ptx -o %t.e80.cubin 2>&1 | FileCheck %s

// The PTX of rope.attention's kernels (test/GPU/attention-mapping.mlir
// shows the mapping) assembles with CUDA's ptxas for sm_80 and sm_90:
// f16 decode on an un-rotated cache with Q and K rotated inside the kernel,
// bf16 causal prefill (K rotated by its own kernel, prefill_kernel; the
// attention in prefill_kernel_0), [B, S, H, D] with a float mask, a
// sliding window and offsets, dynamic lengths with an i1 mask and a softcap
// region. Nothing is left external (libdevice's exp/tanh are linked), and
// no kernel uses shared memory or a barrier: one thread owns one query row.
// The row's state, scores and rotated tiles are per-thread local memory
// (the stack frame ptxas reports).

// CHECK: Compiling entry function '{{.*}}_kernel' for 'sm_{{[89]}}0'
// CHECK: Used {{[0-9]+}} registers, used 0 barriers
// CHECK-NOT: smem

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#p = affine_map<(b, h, g, m, k1, k2, n) -> (b, m)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>

// Llama-3-8B-like decode on an un-rotated f16 cache: GQA (8 KV heads, 4
// query heads each), explicit positions, Q and K rotated by rope.apply (K
// per key tile inside the kernel).
func.func @decode(%x: tensor<2x8x4x1x128xf16>, %pos: tensor<2x1xi64>, %y: tensor<2x8x4096x128xf16>, %v: tensor<2x8x4096x128xf16>) -> tensor<2x8x4x1x128xf16> {
  %e = tensor.empty() : tensor<2x8x4x1x128xf16>
  %qr = rope.apply ins(%x : tensor<2x8x4x1x128xf16>) positions(%pos : tensor<2x1xi64>) outs(%e : tensor<2x8x4x1x128xf16>) {token_dims = array<i64: 0, 3>, freqs = #rope.default<base = 500000.0>} -> tensor<2x8x4x1x128xf16>
  %ek = tensor.empty() : tensor<2x8x4096x128xf16>
  %kr = rope.apply ins(%y : tensor<2x8x4096x128xf16>) outs(%ek : tensor<2x8x4096x128xf16>) {token_dims = array<i64: 0, 2>, freqs = #rope.default<base = 500000.0>} -> tensor<2x8x4096x128xf16>
  %o = tensor.empty() : tensor<2x8x4x1x128xf16>
  %r = rope.attention ins(%qr, %kr, %v : tensor<2x8x4x1x128xf16>, tensor<2x8x4096x128xf16>, tensor<2x8x4096x128xf16>) query_positions(%pos : tensor<2x1xi64>) outs(%o : tensor<2x8x4x1x128xf16>) attributes {indexing_maps = [#q, #k, #v, #p, #o], scale = 0.08838834764831845 : f64, causal, query_dim = 3} -> tensor<2x8x4x1x128xf16>
  return %r : tensor<2x8x4x1x128xf16>
}

// Causal prefill, bf16, GQA: Q rotated per row inside the attention kernel,
// K rotated whole by its own kernel (prefill_kernel), attention in
// prefill_kernel_0.
func.func @prefill(%x: tensor<1x8x4x512x128xbf16>, %y: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>) -> tensor<1x8x4x512x128xbf16> {
  %e = tensor.empty() : tensor<1x8x4x512x128xbf16>
  %qr = rope.apply ins(%x : tensor<1x8x4x512x128xbf16>) outs(%e : tensor<1x8x4x512x128xbf16>) {token_dims = array<i64: 0, 3>} -> tensor<1x8x4x512x128xbf16>
  %ek = tensor.empty() : tensor<1x8x512x128xbf16>
  %kr = rope.apply ins(%y : tensor<1x8x512x128xbf16>) outs(%ek : tensor<1x8x512x128xbf16>) {token_dims = array<i64: 0, 2>} -> tensor<1x8x512x128xbf16>
  %o = tensor.empty() : tensor<1x8x4x512x128xbf16>
  %r = rope.attention ins(%qr, %kr, %v : tensor<1x8x4x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>) outs(%o : tensor<1x8x4x512x128xbf16>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.08838834764831845 : f64, causal, query_dim = 3} -> tensor<1x8x4x512x128xbf16>
  return %r : tensor<1x8x4x512x128xbf16>
}

// [B, S, H, D] with Dv != D, a float [Sq, Sk] mask, a causal sliding
// window positioned by query and key offsets (index arguments).
func.func @bshd_mask_window(%q: tensor<2x64x8x64xf32>, %k: tensor<2x256x8x64xf32>, %v: tensor<2x256x8x32xf32>, %mask: tensor<64x256xf32>, %qoff: index, %koff: index) -> tensor<2x64x8x32xf32> {
  %o = tensor.empty() : tensor<2x64x8x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x64x8x64xf32>, tensor<2x256x8x64xf32>, tensor<2x256x8x32xf32>) mask(%mask : tensor<64x256xf32>) query_offset(%qoff) key_offset(%koff) outs(%o : tensor<2x64x8x32xf32>) attributes {indexing_maps = [affine_map<(b, m, h, k1, k2, n) -> (b, m, h, k1)>, affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, k1)>, affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, n)>, affine_map<(b, m, h, k1, k2, n) -> (m, k2)>, affine_map<(b, m, h, k1, k2, n) -> (b, m, h, n)>], scale = 0.125 : f64, causal, window = 128 : i64} -> tensor<2x64x8x32xf32>
  return %r : tensor<2x64x8x32xf32>
}

// Dynamic query and key lengths, an i1 mask, a softcap score region.
func.func @dynamic_i1_softcap(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>, %mask: tensor<1x4x?x?xi1>) -> tensor<1x4x?x64xf32> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<1x4x?x64xf32>
  %o = tensor.empty(%sq) : tensor<1x4x?x64xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) mask(%mask : tensor<1x4x?x?xi1>) outs(%o : tensor<1x4x?x64xf32>) attributes {indexing_maps = [affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>, affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>, affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>, affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k2)>, affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>], scale = 0.125 : f64} {
  ^bb0(%s: f32, %ib: index, %ih: index, %im: index, %ik: index):
    %c = arith.constant 30.0 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    rope.yield %r : f32
  } -> tensor<1x4x?x64xf32>
  return %r : tensor<1x4x?x64xf32>
}
