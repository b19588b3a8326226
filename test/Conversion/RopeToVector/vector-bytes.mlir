// RUN: rope-opt %s --convert-rope-to-vector=vector-bytes=32 -split-input-file | FileCheck %s --check-prefix=B32
// RUN: rope-opt %s --convert-rope-to-vector -split-input-file | FileCheck %s --check-prefix=LINE
// RUN: not rope-opt %s --convert-rope-to-vector=vector-bytes=-8 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// vector-bytes sets the chunk a row is rotated in by the bytes of x's
// element type: 32 bytes are 8 f32 lanes (4 loads and 4 stores per half of
// a 64-wide row: two chunks of each half) and 16 f16 lanes; the default
// (0) is one 64-byte cache line of the compute type, 16 f32 lanes for both.
// bf16 rows in word lanes take at least 64 bytes (32 lanes: two halves of
// 16 f32 lanes) either way.
// B32-LABEL: func.func @f32_rows
// B32-COUNT-4: vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<8xf32>
// B32-COUNT-4: vector.transfer_write {{.*}} : vector<8xf32>, tensor<4x64xf32>
// B32-NOT:     vector<16xf32>, tensor
// LINE-LABEL: func.func @f32_rows
// LINE-COUNT-2: vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<16xf32>
// LINE-COUNT-2: vector.transfer_write {{.*}} : vector<16xf32>, tensor<4x64xf32>
// BAD: vector-bytes must be >= 0 (0: one cache line of the compute type), got -8
func.func @f32_rows(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// B32-LABEL: func.func @bf16_rows
// B32-COUNT-2: vector.transfer_read {{.*}} : tensor<4x64xbf16>, vector<32xbf16>
// B32-NOT:     vector<16xbf16>, tensor
// LINE-LABEL: func.func @bf16_rows
// LINE-COUNT-2: vector.transfer_read {{.*}} : tensor<4x64xbf16>, vector<32xbf16>
// LINE-NOT:     vector<16xbf16>, tensor
func.func @bf16_rows(%x: tensor<2x16x4x64xbf16>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xbf16>) -> tensor<2x16x4x64xbf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xbf16>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xbf16>) -> tensor<2x16x4x64xbf16>
  return %y : tensor<2x16x4x64xbf16>
}

// -----

// B32-LABEL: func.func @f16_rows
// B32-COUNT-4: vector.transfer_read {{.*}} : tensor<4x64xf16>, vector<16xf16>
// LINE-LABEL: func.func @f16_rows
// LINE-COUNT-4: vector.transfer_read {{.*}} : tensor<4x64xf16>, vector<16xf16>
func.func @f16_rows(%x: tensor<2x16x4x64xf16>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf16>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf16>) -> tensor<2x16x4x64xf16>
  return %y : tensor<2x16x4x64xf16>
}
