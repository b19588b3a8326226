// RUN: rope-opt %s --rope-vectorize-contractions="vector-bits=512 rows=4 columns=4 prefetch-rows=2" --split-input-file | FileCheck %s

// The scores of rope-rotate-keys-in-scores: out + q0·y0 + q1·y1, where the
// rotated key halves y0 = k0·c − k1·s and y1 = k1·c + k0·s are computed from
// the key's halves (two views of one buffer) and the cos/sin table. The Dot
// form computes each key vector's rotation once per reduction step and uses
// it for all four query rows; both halves of a key row ahead are prefetched
// (the table, shared by the heads, is not).
#q = affine_map<(h, g, m, i, j) -> (h, g, m, i)>
#k = affine_map<(h, g, m, i, j) -> (h, j, i)>
#t = affine_map<(h, g, m, i, j) -> (j, i)>
#o = affine_map<(h, g, m, i, j) -> (h, g, m, j)>
// CHECK-LABEL: func.func @rotated_keys
//       CHECK:   scf.forall (%[[H:.*]], %[[M:.*]]) in (%c2, %c1)
//       CHECK:     scf.for %[[COL:.*]] = %c0 to %c8 step %c4
// Two prefetches (one line each: the halves) per key of the column tile.
// CHECK-COUNT-8:     memref.prefetch %{{.*}}, read, locality<2>, data
//   CHECK-NOT:       memref.prefetch
//       CHECK:       scf.for %[[I:.*]] = %c0 to %c16 step %c16 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// The first key of the tile: its halves and the table's row, rotated once.
//       CHECK:         %[[K0:.*]] = vector.load %[[KH0:.*]][%[[H]], %[[COL]], %[[I]]] : memref<2x8x16xf32, strided<[256, 32, 1]>>, vector<16xf32>
//       CHECK:         %[[K1:.*]] = vector.load %[[KH1:.*]][%[[H]], %[[COL]], %[[I]]] : memref<2x8x16xf32, strided<[256, 32, 1], offset: 16>>, vector<16xf32>
//       CHECK:         %[[C:.*]] = vector.load %{{.*}}[%[[COL]], %[[I]]] : memref<8x16xf32>, vector<16xf32>
//       CHECK:         %[[S:.*]] = vector.load %{{.*}}[%[[COL]], %[[I]]] : memref<8x16xf32>, vector<16xf32>
//       CHECK:         %[[NS:.*]] = arith.negf %[[S]] : vector<16xf32>
//       CHECK:         %[[K0C:.*]] = arith.mulf %[[K0]], %[[C]] : vector<16xf32>
//       CHECK:         %[[Y0:.*]] = math.fma %[[K1]], %[[NS]], %[[K0C]] : vector<16xf32>
//       CHECK:         %[[K1C:.*]] = arith.mulf %[[K1]], %[[C]] : vector<16xf32>
//       CHECK:         %[[Y1:.*]] = math.fma %[[K0]], %[[S]], %[[K1C]] : vector<16xf32>
// Row 0 times key 0: both terms into one accumulator.
//       CHECK:         %[[A:.*]] = vector.fma %[[Q00:.*]], %[[Y0]], %{{.*}} : vector<16xf32>
//       CHECK:         vector.fma %[[Q10:.*]], %[[Y1]], %[[A]] : vector<16xf32>
// 16 accumulators × 2 terms.
// CHECK-COUNT-30:      vector.fma
//   CHECK-NOT:         vector.fma
//       CHECK:         scf.yield
//   CHECK-NOT:   linalg.generic
func.func @rotated_keys(%q: memref<2x4x1x32xf32>, %k: memref<2x8x32xf32>, %c: memref<8x16xf32>, %s: memref<8x16xf32>, %out: memref<2x4x1x8xf32>) {
  %q0 = memref.subview %q[0, 0, 0, 0] [2, 4, 1, 16] [1, 1, 1, 1] : memref<2x4x1x32xf32> to memref<2x4x1x16xf32, strided<[128, 32, 32, 1]>>
  %q1 = memref.subview %q[0, 0, 0, 16] [2, 4, 1, 16] [1, 1, 1, 1] : memref<2x4x1x32xf32> to memref<2x4x1x16xf32, strided<[128, 32, 32, 1], offset: 16>>
  %k0 = memref.subview %k[0, 0, 0] [2, 8, 16] [1, 1, 1] : memref<2x8x32xf32> to memref<2x8x16xf32, strided<[256, 32, 1]>>
  %k1 = memref.subview %k[0, 0, 16] [2, 8, 16] [1, 1, 1] : memref<2x8x32xf32> to memref<2x8x16xf32, strided<[256, 32, 1], offset: 16>>
  linalg.generic {indexing_maps = [#q, #q, #k, #k, #t, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q0, %q1, %k0, %k1, %c, %s : memref<2x4x1x16xf32, strided<[128, 32, 32, 1]>>, memref<2x4x1x16xf32, strided<[128, 32, 32, 1], offset: 16>>, memref<2x8x16xf32, strided<[256, 32, 1]>>, memref<2x8x16xf32, strided<[256, 32, 1], offset: 16>>, memref<8x16xf32>, memref<8x16xf32>) outs(%out : memref<2x4x1x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32, %cc: f32, %ss: f32, %acc: f32):
    %ns = arith.negf %ss : f32
    %x = arith.mulf %b0, %cc : f32
    %y0 = math.fma %b1, %ns, %x : f32
    %z = arith.mulf %b1, %cc : f32
    %y1 = math.fma %b0, %ss, %z : f32
    %p0 = arith.mulf %a0, %y0 : f32
    %s0 = arith.addf %p0, %acc : f32
    %p1 = arith.mulf %a1, %y1 : f32
    %s1 = arith.addf %p1, %s0 : f32
    linalg.yield %s1 : f32
  }
  return
}

// -----

// Left alone: a computed factor that reads a row input (q1 inside the
// key's expression), and a payload that computes more than the sum.
#q = affine_map<(h, g, m, i, j) -> (h, g, m, i)>
#k = affine_map<(h, g, m, i, j) -> (h, j, i)>
#t = affine_map<(h, g, m, i, j) -> (j, i)>
#o = affine_map<(h, g, m, i, j) -> (h, g, m, j)>
// CHECK-LABEL: func.func @row_input_in_column_factor
//       CHECK:   linalg.generic
func.func @row_input_in_column_factor(%q0: memref<2x4x1x16xf32>, %q1: memref<2x4x1x16xf32>, %k0: memref<2x8x16xf32>, %k1: memref<2x8x16xf32>, %c: memref<8x16xf32>, %s: memref<8x16xf32>, %out: memref<2x4x1x8xf32>) {
  linalg.generic {indexing_maps = [#q, #q, #k, #k, #t, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q0, %q1, %k0, %k1, %c, %s : memref<2x4x1x16xf32>, memref<2x4x1x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<8x16xf32>, memref<8x16xf32>) outs(%out : memref<2x4x1x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32, %cc: f32, %ss: f32, %acc: f32):
    %x = arith.mulf %b0, %a1 : f32
    %z = arith.mulf %b1, %cc : f32
    %p0 = arith.mulf %a0, %x : f32
    %s0 = arith.addf %p0, %acc : f32
    %p1 = arith.mulf %a1, %z : f32
    %s1 = arith.addf %p1, %s0 : f32
    linalg.yield %s1 : f32
  }
  return
}

// CHECK-LABEL: func.func @more_than_the_sum
//       CHECK:   linalg.generic
func.func @more_than_the_sum(%q0: memref<2x4x1x16xf32>, %q1: memref<2x4x1x16xf32>, %k0: memref<2x8x16xf32>, %k1: memref<2x8x16xf32>, %c: memref<8x16xf32>, %s: memref<8x16xf32>, %out: memref<2x4x1x8xf32>) {
  linalg.generic {indexing_maps = [#q, #q, #k, #k, #t, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q0, %q1, %k0, %k1, %c, %s : memref<2x4x1x16xf32>, memref<2x4x1x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<8x16xf32>, memref<8x16xf32>) outs(%out : memref<2x4x1x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32, %cc: f32, %ss: f32, %acc: f32):
    %x = arith.mulf %b0, %cc : f32
    %z = arith.mulf %b1, %ss : f32
    %p0 = arith.mulf %a0, %x : f32
    %s0 = arith.addf %p0, %acc : f32
    %p1 = arith.mulf %a1, %z : f32
    %s1 = arith.addf %p1, %s0 : f32
    %e = math.exp %s1 : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Inside a parallel loop already (a decode step's tile), with the cos/sin
// that every head reads: blocks of keys whose cos/sin slab is 16 KiB (32
// keys × 64 × 2 × 4 bytes), each done for every head before the next, so the
// heads read the table from L1.
// CHECK-LABEL: func.func @rotated_keys_in_blocks
//       CHECK:   scf.forall
//       CHECK:     scf.for %[[BLOCK:.*]] = %c0 to %c64 step %c32 {
//       CHECK:       scf.for %[[H:.*]] = %c0 to %c2 step %c1 {
//       CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c4 {
//       CHECK:           scf.for %{{.*}} = %[[BLOCK]] to %{{.*}} step %c4 {
#q = affine_map<(h, g, i, j) -> (h, g, i)>
#k = affine_map<(h, g, i, j) -> (h, j, i)>
#t = affine_map<(h, g, i, j) -> (j, i)>
#o = affine_map<(h, g, i, j) -> (h, g, j)>
func.func @rotated_keys_in_blocks(%q: memref<2x4x128xf32>, %k: memref<2x64x128xf32>, %c: memref<64x64xf32>, %s: memref<64x64xf32>, %out: memref<2x4x64xf32>) {
  scf.forall (%unit) in (1) {
    %q0 = memref.subview %q[0, 0, 0] [2, 4, 64] [1, 1, 1] : memref<2x4x128xf32> to memref<2x4x64xf32, strided<[512, 128, 1]>>
    %q1 = memref.subview %q[0, 0, 64] [2, 4, 64] [1, 1, 1] : memref<2x4x128xf32> to memref<2x4x64xf32, strided<[512, 128, 1], offset: 64>>
    %k0 = memref.subview %k[0, 0, 0] [2, 64, 64] [1, 1, 1] : memref<2x64x128xf32> to memref<2x64x64xf32, strided<[8192, 128, 1]>>
    %k1 = memref.subview %k[0, 0, 64] [2, 64, 64] [1, 1, 1] : memref<2x64x128xf32> to memref<2x64x64xf32, strided<[8192, 128, 1], offset: 64>>
    linalg.generic {indexing_maps = [#q, #q, #k, #k, #t, #t, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q0, %q1, %k0, %k1, %c, %s : memref<2x4x64xf32, strided<[512, 128, 1]>>, memref<2x4x64xf32, strided<[512, 128, 1], offset: 64>>, memref<2x64x64xf32, strided<[8192, 128, 1]>>, memref<2x64x64xf32, strided<[8192, 128, 1], offset: 64>>, memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<2x4x64xf32>) {
    ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32, %cc: f32, %ss: f32, %acc: f32):
      %ns = arith.negf %ss : f32
      %x = arith.mulf %b0, %cc : f32
      %y0 = math.fma %b1, %ns, %x : f32
      %z = arith.mulf %b1, %cc : f32
      %y1 = math.fma %b0, %ss, %z : f32
      %p0 = arith.mulf %a0, %y0 : f32
      %s0 = arith.addf %p0, %acc : f32
      %p1 = arith.mulf %a1, %y1 : f32
      %s1 = arith.addf %p1, %s0 : f32
      linalg.yield %s1 : f32
    }
  }
  return
}
