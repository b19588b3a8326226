// RUN: rope-opt %s --rope-fuse-into-attention --canonicalize | FileCheck %s --check-prefix=DEFAULT
// RUN: rope-opt %s --rope-fuse-into-attention="share-key-rotation=true peel-key-tiles=true decode-key-splits=2" --canonicalize | FileCheck %s --check-prefix=OPTIONS
// RUN: not rope-opt %s --rope-fuse-into-attention="decode-key-splits=-3" 2>&1 | FileCheck %s --check-prefix=BAD

// The pipeline hands rope-tile-attention's decode options on (the attention
// kernels of rope_mlir.attention set them): a decode step over 1000 keys.
// By default each KV head is a parallel tile of its own, its keys one loop
// of 256-key tiles with a dynamic last tile. With the options: the key
// tiles hold both KV heads (share-key-rotation), the keys are two blocks of
// whole tiles merged after (decode-key-splits=2), and each block's key loop
// runs its whole 256-key tiles with static sizes, its partial last tile
// peeled into a loop of its own (peel-key-tiles; 1000 = 3 x 256 + 232).

// DEFAULT-LABEL: func.func @decode(
//       DEFAULT:   scf.forall (%{{.+}}, %{{.+}}) in (2, 2)
//   DEFAULT-NOT:   scf.forall
//       DEFAULT:     scf.for
//       DEFAULT:       rope.apply ins(%{{.*}} : tensor<1x1x?x64xf32>)
//   DEFAULT-NOT:   rope.apply ins(%{{.*}} : tensor<1x{{.*}}x256x64xf32>)

// OPTIONS-LABEL: func.func @decode(
//       OPTIONS:   scf.forall (%{{.+}}) in (2)
//       OPTIONS:     scf.forall (%{{.+}}) in (2) shared_outs(
//       OPTIONS:       scf.for
//       OPTIONS:         rope.apply ins(%{{.*}} : tensor<1x2x256x64xf32>)
//       OPTIONS:         rope.online_attention
//       OPTIONS:       scf.for
//       OPTIONS:         rope.apply ins(%{{.*}} : tensor<1x2x?x64xf32>)
//       OPTIONS:       scf.forall.in_parallel

// BAD: decode-key-splits must be >= 0, got -3

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @decode(%x: tensor<2x2x4x1x64xf32>, %first: i64, %y: tensor<2x2x1000x64xf32>, %v: tensor<2x2x1000x64xf32>) -> tensor<2x2x4x1x64xf32> {
  %e = tensor.empty() : tensor<2x2x4x1x64xf32>
  %qr = rope.apply ins(%x : tensor<2x2x4x1x64xf32>) offset(%first : i64) outs(%e : tensor<2x2x4x1x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<2x2x4x1x64xf32>
  %ek = tensor.empty() : tensor<2x2x1000x64xf32>
  %kr = rope.apply ins(%y : tensor<2x2x1000x64xf32>) outs(%ek : tensor<2x2x1000x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x2x1000x64xf32>
  %o = tensor.empty() : tensor<2x2x4x1x64xf32>
  %r = rope.attention ins(%qr, %kr, %v : tensor<2x2x4x1x64xf32>, tensor<2x2x1000x64xf32>, tensor<2x2x1000x64xf32>) outs(%o : tensor<2x2x4x1x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, query_dim = 3} -> tensor<2x2x4x1x64xf32>
  return %r : tensor<2x2x4x1x64xf32>
}
