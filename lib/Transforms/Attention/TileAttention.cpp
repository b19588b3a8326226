//===- TileAttention.cpp - The rope-tile-attention pass -------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// rope.attention becomes the loop nest of FlashAttention-2 through upstream
// scf tiling and the attention ops' TilingInterface, with nothing written
// here but the choice of tiles:
//   1. the op is tiled over its batch dims (by 1; a GQA group stays whole)
//      and its queries with scf::tileUsingSCF (one scf.forall);
//   2. the rope.apply producing Q is fused into that loop
//      (scf::tileAndFuseProducerOfSlice): Q is rotated once per query tile;
//   3. the tile is decomposed one step (AggregatedOpInterface): a
//      rope.online_attention accumulating from (0, −inf, 0), then the
//      normalization acc / sum;
//   4. the online step is tiled along the keys (scf.for: its destinations
//      accumulate, so upstream's reduction tiling threads them through
//      iter_args); in decode with keySplits, first into blocks of key
//      tiles, an scf.forall whose blocks start from (0, −inf, 0) and whose
//      states OnlineAttentionOp::mergeKeyBlockStates merges (split-K);
//   5. the rope.apply producing K is fused into the key loop when the cost
//      rule says so (decode: every key rotated once, the rotated cache never
//      written).
// What is left inside is one rope.online_attention per key tile, which the
// CPU and GPU pipelines decompose into linalg.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Attention/TileAttention.h"
#include "FuseRotationTile.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// The tile size for `size` (a static extent, or dynamic); 0: no loop.
/// A tile no smaller than a static extent is the extent: one iteration with
/// static shapes (canonicalization drops the loop), so that the rotations
/// are fused in the same places whatever the sizes.
int64_t clampTile(int64_t tile, int64_t size) {
  if (ShapedType::isDynamic(size) || tile == 0)
    return tile;
  return std::min(tile, size);
}

/// The static extent of every loop of `op` (dynamic where no operand says).
template <typename OpTy> SmallVector<int64_t> staticLoopRanges(OpTy op) {
  SmallVector<int64_t> ranges(op.getNumLoops(), ShapedType::kDynamic);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> operands = {op.getQuery(), op.getKey(), op.getValue()};
  for (auto [map, value] : llvm::zip(ArrayRef(maps).take_front(3), operands)) {
    auto type = cast<RankedTensorType>(value.getType());
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      if (!type.isDynamicDim(r))
        ranges[map.getDimPosition(r)] = type.getDimSize(r);
  }
  return ranges;
}

/// The rotation producing `value`, if fusing it would not recompute it for
/// another user.
ApplyOp rotationOf(Value value) {
  auto rope = value.getDefiningOp<ApplyOp>();
  if (!rope || !rope->hasOneUse())
    return {};
  return rope;
}

/// The rope.online_attention that `decomposed` (the values of
/// AttentionOp::decomposeOperation) normalizes.
OnlineAttentionOp onlineStepOf(ValueRange decomposed) {
  SmallVector<Operation *> worklist;
  for (Value v : decomposed)
    if (Operation *def = v.getDefiningOp())
      worklist.push_back(def);
  // The normalization (and any cast after it) reads the online step's
  // results: a short walk up the producers finds it.
  for (unsigned i = 0; i < worklist.size() && i < 16; ++i) {
    if (auto online = dyn_cast<OnlineAttentionOp>(worklist[i]))
      return online;
    for (Value operand : worklist[i]->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  return {};
}

/// Whether the queries of `op` fit in one query tile of `queryTileSize` (0:
/// untiled): a decode step, whose key loop is then the whole kernel.
bool queriesAreOneTile(AttentionOp op, int64_t queryTileSize) {
  int64_t queries = staticLoopRanges(op)[op.getDims().m];
  return !ShapedType::isDynamic(queries) &&
         (queryTileSize == 0 || queries <= queryTileSize);
}

/// Splits the keys of `online` (started from (0, −inf, 0)) into blocks of
/// whole key tiles, at most `splits` of them, as an scf.forall over the
/// blocks: each block's own rope.online_attention from (0, −inf, 0) writes
/// its state into a slot of stacked partial states, which
/// mergeKeyBlockStates merges after the loop. The block's op, or failure
/// (leaving `online` as it is) where the keys are dynamic, the state is not
/// the initial one (sinks) or the keys make one block.
FailureOr<OnlineAttentionOp> splitKeyBlocks(RewriterBase &rewriter,
                                            OnlineAttentionOp online,
                                            int64_t splits, int64_t keyTile,
                                            AttentionTilingResult &result) {
  AttentionDims dims = online.getDims();
  int64_t keys = staticLoopRanges(online)[dims.k2];
  if (ShapedType::isDynamic(keys) || !online.startsFromInitialState())
    return failure();
  // Whole key tiles per block, so the blocks' key loops keep static tiles.
  int64_t tile = std::max<int64_t>(1, keyTile);
  int64_t block = llvm::alignTo(llvm::divideCeil(keys, splits), tile);
  int64_t blocks = llvm::divideCeil(keys, block);
  if (blocks < 2)
    return failure();
  Location loc = online.getLoc();
  rewriter.setInsertionPoint(online);
  SmallVector<Value> stacked;
  for (Value state : online.getDpsInits()) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, state);
    sizes.insert(sizes.begin(), rewriter.getIndexAttr(blocks));
    stacked.push_back(tensor::EmptyOp::create(
        rewriter, loc, sizes, getElementTypeOrSelf(state.getType())));
  }
  SmallVector<Range> domain = online.getIterationDomain(rewriter);
  OnlineAttentionOp blockOp;
  // The body is built once the loop is in the IR (the affine folds below
  // look at the induction variable's owner).
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(blocks)},
      stacked, std::nullopt);
  auto buildBody = [&](OpBuilder &b, Location loc, ValueRange args,
                       scf::InParallelOp terminator) {
    Value index = args[0];
    AffineExpr s0 = b.getAffineSymbolExpr(0);
    SmallVector<OpFoldResult> offsets(domain.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        llvm::map_to_vector(domain, [](Range r) { return r.size; });
    offsets[dims.k2] = affine::makeComposedFoldedAffineApply(
        b, loc, s0 * block, {OpFoldResult(index)});
    // The last block may be partial.
    sizes[dims.k2] =
        keys % block == 0
            ? OpFoldResult(b.getIndexAttr(block))
            : affine::makeComposedFoldedAffineMin(
                  b, loc,
                  AffineMap::get(0, 1,
                                 {b.getAffineConstantExpr(block),
                                  b.getAffineConstantExpr(keys) - s0 * block},
                                 b.getContext()),
                  {OpFoldResult(index)});
    FailureOr<TilingResult> tiled =
        online.getTiledImplementation(b, offsets, sizes);
    if (failed(tiled))
      return;
    blockOp = cast<OnlineAttentionOp>(tiled->tiledOps.back());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(terminator.getBody());
    for (auto [value, slot] :
         llvm::zip(tiled->tiledValues, args.drop_front())) {
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<OpFoldResult> at(type.getRank() + 1, b.getIndexAttr(0));
      at[0] = index;
      SmallVector<OpFoldResult> extents = tensor::getMixedSizes(b, loc, value);
      extents.insert(extents.begin(), b.getIndexAttr(1));
      SmallVector<OpFoldResult> unit(type.getRank() + 1, b.getIndexAttr(1));
      tensor::ParallelInsertSliceOp::create(b, loc, value, slot, at, extents,
                                            unit);
    }
  };
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    buildBody(rewriter, loc, forall.getBody()->getArguments(),
              forall.getTerminator());
  }
  if (!blockOp) {
    rewriter.eraseOp(forall);
    return failure();
  }
  rewriter.setInsertionPointAfter(forall);
  FailureOr<SmallVector<Value>> merged =
      online.mergeKeyBlockStates(rewriter, loc, forall.getResults());
  if (failed(merged)) {
    rewriter.eraseOp(forall);
    return failure();
  }
  rewriter.replaceOp(online, *merged);
  result.loops.push_back(cast<LoopLikeOpInterface>(forall.getOperation()));
  return blockOp;
}

} // namespace

AttentionTilingOptions
mlir::rope::chooseAttentionTiling(AttentionOp op, int64_t queryTileSize,
                                  int64_t keyTileSize, StringRef fuseKey,
                                  int64_t decodeKeyTileSize) {
  AttentionTilingOptions options;
  options.queryTileSize = queryTileSize;
  options.keyTileSize = keyTileSize;
  bool oneQueryTile = queriesAreOneTile(op, queryTileSize);
  if (oneQueryTile && decodeKeyTileSize > 0)
    options.keyTileSize = decodeKeyTileSize;
  if (fuseKey == "always") {
    options.fuseKey = true;
  } else if (fuseKey == "never") {
    options.fuseKey = false;
  } else {
    // One query tile rotates every key once: fusing K then only saves the
    // rotated keys' round trip through memory. With n query tiles it would
    // rotate every key n times (slower prefill on the CPU pipeline,
    // docs/PERFORMANCE.md).
    options.fuseKey = oneQueryTile;
  }
  return options;
}

FailureOr<AttentionTilingResult>
mlir::rope::tileAndFuseAttention(RewriterBase &rewriter, AttentionOp op,
                                 const AttentionTilingOptions &options) {
  AttentionDims dims = op.getDims();
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  ApplyOp queryRope = options.fuseQuery ? rotationOf(op.getQuery()) : ApplyOp();
  ApplyOp keyRope = options.fuseKey ? rotationOf(op.getKey()) : ApplyOp();
  AffineMap keyMap = op.getKeyMap();
  AttentionTilingResult result;

  // 1. Batch dims and queries: the outer (parallel) loops. K's head dims
  // may stay whole under a fused K rotation when the queries are one tile,
  // so each key is rotated once (AttentionTilingOptions::shareKeyRotation).
  bool oneQueryTile = queriesAreOneTile(op, options.queryTileSize);
  SmallVector<int64_t> keyTokenDims;
  if (keyRope)
    keyTokenDims = keyRope.getTokenDimsOrDefault();
  auto isRotationHead = [&](unsigned d) {
    std::optional<unsigned> keyDim =
        keyMap.getResultPosition(getAffineDimExpr(d, op.getContext()));
    return keyRope && oneQueryTile && options.shareKeyRotation && keyDim &&
           !llvm::is_contained(keyTokenDims, *keyDim);
  };
  SmallVector<OpFoldResult> outerSizes(dims.numLoops, rewriter.getIndexAttr(0));
  bool outerLoops = false;
  for (unsigned d : dims.batch) {
    bool inKeys = keyMap.isFunctionOfDim(d);
    if (inKeys && isRotationHead(d))
      continue;
    if (inKeys || options.tileGroups) {
      outerSizes[d] = rewriter.getIndexAttr(1);
      outerLoops = true;
    }
  }
  if (int64_t tile = clampTile(options.queryTileSize, ranges[dims.m])) {
    outerSizes[dims.m] = rewriter.getIndexAttr(tile);
    outerLoops = true;
  }
  AttentionOp tile = op;
  if (outerLoops) {
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(outerSizes)
        .setLoopType(options.parallelLoops
                         ? scf::SCFTilingOptions::LoopType::ForallOp
                         : scf::SCFTilingOptions::LoopType::ForOp);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), tiling);
    if (failed(tiled))
      return rewriter.notifyMatchFailure(op, "tiling the queries failed");
    rewriter.replaceOp(op, tiled->replacements);
    tile = cast<AttentionOp>(tiled->tiledOps.back());
    result.loops = tiled->loops;
  }

  // 2. Q rotated per query tile.
  if (queryRope)
    result.query = fuseRotationTile(rewriter, tile, 0, queryRope, result.loops);

  // 3. The tile as one online-softmax step and its normalization.
  rewriter.setInsertionPoint(tile);
  FailureOr<SmallVector<Value>> decomposed =
      cast<linalg::AggregatedOpInterface>(tile.getOperation())
          .decomposeOperation(rewriter);
  if (failed(decomposed))
    return rewriter.notifyMatchFailure(tile, "no online-softmax form");
  rewriter.replaceOp(tile, *decomposed);
  OnlineAttentionOp online = onlineStepOf(*decomposed);
  if (!online)
    return rewriter.notifyMatchFailure(op, "no online step in the tile");

  // 4. Keys: an scf.for carrying acc, max and sum; in decode, first split
  // into blocks computed in parallel (keySplits; only where loops may be
  // parallel).
  if (oneQueryTile && options.keySplits > 1 && options.parallelLoops) {
    FailureOr<OnlineAttentionOp> block =
        splitKeyBlocks(rewriter, online, options.keySplits,
                       clampTile(options.keyTileSize, ranges[dims.k2]), result);
    if (succeeded(block)) {
      online = *block;
      ranges = staticLoopRanges(online);
    }
  }
  result.keyTile = online;
  if (clampTile(options.keyTileSize, ranges[dims.k2])) {
    SmallVector<OpFoldResult> keySizes(dims.numLoops, rewriter.getIndexAttr(0));
    keySizes[dims.k2] = rewriter.getIndexAttr(options.keyTileSize);
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(keySizes).setLoopType(
        scf::SCFTilingOptions::LoopType::ForOp);
    rewriter.setInsertionPoint(online);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(online.getOperation()), tiling);
    if (failed(tiled))
      return rewriter.notifyMatchFailure(online, "tiling the keys failed");
    rewriter.replaceOp(online, tiled->replacements);
    result.keyTile = cast<OnlineAttentionOp>(tiled->tiledOps.back());
    llvm::append_range(result.loops, tiled->loops);
  }

  // 5. K rotated per key tile.
  if (keyRope)
    result.key =
        fuseRotationTile(rewriter, result.keyTile, 1, keyRope, result.loops);
  return result;
}

//===----------------------------------------------------------------------===//
// rope-tile-attention
//===----------------------------------------------------------------------===//

void mlir::rope::tileAttention(Operation *root,
                               const AttentionTilingControlFn &control) {
  MLIRContext *ctx = root->getContext();
  {
    RewritePatternSet patterns(ctx);
    populateBubbleReshapesThroughRopePatterns(patterns);
    populateFoldAttentionOutputConversionPatterns(patterns);
    populateFoldAttentionOutputPermutationPatterns(patterns);
    (void)applyPatternsGreedily(root, std::move(patterns));
  }
  SmallVector<AttentionOp> ops;
  root->walk([&](AttentionOp op) { ops.push_back(op); });
  IRRewriter rewriter(ctx);
  SmallVector<Operation *> keyTiles;
  SmallVector<scf::ForOp> loopsToPeel;
  for (AttentionOp op : ops) {
    std::optional<AttentionTilingOptions> options = control(op);
    if (!options)
      continue;
    FailureOr<AttentionTilingResult> tiled =
        tileAndFuseAttention(rewriter, op, *options);
    if (failed(tiled))
      continue;
    keyTiles.push_back(tiled->keyTile);
    if (options->peelKeyTiles)
      if (auto keyLoop = tiled->keyTile->getParentOfType<scf::ForOp>())
        loopsToPeel.push_back(keyLoop);
  }
  RewritePatternSet patterns(ctx);
  populateSkipMaskedKeyTilesPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  (void)applyOpPatternsGreedily(keyTiles, std::move(patterns), config);
  // What the key loops do not change (the tile's query positions and the
  // masked-tile test's reductions of them) is computed once per query tile.
  // Only the key loops: hoisting the accumulators' fills out of the query
  // loops would make bufferization copy them per query tile.
  llvm::SetVector<Operation *> keyLoops;
  root->walk([&](OnlineAttentionOp op) {
    if (auto loop = op->getParentOfType<scf::ForOp>())
      keyLoops.insert(loop);
  });
  for (Operation *loop : keyLoops)
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop));
  // The last, partial key tile as its own copy of the loop body: in the
  // main loop the tile's affine.min folds to the tile size. Fails, leaving
  // the loop as it is, where no tile is partial.
  for (scf::ForOp loop : loopsToPeel) {
    rewriter.setInsertionPoint(loop);
    scf::ForOp partialIteration;
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partialIteration);
  }
}

LogicalResult
mlir::rope::verifyAttentionTilingOptions(Operation *root, int64_t queryTileSize,
                                         int64_t keyTileSize, StringRef fuseKey,
                                         int64_t decodeKeyTileSize) {
  if (fuseKey != "auto" && fuseKey != "always" && fuseKey != "never")
    return emitError(root->getLoc())
           << "fuse-key must be always, never or auto, got '" << fuseKey << "'";
  if (queryTileSize < 0 || keyTileSize < 0)
    return emitError(root->getLoc())
           << "query-tile-size and key-tile-size must be >= 0, got "
           << queryTileSize << " and " << keyTileSize;
  if (decodeKeyTileSize < 0)
    return emitError(root->getLoc())
           << "decode-key-tile-size must be >= 0, got " << decodeKeyTileSize;
  return success();
}

namespace mlir::rope {
#define GEN_PASS_DEF_ROPETILEATTENTIONPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

namespace {
struct RopeTileAttentionPass
    : rope::impl::RopeTileAttentionPassBase<RopeTileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyAttentionTilingOptions(getOperation(), queryTileSize,
                                            keyTileSize, fuseKey,
                                            decodeKeyTileSize)))
      return signalPassFailure();
    if (decodeKeySplits < 0) {
      emitError(getOperation()->getLoc())
          << "decode-key-splits must be >= 0, got "
          << static_cast<int64_t>(decodeKeySplits);
      return signalPassFailure();
    }
    tileAttention(getOperation(), [&](AttentionOp op) {
      AttentionTilingOptions options = chooseAttentionTiling(
          op, queryTileSize, keyTileSize, fuseKey, decodeKeyTileSize);
      options.fuseQuery = options.fuseQuery && fuseRotations;
      options.fuseKey = options.fuseKey && fuseRotations;
      options.tileGroups = tileGroups;
      options.shareKeyRotation = shareKeyRotation;
      options.parallelLoops = parallelLoops;
      options.peelKeyTiles = peelKeyTiles;
      options.keySplits = decodeKeySplits;
      return std::optional(options);
    });
  }
};
} // namespace
