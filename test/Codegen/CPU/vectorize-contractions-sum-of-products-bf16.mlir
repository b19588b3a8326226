// RUN: rope-opt %s --rope-vectorize-contractions="vector-bits=256 rows=4 columns=4" | FileCheck %s --check-prefix=FMA
// RUN: rope-opt %s --rope-vectorize-contractions="vector-bits=256 rows=4 columns=4 bf16-products=avx512-dot" | FileCheck %s --check-prefix=PAIRS

// The Dot form over a sum of products with bf16 inputs: rows and the key's
// halves bf16, the rotation in f32 rounded back to bf16 (as a bf16 key is
// stored), products into f32. By default the row terms are loaded widened
// and each term is an f32 FMA; with AVX512-BF16 pairs the rows and the
// rounded rotation are multiplied as stored, two reduction elements per
// f32 lane (vdpbf16ps), 2·8 bf16 per step.
// FMA-LABEL: func.func @rotated_bf16_keys
//       FMA:   scf.for %[[I:.*]] = %c0 to %c16 step %c8 iter_args
//       FMA:     %[[Q:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[I]]] : memref<2x4x1x16xbf16>, vector<8xbf16>
//       FMA:     %[[QW:.*]] = arith.extf %[[Q]] : vector<8xbf16> to vector<8xf32>
//       FMA:     %[[K0:.*]] = vector.load %{{.*}} : memref<2x8x16xbf16>, vector<8xbf16>
//       FMA:     %[[K1:.*]] = vector.load %{{.*}} : memref<2x8x16xbf16>, vector<8xbf16>
//       FMA:     arith.extf %[[K0]] : vector<8xbf16> to vector<8xf32>
//       FMA:     %[[Y0:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
//       FMA:     %[[Y0W:.*]] = arith.extf %[[Y0]] : vector<8xbf16> to vector<8xf32>
//       FMA:     vector.fma %[[QW]], %[[Y0W]], %{{.*}} : vector<8xf32>
//   FMA-NOT:     x86vector
// PAIRS-LABEL: func.func @rotated_bf16_keys
//       PAIRS:   scf.for %[[I:.*]] = %c0 to %c16 step %c16 iter_args
//       PAIRS:     %[[Q:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[I]]] : memref<2x4x1x16xbf16>, vector<16xbf16>
//       PAIRS:     %[[K0:.*]] = vector.load %{{.*}} : memref<2x8x16xbf16>, vector<16xbf16>
//       PAIRS:     vector.load %{{.*}} : memref<8x16xf32>, vector<16xf32>
//       PAIRS:     %[[Y0:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
//       PAIRS:     x86vector.avx512.dot %{{.*}}, %[[Q]], %[[Y0]] : vector<16xbf16> -> vector<8xf32>
//   PAIRS-NOT:     vector.fma
#q = affine_map<(h, g, m, i, j) -> (h, g, m, i)>
#k = affine_map<(h, g, m, i, j) -> (h, j, i)>
#t = affine_map<(h, g, m, i, j) -> (j, i)>
#o = affine_map<(h, g, m, i, j) -> (h, g, m, j)>
func.func @rotated_bf16_keys(%q0: memref<2x4x1x16xbf16>, %q1: memref<2x4x1x16xbf16>, %k0: memref<2x8x16xbf16>, %k1: memref<2x8x16xbf16>, %c: memref<8x16xf32>, %s: memref<8x16xf32>, %out: memref<2x4x1x8xf32>) {
  linalg.generic {indexing_maps = [#q, #q, #k, #k, #t, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q0, %q1, %k0, %k1, %c, %s : memref<2x4x1x16xbf16>, memref<2x4x1x16xbf16>, memref<2x8x16xbf16>, memref<2x8x16xbf16>, memref<8x16xf32>, memref<8x16xf32>) outs(%out : memref<2x4x1x8xf32>) {
  ^bb0(%a0: bf16, %a1: bf16, %b0: bf16, %b1: bf16, %cc: f32, %ss: f32, %acc: f32):
    %w0 = arith.extf %b0 : bf16 to f32
    %w1 = arith.extf %b1 : bf16 to f32
    %ns = arith.negf %ss : f32
    %x = arith.mulf %w0, %cc : f32
    %y0 = math.fma %w1, %ns, %x : f32
    %n0 = arith.truncf %y0 : f32 to bf16
    %z = arith.mulf %w1, %cc : f32
    %y1 = math.fma %w0, %ss, %z : f32
    %n1 = arith.truncf %y1 : f32 to bf16
    %e0 = arith.extf %a0 : bf16 to f32
    %f0 = arith.extf %n0 : bf16 to f32
    %p0 = arith.mulf %e0, %f0 : f32
    %s0 = arith.addf %p0, %acc : f32
    %e1 = arith.extf %a1 : bf16 to f32
    %f1 = arith.extf %n1 : bf16 to f32
    %p1 = arith.mulf %e1, %f1 : f32
    %s1 = arith.addf %p1, %s0 : f32
    linalg.yield %s1 : f32
  }
  return
}
