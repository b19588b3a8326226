// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope --check-prefix=VEC
// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --enable-var-scope --check-prefix=BUF
// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: rope-opt %s --rope-to-llvm-cpu=num-threads=4 -split-input-file | FileCheck %s --check-prefix=LLVM

// The KV-cache append (issue 18) in the vector form: `rope.apply` with
// `slots` and `rope.cache_write` become one scf.forall over the input's
// tokens whose shared output is the cache. A token's slot is placed by
// buildCacheSlot (valid = 0 <= slot < prod(cache token sizes), the clamped
// slot delinearized over the cache's token dims); the cache's slice at
// those coordinates has size n = valid ? 1 : 0 along the last token dim, the
// rows are written under `scf.if valid`, and the parallel_insert_slice
// inserts n rows: an invalid slot inserts nothing. Always the per-token
// form, even for heads-outer layouts. After bufferization every write goes
// to a subview of the cache argument: nothing is allocated or copied, and
// the CPU pipeline on the kernel form (memref arguments, as the Python
// package builds it) calls no malloc and no memcpy.
//
// Mutations of RopeToVector.cpp this test was run against, each failing it
// (the failing prefixes in parentheses): n = 1 always (VEC, BUF); writing
// unconditionally, scf.if on true and n = 1 (VEC, BUF, and the Python test
// python/tests/compiler/test_cache_lowering_vector.py); the cache's slice
// taken from the op's init rather than the forall's shared output (VEC, BUF,
// LLVM, all three seeing a copy of the cache); Q grouped with K's append in a
// heads-outer prefill (VEC); a per-head scale read at head 0 (VEC, and the
// Python test); the cache token sizes reversed before buildCacheSlot (VEC,
// and the Python test, which writes out of bounds).

// VEC-LABEL: func.func @paged(
//  VEC-SAME:     %[[K:[^:]*]]: tensor<?x8x128xbf16>, %[[P:[^:]*]]: tensor<?xi64>, %[[S:[^:]*]]: tensor<?xi32>, %[[C:[^:]*]]: tensor<?x8x128xbf16>)
//       VEC:   scf.forall (%[[T:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %[[C]]) -> (tensor<?x8x128xbf16>) {
//       VEC:     math.cos
//       VEC:     %[[SLOT:.*]] = tensor.extract %[[S]][%[[T]]] : tensor<?xi32>
//       VEC:     %[[ROWS:.*]] = tensor.dim %[[C]], %{{.*}} : tensor<?x8x128xbf16>
//       VEC:     %[[SLOT64:.*]] = arith.extsi %[[SLOT]] : i32 to i64
//       VEC:     %[[ROWS64:.*]] = arith.index_cast %[[ROWS]] : index to i64
//       VEC:     %[[GE:.*]] = arith.cmpi sge, %[[SLOT64]], %{{.*}} : i64
//       VEC:     %[[LT:.*]] = arith.cmpi slt, %[[SLOT64]], %[[ROWS64]] : i64
//       VEC:     %[[VALID:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       VEC:     %[[CLAMPED:.*]] = arith.select %[[VALID]], %[[SLOT64]], %{{.*}} : i64
//       VEC:     %[[ROW:.*]] = arith.index_cast %[[CLAMPED]] : i64 to index
//       VEC:     %[[N:.*]] = arith.select %[[VALID]], %c1, %c0 : index
//       VEC:     %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0, 0] [%[[N]], 8, 128] [1, 1, 1] : tensor<?x8x128xbf16> to tensor<?x8x128xbf16>
//       VEC:     %[[W:.*]] = scf.if %[[VALID]] -> (tensor<?x8x128xbf16>) {
//       VEC:       %[[DST:.*]] = tensor.extract_slice %[[TILE]][0, 0, 0] [1, 8, 128] [1, 1, 1] : tensor<?x8x128xbf16> to tensor<8x128xbf16>
//       VEC:       %[[SRC:.*]] = tensor.extract_slice %[[K]][%[[T]], 0, 0] [1, 8, 128] [1, 1, 1] : tensor<?x8x128xbf16> to tensor<8x128xbf16>
//       VEC:       %[[ROT:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[DST]]) -> (tensor<8x128xbf16>) {
//       VEC:         vector.transfer_read %[[SRC]]
//       VEC:       }
//       VEC:       %[[BACK:.*]] = tensor.insert_slice %[[ROT]] into %[[TILE]][0, 0, 0] [1, 8, 128] [1, 1, 1] : tensor<8x128xbf16> into tensor<?x8x128xbf16>
//       VEC:       scf.yield %[[BACK]]
//       VEC:     } else {
//       VEC:       scf.yield %[[TILE]]
//       VEC:     }
//       VEC:     scf.forall.in_parallel {
//       VEC:       tensor.parallel_insert_slice %[[W]] into %[[OUT]][%[[ROW]], 0, 0] [%[[N]], 8, 128] [1, 1, 1] : tensor<?x8x128xbf16> into tensor<?x8x128xbf16>

// BUF-LABEL: func.func @paged(
//  BUF-SAME:     %[[K:[^:]*]]: memref<?x8x128xbf16>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: memref<?xi32>, %[[C:[^:]*]]: memref<?x8x128xbf16>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   scf.forall
//       BUF:     %[[TILE:.*]] = memref.subview %[[C]][%{{.*}}, 0, 0] [%{{.*}}, 8, 128] [1, 1, 1]
//       BUF:     scf.if
//       BUF:       %[[DST:.*]] = memref.subview %[[TILE]][0, 0, 0] [1, 8, 128] [1, 1, 1]
//       BUF:       %[[SRC:.*]] = memref.subview %[[K]]
//       BUF:       vector.transfer_read %[[SRC]]
//       BUF:       vector.transfer_write %{{.*}}, %[[DST]]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]] : memref<?x8x128xbf16>
func.func @paged(%k: tensor<?x8x128xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi32>, %cache: tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16> {
  %r = rope.apply ins(%k : tensor<?x8x128xbf16>) positions(%pos : tensor<?xi64>) slots(%slots : tensor<?xi32>) outs(%cache : tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16>
  return %r : tensor<?x8x128xbf16>
}

// -----

// Hugging Face's [B, H, S, D] prefill into [B, H, max_len, D]: per token
// (the forall steps by 1 over (B, S), no cos/sin table), the slot
// delinearized over (B, max_len) row-major.

// VEC-LABEL: func.func @bhsd_prefill(
//  VEC-SAME:     %[[K:[^:]*]]: tensor<2x8x64x128xf32>, %[[S:[^:]*]]: tensor<2x64xi64>, %[[C:[^:]*]]: tensor<2x8x4096x128xf32>)
//   VEC-NOT:   tensor.empty
//       VEC:   scf.forall (%[[B:.*]], %[[T:.*]]) in (2, 64) shared_outs(%[[OUT:.*]] = %[[C]])
//   VEC-NOT:   tensor.empty
//       VEC:     %[[SLOT:.*]] = tensor.extract %[[S]][%[[B]], %[[T]]]
//       VEC:     arith.cmpi slt, %[[SLOT]], %c8192_i64 : i64
//       VEC:     %[[L:.*]] = arith.remui %[[LIN:.*]], %c4096 : index
//       VEC:     %[[BC:.*]] = arith.divui %[[LIN]], %c4096 : index
//       VEC:     %[[N:.*]] = arith.select
//       VEC:     %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[BC]], 0, %[[L]], 0] [1, 8, %[[N]], 128] [1, 1, 1, 1] : tensor<2x8x4096x128xf32> to tensor<1x8x?x128xf32>
//       VEC:     scf.if
//       VEC:       tensor.extract_slice %[[TILE]][0, 0, 0, 0] [1, 8, 1, 128] [1, 1, 1, 1] : tensor<1x8x?x128xf32> to tensor<8x128xf32>
//       VEC:       tensor.extract_slice %[[K]][%[[B]], 0, %[[T]], 0] [1, 8, 1, 128] [1, 1, 1, 1] : tensor<2x8x64x128xf32> to tensor<8x128xf32>
//       VEC:     tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[BC]], 0, %[[L]], 0] [1, 8, %[[N]], 128] [1, 1, 1, 1]

// BUF-LABEL: func.func @bhsd_prefill(
//  BUF-SAME:     %{{[^:]*}}: memref<2x8x64x128xf32>, %{{[^:]*}}: memref<2x64xi64>, %[[C:[^:]*]]: memref<2x8x4096x128xf32>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:     memref.subview %[[C]]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]]
func.func @bhsd_prefill(%k: tensor<2x8x64x128xf32>, %slots: tensor<2x64xi64>, %cache: tensor<2x8x4096x128xf32>) -> tensor<2x8x4096x128xf32> {
  %r = rope.apply ins(%k : tensor<2x8x64x128xf32>) slots(%slots : tensor<2x64xi64>) outs(%cache : tensor<2x8x4096x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x4096x128xf32>
  return %r : tensor<2x8x4096x128xf32>
}

// -----

// The decode step (vLLM's fused_qk_rope + cache): Q rotated into its output
// and K appended to its cache at the same positions are one token loop, one
// cos/sin per token for both. Q's rows are written unconditionally; K's under
// its slot's validity.

// VEC-LABEL: func.func @qk_decode(
//  VEC-SAME:     %[[Q:[^:]*]]: tensor<4x1x32x128xf32>, %[[K:[^:]*]]: tensor<4x1x8x128xf32>, %{{[^:]*}}: tensor<4x1xi64>, %[[S:[^:]*]]: tensor<4x1xi32>, %[[QO:[^:]*]]: tensor<4x1x32x128xf32>, %[[KC:[^:]*]]: tensor<4x256x8x128xf32>)
//       VEC:   scf.forall (%[[B:.*]]) in (4) shared_outs(%[[QOUT:.*]] = %[[QO]], %[[KOUT:.*]] = %[[KC]])
//       VEC:     math.cos
//   VEC-NOT:     math.cos
//       VEC:     %[[QROT:.*]] = scf.for %{{.*}} = %c0 to %c32
//       VEC:     tensor.extract %[[S]][%[[B]], %c0]
//       VEC:     %[[TILE:.*]] = tensor.extract_slice %[[KOUT]]
//       VEC:     %[[KW:.*]] = scf.if
//       VEC:       scf.for %{{.*}} = %c0 to %c8
//   VEC-NOT:     math.cos
//       VEC:     scf.forall.in_parallel {
//       VEC:       tensor.parallel_insert_slice %[[QROT]] into %[[QOUT]]
//       VEC:       tensor.parallel_insert_slice %[[KW]] into %[[KOUT]]

// BUF-LABEL: func.func @qk_decode(
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @qk_decode(%q: tensor<4x1x32x128xf32>, %k: tensor<4x1x8x128xf32>, %pos: tensor<4x1xi64>, %slots: tensor<4x1xi32>, %qo: tensor<4x1x32x128xf32>, %kc: tensor<4x256x8x128xf32>) -> (tensor<4x1x32x128xf32>, tensor<4x256x8x128xf32>) {
  %rq = rope.apply ins(%q : tensor<4x1x32x128xf32>) positions(%pos : tensor<4x1xi64>) outs(%qo : tensor<4x1x32x128xf32>) -> tensor<4x1x32x128xf32>
  %rk = rope.apply ins(%k : tensor<4x1x8x128xf32>) positions(%pos : tensor<4x1xi64>) slots(%slots : tensor<4x1xi32>) outs(%kc : tensor<4x256x8x128xf32>) -> tensor<4x256x8x128xf32>
  return %rq, %rk : tensor<4x1x32x128xf32>, tensor<4x256x8x128xf32>
}

// -----

// A heads-outer prefill: Q keeps its tiled form (a [2, T, P/2] cos/sin table
// per tile of 32 tokens), so it is not grouped with the K append, which is
// lowered per token on its own.

// VEC-LABEL: func.func @qk_bhsd_prefill(
//       VEC:   scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 64) step (1, 32) shared_outs(%{{.*}} = %{{[^ ]*}}) -> (tensor<2x32x64x128xf32>)
//       VEC:     tensor.empty() : tensor<2x32x64xf32>
//       VEC:   scf.forall (%{{.*}}, %{{.*}}) in (2, 64) shared_outs(%{{.*}} = %{{[^ ]*}}) -> (tensor<2x8x4096x128xf32>)
//       VEC:     scf.if
func.func @qk_bhsd_prefill(%q: tensor<2x32x64x128xf32>, %k: tensor<2x8x64x128xf32>, %slots: tensor<2x64xi64>, %qo: tensor<2x32x64x128xf32>, %kc: tensor<2x8x4096x128xf32>) -> (tensor<2x32x64x128xf32>, tensor<2x8x4096x128xf32>) {
  %rq = rope.apply ins(%q : tensor<2x32x64x128xf32>) outs(%qo : tensor<2x32x64x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x32x64x128xf32>
  %rk = rope.apply ins(%k : tensor<2x8x64x128xf32>) slots(%slots : tensor<2x64xi64>) outs(%kc : tensor<2x8x4096x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x8x4096x128xf32>
  return %rq, %rk : tensor<2x32x64x128xf32>, tensor<2x8x4096x128xf32>
}

// -----

// rope.cache_write into an i8 cache with a per-head scale: the same slot
// handling; each row's chunks converted to f32, multiplied by scale[h] (read
// once per head row), rounded, saturated and converted.

// VEC-LABEL: func.func @v_i8(
//  VEC-SAME:     %[[V:[^:]*]]: tensor<2x3x8x128xbf16>, %[[S:[^:]*]]: tensor<2x3xi64>, %[[SC:[^:]*]]: tensor<8xf32>, %[[C:[^:]*]]: tensor<2x64x8x128xi8>)
//       VEC:   scf.forall (%[[B:.*]], %[[T:.*]]) in (2, 3) shared_outs(%[[OUT:.*]] = %[[C]])
//       VEC:     %[[SRC:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[T]], 0, 0] [1, 1, 8, 128] [1, 1, 1, 1] : tensor<2x3x8x128xbf16> to tensor<8x128xbf16>
//       VEC:     %[[SLOT:.*]] = tensor.extract %[[S]][%[[B]], %[[T]]]
//       VEC:     %[[VALID:.*]] = arith.andi
//       VEC:     %[[L:.*]] = arith.remui %{{.*}}, %c64 : index
//       VEC:     %[[BC:.*]] = arith.divui %{{.*}}, %c64 : index
//       VEC:     %[[N:.*]] = arith.select %[[VALID]], %c1, %c0 : index
//       VEC:     %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[BC]], %[[L]], 0, 0] [1, %[[N]], 8, 128]
//       VEC:     %[[W:.*]] = scf.if %[[VALID]]
//       VEC:       scf.for %[[H:.*]] = %c0 to %c8
//       VEC:         %[[SCALE:.*]] = tensor.extract %[[SC]][%[[H]]] : tensor<8xf32>
//       VEC:         vector.transfer_read %[[SRC]][%[[H]], %c0]{{.*}} vector<16xbf16>
//       VEC:         vector.broadcast %[[SCALE]] : f32 to vector<16xf32>
//       VEC:         math.roundeven
//       VEC:         arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//       VEC:         vector.transfer_write %{{.*}}[%[[H]], %c0] {in_bounds = [true]} : vector<16xi8>, tensor<8x128xi8>
//       VEC:     } else {
//       VEC:       scf.yield %[[TILE]]
//       VEC:     tensor.parallel_insert_slice %[[W]] into %[[OUT]][%[[BC]], %[[L]], 0, 0] [1, %[[N]], 8, 128]

// BUF-LABEL: func.func @v_i8(
//  BUF-SAME:     %[[C:[^:]*]]: memref<2x64x8x128xi8>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:     memref.subview %[[C]]
//       BUF:     scf.if
//       BUF:       vector.transfer_write
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]]
func.func @v_i8(%v: tensor<2x3x8x128xbf16>, %slots: tensor<2x3xi64>, %scale: tensor<8xf32>, %vc: tensor<2x64x8x128xi8>) -> tensor<2x64x8x128xi8> {
  %r = rope.cache_write ins(%v : tensor<2x3x8x128xbf16>) slots(%slots : tensor<2x3xi64>) quant_scale(%scale : tensor<8xf32>) outs(%vc : tensor<2x64x8x128xi8>) -> tensor<2x64x8x128xi8>
  return %r : tensor<2x64x8x128xi8>
}

// -----

// The kernel form (memref arguments, the caches restrict writable and
// materialized in place, as rope_mlir's kernels are built): through the
// whole CPU pipeline, one thread or OpenMP, K rotated into its fp8 cache and
// V copied into its cache without any allocation or copy.

// LLVM-LABEL: llvm.func @append_kernel(
//   LLVM-NOT:   llvm.call @malloc
//   LLVM-NOT:   llvm.call @memrefCopy
//   LLVM-NOT:   llvm.intr.memcpy
//       LLVM:   llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_append_kernel(
func.func @append_kernel(%k: memref<?x8x128xbf16>, %v: memref<?x8x128xbf16>, %positions: memref<?xi64>, %slots: memref<?xi64>, %scale: memref<f32>, %k_cache: memref<?x8x128xf8E4M3FN>, %v_cache: memref<?x8x128xbf16>) attributes {llvm.emit_c_interface} {
  %kt = bufferization.to_tensor %k restrict : memref<?x8x128xbf16> to tensor<?x8x128xbf16>
  %vt = bufferization.to_tensor %v restrict : memref<?x8x128xbf16> to tensor<?x8x128xbf16>
  %pos = bufferization.to_tensor %positions restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %slots restrict : memref<?xi64> to tensor<?xi64>
  %sc = bufferization.to_tensor %scale restrict : memref<f32> to tensor<f32>
  %kc = bufferization.to_tensor %k_cache restrict writable : memref<?x8x128xf8E4M3FN> to tensor<?x8x128xf8E4M3FN>
  %vc = bufferization.to_tensor %v_cache restrict writable : memref<?x8x128xbf16> to tensor<?x8x128xbf16>
  %rk = rope.apply ins(%kt : tensor<?x8x128xbf16>) positions(%pos : tensor<?xi64>) quant_scale(%sc : tensor<f32>) slots(%s : tensor<?xi64>) outs(%kc : tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN>
  %rv = rope.cache_write ins(%vt : tensor<?x8x128xbf16>) slots(%s : tensor<?xi64>) outs(%vc : tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16>
  bufferization.materialize_in_destination %rk in restrict writable %k_cache : (tensor<?x8x128xf8E4M3FN>, memref<?x8x128xf8E4M3FN>) -> ()
  bufferization.materialize_in_destination %rv in restrict writable %v_cache : (tensor<?x8x128xbf16>, memref<?x8x128xbf16>) -> ()
  return
}
