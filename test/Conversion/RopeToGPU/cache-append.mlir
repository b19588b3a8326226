// RUN: rope-opt %s --convert-rope-to-gpu -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-gpu --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --enable-var-scope --check-prefix=BUF

// KV-cache append on the GPU (rope.apply's slots, rope.cache_write; the PTX
// path: test/GPU/cache-append-ptxas.mlir; numerics:
// python/tests/numerics/test_gpu_emulation.py). The kernel's output buffer is
// the cache. A token's slot is loaded at the token's own index and turned into
// cache coordinates by buildCacheSlot (valid = 0 <= slot < cache rows; the
// coordinates of slot 0 when not valid); the token's whole work is inside
// `scf.if valid`, its reads at its own index in the input, its stores at
// the slot's coordinates in the cache.

// Contiguous [B, max_len, Hkv, D] cache, one new token per row (decode):
// the cache's token dims (B, 4096), the slot delinearized over them.
// CHECK-LABEL: func.func @contiguous(
//  CHECK-SAME:     %[[KT:[^:]*]]: tensor<?x1x8x128xbf16>, %[[PT:[^:]*]]: tensor<?x1xi64>, %[[ST:[^:]*]]: tensor<?x1xi64>, %[[CT:[^:]*]]: tensor<?x4096x8x128xbf16>)
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %[[CT]] : tensor<?x4096x8x128xbf16> to memref<?x4096x8x128xbf16>
//       CHECK:   %[[K:.*]] = bufferization.to_buffer %[[KT]] read_only
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %[[ST]] read_only : tensor<?x1xi64> to memref<?x1xi64>
//       CHECK:   %[[B:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?x4096x8x128xbf16>
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       %[[T1:.*]] = arith.remui %[[T]], %{{.*}} : index
//       CHECK:       %[[T0:.*]] = arith.divui %[[T]], %{{.*}} : index
//       CHECK:       %[[SLOT:.*]] = memref.load %[[S]][%[[T0]], %[[T1]]] : memref<?x1xi64>
//       CHECK:       %[[B64:.*]] = arith.index_cast %[[B]] : index to i64
//       CHECK:       %[[ROWS0:.*]] = arith.muli %{{.*}}, %[[B64]] : i64
//       CHECK:       %[[ROWS:.*]] = arith.muli %[[ROWS0]], %{{.*}} : i64
//       CHECK:       %[[GE:.*]] = arith.cmpi sge, %[[SLOT]], %{{.*}} : i64
//       CHECK:       %[[LT:.*]] = arith.cmpi slt, %[[SLOT]], %[[ROWS]] : i64
//       CHECK:       %[[VALID:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       CHECK:       %[[SAFE:.*]] = arith.select %[[VALID]], %[[SLOT]], %{{.*}} : i64
//       CHECK:       %[[LIN:.*]] = arith.index_cast %[[SAFE]] : i64 to index
//       CHECK:       %[[C1:.*]] = arith.remui %[[LIN]], %c4096{{.*}} : index
//       CHECK:       %[[C0:.*]] = arith.divui %[[LIN]], %c4096{{.*}} : index
//       CHECK:       scf.if %[[VALID]] {
//       CHECK:         scf.for %[[J:[a-z0-9]+]] =
//       CHECK:           math.cos
//       CHECK:           scf.for %[[H:[a-z0-9]+]] =
//       CHECK:             %[[J2:.*]] = arith.addi %[[J]], %c64
//       CHECK:             vector.load %[[K]][%[[T0]], %[[T1]], %[[H]], %[[J]]] {alignment = 16 : i64} : memref<?x1x8x128xbf16>, vector<8xbf16>
//       CHECK:             vector.load %[[K]][%[[T0]], %[[T1]], %[[H]], %[[J2]]] {alignment = 16 : i64} : memref<?x1x8x128xbf16>, vector<8xbf16>
//       CHECK:             vector.store %{{.*}}, %[[OUT]][%[[C0]], %[[C1]], %[[H]], %[[J]]] {alignment = 16 : i64} : memref<?x4096x8x128xbf16>, vector<8xbf16>
//       CHECK:             vector.store %{{.*}}, %[[OUT]][%[[C0]], %[[C1]], %[[H]], %[[J2]]] {alignment = 16 : i64} : memref<?x4096x8x128xbf16>, vector<8xbf16>
//       CHECK:       }
//   CHECK-NOT:       vector.store
//       CHECK:     gpu.terminator
//       CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[R]]
// In place after bufferization: the kernel stores into the cache argument.
// BUF-LABEL: func.func @contiguous(
//  BUF-SAME:     %{{[^:]*}}: memref<?x1x8x128xbf16>, %{{[^:]*}}: memref<?x1xi64>, %{{[^:]*}}: memref<?x1xi64>, %[[C:[^:]*]]: memref<?x4096x8x128xbf16>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   vector.store %{{.*}}, %[[C]][
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]]
func.func @contiguous(%k: tensor<?x1x8x128xbf16>, %pos: tensor<?x1xi64>, %slots: tensor<?x1xi64>, %cache: tensor<?x4096x8x128xbf16>) -> tensor<?x4096x8x128xbf16> {
  %r = rope.apply ins(%k : tensor<?x1x8x128xbf16>) positions(%pos : tensor<?x1xi64>) slots(%slots : tensor<?x1xi64>) outs(%cache : tensor<?x4096x8x128xbf16>) {freqs = #rope.default<base = 500000.0>} -> tensor<?x4096x8x128xbf16>
  return %r : tensor<?x4096x8x128xbf16>
}

// -----

// Hugging Face's [B, Hkv, max_len, D] at token dims (0, 2), i32 slots,
// partial rotary: the position is the token's own index (the input's, not
// the slot's); the pass-through channels [32, 64) are copied from the
// token's row into the slot's row, inside the same scf.if.
// CHECK-LABEL: func.func @heads_outer_partial(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<2x8x?x64xf32> to memref<2x8x?x64xf32>
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x8x?x64xf32>
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x?xi32> to memref<2x?xi32>
//       CHECK:   %[[LEN:.*]] = memref.dim %[[OUT]], %c2{{.*}} : memref<2x8x?x64xf32>
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       %[[T1:.*]] = arith.remui %[[T]], %{{.*}} : index
//       CHECK:       %[[T0:.*]] = arith.divui %[[T]], %{{.*}} : index
//       CHECK:       %[[SLOT:.*]] = memref.load %[[S]][%[[T0]], %[[T1]]] : memref<2x?xi32>
//       CHECK:       %[[SLOT64:.*]] = arith.extsi %[[SLOT]] : i32 to i64
//       CHECK:       %[[VALID:.*]] = arith.andi
//       CHECK:       %[[SAFE:.*]] = arith.select %[[VALID]], %[[SLOT64]]
//       CHECK:       %[[LIN:.*]] = arith.index_cast %[[SAFE]] : i64 to index
//       CHECK:       %[[C1:.*]] = arith.remui %[[LIN]], %[[LEN]] : index
//       CHECK:       %[[C0:.*]] = arith.divui %[[LIN]], %[[LEN]] : index
//       CHECK:       scf.if %[[VALID]] {
//       CHECK:         scf.for
//       CHECK:           %[[P:.*]] = arith.index_cast %[[T1]] : index to i64
//       CHECK:           arith.sitofp %[[P]] : i64 to f64
//       CHECK:           scf.for %[[H:[a-z0-9]+]] =
//       CHECK:             vector.load %[[X]][%[[T0]], %[[H]], %[[T1]], %{{.*}}]
//       CHECK:             vector.store %{{.*}}, %[[OUT]][%[[C0]], %[[H]], %[[C1]], %{{.*}}] {alignment = 16 : i64} : memref<2x8x?x64xf32>, vector<4xf32>
//       CHECK:             vector.store %{{.*}}, %[[OUT]][%[[C0]], %[[H]], %[[C1]], %{{.*}}] {alignment = 16 : i64} : memref<2x8x?x64xf32>, vector<4xf32>
//       CHECK:         scf.for %[[CH:[a-z0-9]+]] = %{{.*}} to %c64{{.*}} step %c4
//       CHECK:           scf.for %[[H2:[a-z0-9]+]] =
//       CHECK:             %[[V:.*]] = memref.load %[[X]][%[[T0]], %[[H2]], %[[T1]], %[[CH]]]
//       CHECK:             memref.store %[[V]], %[[OUT]][%[[C0]], %[[H2]], %[[C1]], %[[CH]]]
//       CHECK:       }
//       CHECK:     gpu.terminator
func.func @heads_outer_partial(%k: tensor<2x8x?x64xf32>, %slots: tensor<2x?xi32>, %cache: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %r = rope.apply ins(%k : tensor<2x8x?x64xf32>) slots(%slots : tensor<2x?xi32>) outs(%cache : tensor<2x8x?x64xf32>) {token_dims = array<i64: 0, 2>, rotary_dim = 32 : i64} -> tensor<2x8x?x64xf32>
  return %r : tensor<2x8x?x64xf32>
}

// -----

// Paged ([num_pages * page_size, Hkv, D] collapsed) with QK-norm and an fp8
// cache with a per-head scale: the norm's row reads and the quantized
// stores, all in the scf.if, the stores at the slot's row.
// CHECK-LABEL: func.func @paged_norm_fp8(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x8x128xf8E4M3FN> to memref<?x8x128xf8E4M3FN>
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x8x128xbf16>
//       CHECK:   %[[SC:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<8xf32> to memref<8xf32>
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?xi64> to memref<?xi64>
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       %[[SLOT:.*]] = memref.load %[[S]][%[[T]]] : memref<?xi64>
//       CHECK:       %[[VALID:.*]] = arith.andi
//       CHECK:       %[[SAFE:.*]] = arith.select %[[VALID]], %[[SLOT]]
//       CHECK:       %[[ROW:.*]] = arith.index_cast %[[SAFE]] : i64 to index
//       CHECK:       scf.if %[[VALID]] {
//       CHECK:         scf.for %[[H:[a-z0-9]+]] =
//       CHECK:           scf.for {{.*}} iter_args
//       CHECK:             vector.load %[[X]][%[[T]], %[[H]], %{{.*}}]
//       CHECK:           math.rsqrt
//       CHECK:           memref.load %[[SC]][%[[H]]] : memref<8xf32>
//       CHECK:           arith.truncf %{{.*}} : vector<8xf32> to vector<8xf8E4M3FN>
//       CHECK:           vector.store %{{.*}}, %[[OUT]][%[[ROW]], %[[H]], %{{.*}}] {alignment = 8 : i64} : memref<?x8x128xf8E4M3FN>, vector<8xf8E4M3FN>
//       CHECK:           vector.store %{{.*}}, %[[OUT]][%[[ROW]], %[[H]], %{{.*}}] {alignment = 8 : i64} : memref<?x8x128xf8E4M3FN>, vector<8xf8E4M3FN>
//       CHECK:       }
//       CHECK:     gpu.terminator
func.func @paged_norm_fp8(%k: tensor<?x8x128xbf16>, %pos: tensor<?xi64>, %w: tensor<128xbf16>, %s: tensor<8xf32>, %slots: tensor<?xi64>, %cache: tensor<?x8x128xf8E4M3FN>) -> tensor<?x8x128xf8E4M3FN> {
  %r = rope.apply ins(%k : tensor<?x8x128xbf16>) positions(%pos : tensor<?xi64>) norm(%w : tensor<128xbf16>) quant_scale(%s : tensor<8xf32>) slots(%slots : tensor<?xi64>) outs(%cache : tensor<?x8x128xf8E4M3FN>) {norm_epsilon = 1.0e-06} -> tensor<?x8x128xf8E4M3FN>
  return %r : tensor<?x8x128xf8E4M3FN>
}

// -----

// rope.cache_write (V): a coalesced copy, TX = 16 threads over the sixteen
// 16-byte pieces of a bf16 row of 128 channels, TY = 16 tokens per block,
// heads looped; loads at the token's row, stores at the slot's row.
// CHECK-LABEL: func.func @write_v(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x8x128xbf16> to memref<?x8x128xbf16>
//       CHECK:   %[[V:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x8x128xbf16>
//       CHECK:   %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?xi64> to memref<?xi64>
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c16{{.*}}, {{.*}} = %c16{{.*}}, {{.*}} = %c1{{.*}})
//       CHECK:     %[[C:.*]] = arith.muli %{{.*}}, %c8{{.*}} : index
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       %[[SLOT:.*]] = memref.load %[[S]][%[[T]]] : memref<?xi64>
//       CHECK:       %[[GE:.*]] = arith.cmpi sge, %[[SLOT]]
//       CHECK:       %[[LT:.*]] = arith.cmpi slt, %[[SLOT]]
//       CHECK:       %[[VALID:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       CHECK:       %[[SAFE:.*]] = arith.select %[[VALID]], %[[SLOT]]
//       CHECK:       %[[ROW:.*]] = arith.index_cast %[[SAFE]] : i64 to index
//       CHECK:       scf.if %[[VALID]] {
//       CHECK:         scf.for %[[H:[a-z0-9]+]] =
//       CHECK:           scf.for %[[CH:[a-z0-9]+]] = %[[C]] to %c128{{.*}} step %c128
//       CHECK:             %[[X:.*]] = vector.load %[[V]][%[[T]], %[[H]], %[[CH]]] {alignment = 16 : i64} : memref<?x8x128xbf16>, vector<8xbf16>
//       CHECK:             vector.store %[[X]], %[[OUT]][%[[ROW]], %[[H]], %[[CH]]] {alignment = 16 : i64} : memref<?x8x128xbf16>, vector<8xbf16>
//       CHECK:       }
//       CHECK:     gpu.terminator
// BUF-LABEL: func.func @write_v(
//  BUF-SAME:     %{{[^:]*}}: memref<?x8x128xbf16>, %{{[^:]*}}: memref<?xi64>, %[[C:[^:]*]]: memref<?x8x128xbf16>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   vector.store %{{.*}}, %[[C]][
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]]
func.func @write_v(%v: tensor<?x8x128xbf16>, %slots: tensor<?xi64>, %cache: tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16> {
  %r = rope.cache_write ins(%v : tensor<?x8x128xbf16>) slots(%slots : tensor<?xi64>) outs(%cache : tensor<?x8x128xbf16>) -> tensor<?x8x128xbf16>
  return %r : tensor<?x8x128xbf16>
}

// -----

// Quantized cache_write into Hugging Face's layout with a per-head i8
// scale: the head's scale once per head, each 16-byte piece of f32 (four
// values) stored as four i8 (4 bytes) at the slot's coordinates.
// CHECK-LABEL: func.func @write_v_i8_hf(
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %{{.*}} : tensor<2x4x?x64xi8> to memref<2x4x?x64xi8>
//       CHECK:   %[[V:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x4x?x64xf32>
//       CHECK:   %[[SC:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4xf32> to memref<4xf32>
//       CHECK:   %[[LEN:.*]] = memref.dim %[[OUT]], %c2{{.*}} : memref<2x4x?x64xi8>
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c16{{.*}}, {{.*}} = %c16{{.*}}, {{.*}} = %c1{{.*}})
//       CHECK:     scf.for %[[T:[a-z0-9]+]] =
//       CHECK:       %[[T1:.*]] = arith.remui %[[T]]
//       CHECK:       %[[T0:.*]] = arith.divui %[[T]]
//       CHECK:       %[[VALID:.*]] = arith.andi
//       CHECK:       %[[LIN:.*]] = arith.index_cast %{{.*}} : i64 to index
//       CHECK:       %[[C1:.*]] = arith.remui %[[LIN]], %[[LEN]] : index
//       CHECK:       %[[C0:.*]] = arith.divui %[[LIN]], %[[LEN]] : index
//       CHECK:       scf.if %[[VALID]] {
//       CHECK:         scf.for %[[H:[a-z0-9]+]] =
//       CHECK:           %[[SH:.*]] = memref.load %[[SC]][%[[H]]] : memref<4xf32>
//       CHECK:           scf.for %[[CH:[a-z0-9]+]] =
//       CHECK:             %[[X:.*]] = vector.load %[[V]][%[[T0]], %[[H]], %[[T1]], %[[CH]]] {alignment = 16 : i64} : memref<2x4x?x64xf32>, vector<4xf32>
//       CHECK:             %[[SV:.*]] = vector.broadcast %[[SH]] : f32 to vector<4xf32>
//       CHECK:             arith.mulf %[[X]], %[[SV]] : vector<4xf32>
//       CHECK:             math.roundeven
//       CHECK:             %[[Q:.*]] = arith.fptosi %{{.*}} : vector<4xf32> to vector<4xi8>
//       CHECK:             vector.store %[[Q]], %[[OUT]][%[[C0]], %[[H]], %[[C1]], %[[CH]]] {alignment = 4 : i64} : memref<2x4x?x64xi8>, vector<4xi8>
func.func @write_v_i8_hf(%v: tensor<2x4x?x64xf32>, %slots: tensor<2x?xi32>, %s: tensor<4xf32>, %cache: tensor<2x4x?x64xi8>) -> tensor<2x4x?x64xi8> {
  %r = rope.cache_write ins(%v : tensor<2x4x?x64xf32>) slots(%slots : tensor<2x?xi32>) quant_scale(%s : tensor<4xf32>) outs(%cache : tensor<2x4x?x64xi8>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x?x64xi8>
  return %r : tensor<2x4x?x64xi8>
}

// -----

// Strided caches (MLA, DeepSeek-V2/V3: one cache [N, 1, 576], c_kv in
// channels [0, 512), the rotated k_pe in [512, 576)). Each op writes a slice
// of the cache: its buffer has a strided layout (dynamic strides and
// offset, innermost stride 1), so bufferization passes the slice's subview
// itself: nothing is allocated or copied, the kernels store into the cache
// argument. 512 channels in, rows of 576: still 16-byte accesses.
// CHECK-LABEL: func.func @mla_concatenated(
//       CHECK:   bufferization.to_buffer %{{.*}} : tensor<?x1x64xbf16> to memref<?x1x64xbf16, strided<[?, ?, 1], offset: ?>>
//       CHECK:   gpu.launch
//       CHECK:     vector.store %{{.*}} {alignment = 16 : i64} : memref<?x1x64xbf16, strided<[?, ?, 1], offset: ?>>, vector<8xbf16>
//       CHECK:   bufferization.to_buffer %{{.*}} : tensor<?x1x512xbf16> to memref<?x1x512xbf16, strided<[?, ?, 1], offset: ?>>
//       CHECK:   gpu.launch
//       CHECK:     vector.store %{{.*}} {alignment = 16 : i64} : memref<?x1x512xbf16, strided<[?, ?, 1], offset: ?>>, vector<8xbf16>
// BUF-LABEL: func.func @mla_concatenated(
//  BUF-SAME:     %[[C:[^:]*]]: memref<?x1x576xbf16>) -> memref<?x1x576xbf16>
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   %[[PE:.*]] = memref.subview %[[C]][0, 0, 512] [%{{.*}}, 1, 64] [1, 1, 1]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   gpu.launch
//       BUF:     vector.store %{{.*}}, %[[PE]][
//       BUF:   %[[KV:.*]] = memref.subview %[[C]][0, 0, 0] [%{{.*}}, 1, 512] [1, 1, 1]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   gpu.launch
//       BUF:     vector.store %{{.*}}, %[[KV]][
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[C]]
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

// -----

// A slice whose rows are not 16-byte aligned (a bf16 cache of 66 channels,
// rope channels at [2, 66)): accesses shrink to what the slice guarantees,
// two channels (4 bytes) for interleaved pairs.
// CHECK-LABEL: func.func @unaligned_slice(
//       CHECK:   gpu.launch
//   CHECK-NOT:     vector<4xbf16>
//   CHECK-NOT:     vector<8xbf16>
//       CHECK:     vector.store %{{.*}} {alignment = 4 : i64} : memref<?x2x64xbf16, strided<[?, ?, 1], offset: ?>>, vector<2xbf16>
//       CHECK:     gpu.terminator
func.func @unaligned_slice(%k: tensor<?x2x64xbf16>, %slots: tensor<?xi64>, %cache: tensor<?x2x66xbf16>) -> tensor<?x2x66xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %cache, %c0 : tensor<?x2x66xbf16>
  %pe = tensor.extract_slice %cache[0, 0, 2] [%n, 2, 64] [1, 1, 1] : tensor<?x2x66xbf16> to tensor<?x2x64xbf16>
  %r = rope.apply ins(%k : tensor<?x2x64xbf16>) slots(%slots : tensor<?xi64>) outs(%pe : tensor<?x2x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x2x64xbf16>
  %c1 = tensor.insert_slice %r into %cache[0, 0, 2] [%n, 2, 64] [1, 1, 1] : tensor<?x2x64xbf16> into tensor<?x2x66xbf16>
  return %c1 : tensor<?x2x66xbf16>
}

// -----

// The same for a rotation in place in a slice (MLA's query: the rope
// channels [128, 192) of each head rotated, the nope channels untouched):
// one strided buffer read and written, the query's own memory.
// CHECK-LABEL: func.func @q_rope_slice_in_place(
//       CHECK:   %[[QS:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x16x64xbf16> to memref<?x16x64xbf16, strided<[?, ?, 1], offset: ?>>
//   CHECK-NOT:   tensor<?x16x64xbf16> to memref
//       CHECK:   gpu.launch
//       CHECK:     vector.load %[[QS]]
//       CHECK:     vector.store %{{.*}}, %[[QS]]
// BUF-LABEL: func.func @q_rope_slice_in_place(
//  BUF-SAME:     %[[Q:[^:]*]]: memref<?x16x192xbf16>, %{{[^:]*}}: memref<?xi64>) -> memref<?x16x192xbf16>
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   %[[S:.*]] = memref.subview %[[Q]][0, 0, 128] [%{{.*}}, 16, 64] [1, 1, 1]
//       BUF:   gpu.launch
//       BUF:     vector.load %[[S]][
//       BUF:     vector.store %{{.*}}, %[[S]][
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[Q]]
func.func @q_rope_slice_in_place(%q: tensor<?x16x192xbf16>, %pos: tensor<?xi64>) -> tensor<?x16x192xbf16> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %q, %c0 : tensor<?x16x192xbf16>
  %qs = tensor.extract_slice %q[0, 0, 128] [%t, 16, 64] [1, 1, 1] : tensor<?x16x192xbf16> to tensor<?x16x64xbf16>
  %r = rope.apply ins(%qs : tensor<?x16x64xbf16>) positions(%pos : tensor<?xi64>) outs(%qs : tensor<?x16x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x16x64xbf16>
  %q2 = tensor.insert_slice %r into %q[0, 0, 128] [%t, 16, 64] [1, 1, 1] : tensor<?x16x64xbf16> into tensor<?x16x192xbf16>
  return %q2 : tensor<?x16x192xbf16>
}

// -----

// Paged MLA: pages [P, 16, 576] collapsed to rows [P * 16, 576], the rope
// channels sliced and viewed [N, 1, 64] (a reshape of the slice): still the
// slice's buffer, written in place through the collapsed and expanded
// views of the argument. The [N, 1, 64] view's strides [576, 64, 1]: 16-byte
// accesses.
// CHECK-LABEL: func.func @paged_mla_view(
//       CHECK:   bufferization.to_buffer %{{.*}} : tensor<?x1x64xbf16> to memref<?x1x64xbf16, strided<[?, ?, 1], offset: ?>>
//       CHECK:   gpu.launch
//       CHECK:     vector.store %{{.*}} {alignment = 16 : i64} : memref<?x1x64xbf16, strided<[?, ?, 1], offset: ?>>, vector<8xbf16>
// BUF-LABEL: func.func @paged_mla_view(
//  BUF-SAME:     %[[P:[^:]*]]: memref<?x16x576xbf16>) -> memref<?x16x576xbf16>
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   %[[ROWS:.*]] = memref.collapse_shape %[[P]]
//       BUF:   %[[S:.*]] = memref.subview %[[ROWS]][0, 512] [%{{.*}}, 64] [1, 1]
//       BUF:   %[[V:.*]] = memref.expand_shape %[[S]]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   gpu.launch
//       BUF:     vector.store %{{.*}}, %[[V]][
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[P]]
func.func @paged_mla_view(%kpe: tensor<?x1x64xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %pages: tensor<?x16x576xbf16>) -> tensor<?x16x576xbf16> {
  %rows = tensor.collapse_shape %pages [[0, 1], [2]] : tensor<?x16x576xbf16> into tensor<?x576xbf16>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %rows, %c0 : tensor<?x576xbf16>
  %pe = tensor.extract_slice %rows[0, 512] [%n, 64] [1, 1] : tensor<?x576xbf16> to tensor<?x64xbf16>
  %pe3 = tensor.expand_shape %pe [[0], [1, 2]] output_shape [%n, 1, 64] : tensor<?x64xbf16> into tensor<?x1x64xbf16>
  %r = rope.apply ins(%kpe : tensor<?x1x64xbf16>) positions(%pos : tensor<?xi64>) slots(%slots : tensor<?xi64>) outs(%pe3 : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %r2 = tensor.collapse_shape %r [[0], [1, 2]] : tensor<?x1x64xbf16> into tensor<?x64xbf16>
  %rows2 = tensor.insert_slice %r2 into %rows[0, 512] [%n, 64] [1, 1] : tensor<?x64xbf16> into tensor<?x576xbf16>
  %out = tensor.expand_shape %rows2 [[0, 1], [2]] output_shape [%n, 16, 576] : tensor<?x576xbf16> into tensor<?x16x576xbf16>
  return %out : tensor<?x16x576xbf16>
}

// -----

// A slice of a buffer the IR says nothing about (here a function's
// scf.for iteration argument) keeps the identity layout: bufferization
// copies if it must, and the accesses are as aligned as the copy (16
// bytes).
// CHECK-LABEL: func.func @slice_of_unknown(
//       CHECK:   scf.for
//       CHECK:     bufferization.to_buffer %{{.*}} : tensor<?x1x64xbf16> to memref<?x1x64xbf16>
//       CHECK:     gpu.launch
//       CHECK:       vector.store %{{.*}} {alignment = 16 : i64} : memref<?x1x64xbf16>, vector<8xbf16>
func.func @slice_of_unknown(%kpe: tensor<?x1x64xbf16>, %slots: tensor<?xi64>, %cache: tensor<?x1x576xbf16>, %steps: index) -> tensor<?x1x576xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %cache, %c0 : tensor<?x1x576xbf16>
  %res = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %cache) -> (tensor<?x1x576xbf16>) {
    %pe = tensor.extract_slice %acc[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x576xbf16> to tensor<?x1x64xbf16>
    %r = rope.apply ins(%kpe : tensor<?x1x64xbf16>) slots(%slots : tensor<?xi64>) outs(%pe : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
    %next = tensor.insert_slice %r into %acc[0, 0, 512] [%n, 1, 64] [1, 1, 1] : tensor<?x1x64xbf16> into tensor<?x1x576xbf16>
    scf.yield %next : tensor<?x1x576xbf16>
  }
  return %res : tensor<?x1x576xbf16>
}
