//===- FoldOutputConversion.cpp - Attention writes its consumer's type ----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A bf16 model's P·V, as torch-mlir exports it, is a contraction into f32
// followed by a generic that truncates the whole result to bf16: once the
// attention is raised, an f32 output written and read again by one more
// pass. `rope.attention` converts `acc / sum` to its output type itself, so
// where its output type is its accumulator type (the f32 division is the
// f32 result) the op may write the converted type directly: one rounding
// of the same quotient, bitwise what the separate conversion gives. The
// reshapes between the two follow the op with the new element type.
//
//===----------------------------------------------------------------------===//

#include "AttentionResultChain.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Transforms/Attention/TileAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// The element type an all-parallel, elementwise linalg.generic converts
/// its one input to (its body one arith.truncf or arith.extf of the input,
/// with the default rounding, between identity maps); null otherwise.
FloatType conversionOf(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return {};
  Operation *convert = &body->front();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getOperand(0) != convert->getResult(0) ||
      convert->getOperand(0) != body->getArgument(0))
    return {};
  if (auto trunc = dyn_cast<arith::TruncFOp>(convert)) {
    if (trunc.getRoundingmodeAttr())
      return {};
  } else if (!isa<arith::ExtFOp>(convert)) {
    return {};
  }
  return dyn_cast<FloatType>(convert->getResult(0).getType());
}

struct FoldAttentionOutputConversion : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp conversion,
                                PatternRewriter &rewriter) const override {
    FloatType type = conversionOf(conversion);
    if (!type)
      return failure();
    SmallVector<Operation *> reshapes;
    const char *why = nullptr;
    AttentionOp attention = attentionThroughReshapes(
        conversion.getDpsInputOperand(0)->get(), reshapes, why);
    if (!attention)
      return rewriter.notifyMatchFailure(conversion, why);
    auto resultType = cast<RankedTensorType>(attention.getType());
    // A conversion of an output already converted from the accumulator
    // would round twice where the op rounds once.
    if (resultType.getElementType() != attention.getAccumulatorType())
      return rewriter.notifyMatchFailure(conversion, "the attention's output "
                                                     "is not its accumulator "
                                                     "type");
    auto empty = attention.getInit().getDefiningOp<tensor::EmptyOp>();
    if (!empty)
      return rewriter.notifyMatchFailure(conversion, "initialized attention "
                                                     "output");

    Location loc = conversion.getLoc();
    auto newType = resultType.clone(type);
    Value init = tensor::EmptyOp::create(rewriter, loc, newType,
                                         empty.getDynamicSizes());
    auto converted = cast<AttentionOp>(rewriter.clone(*attention));
    converted.getInitMutable().assign(init);
    converted.getResult().setType(newType);
    Value written = converted.getResult();
    for (Operation *reshape : llvm::reverse(reshapes)) {
      auto reshapedType =
          cast<RankedTensorType>(reshape->getResult(0).getType()).clone(type);
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
        written = tensor::CollapseShapeOp::create(
            rewriter, loc, reshapedType, written,
            collapse.getReassociationIndices());
      else
        written = tensor::ExpandShapeOp::create(
            rewriter, loc, reshapedType, written,
            cast<tensor::ExpandShapeOp>(reshape).getReassociationIndices(),
            cast<tensor::ExpandShapeOp>(reshape).getMixedOutputShape());
    }
    rewriter.replaceOp(conversion, written);
    return success();
  }
};
} // namespace

void mlir::rope::populateFoldAttentionOutputConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldAttentionOutputConversion>(patterns.getContext());
}
