//===- RopeToLinalg.cpp - rope.apply to linalg ----------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/EmptyGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOLINALGPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {
/// Replaces `rope.apply` (or `rope.cache_write`) by its AggregatedOpInterface
/// decomposition, so the pass and the interface (used by upstream transforms)
/// share one lowering.
template <typename OpTy> struct DecomposeRopeOp : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    // An empty input leaves the destination as it is (EmptyGuard.h).
    if (hasStaticZeroDim(op.getInput())) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    rewriter.setInsertionPoint(op);
    Value nonEmpty = buildHeadsNonEmptyCondition(
        rewriter, op.getLoc(), op.getInput(), op.getTokenDimsOrDefault());
    if (!nonEmpty) {
      FailureOr<SmallVector<Value>> replacements =
          op.decomposeOperation(rewriter);
      if (failed(replacements))
        return rewriter.notifyMatchFailure(op, "decomposition failed");
      rewriter.replaceOp(op, *replacements);
      return success();
    }
    // The decomposition builds before its op: a clone of it inside the
    // guard is decomposed there.
    SmallVector<Value> results =
        buildUnlessEmpty(rewriter, op.getLoc(), nonEmpty, op.getInit(), [&] {
          auto clone = cast<OpTy>(rewriter.clone(*op));
          FailureOr<SmallVector<Value>> replacements =
              clone.decomposeOperation(rewriter);
          if (failed(replacements))
            return SmallVector<Value>(clone->getResults());
          rewriter.replaceOp(clone, *replacements);
          return *replacements;
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ConvertRopeToLinalgPass
    : rope::impl::ConvertRopeToLinalgPassBase<ConvertRopeToLinalgPass> {
  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalOp<ApplyOp, CacheWriteOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateRopeToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeRopeOp<ApplyOp>, DecomposeRopeOp<CacheWriteOp>>(
      patterns.getContext());
}
