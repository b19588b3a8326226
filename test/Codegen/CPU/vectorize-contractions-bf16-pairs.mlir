// RUN: rope-opt %s --rope-vectorize-contractions="bf16-products=avx512-dot" --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-vectorize-contractions --canonicalize -split-input-file | FileCheck %s --check-prefix=FMA

// bf16 × bf16 -> f32 with bf16-products=avx512-dot: products in pairs by
// vdpbf16ps (x86vector.avx512.dot). Without the option, widened FMAs.
// FMA-NOT: x86vector.avx512.dot

// Scores of a prefill tile (32 queries, enough rows to pack): K is packed
// as pairs of the reduction, [128/2][2·64] bf16, by a square transpose of
// 32-bit units; each query's pair is broadcast as one 32-bit unit.
// CHECK-LABEL: func.func @packed_scores(
//       CHECK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xbf16>
//       CHECK:   %[[ROW:.*]] = vector.load %{{.*}} : memref<64x128xbf16>, vector<32xbf16>
//       CHECK:   vector.bitcast %[[ROW]] : vector<32xbf16> to vector<16xi32>
//       CHECK:   vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
//       CHECK:   vector.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}] : memref<64x128xbf16>, vector<32xbf16>
//       CHECK:   scf.for %{{.*}} = %c0 to %c64 step %c1
//       CHECK:     %[[COL:.*]] = vector.load %[[P]][%{{.*}}, %{{.*}}] : memref<64x128xbf16>, vector<32xbf16>
//       CHECK:     %[[TWO:.*]] = vector.load %{{.*}} : memref<32x128xbf16>, vector<2xbf16>
//       CHECK:     %[[UNIT:.*]] = vector.bitcast %[[TWO]] : vector<2xbf16> to vector<1xi32>
//       CHECK:     %[[SPLAT:.*]] = vector.broadcast %[[UNIT]] : vector<1xi32> to vector<16xi32>
//       CHECK:     %[[PAIRS:.*]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
//       CHECK:     x86vector.avx512.dot %{{.*}}, %[[PAIRS]], %[[COL]] : vector<32xbf16> -> vector<16xf32>
//   CHECK-NOT:   arith.extf
//   CHECK-NOT:   linalg.
func.func @packed_scores(%q: memref<32x128xbf16>, %k: memref<64x128xbf16>, %s: memref<32x64xf32>) {
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

// Decode scores (4 query heads of a GQA group, too few rows to pack): the
// dot form, 32 bf16 of each input per step straight from memory, 16 f32
// lanes each summing two products per step.
// CHECK-LABEL: func.func @decode_scores(
//       CHECK:   scf.for %{{.*}} = %c0 to %c128 step %c32
//       CHECK:     %[[Q:.*]] = vector.load %{{.*}} : memref<4x128xbf16>, vector<32xbf16>
//       CHECK:     %[[K:.*]] = vector.load %{{.*}} : memref<1000x128xbf16>, vector<32xbf16>
//       CHECK:     x86vector.avx512.dot %{{.*}}, %[[Q]], %[[K]] : vector<32xbf16> -> vector<16xf32>
//   CHECK-NOT:   arith.extf
func.func @decode_scores(%q: memref<4x128xbf16>, %k: memref<1000x128xbf16>, %s: memref<4x1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x128xbf16>, memref<1000x128xbf16>) outs(%s : memref<4x1000xf32>) {
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

// A reduction the pairs of 4-lane vectors do not divide (36): widened FMAs.
// CHECK-LABEL: func.func @odd_reduction(
//   CHECK-NOT:   x86vector.avx512.dot
//       CHECK:   arith.extf {{.*}} : vector<4xbf16> to vector<4xf32>
//       CHECK:   vector.fma
func.func @odd_reduction(%q: memref<4x36xbf16>, %k: memref<100x36xbf16>, %s: memref<4x100xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x36xbf16>, memref<100x36xbf16>) outs(%s : memref<4x100xf32>) {
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

// P·V: f32 probabilities times bf16 V. Only one input is bf16, and rounding
// P to bf16 would change the result: widened FMAs. With 32 rows reusing
// each element of V, V is widened once into an f32 buffer, not once per row
// tile.
// CHECK-LABEL: func.func @probabilities_times_values(
//   CHECK-NOT:   x86vector.avx512.dot
//       CHECK:   %[[W:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xf32>
//       CHECK:   %[[V:.*]] = vector.load %{{.*}} : memref<64x128xbf16>, vector<16xbf16>
//       CHECK:   %[[VE:.*]] = arith.extf %[[V]] : vector<16xbf16> to vector<16xf32>
//       CHECK:   vector.store %[[VE]], %[[W]]
//       CHECK:   scf.for
//       CHECK:     vector.load %[[W]]
//   CHECK-NOT:     arith.extf
//       CHECK:     vector.fma
//       CHECK:   memref.dealloc %[[W]]
func.func @probabilities_times_values(%p: memref<32x64xf32>, %v: memref<64x128xbf16>, %o: memref<32x128xf32>) {
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
