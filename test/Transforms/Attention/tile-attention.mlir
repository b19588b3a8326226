// RUN: rope-opt %s --rope-tile-attention --canonicalize -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-tile-attention="fuse-key=always query-tile-size=64 key-tile-size=32" --canonicalize -split-input-file | FileCheck %s --check-prefix=ALWAYS --enable-var-scope
// RUN: rope-opt %s --rope-tile-attention="fuse-rotations=false" --canonicalize -split-input-file | FileCheck %s --check-prefix=NOFUSE --enable-var-scope
// RUN: rope-opt %s --rope-tile-attention="share-key-rotation=true" --canonicalize -split-input-file | FileCheck %s --check-prefix=SHARE --enable-var-scope
// RUN: rope-opt %s --rope-tile-attention="decode-key-tile-size=0" --canonicalize -split-input-file | FileCheck %s --check-prefix=DEC64 --enable-var-scope
// RUN: not rope-opt %s --rope-tile-attention="key-tile-size=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADSIZE
// RUN: not rope-opt %s --rope-tile-attention="decode-key-tile-size=-2" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADDECODE
// RUN: rope-opt %s --rope-tile-attention="share-key-rotation=true decode-key-splits=2" --canonicalize -split-input-file | FileCheck %s --check-prefix=SPLIT --enable-var-scope
// RUN: not rope-opt %s --rope-tile-attention="decode-key-splits=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADSPLIT
// RUN: rope-opt %s --rope-tile-attention="share-key-rotation=true decode-key-splits=2 parallel-loops=false" --canonicalize -split-input-file | FileCheck %s --check-prefix=SEQSPLIT
// RUN: not rope-opt %s --rope-fuse-into-attention="fuse-key=maybe" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADKEY
// BADSIZE: error: query-tile-size and key-tile-size must be >= 0, got 32 and -1
// BADKEY: error: fuse-key must be always, never or auto, got 'maybe'
// BADDECODE: error: decode-key-tile-size must be >= 0, got -2

// rope.attention as FlashAttention-2 loops (upstream scf tiling through the
// attention ops' TilingInterface). Executed equivalence:
// python/tests/numerics/test_attention_op.py (test_sinks_tiled,
// test_finfo_min_masked_tiles_skipped_exactly).

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>

// Prefill, GQA (Q rotated as [1, 16, 128, 64], attention reads the
// [1, 2, 8, 128, 64] view): the view moves above the rotation, whose tiles
// are fused per query tile for all 8 heads of a group; K is rotated whole
// (4 query tiles: auto does not fuse it); the key loop carries acc/max/sum
// and skips the tiles above the diagonal (causal).
// CHECK-LABEL: func.func @prefill(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<1x2x8x128x64xf32>, %[[Y:[a-z0-9]+]]: tensor<1x2x128x64xf32>
//       CHECK:   %[[KR:.*]] = rope.apply ins(%[[Y]] : tensor<1x2x128x64xf32>)
//       CHECK:   scf.forall (%[[H:[a-z0-9]+]], %[[M:[a-z0-9]+]]) = (0, 0) to (2, 128) step (1, 32)
//       CHECK:     %[[XT:.*]] = tensor.extract_slice %[[X]][0, %[[H]], 0, %[[M]], 0] [1, 1, 8, 32, 64]
//       CHECK:     %[[OFF:.*]] = arith.index_cast %[[M]] : index to i64
//       CHECK:     %[[QT:.*]] = rope.apply ins(%[[XT]] : tensor<1x1x8x32x64xf32>) offset(%[[OFF]] : i64)
//  CHECK-SAME:       token_dims = array<i64: 0, 3>
//       CHECK:     %[[KH:.*]] = tensor.extract_slice %[[KR]][0, %[[H]], 0, 0] [1, 1, 128, 64]
//       CHECK:     scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[MAX:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}})
//       CHECK:       %[[VISIBLE:.*]] = arith.cmpi sle
//       CHECK:       scf.if %[[VISIBLE]]
//       CHECK:         %[[KT:.*]] = tensor.extract_slice %[[KH]][0, 0, %[[N]], 0] [1, 1, 64, 64]
//       CHECK:         rope.online_attention ins(%[[QT]], %[[KT]], %{{.*}} : tensor<1x1x8x32x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
//  CHECK-SAME:           query_offset(%[[M]]) key_offset(%[[N]]) outs(%[[ACC]], %[[MAX]], %[[SUM]]
//  CHECK-SAME:           causal
//       CHECK:       } else {
//       CHECK:         scf.yield %[[ACC]], %[[MAX]], %[[SUM]]
//       CHECK:     linalg.generic
//       CHECK:       arith.divf
// ALWAYS-LABEL: func.func @prefill(
//   ALWAYS-NOT:   rope.apply
//       ALWAYS:   scf.forall
//       ALWAYS:     rope.apply ins(%{{.*}} : tensor<1x1x8x64x64xf32>)
//       ALWAYS:     scf.for
//       ALWAYS:       rope.apply ins(%{{.*}} : tensor<1x1x32x64xf32>)
//       ALWAYS:       scf.if
//       ALWAYS:         rope.online_attention
// NOFUSE-LABEL: func.func @prefill(
//       NOFUSE:   rope.apply ins(%{{.*}} : tensor<1x2x8x128x64xf32>)
//       NOFUSE:   rope.apply ins(%{{.*}} : tensor<1x2x128x64xf32>)
//       NOFUSE:   scf.forall
//   NOFUSE-NOT:     rope.apply
//       NOFUSE:     rope.online_attention
func.func @prefill(%x: tensor<1x2x8x128x64xf32>, %y: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>) -> tensor<1x2x8x128x64xf32> {
  %xq = tensor.collapse_shape %x [[0], [1, 2], [3], [4]] : tensor<1x2x8x128x64xf32> into tensor<1x16x128x64xf32>
  %e = tensor.empty() : tensor<1x16x128x64xf32>
  %qr = rope.apply ins(%xq : tensor<1x16x128x64xf32>) outs(%e : tensor<1x16x128x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x16x128x64xf32>
  %qv = tensor.expand_shape %qr [[0], [1, 2], [3], [4]] output_shape [1, 2, 8, 128, 64] : tensor<1x16x128x64xf32> into tensor<1x2x8x128x64xf32>
  %ek = tensor.empty() : tensor<1x2x128x64xf32>
  %kr = rope.apply ins(%y : tensor<1x2x128x64xf32>) outs(%ek : tensor<1x2x128x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x128x64xf32>
  %o = tensor.empty() : tensor<1x2x8x128x64xf32>
  %r = rope.attention ins(%qv, %kr, %v : tensor<1x2x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) outs(%o : tensor<1x2x8x128x64xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<1x2x8x128x64xf32>
  return %r : tensor<1x2x8x128x64xf32>
}

// -----

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
#p = affine_map<(b, h, g, m, k1, k2, n) -> (b, m)>

// Decode on an un-rotated cache longer than the valid length: one query
// tile, so K is rotated per key tile inside the key loop, and only for tiles
// some row's position reaches (the rotation is inside the scf.if); the max
// of the positions is computed once, outside the key loop. Each KV head is
// a parallel tile; with share-key-rotation a key tile holds both, so its
// rotation computes cos/sin once per key for the two (SHARE). One query
// tile: the key tile is decode-key-tile-size's 256 keys, key-tile-size's 64
// with decode-key-tile-size=0 (DEC64).
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<2x2x4x1x64xf32>, %[[P:[a-z0-9]+]]: tensor<2x1xi64>, %[[Y:[a-z0-9]+]]: tensor<2x2x1024x64xf32>
//   CHECK-NOT:   rope.apply ins(%[[Y]]
//       CHECK:   scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]]) in (2, 2)
//       CHECK:     %[[PT:.*]] = tensor.extract_slice %[[P]][%[[B]], 0] [1, 1]
//       CHECK:     rope.apply ins(%{{.*}} : tensor<1x1x4x1x64xf32>) positions(%{{.*}} : tensor<1x1xi64>)
//       CHECK:     arith.maxsi
//       CHECK:     %[[MAXPOS:.*]] = tensor.extract
//       CHECK:     scf.for %[[N:[a-z0-9]+]] =
//       CHECK:       %[[FIRST:.*]] = arith.index_cast %[[N]] : index to i64
//       CHECK:       %[[VISIBLE:.*]] = arith.cmpi sle, %[[FIRST]], %[[MAXPOS]] : i64
//       CHECK:       scf.if %[[VISIBLE]]
//       CHECK:         %[[YT:.*]] = tensor.extract_slice %[[Y]][%[[B]], %[[H]], %[[N]], 0] [1, 1, 256, 64]
//       CHECK:         %[[KT:.*]] = rope.apply ins(%[[YT]] : tensor<1x1x256x64xf32>) offset(
//       CHECK:         rope.online_attention ins(%{{.*}}, %[[KT]], %{{.*}} : {{.*}}) query_positions(%{{.*}} : tensor<1x1xi64>) key_offset(%[[N]])
// SHARE-LABEL: func.func @decode(
//  SHARE-SAME:     %[[X:[a-z0-9]+]]: tensor<2x2x4x1x64xf32>, %[[P:[a-z0-9]+]]: tensor<2x1xi64>, %[[Y:[a-z0-9]+]]: tensor<2x2x1024x64xf32>
//   SHARE-NOT:   rope.apply ins(%[[Y]]
//       SHARE:   scf.forall (%[[B:[a-z0-9]+]]) in (2)
//       SHARE:     %[[PT:.*]] = tensor.extract_slice %[[P]][%[[B]], 0] [1, 1]
//       SHARE:     rope.apply ins(%{{.*}} : tensor<1x2x4x1x64xf32>) positions(%{{.*}} : tensor<1x1xi64>)
//       SHARE:     arith.maxsi
//       SHARE:     %[[MAXPOS:.*]] = tensor.extract
//       SHARE:     scf.for %[[N:[a-z0-9]+]] =
//       SHARE:       %[[FIRST:.*]] = arith.index_cast %[[N]] : index to i64
//       SHARE:       %[[VISIBLE:.*]] = arith.cmpi sle, %[[FIRST]], %[[MAXPOS]] : i64
//       SHARE:       scf.if %[[VISIBLE]]
//       SHARE:         %[[YT:.*]] = tensor.extract_slice %[[Y]][%[[B]], 0, %[[N]], 0] [1, 2, 256, 64]
//       SHARE:         %[[KT:.*]] = rope.apply ins(%[[YT]] : tensor<1x2x256x64xf32>) offset(
//       SHARE:         rope.online_attention ins(%{{.*}}, %[[KT]], %{{.*}} : {{.*}}) query_positions(%{{.*}} : tensor<1x1xi64>) key_offset(%[[N]])
// With decode-key-splits=2 (SPLIT) the 1024 keys are two blocks of 512
// (whole 256-key tiles), an scf.forall over the blocks inside the batch
// loop; each block's key loop starts from (0, -inf, 0), rotates its own
// key tiles at their absolute positions and writes its state into its slot
// of the stacked states; after the loop the states are merged: the maximum
// over the blocks, then acc and sum rescaled by exp(max_b - max) and added
// in block order, then the normalization acc / sum.
// SPLIT-LABEL: func.func @decode(
//  SPLIT-SAME:     %[[X:[a-z0-9]+]]: tensor<2x2x4x1x64xf32>, %[[P:[a-z0-9]+]]: tensor<2x1xi64>, %[[Y:[a-z0-9]+]]: tensor<2x2x1024x64xf32>
//   SPLIT-NOT:   rope.apply ins(%[[Y]]
//       SPLIT:   scf.forall (%[[B:[a-z0-9]+]]) in (2)
//       SPLIT:     %[[S:[a-z0-9]+]]:3 = scf.forall (%[[BLOCK:[a-z0-9]+]]) in (2) shared_outs(%[[ACCS:.+]] = %{{.+}}, %[[MAXS:.+]] = %{{.+}}, %[[SUMS:.+]] = %{{.+}}) -> (tensor<2x1x2x4x1x64xf32>, tensor<2x1x2x4x1xf32>, tensor<2x1x2x4x1xf32>)
//       SPLIT:       %[[STATE:.+]]:3 = scf.for %[[N:[a-z0-9]+]] = %c0 to %c512 step %c256
//       SPLIT:         affine.apply #{{.+}}()[%[[N]], %[[BLOCK]]]
//       SPLIT:         rope.apply ins(%{{.*}} : tensor<1x2x256x64xf32>) offset(
//       SPLIT:         rope.online_attention {{.*}} key_offset(
//       SPLIT:       scf.forall.in_parallel
//  SPLIT-NEXT:         tensor.parallel_insert_slice %[[STATE]]#0 into %[[ACCS]][%[[BLOCK]], 0, 0, 0, 0, 0] [1, 1, 2, 4, 1, 64]
//  SPLIT-NEXT:         tensor.parallel_insert_slice %[[STATE]]#1 into %[[MAXS]][%[[BLOCK]], 0, 0, 0, 0] [1, 1, 2, 4, 1]
//  SPLIT-NEXT:         tensor.parallel_insert_slice %[[STATE]]#2 into %[[SUMS]][%[[BLOCK]], 0, 0, 0, 0] [1, 1, 2, 4, 1]
//       SPLIT:     %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%[[S]]#1 : tensor<2x1x2x4x1xf32>)
//       SPLIT:       arith.maximumf
//       SPLIT:     %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[S]]#2, %[[S]]#1, %[[MAX]] :
//       SPLIT:       math.exp
//       SPLIT:     %[[ACC:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[S]]#0, %[[S]]#1, %[[MAX]] :
//       SPLIT:       math.exp
//       SPLIT:     linalg.generic {{.*}} ins(%[[ACC]], %[[SUM]] :
//       SPLIT:       arith.divf
// (The prefill above has no blocks: its key loop is the only loop.)
// Without parallel loops (SEQSPLIT) the keys stay one loop: blocks would
// only add the merge.
// SEQSPLIT-LABEL: func.func @decode(
//   SEQSPLIT-NOT:   scf.forall
//       SEQSPLIT:   scf.for %{{.+}} = %c0 to %c1024 step %c256
// SEQSPLIT-LABEL: func.func @window_mask(
// SPLIT-LABEL: func.func @window_mask(
// BADSPLIT: decode-key-splits must be >= 0, got -1
// DEC64-LABEL: func.func @decode(
//       DEC64:   scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %c1024 step %c64
//       DEC64:     rope.apply ins(%{{.*}} : tensor<1x1x64x64xf32>) offset(
// DEC64-LABEL: func.func @
func.func @decode(%x: tensor<2x2x4x1x64xf32>, %pos: tensor<2x1xi64>, %y: tensor<2x2x1024x64xf32>, %v: tensor<2x2x1024x64xf32>) -> tensor<2x2x4x1x64xf32> {
  %e = tensor.empty() : tensor<2x2x4x1x64xf32>
  %qr = rope.apply ins(%x : tensor<2x2x4x1x64xf32>) positions(%pos : tensor<2x1xi64>) outs(%e : tensor<2x2x4x1x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<2x2x4x1x64xf32>
  %ek = tensor.empty() : tensor<2x2x1024x64xf32>
  %kr = rope.apply ins(%y : tensor<2x2x1024x64xf32>) outs(%ek : tensor<2x2x1024x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x2x1024x64xf32>
  %o = tensor.empty() : tensor<2x2x4x1x64xf32>
  %r = rope.attention ins(%qr, %kr, %v : tensor<2x2x4x1x64xf32>, tensor<2x2x1024x64xf32>, tensor<2x2x1024x64xf32>) query_positions(%pos : tensor<2x1xi64>) outs(%o : tensor<2x2x4x1x64xf32>) attributes {indexing_maps = [#q, #k, #v, #p, #o], scale = 0.125 : f64, causal, query_dim = 3} -> tensor<2x2x4x1x64xf32>
  return %r : tensor<2x2x4x1x64xf32>
}

// -----

#q = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, k1)>
#k = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, k1)>
#v = affine_map<(b, m, h, k1, k2, n) -> (b, k2, h, n)>
#mask = affine_map<(b, m, h, k1, k2, n) -> (m, k2)>
#o = affine_map<(b, m, h, k1, k2, n) -> (b, m, h, n)>

// [B, S, H, D], a float mask and a sliding window: a key tile is skipped
// when it is before every query's window, or past every query, or its mask
// slice is -inf everywhere.
// CHECK-LABEL: func.func @window_mask(
//       CHECK:   scf.forall (%[[M:[a-z0-9]+]], %[[H:[a-z0-9]+]]) = (0, 0) to (128, 4) step (32, 1)
//       CHECK:     %[[MQ:.*]] = tensor.extract_slice %{{.*}}[%[[M]], 0] [32, 128]
//       CHECK:     scf.for %[[N:[a-z0-9]+]] =
//       CHECK:       %[[MT:.*]] = tensor.extract_slice %[[MQ]][0, %[[N]]] [32, 64]
//       CHECK:       arith.cmpi sle
//       CHECK:       arith.cmpi sgt
//       CHECK:       arith.andi
//       CHECK:       arith.maximumf
//       CHECK:       arith.cmpf une
//       CHECK:       arith.andi
//       CHECK:       scf.if
//       CHECK:         rope.online_attention {{.*}} mask(%[[MT]] : tensor<32x64xf32>) query_offset(%[[M]]) key_offset(%[[N]])
//  CHECK-SAME:           window = 48
func.func @window_mask(%q: tensor<1x128x4x32xf32>, %k: tensor<1x128x4x32xf32>, %v: tensor<1x128x4x32xf32>, %mask: tensor<128x128xf32>) -> tensor<1x128x4x32xf32> {
  %o = tensor.empty() : tensor<1x128x4x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x128x4x32xf32>, tensor<1x128x4x32xf32>, tensor<1x128x4x32xf32>) mask(%mask : tensor<128x128xf32>) outs(%o : tensor<1x128x4x32xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 0.125 : f64, causal, window = 48} -> tensor<1x128x4x32xf32>
  return %r : tensor<1x128x4x32xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#mask = affine_map<(b, m, k1, k2, n) -> (b, m, k2)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>

// An i1 mask: a key tile is visible when any entry of its slice is true
// (an or-reduction: as signed i1, true is -1, so a max would say false).
// CHECK-LABEL: func.func @bool_mask(
//       CHECK:   scf.for
//       CHECK:     arith.ori
//   CHECK-NOT:     arith.maxsi
//       CHECK:     scf.if
//       CHECK:       rope.online_attention {{.*}} mask(%{{.*}} : tensor<1x32x64xi1>)
func.func @bool_mask(%q: tensor<2x128x32xf32>, %k: tensor<2x128x32xf32>, %v: tensor<2x128x32xf32>, %mask: tensor<2x128x128xi1>) -> tensor<2x128x32xf32> {
  %o = tensor.empty() : tensor<2x128x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<2x128x32xf32>, tensor<2x128x32xf32>, tensor<2x128x32xf32>) mask(%mask : tensor<2x128x128xi1>) outs(%o : tensor<2x128x32xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 0.125 : f64} -> tensor<2x128x32xf32>
  return %r : tensor<2x128x32xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#mask = affine_map<(b, h, m, k1, k2, n) -> (b, m, k2)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>

// A float mask alone (what an HF export passes, finfo.min where masked):
// before the key loop one scan of the query tile's mask (max over the keys,
// min over the rows) says whether every row has a key above -2^126; a key
// tile is then skipped when its mask is at most -2^126 everywhere, else
// only when it is -inf everywhere.
// CHECK-LABEL: func.func @finfo_mask(
//   CHECK-DAG:   %[[THRESHOLD:.*]] = arith.constant -8.50705917E+37 : f32
//       CHECK:   scf.forall
//       CHECK:     %[[MQ:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [1, 32, 128]
//       CHECK:     linalg.generic {{.*}} ins(%[[MQ]] : tensor<1x32x128xf32>)
//       CHECK:       arith.maximumf
//       CHECK:       arith.minimumf
//       CHECK:     %[[ROWS:.*]] = arith.cmpf ogt, %{{.*}}, %[[THRESHOLD]] : f32
//       CHECK:     scf.for
//       CHECK:       %[[NOTINF:.*]] = arith.cmpf une
//       CHECK:       %[[ABOVE:.*]] = arith.cmpf ugt, %{{.*}}, %[[THRESHOLD]] : f32
//       CHECK:       %[[VISIBLE:.*]] = arith.select %[[ROWS]], %[[ABOVE]], %[[NOTINF]] : i1
//       CHECK:       scf.if %[[VISIBLE]]
//       CHECK:         rope.online_attention
func.func @finfo_mask(%q: tensor<1x4x128x32xf32>, %k: tensor<1x4x128x32xf32>, %v: tensor<1x4x128x32xf32>, %mask: tensor<1x128x128xf32>) -> tensor<1x4x128x32xf32> {
  %o = tensor.empty() : tensor<1x4x128x32xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<1x4x128x32xf32>, tensor<1x4x128x32xf32>, tensor<1x4x128x32xf32>) mask(%mask : tensor<1x128x128xf32>) outs(%o : tensor<1x4x128x32xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 0.125 : f64} -> tensor<1x4x128x32xf32>
  return %r : tensor<1x4x128x32xf32>
}
