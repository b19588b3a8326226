//===- FoldOutputPermutation.cpp - Attention writes its consumer's layout -===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Frontends compute attention per head, [B, H, S, D], and then permute the
// result to the token-major [B, S, H, D] the output projection reads
// (Hugging Face: `attn_output.transpose(1, 2)`), with reshapes between (the
// GQA view [Hkv, G] merged back into H). The permutation is a copy of the
// whole output. `rope.attention` writes any layout its output map names, so
// the copy folds into the op: the attention writes the permuted layout
// directly and the reshapes follow it. Only a layout changes; every element
// is the one the copy would have moved there (bitwise the same).
//
//===----------------------------------------------------------------------===//

#include "AttentionResultChain.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Transforms/Attention/TileAttention.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// For a copy that only permutes dims (linalg.transpose, or a
/// linalg.generic whose body yields its input and whose maps are
/// permutations): `perm[j]` is the input dim that result dim j reads.
std::optional<SmallVector<int64_t>> permutationOfCopy(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return llvm::to_vector(transpose.getPermutation());
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0)
    return std::nullopt;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (body->getOperations().size() != 1 ||
      yield.getOperand(0) != body->getArgument(0))
    return std::nullopt;
  AffineMap in = generic.getIndexingMapsArray()[0];
  AffineMap out = generic.getIndexingMapsArray()[1];
  if (!in.isPermutation() || !out.isPermutation())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (unsigned j = 0; j < out.getNumResults(); ++j) {
    unsigned loop = out.getDimPosition(j);
    perm.push_back(
        *in.getResultPosition(getAffineDimExpr(loop, op->getContext())));
  }
  return perm;
}

/// Each dim of a tensor derived from the attention's result by reshapes
/// and permutations, as the attention dims it is made of (in order; none:
/// a unit dim the reshapes added).
using Groups = SmallVector<SmallVector<int64_t>>;

/// The groups after `reassociation` splits every dim of `groups` into the
/// dims of `shape`; failure where a split falls inside an attention dim.
FailureOr<Groups> splitGroups(const Groups &groups,
                              ArrayRef<ReassociationIndices> reassociation,
                              ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> attentionShape) {
  Groups result(shape.size());
  for (auto [source, targets] : llvm::zip_equal(groups, reassociation)) {
    ArrayRef<int64_t> dims = source;
    for (int64_t target : targets) {
      int64_t size = shape[target], product = 1;
      if (ShapedType::isDynamic(size))
        return failure();
      // Unit attention dims go with the next dim that takes any.
      while (!dims.empty() &&
             (product < size || attentionShape[dims.front()] == 1) &&
             product * attentionShape[dims.front()] <= size) {
        product *= attentionShape[dims.front()];
        result[target].push_back(dims.front());
        dims = dims.drop_front();
        if (product == size && size != 1)
          break;
      }
      if (product != size)
        return failure();
    }
    // Unit attention dims left over join the last target.
    for (int64_t d : dims) {
      if (attentionShape[d] != 1)
        return failure();
      result[targets.back()].push_back(d);
    }
  }
  return result;
}

struct FoldAttentionOutputPermutation : RewritePattern {
  FoldAttentionOutputPermutation(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *copy,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> perm = permutationOfCopy(copy);
    if (!perm)
      return failure();
    SmallVector<Operation *> reshapes;
    const char *why = nullptr;
    AttentionOp attention =
        attentionThroughReshapes(copy->getOperand(0), reshapes, why);
    if (!attention)
      return rewriter.notifyMatchFailure(copy, why);
    auto resultType = cast<RankedTensorType>(attention.getType());
    if (!resultType.hasStaticShape() ||
        !attention.getInit().getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(copy, "dynamic or initialized "
                                               "attention output");
    ArrayRef<int64_t> attentionShape = resultType.getShape();

    Groups groups;
    for (int64_t d = 0, e = resultType.getRank(); d < e; ++d)
      groups.push_back({d});
    for (Operation *reshape : llvm::reverse(reshapes)) {
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
        Groups merged;
        for (const ReassociationIndices &set :
             collapse.getReassociationIndices()) {
          merged.emplace_back();
          for (int64_t d : set)
            llvm::append_range(merged.back(), groups[d]);
        }
        groups = std::move(merged);
        continue;
      }
      auto expand = cast<tensor::ExpandShapeOp>(reshape);
      FailureOr<Groups> split =
          splitGroups(groups, expand.getReassociationIndices(),
                      expand.getResultType().getShape(), attentionShape);
      if (failed(split))
        return rewriter.notifyMatchFailure(copy, "a reshape splits an "
                                                 "attention dim");
      groups = std::move(*split);
    }
    Groups permuted;
    for (int64_t source : *perm)
      permuted.push_back(groups[source]);

    // The attention dims in the order the copy's result holds them.
    SmallVector<int64_t> order;
    for (const SmallVector<int64_t> &group : permuted)
      llvm::append_range(order, group);
    assert(order.size() == attentionShape.size() && "every dim, once");

    Location loc = copy->getLoc();
    Value written = attention.getResult();
    if (!llvm::equal(order, llvm::seq<int64_t>(0, order.size()))) {
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> outputs;
      AffineMap outputMap = attention.getOutputMap();
      for (int64_t d : order) {
        shape.push_back(attentionShape[d]);
        outputs.push_back(outputMap.getResult(d));
      }
      SmallVector<AffineMap> maps = attention.getIndexingMapsArray();
      maps.back() = AffineMap::get(outputMap.getNumDims(), 0, outputs,
                                   rewriter.getContext());
      Value init = tensor::EmptyOp::create(rewriter, loc, shape,
                                           resultType.getElementType());
      auto permutedType =
          RankedTensorType::get(shape, resultType.getElementType());
      Operation *clone = rewriter.clone(*attention);
      auto newAttention = cast<AttentionOp>(clone);
      newAttention.getInitMutable().assign(init);
      newAttention.getResult().setType(permutedType);
      newAttention.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      written = newAttention.getResult();
    }

    // Reshape the attention dims, now in order, to the copy's result:
    // merge each group, then add the unit dims that hold no attention dim.
    SmallVector<ReassociationIndices> merge;
    int64_t next = 0;
    for (const SmallVector<int64_t> &group : permuted) {
      if (group.empty())
        continue;
      merge.emplace_back();
      for (size_t i = 0; i < group.size(); ++i)
        merge.back().push_back(next++);
    }
    auto target = cast<RankedTensorType>(copy->getResult(0).getType());
    if (merge.size() != order.size()) {
      SmallVector<int64_t> mergedShape;
      for (const SmallVector<int64_t> &group : permuted)
        if (!group.empty()) {
          int64_t size = 1;
          for (int64_t d : group)
            size *= attentionShape[d];
          mergedShape.push_back(size);
        }
      written = tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(mergedShape, target.getElementType()), written,
          merge);
    }
    if (merge.size() != permuted.size()) {
      // Each unit dim joins the group after it (the last ones, the group
      // before them).
      SmallVector<ReassociationIndices> expand(merge.size());
      int64_t group = 0;
      for (int64_t d = 0, e = permuted.size(); d < e; ++d) {
        expand[std::min<int64_t>(group, expand.size() - 1)].push_back(d);
        if (!permuted[d].empty())
          ++group;
      }
      written =
          tensor::ExpandShapeOp::create(rewriter, loc, target, written, expand);
    }
    rewriter.replaceOp(copy, written);
    return success();
  }
};
} // namespace

void mlir::rope::populateFoldAttentionOutputPermutationPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldAttentionOutputPermutation>(patterns.getContext());
}
