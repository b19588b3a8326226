// RUN: rope-opt %s --rope-tile-attention="peel-key-tiles=true" --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-tile-attention --canonicalize -split-input-file | FileCheck %s --check-prefix=NOPEEL --enable-var-scope

// 500 keys in tiles of 64: with peel-key-tiles the key loop runs the 7
// whole tiles, each K and V tile static [64, 128] (what the CPU register
// tiles pack), and the last 52 keys are their own copy of the loop body.
// Without it every tile's extent is an affine.min, dynamic.
// CHECK-LABEL: func.func @prefill_500(
//       CHECK:   scf.forall
//       CHECK:     scf.for %[[K:.*]] = %c0 to %c448 step %c64
//       CHECK:       rope.online_attention ins({{.*}} : tensor<1x1x4x?x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>) {{.*}}key_offset(%[[K]])
//       CHECK:     rope.online_attention ins({{.*}} : tensor<1x1x4x?x128xf32>, tensor<1x1x52x128xf32>, tensor<1x1x52x128xf32>) {{.*}}key_offset(%c448)
// NOPEEL-LABEL: func.func @prefill_500(
//       NOPEEL:     scf.for %{{.*}} = %c0 to %c500 step %c64
//       NOPEEL:       rope.online_attention ins({{.*}} : tensor<1x1x4x?x128xf32>, tensor<1x1x?x128xf32>, tensor<1x1x?x128xf32>)
//   NOPEEL-NOT:     rope.online_attention
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @prefill_500(%q: tensor<1x2x4x500x128xf32>, %k: tensor<1x2x500x128xf32>, %v: tensor<1x2x500x128xf32>) -> tensor<1x2x4x500x128xf32> {
  %o = tensor.empty() : tensor<1x2x4x500x128xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x2x4x500x128xf32>, tensor<1x2x500x128xf32>, tensor<1x2x500x128xf32>) outs(%o : tensor<1x2x4x500x128xf32>)
         attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<1x2x4x500x128xf32>
  return %r : tensor<1x2x4x500x128xf32>
}

// -----

// 512 keys: whole tiles only, nothing to peel.
// CHECK-LABEL: func.func @prefill_512(
// NOPEEL-LABEL: func.func @prefill_512(
//       CHECK:     scf.for %{{.*}} = %c0 to %c512 step %c64
//       CHECK:       rope.online_attention ins({{.*}}tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>)
//   CHECK-NOT:     rope.online_attention
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @prefill_512(%q: tensor<1x2x4x512x128xf32>, %k: tensor<1x2x512x128xf32>, %v: tensor<1x2x512x128xf32>) -> tensor<1x2x4x512x128xf32> {
  %o = tensor.empty() : tensor<1x2x4x512x128xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x2x4x512x128xf32>, tensor<1x2x512x128xf32>, tensor<1x2x512x128xf32>) outs(%o : tensor<1x2x4x512x128xf32>)
         attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<1x2x4x512x128xf32>
  return %r : tensor<1x2x4x512x128xf32>
}

// -----

// A dynamic number of keys (a cache of any length): the main loop's tiles
// are static all the same; the tail runs at most once.
// CHECK-LABEL: func.func @decode_dynamic(
//       CHECK:     scf.for
//       CHECK:       rope.online_attention ins({{.*}}tensor<1x1x256x128xf32>, tensor<1x1x256x128xf32>)
//       CHECK:     scf.for
//       CHECK:       rope.online_attention ins({{.*}}tensor<1x1x?x128xf32>, tensor<1x1x?x128xf32>)
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @decode_dynamic(%q: tensor<1x2x4x1x128xf32>, %k: tensor<1x2x?x128xf32>, %v: tensor<1x2x?x128xf32>) -> tensor<1x2x4x1x128xf32> {
  %o = tensor.empty() : tensor<1x2x4x1x128xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x2x4x1x128xf32>, tensor<1x2x?x128xf32>, tensor<1x2x?x128xf32>) outs(%o : tensor<1x2x4x1x128xf32>)
         attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 3} -> tensor<1x2x4x1x128xf32>
  return %r : tensor<1x2x4x1x128xf32>
}
