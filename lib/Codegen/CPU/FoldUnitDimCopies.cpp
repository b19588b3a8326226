//===- FoldUnitDimCopies.cpp - Copies that only drop unit dims as views ---===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A linalg.generic that copies its input into a tensor of the same elements
// without the input's unit dims ([1, 32, S, D] -> [32, S, D]: a frontend's
// view, or what is left of one after raising) is a tensor.collapse_shape in
// meaning. Bufferized as written it is a new buffer and a full copy per call
// (and the page faults of a fresh allocation): on an HF Llama prefill layer
// the query's copy was a tenth of the call. As a collapse_shape it
// bufferizes to a view of the input.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFOLDUNITDIMCOPIESPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The reassociation collapsing `input` (indexed by `map`) to the loop dims,
/// when `map` is the loop dims in order with constant-0 results for unit
/// dims of the input in between: each unit dim joins the group of the next
/// loop dim (the last ones the previous group).
std::optional<SmallVector<ReassociationIndices>>
unitDimCollapse(AffineMap map, RankedTensorType input) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  unsigned next = 0;
  for (auto [position, result] : llvm::enumerate(map.getResults())) {
    if (auto constant = dyn_cast<AffineConstantExpr>(result)) {
      if (constant.getValue() != 0 || input.getDimSize(position) != 1)
        return std::nullopt;
      pending.push_back(position);
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || dim.getPosition() != next++)
      return std::nullopt;
    pending.push_back(position);
    groups.push_back(std::move(pending));
    pending.clear();
  }
  if (next != map.getNumDims() || groups.empty())
    return std::nullopt;
  llvm::append_range(groups.back(), pending);
  return groups;
}

/// linalg.generic {yield %in} from [.., 1, ..] to the same elements without
/// the unit dims -> tensor.collapse_shape.
struct UnitDimCopyToCollapse : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
        op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
        op.getNumReductionLoops() != 0)
      return rewriter.notifyMatchFailure(op, "not a one-input copy on "
                                             "tensors");
    Block &body = op.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (body.getOperations().size() != 1 ||
        yield.getValues().front() != body.getArgument(0))
      return rewriter.notifyMatchFailure(op, "the payload is not a copy");
    OpOperand *input = op.getDpsInputOperand(0);
    auto inputType = dyn_cast<RankedTensorType>(input->get().getType());
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    if (!inputType || !inputType.hasStaticShape() ||
        inputType.getElementType() != resultType.getElementType() ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
      return rewriter.notifyMatchFailure(op, "not an element-preserving "
                                             "copy to the loop order");
    std::optional<SmallVector<ReassociationIndices>> groups =
        unitDimCollapse(op.getMatchingIndexingMap(input), inputType);
    if (!groups || inputType.getRank() == resultType.getRank())
      return rewriter.notifyMatchFailure(op, "drops no unit dim, or also "
                                             "permutes or broadcasts");
    auto collapsed = tensor::CollapseShapeOp::create(
        rewriter, op.getLoc(), resultType, input->get(), *groups);
    rewriter.replaceOp(op, collapsed.getResult());
    return success();
  }
};

struct RopeFoldUnitDimCopiesPass
    : rope::impl::RopeFoldUnitDimCopiesPassBase<RopeFoldUnitDimCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnitDimCopyToCollapse>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
