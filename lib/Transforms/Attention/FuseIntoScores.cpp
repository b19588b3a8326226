//===- FuseIntoScores.cpp - The rope-fuse-into-scores pass ----------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Attention scores are a contraction of the rotated queries with the rotated
// keys. Rotating Q and K whole writes both to memory and reads them back;
// tiling the contraction and fusing the rotations into its loops rotates a
// tile right before it is used. The loop order matters: the query dim is
// tiled outside the key dim, so a query tile is rotated once and reused by
// every key tile, and each key tile is rotated inside the key loop (once per
// query tile: free in decode, where there is one query tile; a recomputation
// in prefill, hence the choice). Everything is upstream machinery: tiling
// through TilingInterface (scf::tileUsingSCF) and producer fusion through
// rope.apply's generateResultTileValue (scf::tileAndFuseProducerOfSlice).
// This is for scores that are not part of whole attention (which is raised
// to rope.attention by rope-raise-attention and tiled by rope-tile-attention,
// TileAttention.cpp).
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Attention/FuseIntoScores.h"
#include "FuseRotationTile.h"
#include "rope/Transforms/Attention/TileAttention.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "rope-fuse-into-attention"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Says why `op` is left alone: under -debug-only (LLVM builds with
/// assertions), and as a remark when asked (Debian's LLVM has no
/// -debug-only).
LogicalResult skip(Operation *op, const Twine &reason, bool remark) {
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not fusing " << op->getName()
                          << " at " << op->getLoc() << ": " << reason << "\n");
  if (remark)
    op->emitRemark("not fused into attention: ") << reason;
  return failure();
}

/// The loop dim of `map`'s result `index`, if it is a plain dim.
std::optional<unsigned> loopDimOf(AffineMap map, unsigned index) {
  if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(index)))
    return dim.getPosition();
  return std::nullopt;
}

/// The rotation producing `operand` if it can be fused: a rope.apply whose
/// channel dim is the contraction's reduction dim, and whose only user is
/// the contraction (another user would keep the whole rotation alive, and
/// fusing would only add work).
ApplyOp fusableRope(linalg::LinalgOp op, OpOperand *operand, unsigned kDim,
                    StringRef side, bool remarks) {
  auto rope = operand->get().getDefiningOp<ApplyOp>();
  if (!rope)
    return {};
  if (!rope.isPlainRotation()) {
    (void)skip(op, side + " rotation: fused with a QK-norm or quantization",
               remarks);
    return {};
  }
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (loopDimOf(map, map.getNumResults() - 1) != kDim) {
    (void)skip(op, side + " rotation: its channel dim is not the reduction",
               remarks);
    return {};
  }
  if (!rope->hasOneUse()) {
    (void)skip(op,
               side + " rotation has other users; fusing would "
                      "recompute it next to the whole one",
               remarks);
    return {};
  }
  return rope;
}

/// The contraction dim (in `dims`) that the rotation's sequence dim maps to
/// through `map`; otherwise the last of `dims`.
std::optional<unsigned> sequenceDim(ApplyOp rope, AffineMap map,
                                    ArrayRef<unsigned> dims) {
  if (!rope)
    return dims.back();
  std::optional<unsigned> dim =
      loopDimOf(map, rope.getTokenDimsOrDefault().back());
  if (dim && llvm::is_contained(dims, *dim))
    return dim;
  return std::nullopt;
}

/// The tile size for `size` (a static extent, or dynamic): 0 means whole.
/// A tile no smaller than a static extent is the extent (static tiles).
int64_t clampTile(int64_t tile, int64_t size) {
  if (ShapedType::isDynamic(size))
    return tile;
  if (tile == 0 || tile >= size)
    return size;
  return tile;
}

/// Moves what `loop` does not change out of it (upstream's
/// moveLoopInvariantCode, but through `rewriter`, so that a pattern driver
/// sees the moves).
void hoistLoopInvariants(RewriterBase &rewriter, LoopLikeOpInterface loop) {
  moveLoopInvariantCode(
      loop.getLoopRegions(),
      [&](Value value, Region *) { return loop.isDefinedOutsideOfLoop(value); },
      [&](Operation *op, Region *) {
        return isMemoryEffectFree(op) && isSpeculatable(op);
      },
      [&](Operation *op, Region *) { rewriter.moveOpBefore(op, loop); });
}

/// Tiles `op` into loops of `type` (sizes and loop order given) and
/// replaces it by the tiled loop nest's results.
FailureOr<scf::SCFTilingResult>
tileWithLoops(RewriterBase &rewriter, linalg::LinalgOp op,
              ArrayRef<OpFoldResult> tileSizes, ArrayRef<int64_t> interchange,
              scf::SCFTilingOptions::LoopType type) {
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(tileSizes).setInterchange(interchange).setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), tiling);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// The loops over query tiles (and batch dims): one scf.forall (OpenMP
/// threads in the CPU pipeline) or a nest of scf.for.
scf::SCFTilingOptions::LoopType
queryLoopType(const RopeAttentionFusionOptions &options) {
  return options.parallelLoops ? scf::SCFTilingOptions::LoopType::ForallOp
                               : scf::SCFTilingOptions::LoopType::ForOp;
}

} // namespace

FailureOr<RopeAttentionContraction>
mlir::rope::matchRopeAttention(linalg::LinalgOp op, bool remarks) {
  if (llvm::none_of(op.getDpsInputs(),
                    [](Value v) { return v.getDefiningOp<ApplyOp>(); }))
    return skip(op, "no input is produced by rope.apply", false);
  if (!op.hasPureTensorSemantics())
    return skip(op, "not on tensors", remarks);
  if (!linalg::isaContractionOpInterface(op))
    return skip(op,
                "not a contraction (two inputs, projected-permutation "
                "maps, a multiply-add body)",
                remarks);
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return skip(op, "contraction dims cannot be inferred", remarks);
  if (dims->k.size() != 1)
    return skip(op, "needs exactly one reduction dim (the channels)", remarks);
  if (dims->m.empty() || dims->n.empty())
    return skip(op, "needs query (m) and key (n) dims", remarks);

  RopeAttentionContraction match;
  match.contraction = op;
  match.remarks = remarks;
  unsigned kDim = dims->k.front();
  OpOperand *q = op.getDpsInputOperand(0), *k = op.getDpsInputOperand(1);
  bool qIsRope = q->get().getDefiningOp<ApplyOp>() != nullptr;
  bool kIsRope = k->get().getDefiningOp<ApplyOp>() != nullptr;
  if (!qIsRope && !kIsRope)
    return skip(op, "no operand is produced by rope.apply", remarks);
  match.query = fusableRope(op, q, kDim, "query", remarks);
  match.key = fusableRope(op, k, kDim, "key", remarks);
  if (!match.query && !match.key)
    return failure();

  std::optional<unsigned> queryDim =
      sequenceDim(match.query, op.getMatchingIndexingMap(q), dims->m);
  std::optional<unsigned> keyDim =
      sequenceDim(match.key, op.getMatchingIndexingMap(k), dims->n);
  if (!queryDim)
    return skip(op,
                "the query rotation's sequence dim is not a query (m) "
                "dim of the contraction",
                remarks);
  if (!keyDim)
    return skip(op,
                "the key rotation's sequence dim is not a key (n) dim "
                "of the contraction",
                remarks);
  match.queryDim = *queryDim;
  match.keyDim = *keyDim;
  match.batchDims.assign(dims->batch.begin(), dims->batch.end());
  return match;
}

FailureOr<RopeAttentionFusionResult>
mlir::rope::fuseRopeIntoAttention(RewriterBase &rewriter,
                                  const RopeAttentionContraction &match,
                                  const RopeAttentionFusionOptions &options) {
  linalg::LinalgOp op = match.contraction;
  if (!(match.query && options.fuseQuery) && !(match.key && options.fuseKey))
    return skip(op, "nothing to fuse with these options", match.remarks);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = ranges.size();

  // Loops: batch dims by 1, then the query dim, then the key dim; every
  // other dim (the channels, a GQA group) whole.
  SmallVector<OpFoldResult> tileSizes(numLoops, rewriter.getIndexAttr(0));
  SmallVector<int64_t> interchange;
  // A batch dim is a token dim if a rotation to fuse says so; the others
  // (heads) share the token's cos/sin inside one rope.apply tile.
  auto isTokenDim = [&](unsigned loopDim) {
    for (auto [input, rope, fused] :
         {std::tuple(0u, match.query, options.fuseQuery),
          std::tuple(1u, match.key, options.fuseKey)}) {
      if (!rope || !fused)
        continue;
      AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
      for (int64_t t : rope.getTokenDimsOrDefault())
        if (loopDimOf(map, t) == loopDim)
          return true;
    }
    return false;
  };
  for (unsigned d : match.batchDims) {
    if (!options.tileHeads && !isTokenDim(d))
      continue;
    tileSizes[d] = rewriter.getIndexAttr(1);
    interchange.push_back(d);
  }
  tileSizes[match.queryDim] = rewriter.getIndexAttr(
      clampTile(options.queryTileSize, ranges[match.queryDim]));
  OpFoldResult keyTile = rewriter.getIndexAttr(
      clampTile(options.keyTileSize, ranges[match.keyDim]));
  interchange.push_back(match.queryDim);
  for (unsigned d = 0; d < numLoops; ++d)
    if (!llvm::is_contained(interchange, d))
      interchange.push_back(d);
  // Every loop must exist for the loop structure below (the query loop, the
  // key loop).
  if (isConstantIntValue(tileSizes[match.queryDim], 0) ||
      isConstantIntValue(keyTile, 0))
    return skip(op, "a dynamic query or key dim needs a nonzero tile size",
                match.remarks);

  // Two tilings: the query-tile loops (which may be parallel), then a key
  // loop inside (one scf.forall cannot leave Q's rotation outside it).
  FailureOr<scf::SCFTilingResult> tiled = tileWithLoops(
      rewriter, op, tileSizes, interchange, queryLoopType(options));
  if (failed(tiled))
    return skip(op, "tiling failed", match.remarks);
  RopeAttentionFusionResult result;
  result.loops = tiled->loops;
  result.tiledContraction = tiled->tiledOps.back();
  size_t numQueryLoops = result.loops.size();
  SmallVector<OpFoldResult> keyTileSizes(numLoops, rewriter.getIndexAttr(0));
  keyTileSizes[match.keyDim] = keyTile;
  // Decode: when the query-tile loops run once (static extents within
  // their tiles) the key tiles are the only parallelism there is, and
  // independent for scores: make the key loop the scf.forall.
  bool singleQueryTile = llvm::all_of(interchange, [&](int64_t d) {
    std::optional<int64_t> tile = getConstantIntValue(tileSizes[d]);
    return !tile || *tile == 0 ||
           (!ShapedType::isDynamic(ranges[d]) && ranges[d] <= *tile);
  });
  tiled =
      tileWithLoops(rewriter, cast<linalg::LinalgOp>(result.tiledContraction),
                    keyTileSizes, {},
                    singleQueryTile ? queryLoopType(options)
                                    : scf::SCFTilingOptions::LoopType::ForOp);
  // The key tiling is not expected to fail (the op was just tiled); if it
  // does, the rotations go into the query-tile loops only.
  if (succeeded(tiled)) {
    result.loops.append(tiled->loops);
    result.tiledContraction = tiled->tiledOps.back();
    // K's key tile is a slice of its query-tile slice.
    for (OpOperand *input :
         cast<linalg::LinalgOp>(result.tiledContraction).getDpsInputOperands())
      mergeSliceOfSlice(rewriter, *input);
    // Whatever the key loop does not change goes to the query loop.
    hoistLoopInvariants(rewriter, result.loops.back());
  }
  MutableArrayRef<LoopLikeOpInterface> loops(result.loops);

  auto fuse = [&](unsigned input, ApplyOp rope,
                  MutableArrayRef<LoopLikeOpInterface> within) -> ApplyOp {
    return fuseRotationTile(rewriter, result.tiledContraction, input, rope,
                            within);
  };
  if (match.query && options.fuseQuery) {
    result.query = fuse(0, match.query, loops.take_front(numQueryLoops));
    if (!result.query)
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": query rotation not fused\n");
  }
  if (match.key && options.fuseKey) {
    result.key = fuse(1, match.key, loops);
    if (!result.key)
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": key rotation not fused\n");
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The pattern and rope-fuse-into-scores
//===----------------------------------------------------------------------===//

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFUSEINTOSCORESPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

namespace {
/// Rewrites one Q·Kᵀ contraction fed by rope.apply as the control function
/// says (scores that are not part of whole attention: that is raised to
/// rope.attention and tiled before this pattern runs).
///
/// The tiled contraction is again a contraction fed by rope.apply (the tile
/// rotations), so it would match again, and again. Nothing in the IR tells
/// a tile made here from a contraction someone wrote inside a loop (chunked
/// attention is legitimately tiled further), and partial tiles have dynamic
/// extents, so "already fits one tile" cannot say it either: the tile is
/// marked with a discardable attribute instead, which the pattern skips.
struct FuseRopeIntoAttentionPattern
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  FuseRopeIntoAttentionPattern(MLIRContext *ctx,
                               RopeAttentionFusionControlFn control,
                               bool remarks)
      : OpInterfaceRewritePattern(ctx), control(std::move(control)),
        remarks(remarks) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kRopeAttentionTileAttrName))
      return rewriter.notifyMatchFailure(op, "a tile of a fused contraction");
    FailureOr<RopeAttentionContraction> match = matchRopeAttention(op, remarks);
    if (failed(match))
      return failure();
    std::optional<RopeAttentionFusionOptions> options = control(*match);
    if (!options)
      return skip(op, "declined by the control function", remarks);
    FailureOr<RopeAttentionFusionResult> result =
        fuseRopeIntoAttention(rewriter, *match, *options);
    if (failed(result))
      return failure();
    rewriter.modifyOpInPlace(result->tiledContraction, [&] {
      result->tiledContraction->setAttr(kRopeAttentionTileAttrName,
                                        rewriter.getUnitAttr());
    });
    return success();
  }

private:
  RopeAttentionFusionControlFn control;
  bool remarks;
};
} // namespace

void mlir::rope::populateRopeFuseIntoAttentionPatterns(
    RewritePatternSet &patterns, RopeAttentionFusionControlFn control,
    bool remarks) {
  patterns.add<FuseRopeIntoAttentionPattern>(patterns.getContext(),
                                             std::move(control), remarks);
}

void mlir::rope::removeRopeAttentionTileMarkers(Operation *root) {
  root->walk([](Operation *op) { op->removeAttr(kRopeAttentionTileAttrName); });
}

void mlir::rope::fuseRopeIntoAttention(
    Operation *root, const RopeAttentionFusionControlFn &control,
    bool remarks) {
  RewritePatternSet patterns(root->getContext());
  populateRopeFuseIntoAttentionPatterns(patterns, control, remarks);
  SmallVector<Operation *> contractions;
  root->walk([&](linalg::LinalgOp op) {
    if (llvm::any_of(op.getDpsInputs(),
                     [](Value v) { return v.getDefiningOp<ApplyOp>(); }))
      contractions.push_back(op);
  });
  // Each contraction once, as a walk would: the tiles are never candidates
  // (ExistingOps), a remark is said once, and the rest of the IR is not
  // folded; the markers are then not needed.
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  (void)applyOpPatternsGreedily(contractions, std::move(patterns), config);
  removeRopeAttentionTileMarkers(root);
}

namespace {
struct RopeFuseIntoScoresPass
    : rope::impl::RopeFuseIntoScoresPassBase<RopeFuseIntoScoresPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyAttentionTilingOptions(getOperation(), queryTileSize,
                                            keyTileSize, fuseKey)))
      return signalPassFailure();
    fuseRopeIntoAttention(
        getOperation(),
        [&](const RopeAttentionContraction &match)
            -> std::optional<RopeAttentionFusionOptions> {
          RopeAttentionFusionOptions options;
          options.queryTileSize = queryTileSize;
          options.keyTileSize = keyTileSize;
          options.fuseKey = fuseKey == "always";
          options.tileHeads = tileHeads;
          options.parallelLoops = parallelLoops;
          if (fuseKey == "auto") {
            // One query tile rotates every key once: fusing K only saves
            // the rotated keys' round trip through memory.
            linalg::LinalgOp op = match.contraction;
            int64_t queries = op.getStaticLoopRanges()[match.queryDim];
            options.fuseKey = !ShapedType::isDynamic(queries) &&
                              (queryTileSize == 0 || queries <= queryTileSize);
          }
          return options;
        },
        remarks);
  }
};
} // namespace
