// RUN: rope-opt %s --convert-rope-to-gpu -split-input-file -verify-diagnostics

// Frequencies that depend on the call's length need a reduction over every
// position before the kernel: not supported on the GPU.
func.func @dynamic_ntk(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{cannot be lowered to the GPU: frequencies that depend on the call's length}}
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}
