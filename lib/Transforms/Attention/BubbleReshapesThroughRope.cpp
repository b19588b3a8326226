//===- BubbleReshapesThroughRope.cpp - Reshape before the rotation --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `expand_shape(rope.apply(x))` → `rope.apply(expand_shape(x))` when the
// expansion splits only head dims (never the channel dim or a token dim):
// positions and caches are indexed by the token dims, which keep their
// sizes, so only `token_dims` is renumbered. GQA attention reads Q as
// [B, Hkv, G, S, D]; with the rotation producing that view directly, its
// tiles can be fused into the attention loops (producer fusion does not look
// through reshapes).
//
// `collapse_shape(rope.apply(x))` → `rope.apply(collapse_shape(x))` when the
// collapse merges only head dims, or a token dim with unit head dims (the
// token dim keeps its size): the same renumbering. Hugging Face's decode
// rotates K as [B, Hkv, S, D] and attention reads it as [B·Hkv, S, D]; the
// rotation then produces that view, so its key tiles are fused too, instead
// of the whole rotated cache being written and read again.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Attention/TileAttention.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Why `reshape` (of `rope`'s result) cannot move above the rotation for
/// any reshape: not the rotation's only use, a quantized output (another
/// element type; a per-head scale follows the head dims a reshape moves),
/// or a cache append (the result is the cache, not the rotated tokens).
const char *whyNotMovable(ApplyOp rope) {
  if (!rope || !rope->hasOneUse())
    return "not the rotation's only use";
  if (rope.getQuantScale())
    return "quantized output";
  if (rope.getSlots())
    return "cache append";
  return nullptr;
}

/// Replaces `reshape` of `rope`'s result by `rope` on the same reshape of
/// its input (and destination), with `tokenDims` renumbered for the view:
/// `view` applies the reshape to a value of the rotation's type.
void rotateView(PatternRewriter &rewriter, Operation *reshape, ApplyOp rope,
                ArrayRef<int64_t> tokenDims, function_ref<Value(Value)> view) {
  auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
  Value input = view(rope.getInput());
  Value init;
  if (rope.getInit() == rope.getInput())
    init = input;
  else if (rope.getInit().getDefiningOp<tensor::EmptyOp>())
    // Sized from the viewed input: the reshape's own result is replaced.
    init = tensor::EmptyOp::create(
        rewriter, reshape->getLoc(),
        tensor::getMixedSizes(rewriter, reshape->getLoc(), input),
        type.getElementType());
  else
    init = view(rope.getInit());
  auto rotated = ApplyOp::create(
      rewriter, rope.getLoc(), type, input, rope.getPositions(),
      rope.getOffset(), rope.getLength(), rope.getCos(), rope.getSin(),
      rope.getNormWeight(), rope.getQuantScale(), /*slots=*/Value(), init,
      rope.getLayoutAttr(), rope.getRotaryDimAttr(),
      rewriter.getDenseI64ArrayAttr(tokenDims), rope.getFreqsAttr(),
      rope.getMropeAttr(), rope.getMagnitudeAttr(), rope.getInverseAttr(),
      rope.getNormEpsilonAttr());
  rewriter.replaceOp(reshape, rotated.getResult());
  rewriter.eraseOp(rope);
}

struct BubbleExpandThroughRope : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto rope = expand.getSrc().getDefiningOp<ApplyOp>();
    if (const char *why = whyNotMovable(rope))
      return rewriter.notifyMatchFailure(expand, why);
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    SmallVector<int64_t> tokenDims = rope.getTokenDimsOrDefault();
    unsigned channel = groups.size() - 1;
    if (groups[channel].size() != 1)
      return rewriter.notifyMatchFailure(expand, "splits the channel dim");
    SmallVector<int64_t> newTokenDims;
    for (int64_t d : tokenDims) {
      if (groups[d].size() != 1)
        return rewriter.notifyMatchFailure(expand, "splits a token dim");
      newTokenDims.push_back(groups[d].front());
    }
    Location loc = expand.getLoc();
    auto type = expand.getResultType();
    rotateView(rewriter, expand, rope, newTokenDims, [&](Value v) -> Value {
      return tensor::ExpandShapeOp::create(rewriter, loc, type, v, groups,
                                           expand.getMixedOutputShape());
    });
    return success();
  }
};

struct BubbleCollapseThroughRope : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rewriter) const override {
    auto rope = collapse.getSrc().getDefiningOp<ApplyOp>();
    if (const char *why = whyNotMovable(rope))
      return rewriter.notifyMatchFailure(collapse, why);
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    SmallVector<int64_t> tokenDims = rope.getTokenDimsOrDefault();
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    if (groups.back().size() != 1)
      return rewriter.notifyMatchFailure(collapse, "merges the channel dim");
    // A group holding a token dim may add only unit head dims to it: the
    // token dim keeps its size and positions, offsets and caches index the
    // same rows. The token dims keep their order (a collapse keeps the
    // dims' order).
    SmallVector<int64_t> newTokenDims;
    for (auto [index, group] : llvm::enumerate(groups)) {
      auto tokens = llvm::make_filter_range(
          group, [&](int64_t d) { return llvm::is_contained(tokenDims, d); });
      int64_t count = llvm::range_size(tokens);
      if (count == 0)
        continue;
      if (count > 1)
        return rewriter.notifyMatchFailure(collapse, "merges token dims");
      for (int64_t d : group)
        if (!llvm::is_contained(tokenDims, d) && shape[d] != 1)
          return rewriter.notifyMatchFailure(collapse, "merges a token dim "
                                                       "with heads");
      newTokenDims.push_back(index);
    }
    Location loc = collapse.getLoc();
    auto type = collapse.getResultType();
    rotateView(rewriter, collapse, rope, newTokenDims, [&](Value v) -> Value {
      return tensor::CollapseShapeOp::create(rewriter, loc, type, v, groups);
    });
    return success();
  }
};
} // namespace

void mlir::rope::populateBubbleReshapesThroughRopePatterns(
    RewritePatternSet &patterns) {
  patterns.add<BubbleExpandThroughRope, BubbleCollapseThroughRope>(
      patterns.getContext());
}
