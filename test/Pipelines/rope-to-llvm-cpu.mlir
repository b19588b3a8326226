// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{vector-bytes=0})" -split-input-file | FileCheck %s --check-prefix=LINE
// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s \
// RUN:   --check-prefixes=CHECK,VECTOR \
// RUN:   --implicit-check-not=rope. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:   --implicit-check-not=math. --implicit-check-not=scf. \
// RUN:   --implicit-check-not=cf. --implicit-check-not=func.func \
// RUN:   --implicit-check-not=vector. --implicit-check-not=omp. \
// RUN:   --implicit-check-not=unrealized_conversion_cast \
// RUN:   --implicit-check-not=llvm.intr.prefetch
// RUN: rope-opt %s --rope-to-llvm-cpu=vectorize=false -split-input-file | \
// RUN:   FileCheck %s --check-prefixes=CHECK,SCALAR \
// RUN:   --implicit-check-not=rope. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:   --implicit-check-not=scf. --implicit-check-not=func.func
// RUN: rope-opt %s --rope-to-llvm-cpu \
// RUN:   -split-input-file | FileCheck %s --check-prefix=CONTRACT
// RUN: rope-opt %s --rope-to-llvm-cpu=contraction-vector-bits=512 \
// RUN:   -split-input-file | FileCheck %s --check-prefix=CONTRACT512
// RUN: rope-opt %s --rope-to-llvm-cpu=num-threads=4 -split-input-file | \
// RUN:   FileCheck %s --check-prefixes=CHECK,THREADS \
// RUN:   --implicit-check-not=rope. --implicit-check-not=scf. \
// RUN:   --implicit-check-not=func.func --implicit-check-not=math.

// rope-to-llvm-cpu lowers rope IR on tensors to nothing but the LLVM dialect,
// for the usual function form (input and destination in, result out).

// vectorize (default): no table and no trig calls. Per token, the angles of
// the 32 frequencies as one f64 vector (range reduction with FMAs), f32
// polynomial sin/cos, then per head and 32 bytes of it (8 f32 lanes: the
// pipeline's vector-bytes=32; with 0, a cache line: 16 lanes) two loads,
// FMAs, two stores.
// VECTOR-LABEL: llvm.func @rotate_positions(
//   VECTOR-NOT:   llvm.call @malloc
//       VECTOR:   llvm.intr.roundeven({{.*}}) : (vector<32xf64>)
//       VECTOR:   llvm.intr.fma({{.*}}) : (vector<32xf64>
//       VECTOR:   llvm.intr.fma({{.*}}) : (vector<32xf64>
//       VECTOR:   llvm.fptrunc {{.*}} : vector<32xf64> to vector<32xf32>
//   VECTOR-NOT:   llvm.intr.cos
//   VECTOR-NOT:   llvm.intr.sin
//       VECTOR:   llvm.load {{.*}} -> vector<8xf32>
//       VECTOR:   llvm.load {{.*}} -> vector<8xf32>
//       VECTOR:   llvm.store {{.*}} : vector<8xf32>, !llvm.ptr
//       VECTOR:   llvm.store {{.*}} : vector<8xf32>, !llvm.ptr
// LINE-LABEL: llvm.func @rotate_positions(
//       LINE:   llvm.load {{.*}} -> vector<16xf32>
//       LINE:   llvm.load {{.*}} -> vector<16xf32>
//       LINE:   llvm.store {{.*}} : vector<16xf32>, !llvm.ptr
//       LINE:   llvm.store {{.*}} : vector<16xf32>, !llvm.ptr
//       VECTOR:   llvm.return
// The scalar path: the cos/sin table (two mallocs, freed), the f64 range
// reduction and one (polynomial) cos and sin per (position, frequency).
// SCALAR-LABEL: llvm.func @rotate_positions(
//       SCALAR:   llvm.call @malloc
//       SCALAR:   llvm.call @malloc
//       SCALAR:   llvm.intr.roundeven
//       SCALAR:   llvm.intr.fma
//       SCALAR:   llvm.intr.fma
//   SCALAR-NOT:   llvm.intr.cos
//       SCALAR:   llvm.call @free
//       SCALAR:   llvm.call @free
//       SCALAR:   llvm.return
// num-threads=4: the token loop is an OpenMP worksharing loop.
// THREADS-LABEL: llvm.func @rotate_positions(
//       THREADS:   omp.parallel num_threads(
//       THREADS:   omp.wsloop
//       THREADS:   omp.loop_nest
//       THREADS:   llvm.return
func.func @rotate_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// Partial rotary, f16 data, gathered cache, dynamic sizes.
// CHECK-LABEL: llvm.func @rotate_cache_dynamic(
//       CHECK:   llvm.fpext
//       CHECK:   llvm.fptrunc
//       CHECK:   llvm.return
func.func @rotate_cache_dynamic(%x: tensor<?x?x4x64xf16>, %p: tensor<?x?xi32>, %cos: tensor<?x16xf32>, %sin: tensor<?x16xf32>, %init: tensor<?x?x4x64xf16>) -> tensor<?x?x4x64xf16> {
  %y = rope.apply ins(%x : tensor<?x?x4x64xf16>) positions(%p : tensor<?x?xi32>) cache(%cos, %sin : tensor<?x16xf32>, tensor<?x16xf32>)
         outs(%init : tensor<?x?x4x64xf16>) {rotary_dim = 32 : i64} -> tensor<?x?x4x64xf16>
  return %y : tensor<?x?x4x64xf16>
}

// -----

// Two rotations in a row through one destination.
// CHECK-LABEL: llvm.func @rotate_twice(
//       CHECK:   llvm.return
func.func @rotate_twice(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %q: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %a = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  %b = rope.apply ins(%a : tensor<8x4x64xf32>) positions(%q : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %b : tensor<8x4x64xf32>
}

// -----

// A matmul through the whole pipeline: register tiles of FMAs on 8-wide
// vectors (rope-vectorize-contractions, on by default; one AVX2 register,
// contraction-vector-bits=256), not scalar loops; 16-wide for AVX-512.
// CONTRACT-LABEL: llvm.func @matmul(
//       CONTRACT:   llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CONTRACT512-LABEL: llvm.func @matmul(
//       CONTRACT512:   llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
