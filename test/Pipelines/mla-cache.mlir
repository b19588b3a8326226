// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: rope-opt %s --rope-to-llvm-cpu=prefetch-rows=0 -split-input-file | FileCheck %s --check-prefix=NOPF
// RUN: rope-opt %s --convert-rope-to-vector --canonicalize --cse \
// RUN:   --one-shot-bufferize --canonicalize --cse --canonicalize \
// RUN:   -split-input-file | FileCheck %s --check-prefix=BUF
// RUN: rope-opt %s --rope-to-nvvm -split-input-file | FileCheck %s --check-prefix=GPU

// DeepSeek-V2/V3 MLA (docs/FUSIONS.md, "MLA") as rope_mlir.apply_mla builds
// it (python/rope_mlir/mla.py): no MLA op, only channel slices.
// - q [T, H, 192]: its rope channels [128, 192) rotated in place (the slice
//   is the rotation's input and destination) and inserted back; every
//   operand of k_pe's rope.apply is defined before q's, so that the two are
//   lowered as siblings (one cos/sin per token);
// - k_pe [T, 1, 64] rotated into the cache's channels [512, 576) at each
//   token's slot (rope.apply slots), c_kv [T, 1, 512] written into channels
//   [0, 512) (rope.cache_write), both inserted back into the cache
//   [rows, 1, 576] (vLLM's concat_and_cache_mla layout).
// The whole update stays in q's and the cache's own buffers: after the CPU
// pipeline nothing is allocated or copied (nor on the host after the GPU
// pipeline, whose kernels take strided subviews of q and the cache); after bufferization each write
// goes to a subview of q or of the cache, a token's cache row only under
// its slot's validity test.

// q's rope rows are 64 of every 192 channels: rope-prefetch-strided-rows
// prefetches them 16 rows ahead (three lines' positions a bf16 row: 0, 32
// and its last element) in each of the two token loops (q's and k_pe's
// token counts equal or not); k_pe's and c_kv's rows (one per token, at
// slots) are not prefetched; prefetch-rows=0 turns it off.
// LLVM-LABEL: llvm.func @mla(
//   LLVM-NOT:   llvm.call @malloc
//   LLVM-NOT:   llvm.call @memrefCopy
//   LLVM-NOT:   llvm.intr.memcpy
// LLVM-COUNT-6: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
//   LLVM-NOT:   llvm.intr.prefetch
//       LLVM:   llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_mla(
// NOPF-NOT: llvm.intr.prefetch

// GPU-LABEL: llvm.func @mla(
//   GPU-NOT:   {{llvm.call @malloc|llvm.call @memrefCopy|llvm.intr.memcpy}}
//       GPU:   gpu.launch_func
//   GPU-NOT:   {{llvm.call @malloc|llvm.call @memrefCopy|llvm.intr.memcpy}}
//       GPU:   llvm.return
// GPU-LABEL: llvm.func @_mlir_ciface_mla(

// BUF-LABEL: func.func @mla(
//  BUF-SAME:     %[[Q:.*]]: memref<?x?x192xbf16>, %[[CKV:.*]]: memref<?x1x512xbf16>, %[[KPE:.*]]: memref<?x1x64xbf16>, %[[CACHE:.*]]: memref<?x1x576xbf16>
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   %[[KC:.*]] = memref.subview %[[CACHE]][0, 0, 512] [%{{.*}}, 1, 64] [1, 1, 1]
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   %[[QR:.*]] = memref.subview %[[Q]][0, 0, 128] [%{{.*}}, %{{.*}}, 64] [1, 1, 1]
//   BUF-NOT:   memref.{{alloc|copy}}
// q and k_pe are siblings (same positions and rotation): one token loop, one
// cos/sin per token for both (when their token counts agree at run time).
//       BUF:   scf.if
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:     scf.forall
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:       math.sin
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:       memref.subview %[[QR]]
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:         vector.transfer_write
//   BUF-NOT:   {{memref.alloc|memref.copy|math.sin}}
//       BUF:       memref.subview %[[KC]]
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:       scf.if
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:         vector.transfer_write
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   } else {
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   %[[VC:.*]] = memref.subview %[[CACHE]][0, 0, 0] [%{{.*}}, 1, 512] [1, 1, 1]
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   scf.forall
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:     memref.subview %[[VC]]
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:     scf.if
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:       vector.transfer_write
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   return
func.func @mla(%q: memref<?x?x192xbf16>, %c_kv: memref<?x1x512xbf16>, %k_pe: memref<?x1x64xbf16>, %cache: memref<?x1x576xbf16>, %positions: memref<?xi64>, %slots: memref<?xi64>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %qt = bufferization.to_tensor %q restrict writable : memref<?x?x192xbf16> to tensor<?x?x192xbf16>
  %ckv = bufferization.to_tensor %c_kv restrict : memref<?x1x512xbf16> to tensor<?x1x512xbf16>
  %kpe = bufferization.to_tensor %k_pe restrict : memref<?x1x64xbf16> to tensor<?x1x64xbf16>
  %ct = bufferization.to_tensor %cache restrict writable : memref<?x1x576xbf16> to tensor<?x1x576xbf16>
  %pos = bufferization.to_tensor %positions restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %slots restrict : memref<?xi64> to tensor<?xi64>
  %n = tensor.dim %ct, %c0 : tensor<?x1x576xbf16>
  %k_part = tensor.extract_slice %ct[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x64xbf16>
  %t = tensor.dim %qt, %c0 : tensor<?x?x192xbf16>
  %h = tensor.dim %qt, %c1 : tensor<?x?x192xbf16>
  %q_rope = tensor.extract_slice %qt[0, 0, 128] [%t, %h, 64] [1, 1, 1] : tensor<?x?x192xbf16> to tensor<?x?x64xbf16>
  %q_rot = rope.apply ins(%q_rope : tensor<?x?x64xbf16>) positions(%pos : tensor<?xi64>) outs(%q_rope : tensor<?x?x64xbf16>) {layout = #rope.layout<interleaved>, freqs = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 1.000000e+00, mscale_all_dim = 1.000000e+00>} -> tensor<?x?x64xbf16>
  %k_rot = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%s : tensor<?xi64>) outs(%k_part : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>, freqs = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 1.000000e+00, mscale_all_dim = 1.000000e+00>} -> tensor<?x1x64xbf16>
  %q_out = tensor.insert_slice %q_rot into %qt[0, 0, 128] [%t, %h, 64] [1, 1, 1] : tensor<?x?x64xbf16> into tensor<?x?x192xbf16>
  bufferization.materialize_in_destination %q_out in restrict writable %q : (tensor<?x?x192xbf16>, memref<?x?x192xbf16>) -> ()
  %cache_k = tensor.insert_slice %k_rot into %ct[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
  %v_part = tensor.extract_slice %cache_k[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x512xbf16>
  %v_written = rope.cache_write ins(%ckv : tensor<?x1x512xbf16>) slots(%s : tensor<?xi64>) outs(%v_part : tensor<?x1x512xbf16>) -> tensor<?x1x512xbf16>
  %cache_out = tensor.insert_slice %v_written into %cache_k[0, 0, 0] [%n, 1, 512] [1, 1, 1] : tensor<?x1x512xbf16> into tensor<?x1x576xbf16>
  bufferization.materialize_in_destination %cache_out in restrict writable %cache : (tensor<?x1x576xbf16>, memref<?x1x576xbf16>) -> ()
  return
}

// -----

// Separate fp8 caches ([rows, 1, 512] and [rows, 1, 64], one f32 scale for
// both ops), no q: still written in place.

// LLVM-LABEL: llvm.func @mla_separate_fp8(
//   LLVM-NOT:   llvm.call @malloc
//   LLVM-NOT:   llvm.call @memrefCopy
//   LLVM-NOT:   llvm.intr.memcpy
//       LLVM:   llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_mla_separate_fp8(

// GPU-LABEL: llvm.func @mla_separate_fp8(
//   GPU-NOT:   {{llvm.call @malloc|llvm.call @memrefCopy|llvm.intr.memcpy}}
//       GPU:   gpu.launch_func
//   GPU-NOT:   {{llvm.call @malloc|llvm.call @memrefCopy|llvm.intr.memcpy}}
//       GPU:   llvm.return

// BUF-LABEL: func.func @mla_separate_fp8(
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   scf.if
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:     vector.transfer_write {{.*}} : vector<{{[0-9]+}}xf8E4M3FN>
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   scf.if
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:     vector.transfer_write {{.*}} : vector<{{[0-9]+}}xf8E4M3FN>
//   BUF-NOT:   memref.{{alloc|copy}}
//       BUF:   return
func.func @mla_separate_fp8(%c_kv: memref<?x1x512xbf16>, %k_pe: memref<?x1x64xbf16>, %ckv_cache: memref<?x1x512xf8E4M3FN>, %kpe_cache: memref<?x1x64xf8E4M3FN>, %positions: memref<?xi64>, %slots: memref<?xi64>, %scale: memref<f32>) attributes {llvm.emit_c_interface} {
  %ckv = bufferization.to_tensor %c_kv restrict : memref<?x1x512xbf16> to tensor<?x1x512xbf16>
  %kpe = bufferization.to_tensor %k_pe restrict : memref<?x1x64xbf16> to tensor<?x1x64xbf16>
  %cc = bufferization.to_tensor %ckv_cache restrict writable : memref<?x1x512xf8E4M3FN> to tensor<?x1x512xf8E4M3FN>
  %kc = bufferization.to_tensor %kpe_cache restrict writable : memref<?x1x64xf8E4M3FN> to tensor<?x1x64xf8E4M3FN>
  %pos = bufferization.to_tensor %positions restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %slots restrict : memref<?xi64> to tensor<?xi64>
  %sc = bufferization.to_tensor %scale restrict : memref<f32> to tensor<f32>
  %k_rot = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) quant_scale(%sc : tensor<f32>) slots(%s : tensor<?xi64>) outs(%kc : tensor<?x1x64xf8E4M3FN>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xf8E4M3FN>
  bufferization.materialize_in_destination %k_rot in restrict writable %kpe_cache : (tensor<?x1x64xf8E4M3FN>, memref<?x1x64xf8E4M3FN>) -> ()
  %v = rope.cache_write ins(%ckv : tensor<?x1x512xbf16>) slots(%s : tensor<?xi64>) quant_scale(%sc : tensor<f32>) outs(%cc : tensor<?x1x512xf8E4M3FN>) -> tensor<?x1x512xf8E4M3FN>
  bufferization.materialize_in_destination %v in restrict writable %ckv_cache : (tensor<?x1x512xf8E4M3FN>, memref<?x1x512xf8E4M3FN>) -> ()
  return
}

// -----

// Control (the checks above can fail): the same k_pe append, but its slice is
// inserted into a *different* tensor (a fresh one) than the cache it was
// taken from, so bufferization must copy the cache: the CHECK-NOTs of @mla
// would reject this function.

// LLVM-LABEL: llvm.func @not_in_place(
//       LLVM:   llvm.call @malloc
//       LLVM:   llvm.return

// GPU-LABEL: llvm.func @not_in_place(
//       GPU:   llvm.call @malloc
//       GPU:   llvm.return

// BUF-LABEL: func.func @not_in_place(
//       BUF:   memref.alloc
//       BUF:   memref.copy
//       BUF:   return
func.func @not_in_place(%k_pe: memref<?x1x64xbf16>, %cache: memref<?x1x576xbf16>, %positions: memref<?xi64>, %slots: memref<?xi64>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %kpe = bufferization.to_tensor %k_pe restrict : memref<?x1x64xbf16> to tensor<?x1x64xbf16>
  %ct = bufferization.to_tensor %cache restrict writable : memref<?x1x576xbf16> to tensor<?x1x576xbf16>
  %pos = bufferization.to_tensor %positions restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %slots restrict : memref<?xi64> to tensor<?xi64>
  %n = tensor.dim %ct, %c0 : tensor<?x1x576xbf16>
  %k_part = tensor.extract_slice %ct[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x64xbf16>
  %k_rot = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%s : tensor<?xi64>) outs(%k_part : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %other = tensor.empty(%n) : tensor<?x1x576xbf16>
  %out = tensor.insert_slice %k_rot into %other[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
  %kept = tensor.insert_slice %k_rot into %ct[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
  bufferization.materialize_in_destination %out in restrict writable %cache : (tensor<?x1x576xbf16>, memref<?x1x576xbf16>) -> ()
  return
}
