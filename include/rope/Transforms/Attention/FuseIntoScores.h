//===- FuseIntoScores.h - Fuse rope.apply into Q·Kᵀ tiles -------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_ATTENTION_FUSEINTOSCORES_H
#define ROPE_TRANSFORMS_ATTENTION_FUSEINTOSCORES_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <functional>
#include <optional>

namespace mlir::rope {

/// An attention-score contraction (Q·Kᵀ) with at least one operand produced
/// by `rope.apply`. Input 0 is the query side (its parallel dims are the
/// contraction's `m` dims), input 1 the key side (`n` dims).
struct RopeAttentionContraction {
  linalg::LinalgOp contraction;
  /// Loop dims shared by Q, K and the scores (batch, kv heads): the token
  /// ones (batch) are tiled by 1, the others (heads) by 1 only with
  /// RopeAttentionFusionOptions::tileHeads.
  SmallVector<unsigned> batchDims;
  /// The query and key sequence dims (loop dims of the contraction).
  unsigned queryDim = 0, keyDim = 0;
  /// The rotations producing Q and K (null when not a rope.apply, or when
  /// it has other users and fusing would recompute it).
  ApplyOp query, key;
  /// Say why as remarks when not fusing.
  bool remarks = false;
};

/// How to tile and fuse one contraction.
struct RopeAttentionFusionOptions {
  /// Tile sizes of the query and key dims (0: the whole dim).
  int64_t queryTileSize = 32;
  int64_t keyTileSize = 64;
  /// Rotate Q per query tile, outside the key loop.
  bool fuseQuery = true;
  /// Rotate K per key tile, inside the key loop (once per query tile).
  bool fuseKey = true;
  /// Also tile the batch dims that are not token dims of the rotations
  /// (heads) by 1: smaller tiles, but cos/sin is then computed per head
  /// instead of once per token for all heads.
  bool tileHeads = false;
  /// Make the loops over batch dims and query tiles one scf.forall (which
  /// rope-to-llvm-cpu runs on OpenMP threads with num-threads != 1); the
  /// key loop stays an scf.for (it carries the online softmax).
  bool parallelLoops = true;
};

/// The tiled loops and the rotations fused into them.
struct RopeAttentionFusionResult {
  /// Outer to inner: the loops over batch dims and query tiles (one
  /// scf.forall with parallelLoops, else one scf.for each), then the key
  /// loop (scf.for).
  SmallVector<LoopLikeOpInterface> loops;
  Operation *tiledContraction = nullptr;
  /// The tile rotations (null when not fused).
  ApplyOp query, key;
};

/// Chooses tiles and what to fuse for a matched contraction; std::nullopt
/// leaves it alone.
using RopeAttentionFusionControlFn =
    std::function<std::optional<RopeAttentionFusionOptions>(
        const RopeAttentionContraction &)>;

/// Matches `op` as an attention-score contraction fed by rope.apply; on
/// failure says why under -debug-only=rope-fuse-into-attention, and as a
/// remark on `op` when `remarks` is set.
FailureOr<RopeAttentionContraction> matchRopeAttention(linalg::LinalgOp op,
                                                       bool remarks = false);

/// Tiles `match.contraction` with scf::tileUsingSCF, batch dims by 1 and the
/// query dim (loops as `options.parallelLoops` says), then the key dim inside
/// (scf.for), and fuses the rotations into the loops with
/// scf::tileAndFuseProducerOfSlice: Q's into the query loop, K's into the key
/// loop.
FailureOr<RopeAttentionFusionResult>
fuseRopeIntoAttention(RewriterBase &rewriter,
                      const RopeAttentionContraction &match,
                      const RopeAttentionFusionOptions &options);

/// The discardable unit attribute the patterns put on each contraction they
/// tile (the Q·Kᵀ tile in the loops). A tile is itself a contraction fed by
/// rope.apply, so without it a greedy driver would tile the tiles again,
/// forever; the patterns skip contractions carrying it.
inline constexpr llvm::StringLiteral kRopeAttentionTileAttrName =
    "rope.attention_tile";

/// Adds a pattern that matches a Q·Kᵀ contraction fed by rope.apply
/// (matchRopeAttention), asks `control` for its options and rewrites it with
/// fuseRopeIntoAttention. (Whole attention is not its business: it is raised
/// to rope.attention and tiled before, TileAttention.h.) The tiled
/// contraction carries kRopeAttentionTileAttrName; drop it afterwards with
/// removeRopeAttentionTileMarkers. `remarks`: say why a contraction is left
/// alone (a driver that revisits ops says it again).
void populateRopeFuseIntoAttentionPatterns(RewritePatternSet &patterns,
                                           RopeAttentionFusionControlFn control,
                                           bool remarks = false);

/// Removes kRopeAttentionTileAttrName from every op under `root`.
void removeRopeAttentionTileMarkers(Operation *root);

/// Applies the patterns of populateRopeFuseIntoAttentionPatterns once to
/// every contraction under `root` fed by rope.apply (not to the tiles it
/// creates), without folding the rest of the IR, then removes the markers.
void fuseRopeIntoAttention(Operation *root,
                           const RopeAttentionFusionControlFn &control,
                           bool remarks = false);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_ATTENTION_FUSEINTOSCORES_H
