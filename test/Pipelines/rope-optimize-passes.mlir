// RUN: rope-opt %s --rope-optimize --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: rope-opt %s --rope-optimize=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONCE
// RUN: rope-opt %s --rope-optimize | FileCheck %s

// rope-optimize raises, tiles and fuses, each once (issue 36): the passes it
// runs, all of them in order (so each exactly once), one job each. The old
// pipeline ran rope-raise (attention raised), then rope-fuse-into-attention
// (softmax raised, attention raised again, tiled, scores fused), then
// rope-tile-attention again; both checks below fail on it. Input that
// MLIR 22's passes do not survive is refused first (rope-check-ir-safety).
// PASSES:      builtin.module(
// PASSES-NEXT:   rope-check-ir-safety
// PASSES-NEXT:   inline{
// PASSES-NEXT:   rope-raise{
// PASSES-NEXT:   canonicalize{
// PASSES-NEXT:   cse
// PASSES-NEXT:   rope-raise-softmax{
// PASSES-NEXT:   rope-tile-attention{
// PASSES-NEXT:   rope-fuse-into-scores{
// PASSES-NEXT: )

// The attention raising runs once: what it does not raise says why once
// (the old pipeline said it twice). The scores are still tiled with the
// query rotation fused, once.
// ONCE-COUNT-1: remark: rope-raise: attention not raised: the softmax is over dim 0
// ONCE-NOT:     remark: rope-raise: attention not raised
// CHECK-LABEL: func.func @softmax_over_queries(
//       CHECK:   scf.forall
//       CHECK:     rope.apply
//       CHECK:     scf.for
//       CHECK:       linalg.matmul
//   CHECK-NOT:   scf.forall (
//       CHECK:   linalg.softmax
func.func @softmax_over_queries(%q: tensor<128x64xf32>, %k: tensor<256x64xf32>, %v: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %eq = tensor.empty() : tensor<128x64xf32>
  %qr = rope.apply ins(%q : tensor<128x64xf32>) outs(%eq : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ek = tensor.empty() : tensor<256x64xf32>
  %kr = rope.apply ins(%k : tensor<256x64xf32>) outs(%ek : tensor<256x64xf32>) -> tensor<256x64xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%qr, %kr : tensor<128x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  %probs = linalg.softmax dimension(0) ins(%s : tensor<128x256xf32>) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %oe = tensor.empty() : tensor<128x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<128x64xf32>) -> tensor<128x64xf32>
  %o = linalg.matmul ins(%probs, %v : tensor<128x256xf32>, tensor<256x64xf32>) outs(%oacc : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}
