// RUN: rope-opt %s --rope-vectorize-contractions="bf16-products=amx" --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-vectorize-contractions="bf16-products=avx512-dot" --canonicalize -split-input-file | FileCheck %s --check-prefix=PAIRS

// bf16 × bf16 -> f32 with bf16-products=amx: where K is packed as pairs
// ([128/2][2·64] bf16, the layout tdpbf16ps takes for its second operand),
// each 16 rows × 16 columns of the scores is one f32 AMX tile, loaded,
// accumulated by one tdpbf16ps per 32 of the reduction (a 16×32 tile of Q
// where it lies, 16 pair rows of the packed K) and stored. avx512-dot
// never uses the tiles.
// PAIRS-NOT: amx.

// CHECK-LABEL: func.func @scores_tiles(
//       CHECK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xbf16>
//       CHECK:   scf.for %[[ROW:.*]] = %c0 to %c32 step %c16
//       CHECK:     scf.for %[[COL:.*]] = %c0 to %c64 step %c16
//       CHECK:       %[[OUT:.*]] = memref.subview %{{.*}}[%[[ROW]], %[[COL]]] [16, 16] [1, 1] : memref<32x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
//       CHECK:       %[[ACC:.*]] = amx.tile_load %[[OUT]][%c0, %c0] {{.*}} into !amx.tile<16x16xf32>
//       CHECK:       %[[PC:.*]] = arith.muli %[[COL]], %c2
//       CHECK:       %[[B0:.*]] = amx.tile_load %[[P]][%c0, %[[PC]]] : memref<64x128xbf16> into !amx.tile<16x32xbf16>
//       CHECK:       %[[Q0:.*]] = memref.subview %{{.*}}[%[[ROW]], 0] [16, 32] [1, 1] : memref<32x128xbf16> to memref<16x32xbf16, strided<[128, 1], offset: ?>>
//       CHECK:       %[[A0:.*]] = amx.tile_load %[[Q0]][%c0, %c0] {{.*}} into !amx.tile<16x32xbf16>
//       CHECK:       %[[S0:.*]] = amx.tile_mulf %[[A0]], %[[B0]], %[[ACC]]
//       CHECK:       amx.tile_load %[[P]][%c16, %[[PC]]]
//       CHECK:       memref.subview %{{.*}}[%[[ROW]], 32] [16, 32]
//       CHECK:       amx.tile_mulf
//       CHECK:       amx.tile_load %[[P]][%c32, %[[PC]]]
//       CHECK:       amx.tile_mulf
//       CHECK:       amx.tile_load %[[P]][%c48, %[[PC]]]
//       CHECK:       %[[S3:.*]] = amx.tile_mulf
//       CHECK:       amx.tile_store %[[OUT]][%c0, %c0], %[[S3]]
//   CHECK-NOT:   x86vector.avx512.dot
// PAIRS-LABEL: func.func @scores_tiles(
//       PAIRS:   x86vector.avx512.dot
func.func @scores_tiles(%q: memref<32x128xbf16>, %k: memref<64x128xbf16>, %s: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<32x128xbf16>, memref<64x128xbf16>) outs(%s : memref<32x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A GQA prefill tile ([G, S, D] queries, keys shared by the G heads): the
// rows are S, the heads an outer dim fixed in each view; 40 rows are two
// tiles of 16 and 8 rows left to the vdpbf16ps pairs.
// CHECK-LABEL: func.func @gqa_rows_left(
//       CHECK:   scf.forall (%[[G:.*]]) in (4)
//       CHECK:     scf.for %[[ROW:.*]] = %c0 to %c32 step %c16
//       CHECK:       memref.subview %{{.*}}[%[[G]], %[[ROW]], %{{.*}}] [1, 16, 16] [1, 1, 1] : memref<4x40x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
//       CHECK:       memref.subview %{{.*}}[%[[G]], %[[ROW]], 0] [1, 16, 32] [1, 1, 1] : memref<4x40x64xbf16> to memref<16x32xbf16, strided<[64, 1], offset: ?>>
//       CHECK:       amx.tile_mulf
//       CHECK:       amx.tile_mulf
//   CHECK-NOT:       amx.tile_mulf
//       CHECK:     scf.for %{{.*}} = %c32 to %c40 step %c4
//       CHECK:       x86vector.avx512.dot
func.func @gqa_rows_left(%q: memref<4x40x64xbf16>, %k: memref<64x64xbf16>, %s: memref<4x40x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(g, i, j, d) -> (g, i, d)>, affine_map<(g, i, j, d) -> (j, d)>, affine_map<(g, i, j, d) -> (g, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x40x64xbf16>, memref<64x64xbf16>) outs(%s : memref<4x40x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// No whole tiles: a reduction of 16 (a tile takes 32 bf16) is left to the
// register tiles (here widened FMAs: the pairs' packed blocks take 32 too).
// CHECK-LABEL: func.func @short_reduction(
//   CHECK-NOT:   amx.
//       CHECK:   vector.fma
func.func @short_reduction(%q: memref<32x16xbf16>, %k: memref<64x16xbf16>, %s: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<32x16xbf16>, memref<64x16xbf16>) outs(%s : memref<32x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The scores stored transposed ([keys][queries]): a tile row would be a
// column of the output, so no tiles; pairs as with avx512-dot.
// CHECK-LABEL: func.func @transposed_output(
//   CHECK-NOT:   amx.
//       CHECK:   x86vector.avx512.dot
func.func @transposed_output(%q: memref<32x128xbf16>, %k: memref<64x128xbf16>, %s: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (j, i)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<32x128xbf16>, memref<64x128xbf16>) outs(%s : memref<64x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// P·V: f32 P times bf16 V on AMX tiles. V is packed as interleaved pairs
// of its rows ([64/2][2·128] bf16); each 16 rows of P are split into three
// bf16 parts (rows 0-15: the high 8 significand bits, truncated; 16-31:
// the next 8; 32-47: the rest), which sum to P exactly, infinities and NaN
// kept whole; one tdpbf16ps per part and 32 keys, the smallest part first.
// CHECK-LABEL: func.func @pv_split(
//       CHECK:   %[[V:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x256xbf16>
//       CHECK:     vector.interleave %{{.*}}, %{{.*}} : vector<16xbf16> -> vector<32xbf16>
//       CHECK:   scf.for %[[ROW:.*]] = %c0 to %c32 step %c16
//       CHECK:     %[[PARTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<48x64xbf16>
//       CHECK:       %[[X:.*]] = vector.load %{{.*}} : memref<32x64xf32>, vector<16xf32>
//       CHECK:       %[[FINITE:.*]] = arith.cmpi ne
//       CHECK:       %[[T:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<16xi32>
//       CHECK:       %[[HIGH:.*]] = arith.select %[[FINITE]], %{{.*}}, %[[X]]
//       CHECK:       %[[REST:.*]] = arith.subf %[[X]], %[[HIGH]]
//       CHECK:       arith.select %[[FINITE]], %[[REST]], %{{.*}}
//       CHECK:       arith.truncf %[[HIGH]] : vector<16xf32> to vector<16xbf16>
//       CHECK:     scf.for %[[COL:.*]] = %c0 to %c128 step %c16
//       CHECK:       amx.tile_load %{{.*}}[%c0, %c0] {{.*}} into !amx.tile<16x16xf32>
//       CHECK:       %[[B0:.*]] = amx.tile_load %[[V]][%c0, %{{.*}}] : memref<32x256xbf16>
//       CHECK:       %[[LO:.*]] = amx.tile_load %[[PARTS]][%c32, %c0]
//       CHECK:       amx.tile_mulf %[[LO]], %[[B0]]
//       CHECK:       %[[MID:.*]] = amx.tile_load %[[PARTS]][%c16, %c0]
//       CHECK:       amx.tile_mulf %[[MID]], %[[B0]]
//       CHECK:       %[[HI:.*]] = amx.tile_load %[[PARTS]][%c0, %c0]
//       CHECK:       amx.tile_mulf %[[HI]], %[[B0]]
//       CHECK:       amx.tile_load %[[V]][%c16, %{{.*}}]
//       CHECK:       amx.tile_load %[[PARTS]][%c32, %c32]
//       CHECK:       amx.tile_store
//       CHECK:     memref.dealloc %[[PARTS]]
// PAIRS-LABEL: func.func @pv_split(
//   PAIRS-NOT:   vector.interleave
func.func @pv_split(%p: memref<32x64xf32>, %v: memref<64x128xbf16>, %o: memref<32x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (d, j)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<32x64xf32>, memref<64x128xbf16>) outs(%o : memref<32x128xf32>) {
  ^bb0(%a: f32, %b: bf16, %c: f32):
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %be : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}
