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
#include "rope/Dialect/Rope/Utils/RotationCore.h"

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
  DecomposeRopeOp(MLIRContext *ctx, AngleMethod angle)
      : OpRewritePattern<OpTy>(ctx), angle(angle) {}

  /// rope.apply's decomposition with the pass's angle method; the
  /// interface's for the other ops.
  FailureOr<SmallVector<Value>> decompose(OpTy op, OpBuilder &b) const {
    if constexpr (std::is_same_v<OpTy, ApplyOp>)
      return decomposeApply(b, op, angle);
    else
      return op.decomposeOperation(b);
  }

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
      FailureOr<SmallVector<Value>> replacements = decompose(op, rewriter);
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
              decompose(clone, rewriter);
          if (failed(replacements))
            return SmallVector<Value>(clone->getResults());
          rewriter.replaceOp(clone, *replacements);
          return *replacements;
        });
    rewriter.replaceOp(op, results);
    return success();
  }

  AngleMethod angle;
};

struct ConvertRopeToLinalgPass
    : rope::impl::ConvertRopeToLinalgPassBase<ConvertRopeToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalOp<ApplyOp, CacheWriteOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateRopeToLinalgConversionPatterns(patterns, angle);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToLinalgConversionPatterns(
    RewritePatternSet &patterns, AngleMethod angle) {
  patterns.add<DecomposeRopeOp<ApplyOp>, DecomposeRopeOp<CacheWriteOp>>(
      patterns.getContext(), angle);
}
