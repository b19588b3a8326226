// RUN: rope-opt %s --split-input-file --convert-rope-to-linalg=angle=turns --verify-diagnostics -o /dev/null
// RUN: rope-opt %s --split-input-file --convert-rope-to-vector=angle=turns --verify-diagnostics -o /dev/null
// RUN: rope-opt %s --split-input-file --convert-rope-to-gpu=angle=turns --verify-diagnostics -o /dev/null
// RUN: rope-opt %s --split-input-file --convert-rope-to-linalg=angle=turns-or-f64 | FileCheck %s --check-prefix=FALLBACK

// angle=turns-or-f64 (what rope-optimize{portable=true} asks for) keeps the
// f64 angle where turns cannot apply, without an error.
// FALLBACK-LABEL: func.func @dynamic_ntk
// FALLBACK-NOT: rope.apply
// FALLBACK: f64

// dynamic_ntk scales its unscaled steps by w^i <= 1; with base < 1 those
// are a turn or more (wrapped) before the scaling: no steps, refused.
func.func @dynamic_ntk(%x: tensor<4x64xf32>, %p: tensor<4xi64>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  // expected-error @+2 {{angle=turns has no phase steps}}
  // expected-error @+1 {{failed to legalize operation 'rope.apply'}}
  %y = rope.apply ins(%x : tensor<4x64xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x64xf32>) {freqs = #rope.dynamic_ntk<base = 0.5, factor = 2.0, max_position_embeddings = 64>} -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
