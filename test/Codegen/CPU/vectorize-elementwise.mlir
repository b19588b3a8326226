// RUN: rope-opt %s --rope-vectorize-elementwise --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-vectorize-elementwise="max-lanes=32" --canonicalize -split-input-file | FileCheck %s --check-prefix=SPLIT --enable-var-scope
// RUN: not rope-opt %s --rope-vectorize-elementwise="max-lanes=2" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: rope-vectorize-elementwise: max-lanes must be at least 4

// The online-softmax steps on a [G=4, 64 keys] score tile: the row max is
// a tree of vector maxima per row (halves of 32, 16, ... lanes; no
// vector.reduction, which LLVM lowers lane by lane), exp(s - max) is
// 64-lane arithmetic with the polynomial exp (no math.exp left for libm),
// one row per iteration.
// CHECK-LABEL: func.func @softmax_rows(
//   CHECK-NOT:   linalg.
//       CHECK:   scf.for %[[R:.*]] = %c0 to %c4 step %c1
//       CHECK:     %[[ROW:.*]] = vector.load {{.*}} vector<64xf32>
//   CHECK-NOT:     vector.reduction
//       CHECK:     %[[LO:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [0, 1, {{.*}}, 31] : vector<64xf32>, vector<64xf32>
//       CHECK:     %[[HI:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [32, 33, {{.*}}, 63] : vector<64xf32>, vector<64xf32>
//       CHECK:     arith.maxnumf %[[LO]], %[[HI]] : vector<32xf32>
//       CHECK:     arith.maxnumf %{{.*}} : vector<16xf32>
//       CHECK:     arith.maxnumf %{{.*}} : vector<2xf32>
//       CHECK:     %[[TOP:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
//       CHECK:     arith.maxnumf %[[TOP]], %{{.*}} : f32
//       CHECK:   scf.for %{{.*}} = %c0 to %c4 step %c1
//       CHECK:     %[[M:.*]] = vector.broadcast %{{.*}} : f32 to vector<64xf32>
//       CHECK:     arith.subf %{{.*}}, %[[M]] : vector<64xf32>
//   CHECK-NOT:     math.exp
//       CHECK:     math.floor {{.*}} : vector<64xf32>
//       CHECK:     vector.store {{.*}} vector<64xf32>
//   CHECK-NOT:   linalg.
// With rows longer than max-lanes: tiles of 32 lanes within each row.
// SPLIT-LABEL: func.func @softmax_rows(
//       SPLIT:   scf.for
//       SPLIT:     arith.maxnumf %{{.*}}, %{{.*}} : vector<16xf32>
func.func @softmax_rows(%s: memref<1x1x4x1x64xf32>, %max: memref<1x1x4x1xf32>, %p: memref<1x1x4x1x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%s : memref<1x1x4x1x64xf32>) outs(%max : memref<1x1x4x1xf32>) {
  ^bb0(%x: f32, %m: f32):
    %r = arith.maxnumf %x, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max : memref<1x1x4x1x64xf32>, memref<1x1x4x1xf32>) outs(%p : memref<1x1x4x1x64xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// linalg.fill and a 2-D broadcast add (the mask) vectorize too.
// CHECK-LABEL: func.func @mask_and_fill(
//   CHECK-NOT:   linalg.
//       CHECK:   vector.store {{.*}} vector<64xf32>
//       CHECK:   arith.addf {{.*}} : vector<64xf32>
func.func @mask_and_fill(%s: memref<32x64xf32>, %mask: memref<32x64xf32>, %acc: memref<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%mask : memref<32x64xf32>) outs(%s : memref<32x64xf32>) {
  ^bb0(%m: f32, %x: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows of a static length, their count dynamic (the online softmax of the
// last query tile of a sequence that is not a multiple of the tile): one
// row per iteration up to the dynamic count, each row a vector.
// CHECK-LABEL: func.func @dynamic_row_count(
//  CHECK-SAME:     %[[S:.*]]: memref<?x64xf32>
//   CHECK-NOT:   linalg.
//       CHECK:   %[[N:.*]] = memref.dim %[[S]], %c0
//       CHECK:   scf.for %[[R:.*]] = %c0 to %[[N]] step %c1
//       CHECK:     %[[ROW:.*]] = memref.subview %[[S]][%[[R]], 0] [1, 64] [1, 1]
//       CHECK:     vector.load %[[ROW]][%c0, %c0] : {{.*}}, vector<64xf32>
//       CHECK:     arith.maxnumf %{{.*}} : vector<32xf32>
func.func @dynamic_row_count(%s: memref<?x64xf32>, %max: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<?x64xf32>) outs(%max : memref<?xf32>) {
  ^bb0(%x: f32, %m: f32):
    %r = arith.maxnumf %x, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: rows of a dynamic length, short rows, a reduction that is not
// the innermost loop, contractions (rope-vectorize-contractions' work).
// CHECK-LABEL: func.func @left_alone(
//   CHECK-COUNT-4:   linalg.
func.func @left_alone(%d: memref<?x?xf32>, %short: memref<8x2xf32>, %cols: memref<16x64xf32>, %colsum: memref<64xf32>,
                      %a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<?x?xf32>)
  linalg.fill ins(%zero : f32) outs(%short : memref<8x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%cols : memref<16x64xf32>) outs(%colsum : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  return
}

// -----

// Left alone: buffers of i1. A vector<Nxi1> is bit-packed in memory while a
// memref of i1 holds a byte per element; a vector store of the comparison
// would write N bits instead of N bytes.
// CHECK-LABEL: func.func @i1_buffers_left_alone(
//   CHECK-NOT:   vector.
//       CHECK:   linalg.generic
//   CHECK-NOT:   vector.
func.func @i1_buffers_left_alone(%a: memref<4x16xf32>, %b: memref<4x16xf32>, %m: memref<4x16xi1>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x16xf32>, memref<4x16xf32>) outs(%m : memref<4x16xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf olt, %x, %y : f32
    linalg.yield %c : i1
  }
  return
}

// -----

// A transpose (a frontend's Wᵀ of x·Wᵀ) reads each row of the output from a
// column of the input: the strided 1-D read is one scalar load per lane at
// constant offsets, gathered with vector.from_elements, not a vector
// transfer that convert-vector-to-scf would make a loop inserting one lane
// per iteration at a dynamic position (through the stack in LLVM, unless
// LLVM fully unrolls every loop around it; issue 33).
// SPLIT-LABEL: func.func @transpose_weight(
//   SPLIT-NOT:   vector.transfer_read
//       SPLIT:   scf.for
//  SPLIT-COUNT-32: memref.load
//       SPLIT:     vector.from_elements {{.*}} : vector<32xf32>
//       SPLIT:     vector.store {{.*}} vector<32xf32>
//   SPLIT-NOT:   vector.transfer_read
// CHECK-LABEL: func.func @transpose_weight(
//   CHECK-NOT:   vector.transfer
//       CHECK:   vector.from_elements {{.*}} : vector<32xf32>
//   CHECK-NOT:   vector.transfer
func.func @transpose_weight(%w: memref<32x16xf32>, %t: memref<16x32xf32>) {
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%t : memref<16x32xf32>) permutation = [1, 0]
  return
}

// -----

// A row sum (the softmax denominator) is pairwise: halves added as
// vectors, then the accumulator once; no ordered vector.reduction, which
// LLVM lowers to one dependent scalar add per lane.
// CHECK-LABEL: func.func @row_sum(
//   CHECK-NOT:   vector.reduction
//       CHECK:   %[[ROW:.*]] = vector.load {{.*}} vector<32xf32>
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
//       CHECK:   %[[TOP:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
//       CHECK:   arith.addf %[[TOP]], %{{.*}} : f32
//   CHECK-NOT:   vector.reduction
func.func @row_sum(%p: memref<8x32xf32>, %sum: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, n) -> (r, n)>, affine_map<(r, n) -> (r)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<8x32xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%x: f32, %s: f32):
    %r = arith.addf %x, %s : f32
    linalg.yield %r : f32
  }
  return
}
