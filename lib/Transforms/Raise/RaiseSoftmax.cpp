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
// The recognizer reads values as expressions over the elements of the
// softmax's input shape: an elementwise linalg op (generic or named: sub, exp,
// div, broadcast...) is looked through to its payload, an operand indexed
// without dim d is a row broadcast along d. So exp(x − max) may be one
// generic or two named ops, and a broadcast may be an op or an indexing map,
// without a pattern per spelling.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Raise/RaiseSoftmax.h"
#include "PayloadAnalysis.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <memory>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISESOFTMAXPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// An element of a value of the softmax's input shape (rank n), as an
/// expression.
struct Node {
  enum Kind {
    /// A tensor of rank n, element for element.
    Tensor,
    /// A tensor of rank n − 1 broadcast along `dim`.
    Row,
    /// A scalar (captured by a payload, or a scalar operand).
    Scalar,
    /// A payload op applied to `operands`.
    Compute
  };
  Kind kind;
  Value value;
  unsigned dim = 0;
  Operation *op = nullptr;
  SmallVector<Node *> operands;
};

/// The map of a rank-`rank` space onto itself without dim `drop`.
AffineMap dropDim(MLIRContext *ctx, unsigned rank, unsigned drop) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx).dropResult(drop);
}

class Expressions {
public:
  explicit Expressions(unsigned rank) : rank(rank) {}

  /// `op` if it computes `value` elementwise over rank-n loops: all
  /// parallel, identity destination map, a payload that does not read the
  /// destination.
  linalg::LinalgOp elementwise(Value value) const {
    auto op = value.getDefiningOp<linalg::LinalgOp>();
    if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        op.getNumDpsInits() != 1 || op.getNumLoops() != rank ||
        op.getNumParallelLoops() != rank)
      return {};
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(init).isIdentity() ||
        op.payloadUsesValueFromOperand(init))
      return {};
    return op;
  }

  /// The expression of `value` in the payload of elementwise `op`.
  Node *payload(linalg::LinalgOp op, Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != op.getBlock())
        return make(Node::Scalar, value);
      OpOperand *operand = op.getMatchingOpOperand(arg);
      if (op.isDpsInit(operand))
        return nullptr;
      Value input = operand->get();
      if (!isa<RankedTensorType>(input.getType()))
        return make(Node::Scalar, input);
      AffineMap map = op.getMatchingIndexingMap(operand);
      if (map.isIdentity())
        return make(Node::Tensor, input);
      for (unsigned d = 0; d < rank; ++d)
        if (map == dropDim(op->getContext(), rank, d))
          return make(Node::Row, input, d);
      return nullptr;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != op.getBlock())
      return make(Node::Scalar, value);
    if (def->getNumRegions() || def->getNumResults() != 1)
      return nullptr;
    Node *node = make(Node::Compute, value);
    node->op = def;
    for (Value operand : def->getOperands()) {
      Node *child = payload(op, operand);
      if (!child)
        return nullptr;
      node->operands.push_back(child);
    }
    return node;
  }

  /// The payload expression of the op producing a Tensor node, that op added
  /// to `through` (when given); otherwise `node` itself.
  Node *expand(Node *node, SmallPtrSetImpl<Operation *> *through) {
    if (node->kind != Node::Tensor)
      return node;
    linalg::LinalgOp producer = elementwise(node->value);
    if (!producer)
      return node;
    Node *expanded = payload(producer, raise::yieldedValue(producer));
    if (!expanded)
      return node;
    if (through)
      through->insert(producer);
    return expanded;
  }

  /// Whether `a` and `b` compute the same elements (the same SSA values, or
  /// the same payload ops on the same operands).
  bool same(Node *a, Node *b, SmallPtrSetImpl<Operation *> *through) {
    if (a->kind == b->kind && a->kind != Node::Compute && a->value == b->value)
      return a->kind != Node::Row || a->dim == b->dim;
    a = expand(a, through);
    b = expand(b, through);
    if (a->kind != b->kind)
      return false;
    switch (a->kind) {
    case Node::Tensor:
      return a->value == b->value;
    case Node::Row:
      return a->value == b->value && a->dim == b->dim;
    case Node::Scalar: {
      if (a->value == b->value)
        return true;
      Attribute x, y;
      return matchPattern(a->value, m_Constant(&x)) &&
             matchPattern(b->value, m_Constant(&y)) && x == y;
    }
    case Node::Compute:
      if (a->op->getName() != b->op->getName() ||
          a->op->getAttrDictionary() != b->op->getAttrDictionary() ||
          a->operands.size() != b->operands.size())
        return false;
      for (auto [x, y] : llvm::zip(a->operands, b->operands))
        if (!same(x, y, through))
          return false;
      return true;
    }
    return false;
  }

  /// The op reducing a rank-n tensor over `dim` into `row` with the
  /// combiner named `combiner` (one of them), from a linalg.fill of a value
  /// `isIdentity` accepts.
  linalg::LinalgOp
  reduction(Value row, unsigned dim, ArrayRef<StringRef> combiners,
            function_ref<bool(const APFloat &, StringRef)> isIdentity) const {
    auto op = row.getDefiningOp<linalg::LinalgOp>();
    if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        op.getNumLoops() != rank || op.getNumReductionLoops() != 1 ||
        op.getIteratorTypesArray()[dim] != utils::IteratorType::reduction)
      return {};
    OpOperand *input = op.getDpsInputOperand(0);
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(input).isIdentity() ||
        op.getMatchingIndexingMap(init) != dropDim(op->getContext(), rank, dim))
      return {};
    Operation *combine = raise::yieldedValue(op).getDefiningOp();
    if (!combine || combine->getBlock() != op.getBlock() ||
        !llvm::is_contained(combiners, combine->getName().getStringRef()))
      return {};
    Value in = op.getMatchingBlockArgument(input);
    Value acc = op.getMatchingBlockArgument(init);
    if (combine->getNumOperands() != 2 ||
        !((combine->getOperand(0) == in && combine->getOperand(1) == acc) ||
          (combine->getOperand(0) == acc && combine->getOperand(1) == in)))
      return {};
    auto fill = init->get().getDefiningOp<linalg::FillOp>();
    FloatAttr start;
    if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&start)) ||
        !isIdentity(start.getValue(), combine->getName().getStringRef()))
      return {};
    return op;
  }

private:
  Node *make(Node::Kind kind, Value value, unsigned dim = 0) {
    nodes.push_back(std::make_unique<Node>());
    Node *node = nodes.back().get();
    node->kind = kind;
    node->value = value;
    node->dim = dim;
    return node;
  }

  unsigned rank;
  SmallVector<std::unique_ptr<Node>> nodes;
};

bool isMaxIdentity(const APFloat &value, StringRef combiner) {
  return raise::isRowMaxStart(value,
                              combiner == arith::MaxNumFOp::getOperationName());
}

bool isSumIdentity(const APFloat &value, StringRef) { return value.isZero(); }

/// Whether `node` is `OpTy` applied to `arity` operands.
template <typename OpTy> bool isCompute(Node *node, unsigned arity) {
  return node->kind == Node::Compute && isa<OpTy>(node->op) &&
         node->operands.size() == arity;
}

} // namespace

FailureOr<SoftmaxMatch>
mlir::rope::matchWrittenSoftmax(linalg::LinalgOp root,
                                SoftmaxMismatch *mismatch) {
  auto fail = [&](Operation *op, StringRef why,
                  bool remark) -> FailureOr<SoftmaxMatch> {
    if (mismatch)
      *mismatch = {why.str(), op, remark};
    return failure();
  };
  if (root->getNumResults() != 1)
    return failure();
  auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  if (!type || !isa<FloatType>(type.getElementType()) || !type.getRank())
    return failure();
  Expressions exprs(type.getRank());
  if (!exprs.elementwise(root->getResult(0)) ||
      !isa_and_present<arith::DivFOp>(
          raise::yieldedValue(root).getDefiningOp()))
    return failure();
  // The ops the softmax replaces.
  SmallPtrSet<Operation *, 8> chain;
  chain.insert(root);
  Node *quotient = exprs.payload(root, raise::yieldedValue(root));
  if (!quotient || !isCompute<arith::DivFOp>(quotient, 2))
    return failure();
  Node *divisor = exprs.expand(quotient->operands[1], &chain);
  if (divisor->kind != Node::Row)
    return failure();
  unsigned dim = divisor->dim;
  linalg::LinalgOp sum = exprs.reduction(
      divisor->value, dim, {arith::AddFOp::getOperationName()}, isSumIdentity);
  if (!sum)
    return fail(root, "not a division by a row sum", /*remark=*/false);

  // From here on it looks like a softmax: say why it is not one.
  chain.insert(sum);
  Node *numerator = quotient->operands[0];
  Node *summed = exprs.payload(
      sum, sum.getMatchingBlockArgument(sum.getDpsInputOperand(0)));
  if (!exprs.same(numerator, summed, &chain))
    return fail(root, "the divisor is not the sum of the numerator",
                /*remark=*/true);
  Node *exp = exprs.expand(numerator, &chain);
  if (!isCompute<math::ExpOp>(exp, 1))
    return fail(root, "the numerator is not an exp", /*remark=*/true);
  Node *shifted = exprs.expand(exp->operands[0], &chain);
  if (!isCompute<arith::SubFOp>(shifted, 2))
    return fail(root, "the exp is not of a difference", /*remark=*/true);
  Node *subtrahend = exprs.expand(shifted->operands[1], &chain);
  if (subtrahend->kind != Node::Row)
    return fail(root, "the exp is not of x minus a row max", /*remark=*/true);
  if (subtrahend->dim != dim)
    return fail(root, "the row max and the row sum are over different dims",
                /*remark=*/true);
  linalg::LinalgOp max = exprs.reduction(subtrahend->value, dim,
                                         {arith::MaximumFOp::getOperationName(),
                                          arith::MaxNumFOp::getOperationName()},
                                         isMaxIdentity);
  if (!max)
    return fail(root, "the exp is not of x minus a row max", /*remark=*/true);
  chain.insert(max);
  Value input = max.getDpsInputOperand(0)->get();
  // x's own producers stay: they are not recorded.
  Node *x = exprs.payload(
      max, max.getMatchingBlockArgument(max.getDpsInputOperand(0)));
  if (!exprs.same(shifted->operands[0], x, nullptr))
    return fail(root, "the max is not of the value it is subtracted from",
                /*remark=*/true);
  if (Operation *def = input.getDefiningOp(); def && chain.contains(def))
    return fail(root, "x itself is part of the chain", /*remark=*/true);
  if (input.getType() != type)
    return fail(root, "the input's type is not the result's type",
                /*remark=*/true);
  for (Operation *op : chain)
    if (op != root && llvm::any_of(op->getUsers(), [&](Operation *user) {
          return !chain.contains(user);
        }))
      return fail(op,
                  "it has users outside the softmax (raising would "
                  "compute it twice)",
                  /*remark=*/true);
  SoftmaxMatch match;
  match.input = input;
  match.dim = dim;
  match.max = max;
  match.sum = sum;
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
    Value input = match->input;
    unsigned dim = match->dim;
    linalg::LinalgOp max = match->max, sum = match->sum;
    SmallPtrSet<Operation *, 8> &chain = match->chain;
    auto softmax = linalg::SoftmaxOp::create(
        rewriter, root.getLoc(), TypeRange{type}, input,
        root.getDpsInitOperand(0)->get(), static_cast<uint64_t>(dim));
    rewriter.replaceOp(root, softmax->getResults());
    // Erase the rest of the chain, users first, then the reductions' fills.
    SmallVector<Operation *> fills;
    for (linalg::LinalgOp reduction : {max, sum})
      fills.push_back(reduction.getDpsInitOperand(0)->get().getDefiningOp());
    chain.erase(root);
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *op : chain) {
        if (!op->use_empty())
          continue;
        chain.erase(op);
        rewriter.eraseOp(op);
        erased = true;
        break;
      }
    }
    for (Operation *fill : fills)
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
