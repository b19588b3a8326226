//===- TileAttention.h - Tile rope.attention with RoPE fused ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_ATTENTION_TILEATTENTION_H
#define ROPE_TRANSFORMS_ATTENTION_TILEATTENTION_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <functional>
#include <optional>

namespace mlir::rope {

/// How to tile one rope.attention and what to fuse into its tiles.
struct AttentionTilingOptions {
  /// Tile sizes of the query and key dims (0: the whole dim).
  int64_t queryTileSize = 32;
  int64_t keyTileSize = 64;
  /// Rotate Q per query tile (the rope.apply producing Q, fused into the
  /// query loops).
  bool fuseQuery = true;
  /// Rotate K per key tile inside the key loop (the rope.apply producing K).
  /// With several query tiles every key is rotated once per query tile; K
  /// is then better rotated whole once (see the cost rule in
  /// chooseAttentionTiling).
  bool fuseKey = true;
  /// Also tile the query heads of a GQA group (batch dims that K and V do
  /// not have) by 1. By default a tile holds a whole group, so one Q
  /// rotation tile computes cos/sin once per token for all its heads and
  /// one K/V tile serves all of them.
  bool tileGroups = false;
  /// When K's rotation is fused into the key loop and the queries are one
  /// tile (decode), keep K's head dims (batch dims of K that its rotation
  /// does not index positions by) whole in a tile, so the rotation of a key
  /// tile computes cos/sin once per key for every head, not once per head.
  /// Fewer parallel tiles: the choice for one thread on the CPU. Otherwise
  /// every batch dim of K is tiled by 1 (a parallel tile per head: threads,
  /// GPU rows).
  bool shareKeyRotation = false;
  /// The loops over batch dims and query tiles as one scf.forall (OpenMP
  /// threads in rope-to-llvm-cpu{num-threads=N}), else scf.for.
  bool parallelLoops = true;
  /// Peel the key loop's last, partial tile (rope-tile-attention, after the
  /// masked-tile skip): every other key tile then has the static extent
  /// `keyTileSize`, which the CPU register tiles need to pack K and V
  /// (a sequence length that is not a multiple of the key tile otherwise
  /// makes every tile dynamic).
  bool peelKeyTiles = false;
  /// When the queries are one tile (decode): the keys in at most this many
  /// blocks of whole key tiles, an scf.forall (OpenMP threads) each from
  /// the initial state, their states merged after it
  /// (OnlineAttentionOp::mergeKeyBlockStates); 0 or 1, or without
  /// `parallelLoops`: one key loop.
  int64_t keySplits = 0;
};

/// The loops made and the ops in them.
struct AttentionTilingResult {
  /// Outer to inner: the batch/query loops, then the key loop (scf.for,
  /// carrying the online softmax's acc/max/sum).
  SmallVector<LoopLikeOpInterface> loops;
  OnlineAttentionOp keyTile;
  /// The rotations fused into the loops (null when not fused).
  ApplyOp query, key;
};

/// Tiles `op` FlashAttention-style with upstream scf tiling through the
/// ops' TilingInterface: batch dims by 1 (GQA group dims whole unless
/// `tileGroups`) and queries by `queryTileSize` in the outer loops, where
/// the tile becomes an online-softmax accumulation (rope.online_attention)
/// normalized after an inner scf.for over key tiles. The rope.apply
/// producers of Q and K are fused into the loops with
/// scf::tileAndFuseProducerOfSlice as the options say.
FailureOr<AttentionTilingResult>
tileAndFuseAttention(RewriterBase &rewriter, AttentionOp op,
                     const AttentionTilingOptions &options);

/// The default cost rule: fuse K per key tile when the queries fit one tile
/// (decode: every key is rotated exactly once, and the rotated cache is
/// never written); with several query tiles (prefill) rotate K whole once.
/// `fuseKey` is "auto", "always" or "never". With one query tile the key
/// tile is `decodeKeyTileSize` keys when that is not 0: the key loop is then
/// the whole kernel, streaming K and V, and longer runs of each head's rows
/// per tile stream faster (docs/PERFORMANCE.md, "decode key tiles"); with
/// several query tiles a key tile's K and V are reused by every query tile
/// and are better kept small.
AttentionTilingOptions chooseAttentionTiling(AttentionOp op,
                                             int64_t queryTileSize,
                                             int64_t keyTileSize,
                                             StringRef fuseKey,
                                             int64_t decodeKeyTileSize = 0);

/// Skips key tiles of rope.online_attention inside an scf.for that are
/// masked for every query of the tile (causal or sliding-window positions;
/// a float mask that is −inf on the whole tile): the tile becomes an scf.if
/// yielding the loop's running state unchanged.
void populateSkipMaskedKeyTilesPatterns(RewritePatternSet &patterns);

/// Moves `tensor.expand_shape` of a rope.apply result above the rotation
/// (rope.apply on the expanded input) when the expansion does not split the
/// channel dim or a token dim: GQA views Q as [B, Hkv, G, S, D], and the
/// rotation must produce that view for its tiles to be fused. Likewise a
/// `tensor.collapse_shape` that merges only head dims, or a token dim with
/// unit head dims (K as [B·Hkv, S, D]).
void populateBubbleReshapesThroughRopePatterns(RewritePatternSet &patterns);

/// Folds a copy that permutes a rope.attention result (linalg.transpose, or
/// a linalg.generic that only moves elements), through the reshapes between
/// them, into the attention's output map: the attention writes the layout
/// the copy produced ([B, S, H, D] from [B, H, S, D]) and the reshapes
/// follow it. Where a reshape splits an attention dim, or the result has
/// another use, nothing changes.
void populateFoldAttentionOutputPermutationPatterns(
    RewritePatternSet &patterns);

/// Folds a linalg.generic that converts a rope.attention result to another
/// float type (arith.truncf or arith.extf, elementwise), through the
/// reshapes between them, into the attention's output type, where that type
/// is the attention's accumulator type (so the op's own conversion of
/// `acc / sum` rounds once, as the generic did). torch-mlir's bf16 P·V is a
/// contraction into f32 and such a truncf. Where the result has another
/// use, nothing changes.
void populateFoldAttentionOutputConversionPatterns(RewritePatternSet &patterns);

/// Checks the tile sizes (>= 0) and `fuseKey` (always, never, auto) that
/// rope-tile-attention and rope-fuse-into-scores take; an error on
/// `root` naming the option otherwise.
LogicalResult verifyAttentionTilingOptions(Operation *root,
                                           int64_t queryTileSize,
                                           int64_t keyTileSize,
                                           StringRef fuseKey,
                                           int64_t decodeKeyTileSize = 0);

/// Chooses the tiling of one rope.attention; std::nullopt leaves it alone.
using AttentionTilingControlFn =
    std::function<std::optional<AttentionTilingOptions>(AttentionOp)>;

/// Tiles every rope.attention under `root` as `control` says (after moving
/// expand_shape of rotations above them), then skips masked key tiles.
void tileAttention(Operation *root, const AttentionTilingControlFn &control);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_ATTENTION_TILEATTENTION_H
