// REQUIRES: cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm --mlir-print-ir-after=convert-linalg-to-loops --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAUNCH --enable-var-scope
// RUN: rope-opt %s --rope-to-nvvm --mlir-print-ir-after=convert-gpu-to-nvvm --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM --enable-var-scope
// RUN: rope-opt %s --rope-to-nvvm="attention-block-size=64 attention-fuse-key=never" --mlir-print-ir-after=convert-linalg-to-loops --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS --enable-var-scope

// How rope-to-nvvm maps rope.attention (lib/Conversion/RopeToGPU/
// AttentionToGPU.cpp): the FlashAttention loops of rope-tile-attention
// with one query row per iteration (B x Hkv x G x Sq rows, collapsed) go to
// a 1-D grid of 1-D blocks, one row per thread; each thread runs its row's
// whole online softmax over the key tiles, with its state, scores and
// rotated tiles in per-thread allocas (local memory); no shared memory, no
// barrier. The rotations fused into the loops are computed inline by the
// thread; a rotation left whole (K in prefill) is its own convert-rope-to-gpu
// kernel, launched first.

// Decode: 2 x 2 x 4 x 1 = 16 rows: one block of 16 threads. Q rotated per
// row and K per key tile (16 keys, the default attention-key-tile) inside
// the thread; nothing is allocated on the heap inside the kernel.
// LAUNCH-LABEL: func.func @decode(
//   LAUNCH-NOT:   rope.
//       LAUNCH:   gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c1, {{.*}} = %c1) {
//       LAUNCH:     memref.alloca() {{.*}} : memref<1x1x1x1x16xf32>
//       LAUNCH:     memref.alloca() {{.*}} : memref<1x1x16x64xf32>
//   LAUNCH-NOT:     memref.alloc(
//       LAUNCH:     memref.alloca() {{.*}} : memref<1x1x1x1x64xf32>
//   LAUNCH-NOT:     memref.alloc(
//       LAUNCH:     scf.for %{{.*}} = %c0 to %c1024 step %c16 {
//       LAUNCH:       scf.if
//   LAUNCH-NOT:     memref.alloc(
//       LAUNCH:     gpu.terminator
//   LAUNCH-NOT:   gpu.launch
// Prefill: 1 x 2 x 4 x 200 = 1600 rows: 13 blocks of 128 threads, the last
// one guarded; K is rotated whole by the kernel before it.
//       LAUNCH: func.func @prefill(
//       LAUNCH:   gpu.launch blocks({{.*}}) in ({{.*}} = %c7, {{.*}}) threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c32, {{.*}})
//       LAUNCH:   gpu.launch blocks({{.*}}) in ({{.*}} = %c13, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) {
//       LAUNCH:     arith.cmpi ult, %{{.*}}, %c1600 : index
//       LAUNCH:     scf.if

// NVVM-LABEL: gpu.module @decode_kernel
//       NVVM:   llvm.func @decode_kernel(
//  NVVM-SAME:     gpu.known_block_size = array<i32: 16, 1, 1>
//       NVVM:     nvvm.read.ptx.sreg.tid.x
//       NVVM:     llvm.alloca
//   NVVM-NOT:     nvvm.barrier
//       NVVM:     llvm.call @__nv_expf
//   NVVM-NOT:     nvvm.barrier
//       NVVM: gpu.module @prefill_kernel_0
//       NVVM:   llvm.func @prefill_kernel(
//  NVVM-SAME:     gpu.known_block_size = array<i32: 128, 1, 1>
//       NVVM:     nvvm.read.ptx.sreg.ctaid.x
//       NVVM:     nvvm.read.ptx.sreg.tid.x
//   NVVM-NOT:     nvvm.barrier

// attention-block-size=64: 25 blocks of 64; attention-fuse-key=never: K
// rotated by its own kernel in decode too.
// OPTIONS-LABEL: func.func @decode(
//       OPTIONS:   gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c32, {{.*}})
//       OPTIONS:   gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c16, {{.*}})
//   OPTIONS-NOT:     memref.alloca() {{.*}} : memref<1x1x16x64xf32>
//       OPTIONS: func.func @prefill(
//       OPTIONS:   gpu.launch
//       OPTIONS:   gpu.launch blocks({{.*}}) in ({{.*}} = %c25, {{.*}}) threads({{.*}}) in ({{.*}} = %c64, {{.*}})

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#p = affine_map<(b, h, g, m, k1, k2, n) -> (b, m)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @decode(%x: tensor<2x2x4x1x64xf32>, %pos: tensor<2x1xi64>, %y: tensor<2x2x1024x64xf32>, %v: tensor<2x2x1024x64xf32>) -> tensor<2x2x4x1x64xf32> {
  %e = tensor.empty() : tensor<2x2x4x1x64xf32>
  %qr = rope.apply ins(%x : tensor<2x2x4x1x64xf32>) positions(%pos : tensor<2x1xi64>) outs(%e : tensor<2x2x4x1x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<2x2x4x1x64xf32>
  %ek = tensor.empty() : tensor<2x2x1024x64xf32>
  %kr = rope.apply ins(%y : tensor<2x2x1024x64xf32>) outs(%ek : tensor<2x2x1024x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x2x1024x64xf32>
  %o = tensor.empty() : tensor<2x2x4x1x64xf32>
  %r = rope.attention ins(%qr, %kr, %v : tensor<2x2x4x1x64xf32>, tensor<2x2x1024x64xf32>, tensor<2x2x1024x64xf32>) query_positions(%pos : tensor<2x1xi64>) outs(%o : tensor<2x2x4x1x64xf32>) attributes {indexing_maps = [#q, #k, #v, #p, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<2x2x4x1x64xf32>
  return %r : tensor<2x2x4x1x64xf32>
}
func.func @prefill(%x: tensor<1x2x4x200x64xf32>, %y: tensor<1x2x200x64xf32>, %v: tensor<1x2x200x64xf32>) -> tensor<1x2x4x200x64xf32> {
  %e = tensor.empty() : tensor<1x2x4x200x64xf32>
  %qr = rope.apply ins(%x : tensor<1x2x4x200x64xf32>) outs(%e : tensor<1x2x4x200x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<1x2x4x200x64xf32>
  %ek = tensor.empty() : tensor<1x2x200x64xf32>
  %kr = rope.apply ins(%y : tensor<1x2x200x64xf32>) outs(%ek : tensor<1x2x200x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x200x64xf32>
  %o = tensor.empty() : tensor<1x2x4x200x64xf32>
  %r = rope.attention ins(%qr, %kr, %v : tensor<1x2x4x200x64xf32>, tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>) outs(%o : tensor<1x2x4x200x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<1x2x4x200x64xf32>
  return %r : tensor<1x2x4x200x64xf32>
}
