// RUN: rope-opt %s --rope-fuse-into-attention="fuse-key=always parallel-loops=false" --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-attention="fuse-key=always" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FORALL --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-attention="whole-attention=false fuse-key=always" -split-input-file | FileCheck %s --check-prefix=SCORES --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-attention="remarks=true fuse-key=always" -split-input-file -verify-diagnostics -o /dev/null
// RUN: rope-opt %s --rope-fuse-into-attention --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=AUTO --enable-var-scope

#qmap = affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>
#kmap = affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>
#smap = affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>
#id = affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>
#mask = affine_map<(b, h, g, m, n) -> (m, n)>
#pmap = affine_map<(b, h, g, m, n, e) -> (b, h, g, m, n)>
#vmap = affine_map<(b, h, g, m, n, e) -> (b, h, n, e)>
#omap = affine_map<(b, h, g, m, n, e) -> (b, h, g, m, e)>

// Whole attention is raised to rope.attention (Raise/RaiseAttention.cpp)
// and tiled FlashAttention style (rope-tile-attention; the key-loop body is
// one rope.online_attention, decomposed later); what this file checks is the
// loop structure and what is fused where. Executed equivalence:
// python/tests/compiler/test_attention_fusion.py.

// Prefill, [B, H, S, D] with GQA (2 KV heads, groups of 2): scale, causal
// mask, softmax over the keys and ·V become one loop nest: batch dims by 1
// and the queries by 32, then a key loop (step 64) carrying the [.., 32, Dv]
// accumulator, the row max and the row sum. Q is rotated once per query
// tile (outside the key loop), K per key tile (fuse-key=always) inside the
// scf.if that skips a key tile whose mask slice is −inf everywhere; no
// softmax and no [.., 128, 256] scores tensor is left; acc / sum after the
// key loop.
// CHECK-LABEL: func.func @prefill_gqa(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x2x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x256x64xf32>, %[[MASK:[a-z0-9]+]]: tensor<128x256xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x256x32xf32>
//   CHECK-NOT:   linalg.softmax
//   CHECK-NOT:   x128x256xf32>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       scf.for %[[M:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c32
//       CHECK:         %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x1x2x32x64xf32>)
//       CHECK:         %[[VQ:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], 0, 0] [1, 1, 256, 32]
//       CHECK:         %[[MQ:.*]] = tensor.extract_slice %[[MASK]][%[[M]], 0] [32, 256]
//       CHECK:         %[[LOOP:.*]]:3 = scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64 iter_args(%[[ACC:.*]] = %{{.*}}, %[[MAX:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}}) -> (tensor<1x1x2x32x32xf32>, tensor<1x1x2x32xf32>, tensor<1x1x2x32xf32>)
//       CHECK:           %[[MS:.*]] = tensor.extract_slice %[[MQ]][0, %[[N]]] [32, 64]
//       CHECK:           %[[ROWMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[MS]] : tensor<32x64xf32>)
//       CHECK:           %[[MMAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWMAX]] : tensor<32xf32>)
//       CHECK:           %[[MV:.*]] = tensor.extract %[[MMAX]][] : tensor<f32>
//       CHECK:           %[[LIVE:.*]] = arith.cmpf une, %[[MV]], %{{.*}} : f32
// A float mask: at most -2^126 everywhere is masked too, where every row of
// the query tile has a key above that (computed before the key loop).
//       CHECK:           %[[ABOVE:.*]] = arith.cmpf ugt, %[[MV]], %{{.*}} : f32
//       CHECK:           %[[VISIBLE:.*]] = arith.select %{{.*}}, %[[ABOVE]], %[[LIVE]] : i1
//       CHECK:           %[[IF:.*]]:3 = scf.if %[[VISIBLE]]
//       CHECK:             %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[N]], 0] [1, 1, 64, 64]
//       CHECK:             %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x1x64x64xf32>)
//       CHECK:             %[[VS:.*]] = tensor.extract_slice %[[VQ]][0, 0, %[[N]], 0] [1, 1, 64, 32]
//       CHECK:             %{{.*}}, %{{.*}}, %{{.*}} = rope.online_attention ins(%[[QR]], %[[KR]], %[[VS]] : tensor<1x1x2x32x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x32xf32>) mask(%[[MS]] : tensor<32x64xf32>) outs(%[[ACC]], %[[MAX]], %[[SUM]] :
//  CHECK-SAME:               scale = 1.250000e-01 : f64
//       CHECK:           } else {
//       CHECK:             scf.yield %[[ACC]], %[[MAX]], %[[SUM]]
//       CHECK:           scf.yield %[[IF]]#0, %[[IF]]#1, %[[IF]]#2
//       CHECK:         linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#2 : tensor<1x1x2x32x32xf32>, tensor<1x1x2x32xf32>)
//       CHECK:           arith.divf
//       CHECK:         tensor.insert_slice
// By default (parallel-loops) the loops over B, H and query tiles are one
// scf.forall (OpenMP threads under rope-to-llvm-cpu{num-threads=N}); the key
// loop carries the online softmax, so it stays an scf.for.
// FORALL-LABEL: func.func @prefill_gqa(
//  FORALL-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x2x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x256x64xf32>
//   FORALL-NOT:   linalg.softmax
//       FORALL:   scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[M:[a-z0-9]+]]) = (0, 0, 0) to (2, 2, 128) step (1, 1, 32) shared_outs(
//       FORALL:     %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x1x2x32x64xf32>)
//       FORALL:     %[[LOOP:.*]]:3 = scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64 iter_args(
//       FORALL:       %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[N]], 0] [1, 1, 64, 64]
//       FORALL:       rope.apply ins(%[[KS]] : tensor<1x1x64x64xf32>)
//       FORALL:       rope.online_attention
//       FORALL:       scf.yield
//       FORALL:     %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#2 : tensor<1x1x2x32x32xf32>, tensor<1x1x2x32xf32>)
//       FORALL:     scf.forall.in_parallel
//       FORALL:       tensor.parallel_insert_slice %[[OUT]] into %{{.*}}[%[[B]], %[[H]], 0, %[[M]], 0] [1, 1, 2, 32, 32]
//       FORALL:   return
// The default fuse-key=auto: with several query tiles (prefill) K is rotated
// whole once, before the loops, and sliced per key tile; Q per query tile.
// AUTO-LABEL: func.func @prefill_gqa(
//  AUTO-SAME:     %{{[a-z0-9]+}}: tensor<2x2x2x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x256x64xf32>
//       AUTO:   %[[KR:.*]] = rope.apply ins(%[[K]] : tensor<2x2x256x64xf32>)
//       AUTO:   scf.forall
//       AUTO:     rope.apply ins(%{{.*}} : tensor<1x1x2x32x64xf32>)
//       AUTO:     %[[KH:.*]] = tensor.extract_slice %[[KR]]
//       AUTO:     scf.for
//       AUTO:       scf.if
//       AUTO:         tensor.extract_slice %[[KH]]
//   AUTO-NOT:         rope.apply
//       AUTO:       } else {
// whole-attention=false fuses the scores only and leaves the rest whole:
// the tiles are rotated in the scores' loops, the softmax runs on the whole
// scores after them.
// SCORES-LABEL: func.func @prefill_gqa(
//  SCORES-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x2x2x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x256x64xf32>
//   SCORES-NOT:   rope.apply
//       SCORES:   %[[S:.*]] = scf.forall
//       SCORES:     %[[QS:.*]] = tensor.extract_slice %[[Q]]
//       SCORES:     %[[QR:.*]] = rope.apply ins(%[[QS]] : tensor<1x2x2x32x64xf32>)
//       SCORES:     scf.for
//       SCORES:       %[[KS:.*]] = tensor.extract_slice %[[K]]
//       SCORES:       %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x2x64x64xf32>)
//       SCORES:       linalg.generic {{.*}} ins(%[[QR]], %[[KR]] :
//   SCORES-NOT:   rope.apply
//       SCORES:   linalg.softmax
func.func @prefill_gqa(%q: tensor<2x2x2x128x64xf32>, %k: tensor<2x2x256x64xf32>, %mask: tensor<128x256xf32>, %v: tensor<2x2x256x32xf32>) -> tensor<2x2x2x128x32xf32> {
  %eq = tensor.empty() : tensor<2x2x2x128x64xf32>
  %ek = tensor.empty() : tensor<2x2x256x64xf32>
  %qr = rope.apply ins(%q : tensor<2x2x2x128x64xf32>) outs(%eq : tensor<2x2x2x128x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<2x2x2x128x64xf32>
  %kr = rope.apply ins(%k : tensor<2x2x256x64xf32>) outs(%ek : tensor<2x2x256x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x2x256x64xf32>
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %se = tensor.empty() : tensor<2x2x2x128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x2x2x128x256xf32>) -> tensor<2x2x2x128x256xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<2x2x2x128x64xf32>, tensor<2x2x256x64xf32>) outs(%acc : tensor<2x2x2x128x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x2x2x128x256xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x2x2x128x256xf32>) outs(%se : tensor<2x2x2x128x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<2x2x2x128x256xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x2x2x128x256xf32>, tensor<128x256xf32>) outs(%se : tensor<2x2x2x128x256xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<2x2x2x128x256xf32>
  %probs = linalg.softmax dimension(4) ins(%masked : tensor<2x2x2x128x256xf32>) outs(%se : tensor<2x2x2x128x256xf32>) -> tensor<2x2x2x128x256xf32>
  %oe = tensor.empty() : tensor<2x2x2x128x32xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x2x2x128x32xf32>) -> tensor<2x2x2x128x32xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%probs, %v : tensor<2x2x2x128x256xf32>, tensor<2x2x256x32xf32>) outs(%oacc : tensor<2x2x2x128x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x2x2x128x32xf32>
  return %o : tensor<2x2x2x128x32xf32>
}

// -----

// Decode in the [B, S, H, D] layout: one query token per row at a per-row
// offset; 300 keys, so the last key tile is partial (decode-key-tile-size:
// 300 = 256 + 44) and the K and V tiles have a dynamic key extent.
// CHECK-LABEL: func.func @decode_bshd(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x1x2x4x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x300x2x64xf32>, %[[O:[a-z0-9]+]]: tensor<2xi64>, %[[V:[a-z0-9]+]]: tensor<2x300x2x64xf32>
//   CHECK-NOT:   linalg.softmax
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       %[[OS:.*]] = tensor.extract_slice %[[O]][%[[B]]] [1]
//       CHECK:       %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x1x1x4x64xf32>) offset(%[[OS]] : tensor<1xi64>)
//       CHECK:       %[[VQ:.*]] = tensor.extract_slice %[[V]][%[[B]], 0, %[[H]], 0] [1, 300, 1, 64]
//       CHECK:       scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %c300 step %c256 iter_args(
//       CHECK:         %[[SIZE:.*]] = affine.min
//       CHECK:         %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[N]], %[[H]], 0] [1, %[[SIZE]], 1, 64]
//       CHECK:         %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x?x1x64xf32>)
//       CHECK:         %[[VS:.*]] = tensor.extract_slice %[[VQ]][0, %[[N]], 0, 0] [1, %[[SIZE]], 1, 64]
//       CHECK:         rope.online_attention ins(%[[QR]], %[[KR]], %[[VS]] :
//       CHECK:         scf.yield
func.func @decode_bshd(%q: tensor<2x1x2x4x64xf32>, %k: tensor<2x300x2x64xf32>, %off: tensor<2xi64>, %v: tensor<2x300x2x64xf32>) -> tensor<2x1x2x4x64xf32> {
  %eq = tensor.empty() : tensor<2x1x2x4x64xf32>
  %ek = tensor.empty() : tensor<2x300x2x64xf32>
  %qr = rope.apply ins(%q : tensor<2x1x2x4x64xf32>) offset(%off : tensor<2xi64>) outs(%eq : tensor<2x1x2x4x64xf32>) {token_dims = array<i64: 0, 1>} -> tensor<2x1x2x4x64xf32>
  %kr = rope.apply ins(%k : tensor<2x300x2x64xf32>) outs(%ek : tensor<2x300x2x64xf32>) -> tensor<2x300x2x64xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<2x2x4x1x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x2x4x1x300xf32>) -> tensor<2x2x4x1x300xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d) -> (b, n, h, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<2x1x2x4x64xf32>, tensor<2x300x2x64xf32>) outs(%acc : tensor<2x2x4x1x300xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x2x4x1x300xf32>
  %probs = linalg.softmax dimension(4) ins(%s : tensor<2x2x4x1x300xf32>) outs(%se : tensor<2x2x4x1x300xf32>) -> tensor<2x2x4x1x300xf32>
  %oe = tensor.empty() : tensor<2x1x2x4x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x1x2x4x64xf32>) -> tensor<2x1x2x4x64xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, e) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, e) -> (b, m, h, g, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%probs, %v : tensor<2x2x4x1x300xf32>, tensor<2x300x2x64xf32>) outs(%oacc : tensor<2x1x2x4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x1x2x4x64xf32>
  return %o : tensor<2x1x2x4x64xf32>
}

// -----

// Not whole attention: the softmax is over the query dim, so it is not
// raised (the remark is the raising's). The scores are still fused; the
// softmax and ·V stay whole.
// CHECK-LABEL: func.func @softmax_over_queries(
//       CHECK:   scf.for
//       CHECK:   linalg.softmax
func.func @softmax_over_queries(%q: tensor<128x64xf32>, %k: tensor<256x64xf32>, %v: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %ek = tensor.empty() : tensor<256x64xf32>
  %kr = rope.apply ins(%k : tensor<256x64xf32>) outs(%ek : tensor<256x64xf32>) -> tensor<256x64xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %kr : tensor<128x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  %probs = linalg.softmax dimension(0) ins(%s : tensor<128x256xf32>) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %oe = tensor.empty() : tensor<128x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<128x64xf32>) -> tensor<128x64xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax is over dim 0, not over the keys P·V sums (dim 1)}}
  %o = linalg.matmul ins(%probs, %v : tensor<128x256xf32>, tensor<256x64xf32>) outs(%oacc : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

// Scores multiplied by a weight before the softmax are not attention as
// rope.attention states it (scale, score region, additive or boolean mask):
// not raised, with the raising's remark; the scores are still fused with the
// rotation (K per key tile), and the softmax and ·V stay whole.
// CHECK-LABEL: func.func @multiplicative_mask(
//   CHECK-NOT:   rope.attention
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       %[[KR:.*]] = rope.apply {{.*}} -> tensor<64x64xf32>
//       CHECK:       linalg.matmul {{.*}} ins(%{{.*}}, %[[KR]] :
//       CHECK:   linalg.softmax
//       CHECK:   linalg.matmul
//   CHECK-NOT:   rope.online_attention
//       CHECK:   return
func.func @multiplicative_mask(%q: tensor<128x64xf32>, %k: tensor<256x64xf32>, %w: tensor<128x256xf32>, %v: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %ek = tensor.empty() : tensor<256x64xf32>
  %kr = rope.apply ins(%k : tensor<256x64xf32>) outs(%ek : tensor<256x64xf32>) -> tensor<256x64xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %kr : tensor<128x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  %me = tensor.empty() : tensor<128x256xf32>
  %weighted = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%s, %w : tensor<128x256xf32>, tensor<128x256xf32>) outs(%me : tensor<128x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>
  %probs = linalg.softmax dimension(1) ins(%weighted : tensor<128x256xf32>) outs(%se : tensor<128x256xf32>) -> tensor<128x256xf32>
  %oe = tensor.empty() : tensor<128x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<128x64xf32>) -> tensor<128x64xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax input is not (a mask over) constant times Q·Kᵀ contracted over the channels}}
  %o = linalg.matmul ins(%probs, %v : tensor<128x256xf32>, tensor<256x64xf32>) outs(%oacc : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

// The softmax written out (reduce max, broadcast, subtract, exp, reduce sum,
// broadcast, divide): raised to linalg.softmax first, then raised and tiled
// like it.
// CHECK-LABEL: func.func @decomposed_softmax(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<64x32xf32>, %[[K:[a-z0-9]+]]: tensor<128x32xf32>, %[[V:[a-z0-9]+]]: tensor<128x16xf32>
//   CHECK-NOT:   linalg.reduce
//   CHECK-NOT:   linalg.softmax
//       CHECK:   scf.for %[[M:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c32
//       CHECK:     rope.apply {{.*}} -> tensor<32x32xf32>
//       CHECK:     scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64 iter_args(
//       CHECK:       rope.apply {{.*}} -> tensor<64x32xf32>
//       CHECK:       rope.online_attention
//       CHECK:       scf.yield
//       CHECK:     arith.divf
//   CHECK-NOT:   linalg.reduce
//   CHECK-NOT:   linalg.softmax
// SCORES-LABEL: func.func @decomposed_softmax(
//   SCORES-NOT:   rope.apply
//       SCORES:   scf.forall
//       SCORES:     %[[QR:.*]] = rope.apply {{.*}} -> tensor<32x32xf32>
//       SCORES:     scf.for
//       SCORES:       %[[KR:.*]] = rope.apply {{.*}} -> tensor<64x32xf32>
//       SCORES:       linalg.matmul {{.*}} ins(%[[QR]], %[[KR]] :
//   SCORES-NOT:   rope.apply
//   SCORES-NOT:   linalg.softmax
//       SCORES:   linalg.reduce
func.func @decomposed_softmax(%q: tensor<64x32xf32>, %k: tensor<128x32xf32>, %v: tensor<128x16xf32>) -> tensor<64x16xf32> {
  %eq = tensor.empty() : tensor<64x32xf32>
  %ek = tensor.empty() : tensor<128x32xf32>
  %qr = rope.apply ins(%q : tensor<64x32xf32>) outs(%eq : tensor<64x32xf32>) -> tensor<64x32xf32>
  %kr = rope.apply ins(%k : tensor<128x32xf32>) outs(%ek : tensor<128x32xf32>) -> tensor<128x32xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<64x128xf32>
  %re = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<64x128xf32>) -> tensor<64x128xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%qr, %kr : tensor<64x32xf32>, tensor<128x32xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.reduce { arith.maximumf } ins(%s : tensor<64x128xf32>) outs(%minit : tensor<64xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<64xf32>) outs(%se : tensor<64x128xf32>) dimensions = [1]
  %d = linalg.sub ins(%s, %mb : tensor<64x128xf32>, tensor<64x128xf32>) outs(%se : tensor<64x128xf32>) -> tensor<64x128xf32>
  %x = linalg.exp ins(%d : tensor<64x128xf32>) outs(%se : tensor<64x128xf32>) -> tensor<64x128xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce { arith.addf } ins(%x : tensor<64x128xf32>) outs(%sinit : tensor<64xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%sum : tensor<64xf32>) outs(%se : tensor<64x128xf32>) dimensions = [1]
  %p = linalg.div ins(%x, %sb : tensor<64x128xf32>, tensor<64x128xf32>) outs(%se : tensor<64x128xf32>) -> tensor<64x128xf32>
  %oe = tensor.empty() : tensor<64x16xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<64x16xf32>) -> tensor<64x16xf32>
  %o = linalg.matmul ins(%p, %v : tensor<64x128xf32>, tensor<128x16xf32>) outs(%oacc : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}
