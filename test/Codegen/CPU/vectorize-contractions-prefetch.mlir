// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions="vector-bits=512 prefetch-rows=32" --canonicalize --cse | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions="vector-bits=512" | FileCheck %s --check-prefix=OFF
// RUN: not rope-opt %s --split-input-file --rope-vectorize-contractions="prefetch-rows=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions="vector-bits=512 prefetch-rows=32 row-accumulators=32" --canonicalize --cse | FileCheck %s --check-prefix=WHOLE
// RUN: not rope-opt %s --split-input-file --rope-vectorize-contractions="row-accumulators=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// A decode step streams K and V once: one row tile holds the query group,
// so each row of the vector operand is read by one tile only. Its rows 32
// ahead are prefetched into L2 (locality 2), a line (16 f32) at a time,
// the row's start clamped once into the caller's buffer: [0, 4096 * 128 -
// 128] (524160), so that every line of the prefetched row lies in it, also
// past the tile's 256 rows (the next tile's keys) and at the cache's end.

// BAD: tile sizes must be positive (slab-bytes, prefetch-rows and row-accumulators at least 0)

#q = affine_map<(m, n, k) -> (m, k)>
#k = affine_map<(m, n, k) -> (n, k)>
#s = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @decode_scores(
//  CHECK-SAME:     %[[CACHE:[a-z0-9]+]]: memref<4096x128xf32>
//       CHECK:   %[[FLAT:.+]] = memref.reinterpret_cast %[[CACHE]] to offset: [0], sizes: [524288], strides: [1]
//       CHECK:   scf.for %[[KEY:.+]] = {{.+}} step %c4
//       CHECK:     %[[AHEAD:.+]] = arith.addi %[[KEY]], %c32
//       CHECK:     %{{.+}}, %[[OFFSET:.+]], %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata
//       CHECK:     %[[ROW:.+]] = arith.muli %[[AHEAD]], %c128
//       CHECK:     %[[POS:.+]] = arith.addi %[[OFFSET]], %[[ROW]]
//       CHECK:     %[[HIGH:.+]] = arith.minsi %[[POS]], %c524160
//       CHECK:     %[[START:.+]] = arith.maxsi %[[HIGH]], %c0
//       CHECK:     memref.prefetch %[[FLAT]][%[[START]]], read, locality<2>, data
//       CHECK:     %[[LINE:.+]] = arith.addi %[[START]], %c16
//       CHECK:     memref.prefetch %[[FLAT]][%[[LINE]]], read, locality<2>, data
// Eight lines of each of the tile's four keys, then the dot tile's loop.
// CHECK-COUNT-30:  memref.prefetch %[[FLAT]]
//   CHECK-NOT:     memref.prefetch
//       CHECK:     scf.for
//   CHECK-NOT:       memref.prefetch
//       CHECK:       vector.fma
// OFF-LABEL: func.func @decode_scores(
//   OFF-NOT:   memref.prefetch
//       OFF:   return
func.func @decode_scores(%q: memref<4x128xf32>, %cache: memref<4096x128xf32>, %s: memref<4x256xf32>, %at: index) {
  %k = memref.subview %cache[%at, 0] [256, 128] [1, 1] : memref<4096x128xf32> to memref<256x128xf32, strided<[128, 1], offset: ?>>
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x128xf32>, memref<256x128xf32, strided<[128, 1], offset: ?>>) outs(%s : memref<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// P·V of a decode step: the outer product streams each V row once, in two
// passes of 64 columns (4 rows x 4 vectors: 16 accumulators, half the
// registers, by default); the row 32 keys ahead is prefetched in each pass's
// reduction loop, the 4 lines of that pass's columns.
#p = affine_map<(m, n, k) -> (m, k)>
#v = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @decode_pv(
//  CHECK-SAME:     %[[CACHE:[a-z0-9]+]]: memref<4096x128xf32>
//       CHECK:   %[[FLAT:.+]] = memref.reinterpret_cast %[[CACHE]] to offset: [0], sizes: [524288], strides: [1]
//       CHECK:   scf.for %[[COL:.+]] = %c0 to %c128 step %c64
// CHECK-COUNT-16:  vector.load %{{.+}} : memref<4x128xf32>, vector<16xf32>
//       CHECK:     scf.for %[[KEY:.+]] = %c0 to %c256 step %c1 iter_args
//  CHECK-SAME:         -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
//       CHECK:       %[[AHEAD:.+]] = arith.addi %[[KEY]], %c32
//       CHECK:       arith.minsi %{{.+}}, %c524224
//       CHECK:       %[[START:.+]] = arith.maxsi %{{.+}}, %c0
//       CHECK:       memref.prefetch %[[FLAT]][%[[START]]], read, locality<2>, data
//  CHECK-COUNT-3:    memref.prefetch %[[FLAT]]
//   CHECK-NOT:       memref.prefetch
//       CHECK:       vector.load %{{.+}}[%[[KEY]], %[[COL]]]
//       CHECK:       vector.fma
// With row-accumulators=32, one pass: 4 rows x 8 vectors, all 8 lines of
// the 128 columns prefetched.
// WHOLE-LABEL: func.func @decode_pv(
//   WHOLE-NOT:   scf.for %{{.+}} step %c64
//       WHOLE:   scf.for %[[KEY:.+]] = %c0 to %c256 step %c1 iter_args
//       WHOLE:     arith.minsi %{{.+}}, %c524160
//       WHOLE:     memref.prefetch
//  WHOLE-COUNT-7:  memref.prefetch
//   WHOLE-NOT:     memref.prefetch
//       WHOLE:     vector.load %{{.+}}[%[[KEY]], %c0]
//       WHOLE:     vector.fma
func.func @decode_pv(%p: memref<4x256xf32>, %cache: memref<4096x128xf32>, %o: memref<4x128xf32>, %at: index) {
  %v = memref.subview %cache[%at, 0] [256, 128] [1, 1] : memref<4096x128xf32> to memref<256x128xf32, strided<[128, 1], offset: ?>>
  linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<4x256xf32>, memref<256x128xf32, strided<[128, 1], offset: ?>>) outs(%o : memref<4x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Prefill: 32 query rows are eight row tiles, each reading every V row
// (from L1/L2 after the first), so nothing is streamed once and nothing is
// prefetched.
#p = affine_map<(m, n, k) -> (m, k)>
#v = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @prefill_pv(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
func.func @prefill_pv(%p: memref<32x64xf32>, %cache: memref<4096x128xf32>, %o: memref<32x128xf32>, %at: index) {
  %v = memref.subview %cache[%at, 0] [64, 128] [1, 1] : memref<4096x128xf32> to memref<64x128xf32, strided<[128, 1], offset: ?>>
  linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<32x64xf32>, memref<64x128xf32, strided<[128, 1], offset: ?>>) outs(%o : memref<32x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// bf16 V shared by the query heads of a decode step (four heads of four
// queries: one row tile per head, sixteen rows in all) is copied widened to
// f32 once per 64-key tile; the copy is what streams V, so its rows 32 ahead are prefetched
// there: 128 bf16 are four lines (32 per line), the start clamped to [0,
// 524288 - 128].
#p = affine_map<(m, n, k) -> (m, k)>
#v = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @decode_pv_bf16(
//  CHECK-SAME:     %[[CACHE:[a-z0-9]+]]: memref<4096x128xbf16>
//       CHECK:   %[[FLAT:.+]] = memref.reinterpret_cast %[[CACHE]]
//       CHECK:   %[[WIDE:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xf32>
//       CHECK:   scf.for %[[KEY:.+]] = %c0 to %c64 step %c1 {
//       CHECK:     arith.addi %[[KEY]], %c32
//       CHECK:     arith.minsi %{{.+}}, %c524160
//       CHECK:     %[[START:.+]] = arith.maxsi %{{.+}}, %c0
//       CHECK:     memref.prefetch %[[FLAT]][%[[START]]], read, locality<2>, data
// CHECK-COUNT-3:   memref.prefetch %[[FLAT]]
//   CHECK-NOT:     memref.prefetch
//       CHECK:     scf.for
//       CHECK:       arith.extf %{{.+}} : vector<16xbf16> to vector<16xf32>
//       CHECK:       vector.store %{{.+}}, %[[WIDE]][%[[KEY]], %{{.+}}]
func.func @decode_pv_bf16(%p: memref<4x4x64xf32>, %cache: memref<4096x128xbf16>, %o: memref<4x4x128xf32>, %at: index) {
  %v = memref.subview %cache[%at, 0] [64, 128] [1, 1] : memref<4096x128xbf16> to memref<64x128xbf16, strided<[128, 1], offset: ?>>
  linalg.generic {indexing_maps = [affine_map<(g, m, n, k) -> (g, m, k)>, affine_map<(g, m, n, k) -> (k, n)>, affine_map<(g, m, n, k) -> (g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<4x4x64xf32>, memref<64x128xbf16, strided<[128, 1], offset: ?>>) outs(%o : memref<4x4x128xf32>) {
  ^bb0(%a: f32, %b: bf16, %c: f32):
    %w = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %w : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}
