// RUN: rope-opt %s --rope-to-llvm-cpu -split-input-file | FileCheck %s \
// RUN:   --implicit-check-not=rope. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:   --implicit-check-not=math. --implicit-check-not=scf. \
// RUN:   --implicit-check-not=cf. --implicit-check-not=func.func \
// RUN:   --implicit-check-not=unrealized_conversion_cast

// rope-to-llvm-cpu lowers rope IR on tensors to nothing but the LLVM dialect,
// for the usual function form (input and destination in, result out).

// The cos/sin table (two mallocs, freed), the f64 range reduction and one
// cos and one sin per (position, frequency).
// CHECK-LABEL: llvm.func @rotate_positions(
//       CHECK:   llvm.call @malloc
//       CHECK:   llvm.call @malloc
//       CHECK:   llvm.intr.roundeven
//       CHECK:   llvm.intr.fma
//       CHECK:   llvm.intr.fma
//       CHECK:   llvm.intr.cos
//       CHECK:   llvm.intr.sin
//       CHECK:   llvm.call @free
//       CHECK:   llvm.call @free
//       CHECK:   llvm.return
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
