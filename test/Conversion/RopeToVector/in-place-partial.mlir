// RUN: rope-opt %s --convert-rope-to-vector -split-input-file | FileCheck %s --enable-var-scope --check-prefix=VEC
// RUN: rope-opt %s --convert-rope-to-vector --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --enable-var-scope --check-prefix=BUF

// In place with partial rotary (outs(%x), rotary_dim < D): the pass-through
// channels are already where they belong and are not copied, so nothing is
// read after the rotated channels are written and one-shot bufferization
// keeps the whole update in place (with a head loop, and at rank 2).

// VEC-LABEL: func.func @in_place_partial(
//       VEC:   scf.for
//   VEC-NOT:     vector<48xf32>
//       VEC:     scf.yield
func.func @in_place_partial(%x: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%x : tensor<8x4x64xf32>) {rotary_dim = 16 : i64} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// BUF-LABEL: func.func @rank2_in_place_partial(
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @rank2_in_place_partial(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = rope.apply ins(%x : tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) {rotary_dim = 16 : i64} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
