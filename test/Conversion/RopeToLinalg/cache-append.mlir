// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-decompose-aggregates -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -cse -canonicalize -split-input-file | FileCheck %s --check-prefix=BUFFER --enable-var-scope
// RUN: rope-opt %s --rope-to-llvm-cpu="vectorize=false" -split-input-file | FileCheck %s --check-prefix=LLVM

// The portable (linalg/scf/tensor) form of the KV-cache append
// (CacheWriteDecompose.cpp), shared by rope.cache_write and rope.apply's
// slots, through convert-rope-to-linalg and through rope-decompose-aggregates
// (both run AggregatedOpInterface::decomposeOperation): one scf.for per token
// dim carrying the cache; the token's slot read with tensor.extract and
// checked by buildCacheSlot (0 <= slot < prod(cache token sizes)); `scf.if
// valid` around the token's rows stored at the slot's coordinates, the else
// branch yields the cache unchanged (a slot out of range writes nothing).
// After one-shot bufferization the cache (a function argument) is written in
// place: no allocation or copy of it, only the one-row copies. Numerics:
// python/tests/compiler/test_cache_lowering_scalar.py.

// V into collapsed pages, quantized with a per-head scale: the row goes
// through buildStoredValue (f32 product, clamp to +-448, truncf) in a
// linalg.generic into the cache's slice at the slot.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @paged_fp8(
//  CHECK-SAME:     %[[V:[^:]*]]: tensor<?x8x128xbf16>, %[[S:[^:]*]]: tensor<?xi32>, %[[Q:[^:]*]]: tensor<8xf32>, %[[C:[^:]*]]: tensor<4096x8x128xf8E4M3FN>)
//   CHECK-NOT:   rope.
//       CHECK:   %[[R:.*]] = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[C]]) -> (tensor<4096x8x128xf8E4M3FN>)
//       CHECK:     %[[SLOT:.*]] = tensor.extract %[[S]][%[[T]]] : tensor<?xi32>
//       CHECK:     %[[S64:.*]] = arith.extsi %[[SLOT]] : i32 to i64
//       CHECK:     %[[GE:.*]] = arith.cmpi sge, %[[S64]], %{{.*}} : i64
//       CHECK:     %[[LT:.*]] = arith.cmpi slt, %[[S64]], %{{.*}} : i64
//       CHECK:     %[[VALID:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       CHECK:     %[[CL:.*]] = arith.select %[[VALID]], %[[S64]], %{{.*}} : i64
//       CHECK:     %[[ROW:.*]] = arith.index_cast %[[CL]] : i64 to index
//       CHECK:     %[[IF:.*]] = scf.if %[[VALID]] -> (tensor<4096x8x128xf8E4M3FN>) {
//       CHECK:       %[[IN:.*]] = tensor.extract_slice %[[V]][%[[T]], 0, 0] [1, 8, 128] [1, 1, 1] : tensor<?x8x128xbf16> to tensor<1x8x128xbf16>
//       CHECK:       %[[DST:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0, 0] [1, 8, 128] [1, 1, 1]
//       CHECK:       %[[ST:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$HEAD]], #[[$ID3]]]
//  CHECK-SAME:           ins(%[[IN]], %[[Q]] : tensor<1x8x128xbf16>, tensor<8xf32>) outs(%[[DST]] : tensor<1x8x128xf8E4M3FN>)
//       CHECK:         arith.extf {{.*}} : bf16 to f32
//       CHECK:         arith.mulf
//       CHECK:         arith.minimumf
//       CHECK:         arith.maximumf
//       CHECK:         arith.truncf {{.*}} : f32 to f8E4M3FN
//       CHECK:       %[[INS:.*]] = tensor.insert_slice %[[ST]] into %[[ACC]][%[[ROW]], 0, 0] [1, 8, 128] [1, 1, 1]
//       CHECK:       scf.yield %[[INS]]
//       CHECK:     } else {
//       CHECK:       scf.yield %[[ACC]]
//       CHECK:     }
//       CHECK:     scf.yield %[[IF]]
//       CHECK:   return %[[R]]

// BUFFER-LABEL: func.func @paged_fp8(
//  BUFFER-SAME:     %{{[^:]*}}: memref<?x8x128xbf16>, %{{[^:]*}}: memref<?xi32>, %{{[^:]*}}: memref<8xf32>, %[[C:[^:]*]]: memref<4096x8x128xf8E4M3FN>)
//   BUFFER-NOT:   memref.alloc
//   BUFFER-NOT:   memref.copy
//       BUFFER:   scf.for
//       BUFFER:     scf.if
//       BUFFER:       %[[DST:.*]] = memref.subview %[[C]][%{{.*}}, 0, 0] [1, 8, 128] [1, 1, 1]
//       BUFFER:       linalg.generic {{.*}} outs(%[[DST]] :
//   BUFFER-NOT:   memref.alloc
//   BUFFER-NOT:   memref.copy
//       BUFFER:   return %[[C]]

// LLVM-LABEL: llvm.func @paged_fp8(
func.func @paged_fp8(%v: tensor<?x8x128xbf16>, %slots: tensor<?xi32>, %s: tensor<8xf32>, %cache: tensor<4096x8x128xf8E4M3FN>) -> tensor<4096x8x128xf8E4M3FN> {
  %r = rope.cache_write ins(%v : tensor<?x8x128xbf16>) slots(%slots : tensor<?xi32>) quant_scale(%s : tensor<8xf32>) outs(%cache : tensor<4096x8x128xf8E4M3FN>) -> tensor<4096x8x128xf8E4M3FN>
  return %r : tensor<4096x8x128xf8E4M3FN>
}

// -----

// V unquantized into a contiguous [B, max_len, H, D] cache: two token loops,
// the slot delinearized row-major over (B, max_len) (remui, divui by
// max_len), the row a linalg.copy (kept by canonicalization, where an
// identity generic would fold into a bare insert_slice: a strided
// memref.copy runtime call once bufferized). Bufferized: the cache is
// written in place by the one-row copy into its subview at the slot; the
// whole pipeline (LLVM run) calls no memrefCopy.
// CHECK-LABEL: func.func @contiguous_v(
//  CHECK-SAME:     %[[V:[^:]*]]: tensor<2x3x4x16xf32>, %[[S:[^:]*]]: tensor<2x3xi64>, %[[C:[^:]*]]: tensor<2x64x4x16xf32>)
//   CHECK-NOT:   rope.
//       CHECK:   %[[R:.*]] = scf.for %[[B:.*]] = {{.*}} iter_args(%[[ACC0:.*]] = %[[C]])
//       CHECK:     scf.for %[[TI:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]])
//       CHECK:       %[[SLOT:.*]] = tensor.extract %[[S]][%[[B]], %[[TI]]] : tensor<2x3xi64>
//       CHECK:       %[[VALID:.*]] = arith.andi
//       CHECK:       %[[LIN:.*]] = arith.index_cast {{.*}} : i64 to index
//       CHECK:       %[[POS:.*]] = arith.remui %[[LIN]], %[[MAXLEN:.*]] : index
//       CHECK:       %[[ROWB:.*]] = arith.divui %[[LIN]], %[[MAXLEN]] : index
//       CHECK:       scf.if %[[VALID]]
//       CHECK:         %[[IN:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[TI]], 0, 0] [1, 1, 4, 16] [1, 1, 1, 1]
//       CHECK:         %[[DST:.*]] = tensor.extract_slice %[[ACC]][%[[ROWB]], %[[POS]], 0, 0] [1, 1, 4, 16] [1, 1, 1, 1]
//       CHECK:         %[[ST:.*]] = linalg.copy ins(%[[IN]] : tensor<1x1x4x16xf32>) outs(%[[DST]] : tensor<1x1x4x16xf32>)
//       CHECK:         tensor.insert_slice %[[ST]] into %[[ACC]][%[[ROWB]], %[[POS]], 0, 0] [1, 1, 4, 16] [1, 1, 1, 1]
//       CHECK:       } else {
//       CHECK:         scf.yield %[[ACC]]

// BUFFER-LABEL: func.func @contiguous_v(
//  BUFFER-SAME:     %[[V:[^:]*]]: memref<2x3x4x16xf32>, %{{[^:]*}}: memref<2x3xi64>, %[[C:[^:]*]]: memref<2x64x4x16xf32>)
//   BUFFER-NOT:   memref.alloc
//       BUFFER:   scf.for
//       BUFFER:     scf.for
//       BUFFER:       scf.if
//       BUFFER:         %[[SRC:.*]] = memref.subview %[[V]]
//       BUFFER:         %[[DST:.*]] = memref.subview %[[C]]
//       BUFFER:         linalg.copy ins(%[[SRC]] : memref<1x1x4x16xf32, {{.*}}>) outs(%[[DST]] : memref<1x1x4x16xf32, {{.*}}>)
//   BUFFER-NOT:   memref.alloc
//   BUFFER-NOT:   memref.copy
//       BUFFER:   return %[[C]]

// LLVM-LABEL: llvm.func @contiguous_v(
//   LLVM-NOT: llvm.call @memrefCopy
func.func @contiguous_v(%v: tensor<2x3x4x16xf32>, %slots: tensor<2x3xi64>, %cache: tensor<2x64x4x16xf32>) -> tensor<2x64x4x16xf32> {
  %r = rope.cache_write ins(%v : tensor<2x3x4x16xf32>) slots(%slots : tensor<2x3xi64>) outs(%cache : tensor<2x64x4x16xf32>) -> tensor<2x64x4x16xf32>
  return %r : tensor<2x64x4x16xf32>
}

// -----

// K into Hugging Face's [B, H, max_len, D] cache (token dims (0, 2)), with
// QK-norm and an i8 cache: the rotation (with its neighbours: the values it
// stores are final, i8) into a temporary shaped like the input (allocated,
// the portable form's one extra buffer; never one of the cache's size), then the
// scatter with token loops over dims 0 and 2 and no second quantization (a
// linalg.copy of i8 rows: strided in this layout, still no memrefCopy call).
// CHECK-LABEL: func.func @hf_k_i8(
//  CHECK-SAME:     %[[K:[^:]*]]: tensor<2x8x?x64xf32>, %[[S:[^:]*]]: tensor<2x?xi32>, %[[P:[^:]*]]: tensor<2x?xi64>, %[[W:[^:]*]]: tensor<64xf32>, %[[Q:[^:]*]]: tensor<f32>, %[[C:[^:]*]]: tensor<2x8x4096x64xi8>)
//   CHECK-NOT:   rope.
//       CHECK:   %[[TMP:.*]] = tensor.empty(%{{.*}}) : tensor<2x8x?x64xi8>
//       CHECK:   %[[TMPP:.*]] = tensor.expand_shape %[[TMP]]
//       CHECK:   %[[ROT:.*]] = linalg.generic {{.*}} outs(%[[TMPP]] : tensor<2x8x?x2x32xi8>)
//       CHECK:     math.roundeven
//       CHECK:     arith.fptosi {{.*}} to i8
//       CHECK:   %[[ROWS:.*]] = tensor.collapse_shape %[[ROT]]
//       CHECK:   %[[R:.*]] = scf.for %[[B:.*]] = {{.*}} iter_args(%[[ACC0:.*]] = %[[C]])
//       CHECK:     scf.for %[[TI:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]])
//       CHECK:       tensor.extract %[[S]][%[[B]], %[[TI]]] : tensor<2x?xi32>
//       CHECK:       scf.if
//       CHECK:         %[[IN:.*]] = tensor.extract_slice %[[ROWS]][%[[B]], 0, %[[TI]], 0] [1, 8, 1, 64] [1, 1, 1, 1]
//       CHECK:         %[[DST:.*]] = tensor.extract_slice %[[ACC]][%{{.*}}, 0, %{{.*}}, 0] [1, 8, 1, 64] [1, 1, 1, 1]
//       CHECK:         linalg.copy ins(%[[IN]] : tensor<1x8x1x64xi8>) outs(%[[DST]] : tensor<1x8x1x64xi8>)
//       CHECK:   return %[[R]]

// BUFFER-LABEL: func.func @hf_k_i8(
//  BUFFER-SAME:     %[[C:[^:]*]]: memref<2x8x4096x64xi8>)
//   BUFFER-NOT:   memref.alloc() {{.*}} : memref<2x8x4096x64xi8>
//   BUFFER-NOT:   memref.copy
//       BUFFER:   return %[[C]]

// LLVM-LABEL: llvm.func @hf_k_i8(
//   LLVM-NOT: llvm.call @memrefCopy
func.func @hf_k_i8(%k: tensor<2x8x?x64xf32>, %slots: tensor<2x?xi32>, %pos: tensor<2x?xi64>, %w: tensor<64xf32>, %q: tensor<f32>, %cache: tensor<2x8x4096x64xi8>) -> tensor<2x8x4096x64xi8> {
  %r = rope.apply ins(%k : tensor<2x8x?x64xf32>) positions(%pos : tensor<2x?xi64>) norm(%w : tensor<64xf32>) quant_scale(%q : tensor<f32>) slots(%slots : tensor<2x?xi32>) outs(%cache : tensor<2x8x4096x64xi8>) {token_dims = array<i64: 0, 2>, norm_epsilon = 1.0e-06} -> tensor<2x8x4096x64xi8>
  return %r : tensor<2x8x4096x64xi8>
}
