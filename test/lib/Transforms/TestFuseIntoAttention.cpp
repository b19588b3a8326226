//===- TestFuseIntoAttention.cpp - The fusion patterns, greedily ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --rope-fuse-into-scores applies its patterns once per contraction; a
// project reusing populateRopeFuseIntoAttentionPatterns may well run them
// under the default greedy driver, which revisits the tiled contractions
// (themselves contractions fed by rope.apply). This pass does that, so that a
// lit test catches a pattern that does not converge.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "rope/Transforms/Attention/FuseIntoScores.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope::test {
#define GEN_PASS_DEF_TESTROPEFUSEINTOATTENTIONPATTERNSPASS
#include "TestPasses.h.inc"
} // namespace mlir::rope::test

using namespace mlir;
using namespace mlir::rope;

namespace {
struct TestRopeFuseIntoAttentionPatternsPass
    : rope::test::impl::TestRopeFuseIntoAttentionPatternsPassBase<
          TestRopeFuseIntoAttentionPatternsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRopeFuseIntoAttentionPatterns(
        patterns,
        [&](const RopeAttentionContraction &)
            -> std::optional<RopeAttentionFusionOptions> {
          return RopeAttentionFusionOptions();
        });
    // Each contraction is rewritten once; a pattern that re-matched its own
    // tiles would rewrite without end (the driver queues the new ops), so
    // bound the rewrites to fail instead of hanging.
    GreedyRewriteConfig config;
    config.setMaxNumRewrites(64);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config))) {
      getOperation()->emitError("the fusion patterns did not converge");
      return signalPassFailure();
    }
    removeRopeAttentionTileMarkers(getOperation());
  }
};
} // namespace
