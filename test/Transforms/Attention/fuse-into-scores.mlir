// RUN: rope-opt %s --rope-fuse-into-scores="fuse-key=always tile-heads=true parallel-loops=false" --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-scores="fuse-key=auto parallel-loops=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=AUTO --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-scores="fuse-key=always tile-heads=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FORALL --enable-var-scope
// RUN: rope-opt %s --rope-fuse-into-scores="remarks=true" -split-input-file -verify-diagnostics -o /dev/null
// RUN: rope-opt %s --rope-fuse-into-attention --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=DECODE --enable-var-scope
// The fifth line runs the rope-fuse-into-attention pipeline: on scores alone
// it is rope-fuse-into-scores.

// Attention scores [B, H, S, D] as a linalg.generic: loops over B and (with
// tile-heads) H by 1, the query tile (32) outside the key tile (64). Q's tile is rotated in
// the query loop, once for every key tile; K's tile inside the key loop.
// No whole-size rotated tensor is left.
// CHECK-LABEL: func.func @bhsd(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x4x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x256x64xf32>
//   CHECK-NOT:   rope.apply
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       scf.for %[[M:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c32
//       CHECK:         %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[M]], 0] [1, 1, 32, 64]
//       CHECK:         %[[QOFF:.*]] = arith.index_cast %[[M]] : index to i64
//       CHECK:         %[[QR:.*]] = rope.apply ins(%[[QS]] : tensor<1x1x32x64xf32>) offset(%[[QOFF]] : i64)
//       CHECK:         scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64
//       CHECK:           %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[N]], 0] [1, 1, 64, 64]
//       CHECK:           %[[KOFF:.*]] = arith.index_cast %[[N]] : index to i64
//       CHECK:           %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x1x64x64xf32>) offset(%[[KOFF]] : i64)
//       CHECK:           linalg.generic {{.*}} ins(%[[QR]], %[[KR]] : tensor<1x1x32x64xf32>, tensor<1x1x64x64xf32>) outs(%{{.*}} : tensor<1x1x32x64xf32>)
// By default (parallel-loops) the loops over B, H and query tiles are one
// scf.forall, run on OpenMP threads by rope-to-llvm-cpu{num-threads=N}; the
// key loop inside stays an scf.for, and the rotations are placed the same.
// FORALL-LABEL: func.func @bhsd(
//  FORALL-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x4x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x256x64xf32>
//   FORALL-NOT:   rope.apply
//       FORALL:   scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[M:[a-z0-9]+]]) = (0, 0, 0) to (2, 4, 128) step (1, 1, 32) shared_outs(
//       FORALL:     %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[M]], 0] [1, 1, 32, 64]
//       FORALL:     %[[QR:.*]] = rope.apply ins(%[[QS]] : tensor<1x1x32x64xf32>)
//       FORALL:     scf.for %[[N:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c64
//       FORALL:       %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[N]], 0] [1, 1, 64, 64]
//       FORALL:       %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x1x64x64xf32>)
//       FORALL:       linalg.generic {{.*}} ins(%[[QR]], %[[KR]] : tensor<1x1x32x64xf32>, tensor<1x1x64x64xf32>)
//       FORALL:       scf.yield
//       FORALL:     scf.forall.in_parallel
//       FORALL:       tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], %[[M]], 0] [1, 1, 32, 256]
// With fuse-key=auto prefill keeps K's rotation whole: fusing
// it would rotate every key once per query tile. By default the heads stay
// whole in a tile: one cos/sin per token serves all heads.
// AUTO-LABEL: func.func @bhsd(
//       AUTO:   %[[KR:.*]] = rope.apply {{.*}} -> tensor<2x4x256x64xf32>
//       AUTO:   scf.for
//       AUTO:     scf.for
//       AUTO:       %[[QR:.*]] = rope.apply {{.*}} -> tensor<1x4x32x64xf32>
//       AUTO:       scf.for
//       AUTO:         %[[KS:.*]] = tensor.extract_slice %[[KR]]
//       AUTO:         linalg.generic {{.*}} ins(%[[QR]], %[[KS]] :
func.func @bhsd(%q: tensor<2x4x128x64xf32>, %k: tensor<2x4x256x64xf32>) -> tensor<2x4x128x256xf32> {
  %eq = tensor.empty() : tensor<2x4x128x64xf32>
  %ek = tensor.empty() : tensor<2x4x256x64xf32>
  %qr = rope.apply ins(%q : tensor<2x4x128x64xf32>) outs(%eq : tensor<2x4x128x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x128x64xf32>
  %kr = rope.apply ins(%k : tensor<2x4x256x64xf32>) outs(%ek : tensor<2x4x256x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x256x64xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x128x256xf32>
  %acc = linalg.fill ins(%cst : f32) outs(%e : tensor<2x4x128x256xf32>) -> tensor<2x4x128x256xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<2x4x128x64xf32>, tensor<2x4x256x64xf32>) outs(%acc : tensor<2x4x128x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x128x256xf32>
  return %s : tensor<2x4x128x256xf32>
}

// -----

// linalg.batch_matmul over [B·H, S, D] with MLIR 22's indexing_maps
// transposing K; explicit positions are sliced per query tile, K's partial
// rotation gets the key tile's start as its offset.
// CHECK-LABEL: func.func @batch_matmul_transposed(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<8x128x64xf32>, %[[K:[a-z0-9]+]]: tensor<8x256x64xf32>, %[[P:[a-z0-9]+]]: tensor<8x128xi64>
//       CHECK:   scf.for %[[B:[a-z0-9]+]] =
//       CHECK:     scf.for %[[M:[a-z0-9]+]] =
//   CHECK-DAG:       %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[M]], 0] [1, 32, 64]
//   CHECK-DAG:       %[[PS:.*]] = tensor.extract_slice %[[P]][%[[B]], %[[M]]] [1, 32]
//       CHECK:       %[[QR:.*]] = rope.apply ins(%[[QS]] : tensor<1x32x64xf32>) positions(%[[PS]] : tensor<1x32xi64>)
//       CHECK:       scf.for %[[N:[a-z0-9]+]] =
//       CHECK:         %[[KR:.*]] = rope.apply {{.*}} -> tensor<1x64x64xf32>
//       CHECK:         linalg.batch_matmul indexing_maps = [{{.*}}] ins(%[[QR]], %[[KR]] : tensor<1x32x64xf32>, tensor<1x64x64xf32>)
func.func @batch_matmul_transposed(%q: tensor<8x128x64xf32>, %k: tensor<8x256x64xf32>, %p: tensor<8x128xi64>, %acc: tensor<8x128x256xf32>) -> tensor<8x128x256xf32> {
  %eq = tensor.empty() : tensor<8x128x64xf32>
  %ek = tensor.empty() : tensor<8x256x64xf32>
  %qr = rope.apply ins(%q : tensor<8x128x64xf32>) positions(%p : tensor<8x128xi64>) outs(%eq : tensor<8x128x64xf32>) {token_dims = array<i64: 0, 1>} -> tensor<8x128x64xf32>
  %kr = rope.apply ins(%k : tensor<8x256x64xf32>) outs(%ek : tensor<8x256x64xf32>) {rotary_dim = 32 : i64, token_dims = array<i64: 1>} -> tensor<8x256x64xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%qr, %kr : tensor<8x128x64xf32>, tensor<8x256x64xf32>) outs(%acc : tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  return %s : tensor<8x128x256xf32>
}

// -----

// Decode with GQA in the [B, S, H, D] layout: one query token per row at a
// per-row offset, queries [B, 1, Hkv, G, D], keys [B, S, Hkv, D] broadcast
// over the group G by their indexing map. One query tile, so fuse-key=auto
// fuses K too: each key tile (all KV heads) is rotated once and shared by
// the G query heads; the last key tile is partial (300 = 4·64 + 44).
// AUTO-LABEL: func.func @decode_gqa_bshd(
//  AUTO-SAME:     %[[Q:[a-z0-9]+]]: tensor<2x1x2x4x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x300x2x64xf32>, %[[O:[a-z0-9]+]]: tensor<2xi64>
//   AUTO-NOT:   rope.apply
//       AUTO:   scf.for %[[B:[a-z0-9]+]] =
//   AUTO-DAG:     %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], 0, 0, 0, 0] [1, 1, 2, 4, 64]
//   AUTO-DAG:     %[[OS:.*]] = tensor.extract_slice %[[O]][%[[B]]] [1]
//       AUTO:     %[[QR:.*]] = rope.apply ins(%[[QS]] : tensor<1x1x2x4x64xf32>) offset(%[[OS]] : tensor<1xi64>)
//       AUTO:     scf.for %[[N:[a-z0-9]+]] =
//       AUTO:       %[[SIZE:.*]] = affine.min
//       AUTO:       %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[N]], 0, 0] [1, %[[SIZE]], 2, 64]
//       AUTO:       %[[KR:.*]] = rope.apply ins(%[[KS]] : tensor<1x?x2x64xf32>)
//       AUTO:       linalg.generic {{.*}} ins(%[[QR]], %[[KR]] : tensor<1x1x2x4x64xf32>, tensor<1x?x2x64xf32>)
func.func @decode_gqa_bshd(%q: tensor<2x1x2x4x64xf32>, %k: tensor<2x300x2x64xf32>, %o: tensor<2xi64>, %acc: tensor<2x2x4x1x300xf32>) -> tensor<2x2x4x1x300xf32> {
  %eq = tensor.empty() : tensor<2x1x2x4x64xf32>
  %ek = tensor.empty() : tensor<2x300x2x64xf32>
  %qr = rope.apply ins(%q : tensor<2x1x2x4x64xf32>) offset(%o : tensor<2xi64>) outs(%eq : tensor<2x1x2x4x64xf32>) {token_dims = array<i64: 0, 1>} -> tensor<2x1x2x4x64xf32>
  %kr = rope.apply ins(%k : tensor<2x300x2x64xf32>) outs(%ek : tensor<2x300x2x64xf32>) -> tensor<2x300x2x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d) -> (b, n, h, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<2x1x2x4x64xf32>, tensor<2x300x2x64xf32>) outs(%acc : tensor<2x2x4x1x300xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x2x4x1x300xf32>
  return %s : tensor<2x2x4x1x300xf32>
}

// -----

// Left alone: the rotated keys are also returned (fusing would recompute
// them next to the whole rotation).
// CHECK-LABEL: func.func @other_use(
//       CHECK:   rope.apply {{.*}} -> tensor<256x64xf32>
//   CHECK-NOT:   scf.for
func.func @other_use(%q: tensor<128x64xf32>, %k: tensor<256x64xf32>, %acc: tensor<128x256xf32>) -> (tensor<128x256xf32>, tensor<256x64xf32>) {
  %ek = tensor.empty() : tensor<256x64xf32>
  %kr = rope.apply ins(%k : tensor<256x64xf32>) outs(%ek : tensor<256x64xf32>) -> tensor<256x64xf32>
  // expected-remark @+1 {{not fused into attention: key rotation has other users}}
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %kr : tensor<128x64xf32>, tensor<256x64xf32>) outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %s, %kr : tensor<128x256xf32>, tensor<256x64xf32>
}

// -----

// Left alone: a plain matmul contracting over the tokens, not the channels
// (a rotated pair would be split across tiles).
// CHECK-LABEL: func.func @over_tokens(
//       CHECK:   rope.apply {{.*}} -> tensor<128x64xf32>
//   CHECK-NOT:   scf.for
func.func @over_tokens(%a: tensor<64x128xf32>, %k: tensor<128x64xf32>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %ek = tensor.empty() : tensor<128x64xf32>
  %kr = rope.apply ins(%k : tensor<128x64xf32>) outs(%ek : tensor<128x64xf32>) -> tensor<128x64xf32>
  // expected-remark @+1 {{not fused into attention: key rotation: its channel dim is not the reduction}}
  %s = linalg.matmul ins(%a, %kr : tensor<64x128xf32>, tensor<128x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}

// -----

// Left alone: an elementwise consumer is no contraction.
// CHECK-LABEL: func.func @not_a_contraction(
//   CHECK-NOT:   scf.for
func.func @not_a_contraction(%k: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ek = tensor.empty() : tensor<128x64xf32>
  %kr = rope.apply ins(%k : tensor<128x64xf32>) outs(%ek : tensor<128x64xf32>) -> tensor<128x64xf32>
  // expected-remark @+1 {{not a contraction}}
  %s = linalg.exp ins(%kr : tensor<128x64xf32>) outs(%ek : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %s : tensor<128x64xf32>
}

// -----

// Decode with one batch row: the query-tile loops run once, so the key
// tiles are the parallel loop (scf.forall, each key tile rotated and
// contracted independently) and the single-iteration query loop folds away.
// CHECK-LABEL: func.func @decode_single_row(
// DECODE-LABEL: func.func @decode_single_row(
//       DECODE:   %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x4x1x64xf32>)
//       DECODE:   scf.forall (%[[N:.*]]) = (0) to (256) step (64)
//       DECODE:     %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x64x64xf32>)
//       DECODE:     linalg.generic {{.*}} ins(%[[QR]], %[[KR]] :
//       DECODE:     scf.forall.in_parallel
func.func @decode_single_row(%q: tensor<1x2x4x1x64xf32>, %k: tensor<1x2x256x64xf32>, %o: tensor<1xi64>, %acc: tensor<1x2x4x1x256xf32>) -> tensor<1x2x4x1x256xf32> {
  %eq = tensor.empty() : tensor<1x2x4x1x64xf32>
  %ek = tensor.empty() : tensor<1x2x256x64xf32>
  %qr = rope.apply ins(%q : tensor<1x2x4x1x64xf32>) offset(%o : tensor<1xi64>) outs(%eq : tensor<1x2x4x1x64xf32>) {token_dims = array<i64: 0, 3>} -> tensor<1x2x4x1x64xf32>
  %kr = rope.apply ins(%k : tensor<1x2x256x64xf32>) outs(%ek : tensor<1x2x256x64xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x256x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x2x4x1x64xf32>, tensor<1x2x256x64xf32>) outs(%acc : tensor<1x2x4x1x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x1x256xf32>
  return %s : tensor<1x2x4x1x256xf32>
}
