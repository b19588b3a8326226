//===- RaiseSoftmax.cpp - Decomposed softmax back to linalg.softmax -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// rope-fuse-into-attention fuses whole attention through `linalg.softmax`;
// frontends (and linalg.softmax's own decomposition) often hand over the
// softmax already written out as reductions and elementwise ops. Raising it
// back is one recognizer ahead of the fusion instead of a second matcher
// inside it.
//
// The softmax is read by SoftmaxReader, the reader the attention raise uses
// for P: the division's result is read over one atom per dim, and the dim
// the softmax is over is the one whose row the divisor sums the numerator
// over. So exp(x − max) may be one generic or two named ops, and a row
// broadcast an op, an indexing map or a keepdim reshape, without a pattern
// per spelling.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Raise/RaiseSoftmax.h"
#include "PayloadAnalysis.h"
#include "SoftmaxReader.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISESOFTMAXPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

using raise::Expressions;

using raise::Node;
using raise::SoftmaxReader;

/// The ops between the division `root` and x (`input`) that the softmax
/// replaces: the producers the reader opened on the way, views, reductions
/// and elementwise ops, but not x's producers, nor the fills, empties and
/// constants the reductions start from (those may be shared; they are
/// erased after, when the chain was their last user).
SmallPtrSet<Operation *, 8> chainOf(Expressions &ex, Operation *root,
                                    Value input) {
  SmallPtrSet<Operation *, 8> chain;
  SmallVector<Operation *> stack{root};
  chain.insert(root);
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (operand == input || !def || !ex.opened.contains(def) ||
          isa<linalg::FillOp, tensor::EmptyOp, arith::ConstantOp>(def) ||
          !chain.insert(def).second)
        continue;
      stack.push_back(def);
    }
  }
  return chain;
}

} // namespace

FailureOr<SoftmaxMatch>
mlir::rope::matchWrittenSoftmax(linalg::LinalgOp root,
                                SoftmaxMismatch *mismatch) {
  auto fail = [&](Operation *op, const Twine &why,
                  bool remark) -> FailureOr<SoftmaxMatch> {
    if (mismatch)
      *mismatch = {why.str(), op, remark};
    return failure();
  };
  if (!root.hasPureTensorSemantics() || root->getNumResults() != 1 ||
      root.getNumLoops() != root.getNumParallelLoops() ||
      !isa_and_present<arith::DivFOp>(
          raise::yieldedValue(root).getDefiningOp()))
    return failure();
  auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  if (!type || !isa<FloatType>(type.getElementType()) || !type.getRank() ||
      !type.hasStaticShape())
    return failure();
  // The result read over one atom per dim; the softmax is over one of them.
  Expressions ex;
  raise::Layout layout;
  for (int64_t size : type.getShape())
    layout.push_back({ex.atoms.make(size)});
  Node *quotient = raise::computeOf<arith::DivFOp>(
      ex, ex.tensor(root->getResult(0), layout), 2);
  if (!quotient)
    return failure();
  Node *sum = ex.open(quotient->operands[1]);
  if (sum->kind != Node::Reduce || !isa<arith::AddFOp>(sum->op))
    return fail(root, "not a division by a row sum", /*remark=*/false);

  // From here on it looks like a softmax: say why it is not one. The dim is
  // the one whose row the divisor sums the numerator over.
  std::optional<unsigned> dim;
  SoftmaxReader::Result read;
  std::string why = "the divisor is not the sum of the numerator over a dim "
                    "of the result";
  for (auto [i, atoms] : llvm::enumerate(layout)) {
    SoftmaxReader reader(ex, atoms[0], "the dim the sum reduces");
    if (!reader.isRowReduce(sum, quotient->operands[0],
                            {arith::AddFOp::getOperationName()}))
      continue;
    SoftmaxReader::Found found = reader.writtenSoftmax(quotient, read);
    if (found == SoftmaxReader::Found::Yes) {
      dim = i;
      break;
    }
    if (found == SoftmaxReader::Found::Mismatch)
      why = reader.why;
  }
  if (ex.exhausted())
    return fail(root, "too large to analyze", /*remark=*/true);
  if (!dim)
    return fail(root, why, /*remark=*/true);
  Node *x = read.input;
  if (x->kind != Node::Tensor || !isa<RankedTensorType>(x->value.getType()) ||
      !ex.layoutsEqual(x->layout, layout, raise::Renaming()))
    return fail(root,
                "x is not a tensor read element for element (it is "
                "computed inside the chain, or transposed)",
                /*remark=*/true);
  if (x->value.getType() != type)
    return fail(root, "the input's type is not the result's type",
                /*remark=*/true);
  SmallPtrSet<Operation *, 8> chain = chainOf(ex, root, x->value);
  if (Operation *def = x->value.getDefiningOp(); def && chain.contains(def))
    return fail(root, "x itself is part of the chain", /*remark=*/true);
  for (Operation *op : chain)
    if (op != root && llvm::any_of(op->getUsers(), [&](Operation *user) {
          return !chain.contains(user);
        }))
      return fail(op,
                  "it has users outside the softmax (raising would "
                  "compute it twice)",
                  /*remark=*/true);
  SoftmaxMatch match;
  match.input = x->value;
  match.dim = *dim;
  match.max = dyn_cast_or_null<linalg::LinalgOp>(read.max->producer);
  match.sum = dyn_cast_or_null<linalg::LinalgOp>(read.sum->producer);
  match.chain = std::move(chain);
  return match;
}

namespace {

struct RaiseSoftmaxPattern : OpInterfaceRewritePattern<linalg::LinalgOp> {
  RaiseSoftmaxPattern(MLIRContext *ctx, bool remarks)
      : OpInterfaceRewritePattern(ctx), remarks(remarks) {}

  LogicalResult notRaised(PatternRewriter &rewriter, Operation *op,
                          const Twine &reason) const {
    if (remarks)
      op->emitRemark("not raised to linalg.softmax: ") << reason;
    return rewriter.notifyMatchFailure(op, reason);
  }

  LogicalResult matchAndRewrite(linalg::LinalgOp root,
                                PatternRewriter &rewriter) const override {
    SoftmaxMismatch mismatch;
    FailureOr<SoftmaxMatch> match = matchWrittenSoftmax(root, &mismatch);
    if (failed(match)) {
      if (!mismatch.op)
        return failure();
      if (mismatch.remark)
        return notRaised(rewriter, mismatch.op, mismatch.why);
      return rewriter.notifyMatchFailure(mismatch.op, mismatch.why);
    }
    auto type = cast<RankedTensorType>(root->getResult(0).getType());
    SmallPtrSet<Operation *, 8> &chain = match->chain;
    auto softmax = linalg::SoftmaxOp::create(
        rewriter, root.getLoc(), TypeRange{type}, match->input,
        root.getDpsInitOperand(0)->get(), static_cast<uint64_t>(match->dim));
    rewriter.replaceOp(root, softmax->getResults());
    // Erase the rest of the chain, users first, then what only it used
    // (the reductions' fills).
    SmallPtrSet<Operation *, 8> feeding;
    chain.erase(root);
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *op : chain) {
        if (!op->use_empty())
          continue;
        for (Value operand : op->getOperands())
          if (auto fill = operand.getDefiningOp<linalg::FillOp>())
            feeding.insert(fill);
        chain.erase(op);
        rewriter.eraseOp(op);
        erased = true;
        break;
      }
    }
    for (Operation *fill : feeding)
      if (fill->use_empty())
        rewriter.eraseOp(fill);
    return success();
  }

private:
  bool remarks;
};

struct RopeRaiseSoftmaxPass
    : rope::impl::RopeRaiseSoftmaxPassBase<RopeRaiseSoftmaxPass> {
  using Base::Base;

  void runOnOperation() override { raiseSoftmax(getOperation(), remarks); }
};

} // namespace

void mlir::rope::populateRopeRaiseSoftmaxPatterns(RewritePatternSet &patterns,
                                                  bool remarks) {
  patterns.add<RaiseSoftmaxPattern>(patterns.getContext(), remarks);
}

void mlir::rope::raiseSoftmax(Operation *root, bool remarks) {
  RewritePatternSet patterns(root->getContext());
  populateRopeRaiseSoftmaxPatterns(patterns, remarks);
  SmallVector<Operation *> divisions;
  root->walk([&](linalg::LinalgOp op) {
    if (op->getNumResults() == 1 &&
        isa_and_present<arith::DivFOp>(raise::yieldedValue(op).getDefiningOp()))
      divisions.push_back(op);
  });
  // Each division once (a remark is said once) and nothing else folded.
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  (void)applyOpPatternsGreedily(divisions, std::move(patterns), config);
}
