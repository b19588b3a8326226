//===- FuseIntoAttention.cpp - The rope-fuse-into-attention pass ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pass and its pattern: whole attention written out in linalg is raised
// to rope.attention and tiled FlashAttention-style with the rotations of Q
// and K fused into its loops (RopeRaise/RaiseAttention.cpp,
// TileAndFuseAttention.cpp, SkipMaskedKeyTiles.cpp); attention scores that
// go elsewhere are tiled with the rotations fused (FuseRopeIntoScores.cpp).
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/FuseIntoAttention.h"
#include "RopeRaise/RaiseAttention.h"
#include "rope/Transforms/AttentionTiling.h"
#include "rope/Transforms/Passes.h"
#include "rope/Transforms/RaiseSoftmax.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFUSEINTOATTENTIONPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {
/// Says why `op` is left alone, as a remark when asked.
LogicalResult skip(Operation *op, const Twine &reason, bool remark) {
  if (remark)
    op->emitRemark() << "not fused into attention: " << reason;
  return failure();
}
} // namespace

namespace {
/// Rewrites one Q·Kᵀ contraction fed by rope.apply as the control function
/// says (scores that are not part of whole attention, which is raised to
/// rope.attention before this pattern runs).
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
struct RopeFuseIntoAttentionPass
    : rope::impl::RopeFuseIntoAttentionPassBase<RopeFuseIntoAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyAttentionTilingOptions(getOperation(), queryTileSize,
                                            keyTileSize, fuseKey)))
      return signalPassFailure();
    // Whole attention: raised to rope.attention (a softmax written out in
    // linalg ops first becomes linalg.softmax), then tiled FlashAttention
    // style with the rotations fused into its loops.
    if (wholeAttention) {
      raiseSoftmax(getOperation(), remarks);
      raiseAttention(getOperation(), remarks);
      tileAttention(getOperation(), [&](AttentionOp op) {
        AttentionTilingOptions options =
            chooseAttentionTiling(op, queryTileSize, keyTileSize, fuseKey);
        options.tileGroups = tileHeads;
        options.parallelLoops = parallelLoops;
        return std::optional(options);
      });
    }
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
