// RUN: rope-opt %s --rope-vectorize-contractions --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-vectorize-contractions="vector-bits=256 rows=2 vectors-per-row=1 columns=2" --canonicalize -split-input-file | FileCheck %s --check-prefix=SMALL --enable-var-scope

// A static matmul: outer-product tiles of 4 rows × 2 vectors of 16 lanes;
// the accumulators are iter_args of the reduction loop (loaded once before
// it, stored once after it); one broadcast scalar of A per row and k.
// CHECK-LABEL: func.func @matmul(
//   CHECK-NOT:   linalg.
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
//       CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c32
//       CHECK:       vector.load %{{.*}}[%[[I]], %[[J]]] : memref<64x64xf32>, vector<16xf32>
//       CHECK:       %[[ACC:.*]]:8 = scf.for %[[K:.*]] = %c0 to %c32 step %c1 iter_args(
//       CHECK:         vector.load %{{.*}}[%[[K]], %[[J]]] : memref<32x64xf32>, vector<16xf32>
//       CHECK:         %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<64x32xf32>
//       CHECK:         %[[S:.*]] = vector.broadcast %[[A]] : f32 to vector<16xf32>
//       CHECK:         vector.fma %[[S]], %{{.*}} : vector<16xf32>
//       CHECK:       vector.store %[[ACC]]#0, %{{.*}}[%[[I]], %[[J]]]
//   CHECK-NOT:   linalg.
// SMALL-LABEL: func.func @matmul(
//       SMALL:   step %c2
//       SMALL:     step %c8
//       SMALL:       scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>)
//       SMALL:         vector.fma {{.*}} : vector<8xf32>
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Q·Kᵀ with K stored [keys, head_dim] and few query rows (8, fewer than
// would pay for transposing K): the reduction dim has unit stride in both
// inputs, so the dot form: 4×4 vector accumulators over head_dim in
// steps of 16; after the loop the 16 accumulators of 16 lanes are reduced
// together (pairs shuffled side by side and added, 4 levels) into one
// vector of the 16 scores, added to the output a row of 4 at a time.
// CHECK-LABEL: func.func @scores(
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
//       CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c4
//       CHECK:       %[[ACC:.*]]:16 = scf.for %[[D:.*]] = %c0 to %c128 step %c16 iter_args(
//       CHECK:         %[[Q:.*]] = vector.load %{{.*}}[%[[I]], %[[D]]] : memref<8x128xf32>, vector<16xf32>
//       CHECK:         %[[KV:.*]] = vector.load %{{.*}}[%[[J]], %[[D]]] : memref<64x128xf32>, vector<16xf32>
//       CHECK:         vector.fma %[[Q]], %[[KV]], %{{.*}} : vector<16xf32>
//       CHECK:       %[[LO:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
//       CHECK:       %[[HI:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
//       CHECK:       arith.addf %[[LO]], %[[HI]] : vector<16xf32>
//   CHECK-NOT:       vector.reduction
//       CHECK:       vector.shuffle %{{.*}}, %{{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
//  CHECK-NEXT:       %[[ALL:.*]] = arith.addf %{{.*}} : vector<16xf32>
//  CHECK-NEXT:       %[[ROW0:.*]] = vector.shuffle %[[ALL]], %[[ALL]] [0, 1, 2, 3]
//       CHECK:       %[[OLD:.*]] = vector.load %{{.*}}[%[[I]], %[[J]]] : memref<8x64xf32>, vector<4xf32>
//       CHECK:       %[[SUM:.*]] = arith.addf %[[OLD]], %[[ROW0]] : vector<4xf32>
//       CHECK:       vector.store %[[SUM]], %{{.*}}[%[[I]], %[[J]]]
//       CHECK:       vector.shuffle %[[ALL]], %[[ALL]] [12, 13, 14, 15]
//   CHECK-NOT:   linalg.
// With fewer accumulators than lanes (2×2 of 8 lanes): one horizontal
// reduction per score.
// SMALL-LABEL: func.func @scores(
//       SMALL:   %[[ACC:.*]]:4 = scf.for {{.*}} step %c8 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
//       SMALL:   vector.reduction <add>, %[[ACC]]#0, %{{.*}} fastmath<reassoc> : vector<8xf32> into f32
func.func @scores(%q: memref<8x128xf32>, %k: memref<64x128xf32>, %s: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x128xf32>, memref<64x128xf32>) outs(%s : memref<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same Q·Kᵀ for a prefill tile of 32 query rows: K is transposed once
// into a [head_dim][keys] buffer (16×16 blocks: 16 row loads, 4 levels of
// 16 shuffles, 16 stores), then the outer-product tiles stream it along the
// keys with Q's scalars broadcast: no horizontal reduction per score. The
// keys are taken in blocks of 32 (a 16 KiB slab of the packed K) that every
// row tile reads before the next block.
// CHECK-LABEL: func.func @scores_packed(
//       CHECK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
//       CHECK:   scf.for %[[PJ:.*]] = %c0 to %c64 step %c16
//       CHECK:     scf.for %[[PD:.*]] = %c0 to %c128 step %c16
//       CHECK:       %[[K0:.*]] = vector.load %{{.*}}[%[[PJ]], %[[PD]]] : memref<64x128xf32>, vector<16xf32>
//       CHECK:       %[[K1:.*]] = vector.load %{{.*}} : memref<64x128xf32>, vector<16xf32>
//       CHECK:       vector.shuffle %[[K0]], %[[K1]] [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30]
//       CHECK:       vector.shuffle %[[K0]], %[[K1]] [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31]
//       CHECK:       vector.store %{{.*}}, %[[P]][%[[PD]], %[[PJ]]] : memref<128x64xf32>, vector<16xf32>
//       CHECK:   scf.for %[[B:.*]] = %c0 to %c64 step %c32
//       CHECK:     scf.for %[[I:.*]] = %c0 to %c32 step %c4
//       CHECK:       scf.for %[[J:.*]] = %[[B]] to %{{.*}} step %c32
//       CHECK:         scf.for %[[D:.*]] = %c0 to %c128 step %c1 iter_args(
//       CHECK:           vector.load %[[P]][%[[D]], %[[J]]] : memref<128x64xf32>, vector<16xf32>
//       CHECK:           %[[QS:.*]] = memref.load %{{.*}}[%[[I]], %[[D]]] : memref<32x128xf32>
//       CHECK:           %[[QB:.*]] = vector.broadcast %[[QS]] : f32 to vector<16xf32>
//       CHECK:           vector.fma %[[QB]], %{{.*}} : vector<16xf32>
//   CHECK-NOT:   vector.reduction
//       CHECK:   memref.dealloc %[[P]] : memref<128x64xf32>
//   CHECK-NOT:   linalg.
// 8 lanes: 8×8 blocks, 3 levels.
// SMALL-LABEL: func.func @scores_packed(
//       SMALL:   memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
//       SMALL:   vector.shuffle %{{.*}}, %{{.*}} [0, 8, 2, 10, 4, 12, 6, 14] : vector<8xf32>, vector<8xf32>
//       SMALL:   vector.fma {{.*}} : vector<8xf32>
//   SMALL-NOT:   vector.reduction
func.func @scores_packed(%q: memref<32x128xf32>, %k: memref<64x128xf32>, %s: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<32x128xf32>, memref<64x128xf32>) outs(%s : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A GQA prefill tile: the 4 query heads of a group share K (an outer dim K
// is not indexed by; the batch of 1 neither). K is packed once, before the
// loops, and each block of keys is read by every head and row tile: the
// block loop is outside the head loop. Inside an scf.forall (attention's
// tile loop) the heads are a plain loop.
// CHECK-LABEL: func.func @gqa_prefill_scores(
//       CHECK:   scf.forall
//       CHECK:     %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
//       CHECK:     vector.store %{{.*}}, %[[P]]
//       CHECK:     scf.for %[[B:.*]] = %c0 to %c64 step %c32
//       CHECK:       scf.for %[[G:.*]] = %c0 to %c4 step %c1
//       CHECK:         scf.for %[[I:.*]] = %c0 to %c32 step %c4
//       CHECK:           vector.load %[[P]]
//       CHECK:     memref.dealloc %[[P]]
// SMALL-LABEL: func.func @gqa_prefill_scores(
func.func @gqa_prefill_scores(%q: memref<1x4x32x128xf32>, %k: memref<1x64x128xf32>, %s: memref<1x4x32x64xf32>) {
  scf.forall (%t) in (2) {
    linalg.generic {indexing_maps = [affine_map<(b, g, i, j, d) -> (b, g, i, d)>, affine_map<(b, g, i, j, d) -> (b, j, d)>, affine_map<(b, g, i, j, d) -> (b, g, i, j)>],
                    iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : memref<1x4x32x128xf32>, memref<1x64x128xf32>) outs(%s : memref<1x4x32x64xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
  }
  return
}

// -----

// GQA decode scores [B, Hkv, G, 1, D]·[B, Hkv, S, D]: the rows of the tile
// are the query group (4), not the single query; batch, heads and the unit
// query dim are an scf.forall around the tiles (the unit dims fold away).
// Too few rows to pay for packing K: the dot form, over blocks of 32 keys
// (a 16 KiB slab of K).
// CHECK-LABEL: func.func @decode_scores(
//       CHECK:   scf.forall (%[[H:.*]]) in (8)
//       CHECK:     scf.for %[[B:.*]] = %c0 to %c1024 step %c32
//       CHECK:     scf.for %[[J:.*]] = %[[B]] to %{{.*}} step %c4
//       CHECK:       scf.for {{.*}} = %c0 to %c128 step %c16 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
//       CHECK:         vector.load %{{.*}}[%c0, %[[H]], %c0, %c0, %{{.*}}] : memref<1x8x4x1x128xf32>, vector<16xf32>
func.func @decode_scores(%q: memref<1x8x4x1x128xf32>, %k: memref<1x8x1024x128xf32>, %s: memref<1x8x4x1x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<1x8x4x1x128xf32>, memref<1x8x1024x128xf32>) outs(%s : memref<1x8x4x1x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Dynamic sizes: full tiles, then one-row / one-vector / one-lane
// remainders, all with the bounds computed at run time; nothing left to
// scalar linalg loops.
// CHECK-LABEL: func.func @dynamic(
//   CHECK-NOT:   linalg.
//       CHECK:   vector.fma {{.*}} : vector<16xf32>
//       CHECK:   vector.fma {{.*}} : vector<1xf32>
//   CHECK-NOT:   linalg.
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// f64: 8 lanes per 512 bits.
// CHECK-LABEL: func.func @matmul_f64(
//       CHECK:   vector.fma {{.*}} : vector<8xf64>
func.func @matmul_f64(%a: memref<8x8xf64>, %b: memref<8x16xf64>, %c: memref<8x16xf64>) {
  linalg.matmul ins(%a, %b : memref<8x8xf64>, memref<8x16xf64>) outs(%c : memref<8x16xf64>)
  return
}

// -----

// Left alone: not a contraction; f16 (no f16 FMA tile); no dim with unit
// stride to vectorize along; tensors (it runs after bufferization).
// CHECK-LABEL: func.func @left_alone(
//       CHECK:   linalg.generic
//       CHECK:   linalg.matmul ins({{.*}} : memref<8x8xf16>, memref<8x8xf16>)
//       CHECK:   linalg.matmul ins({{.*}} : memref<8x8xf32, strided<[1, 8]>>, memref<8x8xf32, strided<[1, 8]>>)
//       CHECK:   linalg.matmul ins({{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @left_alone(%a: memref<16xf32>, %b: memref<16xf32>,
                      %h: memref<8x8xf16>, %hc: memref<8x8xf16>,
                      %s: memref<8x8xf32, strided<[1, 8]>>, %sc: memref<8x8xf32, strided<[1, 8]>>,
                      %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%h, %h : memref<8x8xf16>, memref<8x8xf16>) outs(%hc : memref<8x8xf16>)
  linalg.matmul ins(%s, %s : memref<8x8xf32, strided<[1, 8]>>, memref<8x8xf32, strided<[1, 8]>>) outs(%sc : memref<8x8xf32, strided<[1, 8]>>)
  %r = linalg.matmul ins(%t, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%t : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @bad_option
// RUN: not rope-opt %s --rope-vectorize-contractions="rows=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: rope-vectorize-contractions: tile sizes must be positive
func.func @bad_option() {
  return
}

// -----

// bf16 Q and K with an f32 accumulator (attention on bf16 models): each
// input is loaded in bf16 and extended to f32 before the FMA; the packed K
// is f32.
// CHECK-LABEL: func.func @bf16_scores(
//       CHECK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
//       CHECK:   %[[K:.*]] = vector.load %{{.*}} : memref<64x128xbf16>, vector<16xbf16>
//       CHECK:   arith.extf %[[K]] : vector<16xbf16> to vector<16xf32>
//       CHECK:   %[[Q:.*]] = memref.load %{{.*}} : memref<32x128xbf16>
//       CHECK:   %[[QE:.*]] = arith.extf %[[Q]] : bf16 to f32
//       CHECK:   vector.broadcast %[[QE]] : f32 to vector<16xf32>
//       CHECK:   vector.fma {{.*}} : vector<16xf32>
//   CHECK-NOT:   linalg.
func.func @bf16_scores(%q: memref<32x128xbf16>, %k: memref<64x128xbf16>, %s: memref<32x64xf32>) {
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

// Not acc + a·b although isaContractionOpInterface says contraction (a
// unary op may stand between an operand and the product): the tiles would
// drop the negation, so the op is left to the scalar loops.
// CHECK-LABEL: func.func @negated_operand(
//       CHECK:   linalg.generic
//       CHECK:     arith.negf
//   CHECK-NOT:   vector.fma
func.func @negated_operand(%a: memref<32x128xf32>, %b: memref<128x64xf32>, %c: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (d, j)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x128xf32>, memref<128x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %n = arith.negf %x : f32
    %m = arith.mulf %n, %y : f32
    %r = arith.addf %z, %m : f32
    linalg.yield %r : f32
  }
  return
}
