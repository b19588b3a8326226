// RUN: rope-opt %s --convert-rope-to-vector="vector-bytes=32" -split-input-file | FileCheck %s --enable-var-scope

// A quantized store (fp8, int8: one byte per lane) rotates chunks of at
// least 64 bytes of the compute type whatever vector-bytes asks for: 16 f32
// lanes narrowed into one 16-byte store, where 32-byte chunks would narrow 8
// lanes at a time. The same row stored as f32 keeps 32-byte chunks.

// CHECK-LABEL: func.func @fp8_f32(
//       CHECK:   scf.forall
//   CHECK-NOT:     vector<8xf32>
//       CHECK:     vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<16xf32>
//   CHECK-NOT:     vector<8xf32>
//       CHECK:     arith.truncf %{{.*}} : vector<16xf32> to vector<16xf8E4M3FN>
//       CHECK:     vector.transfer_write {{.*}} : vector<16xf8E4M3FN>, tensor<4x64xf8E4M3FN>
//   CHECK-NOT:     vector<8xf32>
//       CHECK:     scf.forall.in_parallel
func.func @fp8_f32(%x: tensor<2x4x64xf32>, %p: tensor<2xi64>, %s: tensor<4xf32>, %init: tensor<2x4x64xf8E4M3FN>) -> tensor<2x4x64xf8E4M3FN> {
  %y = rope.apply ins(%x : tensor<2x4x64xf32>) positions(%p : tensor<2xi64>) quant_scale(%s : tensor<4xf32>) outs(%init : tensor<2x4x64xf8E4M3FN>) -> tensor<2x4x64xf8E4M3FN>
  return %y : tensor<2x4x64xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @i8_f32(
//       CHECK:     arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
//   CHECK-NOT:     vector<8xf32>
//       CHECK:     scf.forall.in_parallel
func.func @i8_f32(%x: tensor<2x4x64xf32>, %p: tensor<2xi64>, %s: tensor<f32>, %init: tensor<2x4x64xi8>) -> tensor<2x4x64xi8> {
  %y = rope.apply ins(%x : tensor<2x4x64xf32>) positions(%p : tensor<2xi64>) quant_scale(%s : tensor<f32>) outs(%init : tensor<2x4x64xi8>) -> tensor<2x4x64xi8>
  return %y : tensor<2x4x64xi8>
}

// -----

// CHECK-LABEL: func.func @plain_f32(
//       CHECK:     vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<8xf32>
//   CHECK-NOT:     vector<16xf32>
//       CHECK:     vector.transfer_write {{.*}} : vector<8xf32>, tensor<4x64xf32>
func.func @plain_f32(%x: tensor<2x4x64xf32>, %p: tensor<2xi64>, %init: tensor<2x4x64xf32>) -> tensor<2x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x4x64xf32>) positions(%p : tensor<2xi64>) outs(%init : tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
  return %y : tensor<2x4x64xf32>
}

// -----

// Siblings: a plain Q beside a quantized K share the token loop and its
// chunks (16 lanes for both).

// CHECK-LABEL: func.func @qk_mixed(
//       CHECK:     scf.for {{.*}} -> (tensor<8x64xf32>)
//       CHECK:       vector.transfer_write {{.*}} : vector<16xf32>, tensor<8x64xf32>
//       CHECK:     scf.for {{.*}} -> (tensor<2x64xi8>)
//       CHECK:       arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
func.func @qk_mixed(%q: tensor<2x16x8x64xf32>, %k: tensor<2x16x2x64xf32>, %p: tensor<2x16xi64>, %sk: tensor<f32>, %qi: tensor<2x16x8x64xf32>, %ki: tensor<2x16x2x64xi8>) -> (tensor<2x16x8x64xf32>, tensor<2x16x2x64xi8>) {
  %yq = rope.apply ins(%q : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x8x64xf32>) -> tensor<2x16x8x64xf32>
  %yk = rope.apply ins(%k : tensor<2x16x2x64xf32>) positions(%p : tensor<2x16xi64>) quant_scale(%sk : tensor<f32>) outs(%ki : tensor<2x16x2x64xi8>) -> tensor<2x16x2x64xi8>
  return %yq, %yk : tensor<2x16x8x64xf32>, tensor<2x16x2x64xi8>
}
