//===- TestMetamorphicRewrites.cpp - Rewrites a host compiler may run -----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --rope-raise must read what linalg IR computes, not how a frontend spelled
// it. scripts/metamorphic.py checks that by raising each model of the zoo and
// each frontend fixture after semantics-preserving rewrites; upstream has
// most (generalize, fuse-elementwise, fold-unit-extent-dims, canonicalize),
// these passes add two it lacks:
//  - rope-test-swap-commutative-operands: a commutative op's operands (and a
//    comparison's, predicate mirrored) in the other order;
//  - rope-test-split-generic: one elementwise generic as two chained ones
//    (the inverse of linalg-fuse-elementwise-ops).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rope::test {
#define GEN_PASS_DEF_TESTROPESWAPCOMMUTATIVEOPERANDSPASS
#define GEN_PASS_DEF_TESTROPESPLITGENERICPASS
#include "TestPasses.h.inc"
} // namespace mlir::rope::test

using namespace mlir;

//===----------------------------------------------------------------------===//
// Swapping commutative operands
//===----------------------------------------------------------------------===//

static arith::CmpFPredicate mirrored(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OGT:
    return P::OLT;
  case P::OGE:
    return P::OLE;
  case P::OLT:
    return P::OGT;
  case P::OLE:
    return P::OGE;
  case P::UGT:
    return P::ULT;
  case P::UGE:
    return P::ULE;
  case P::ULT:
    return P::UGT;
  case P::ULE:
    return P::UGE;
  default: // eq, ne, ord, uno, true, false: symmetric
    return p;
  }
}

static arith::CmpIPredicate mirrored(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ule:
    return P::uge;
  case P::ugt:
    return P::ult;
  case P::uge:
    return P::ule;
  default: // eq, ne
    return p;
  }
}

/// Swaps the operands of `op` when that keeps its value; returns whether it
/// did.
static bool swapOperands(Operation *op) {
  if (op->getNumOperands() != 2 || op->getNumRegions() != 0)
    return false;
  Value a = op->getOperand(0), b = op->getOperand(1);
  if (auto cmp = dyn_cast<arith::CmpFOp>(op))
    cmp.setPredicate(mirrored(cmp.getPredicate()));
  else if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    cmp.setPredicate(mirrored(cmp.getPredicate()));
  else if (!op->hasTrait<OpTrait::IsCommutative>())
    return false;
  op->setOperands({b, a});
  return true;
}

/// `op` with its inputs in reverse order (maps and block arguments too).
static linalg::GenericOp reverseInputs(RewriterBase &rewriter,
                                       linalg::GenericOp op) {
  SmallVector<Value> inputs(llvm::reverse(op.getInputs()));
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int64_t numInputs = op.getNumDpsInputs();
  std::reverse(maps.begin(), maps.begin() + numInputs);
  rewriter.setInsertionPoint(op);
  auto generic = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getOutputs(),
      maps, op.getIteratorTypesArray());
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *old = op.getBlock();
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (BlockArgument arg : old->getArguments()) {
    types.push_back(arg.getType());
    locs.push_back(arg.getLoc());
  }
  std::reverse(types.begin(), types.begin() + numInputs);
  std::reverse(locs.begin(), locs.begin() + numInputs);
  Block *block = rewriter.createBlock(&generic.getRegion(), {}, types, locs);
  SmallVector<Value> args(block->getArguments());
  std::reverse(args.begin(), args.begin() + numInputs);
  rewriter.mergeBlocks(old, block, args);
  rewriter.replaceOp(op, generic->getResults());
  return generic;
}

namespace {
struct TestRopeSwapCommutativeOperandsPass
    : rope::test::impl::TestRopeSwapCommutativeOperandsPassBase<
          TestRopeSwapCommutativeOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      // Named elementwise ops: the region is built from the inputs' types,
      // so make the op anew.
      if (isa<linalg::AddOp, linalg::MulOp, linalg::MaxOp, linalg::MinOp>(
              op.getOperation())) {
        if (op.getNumDpsInputs() != 2)
          continue;
        SmallVector<Value> inputs{op.getDpsInputOperand(1)->get(),
                                  op.getDpsInputOperand(0)->get()};
        SmallVector<Value> outputs(op.getDpsInits());
        rewriter.setInsertionPoint(op);
        Operation *created = nullptr;
        if (isa<linalg::AddOp>(op))
          created = linalg::AddOp::create(
              rewriter, op.getLoc(), op->getResultTypes(), inputs, outputs);
        else if (isa<linalg::MulOp>(op))
          created = linalg::MulOp::create(
              rewriter, op.getLoc(), op->getResultTypes(), inputs, outputs);
        else if (isa<linalg::MaxOp>(op))
          created = linalg::MaxOp::create(
              rewriter, op.getLoc(), op->getResultTypes(), inputs, outputs);
        else
          created = linalg::MinOp::create(
              rewriter, op.getLoc(), op->getResultTypes(), inputs, outputs);
        rewriter.replaceOp(op, created->getResults());
        continue;
      }
      if (op->getNumRegions() != 1 || op->getRegion(0).empty())
        continue;
      op.getBlock()->walk([](Operation *inner) { swapOperands(inner); });
      if (permuteInputs)
        if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
          if (generic.getNumDpsInputs() > 1)
            reverseInputs(rewriter, generic);
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Splitting a generic in two
//===----------------------------------------------------------------------===//

/// Splits `op` after its first `k` payload ops; fails (changing nothing)
/// when no value would cross.
static LogicalResult splitAt(RewriterBase &rewriter, linalg::GenericOp op,
                             size_t k) {
  Block *body = op.getBlock();
  SmallVector<Operation *> ops;
  for (Operation &inner : body->without_terminator())
    ops.push_back(&inner);
  DenseSet<Operation *> prefix(ops.begin(), ops.begin() + k);

  // Ops recomputed in the second generic instead of passed: pure, no
  // region, not reading a block argument (directly or through other such
  // ops): constants, linalg.index and integer arithmetic on it.
  DenseSet<Operation *> cheap;
  for (Operation *inner : ops) {
    if (inner->getNumRegions() != 0 || !isPure(inner))
      continue;
    bool ok = llvm::all_of(inner->getOperands(), [&](Value v) {
      if (isa<BlockArgument>(v))
        return v.getParentBlock() != body;
      Operation *def = v.getDefiningOp();
      return def->getBlock() != body || cheap.contains(def);
    });
    if (ok)
      cheap.insert(inner);
  }

  // Values crossing from the first half to the second.
  SetVector<Value> crossing;
  auto noteUse = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && prefix.contains(def) && !cheap.contains(def))
      crossing.insert(v);
  };
  for (Operation *inner : ArrayRef(ops).drop_front(k))
    inner->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        noteUse(v);
    });
  for (Value v : body->getTerminator()->getOperands())
    noteUse(v);
  if (crossing.empty())
    return failure();
  // The first half may not read the destinations (it gets none).
  for (Operation *inner : ArrayRef(ops).take_front(k))
    for (Value v : inner->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(v))
        if (arg.getOwner() == body &&
            arg.getArgNumber() >= op.getNumDpsInputs())
          return failure();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value shapeSource = op.getDpsInits()[0];
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, shapeSource);
  AffineMap outMap = op.getIndexingMapsArray()[op.getNumDpsInputs()];
  SmallVector<AffineMap> inputMaps(op.getIndexingMapsArray());
  inputMaps.resize(op.getNumDpsInputs());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();

  // First generic: the original inputs, one destination per crossing value.
  SmallVector<Value> empties;
  SmallVector<Type> firstTypes;
  for (Value v : crossing) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, v.getType());
    empties.push_back(empty);
    firstTypes.push_back(empty.getType());
  }
  SmallVector<AffineMap> firstMaps(inputMaps);
  firstMaps.append(crossing.size(), outMap);
  auto first = linalg::GenericOp::create(
      rewriter, loc, firstTypes, op.getInputs(), empties, firstMaps, iterators,
      [&](OpBuilder &b, Location, ValueRange args) {
        IRMapping map;
        for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
          map.map(body->getArgument(i), args[i]);
        for (Operation *inner : ArrayRef(ops).take_front(k))
          b.clone(*inner, map);
        SmallVector<Value> yielded;
        for (Value v : crossing)
          yielded.push_back(map.lookup(v));
        linalg::YieldOp::create(b, loc, yielded);
      });

  // Second generic: the original inputs and the crossing values, the
  // original destinations.
  SmallVector<Value> secondInputs(op.getInputs());
  secondInputs.append(first->result_begin(), first->result_end());
  SmallVector<AffineMap> secondMaps(inputMaps);
  secondMaps.append(crossing.size(), outMap);
  for (OpOperand &init : op.getDpsInitsMutable())
    secondMaps.push_back(op.getMatchingIndexingMap(&init));
  auto second = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), secondInputs, op.getOutputs(),
      secondMaps, iterators, [&](OpBuilder &b, Location, ValueRange args) {
        IRMapping map;
        unsigned numInputs = op.getNumDpsInputs();
        for (unsigned i = 0; i < numInputs; ++i)
          map.map(body->getArgument(i), args[i]);
        for (auto [i, v] : llvm::enumerate(crossing))
          map.map(v, args[numInputs + i]);
        for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
          map.map(body->getArgument(numInputs + i),
                  args[numInputs + crossing.size() + i]);
        for (Operation *inner : ArrayRef(ops).take_front(k))
          if (cheap.contains(inner))
            b.clone(*inner, map);
        for (Operation *inner : ArrayRef(ops).drop_front(k))
          b.clone(*inner, map);
        SmallVector<Value> yielded;
        for (Value v : body->getTerminator()->getOperands())
          yielded.push_back(map.lookupOrDefault(v));
        linalg::YieldOp::create(b, loc, yielded);
      });
  second->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, second->getResults());
  return success();
}

namespace {
struct TestRopeSplitGenericPass
    : rope::test::impl::TestRopeSplitGenericPassBase<TestRopeSplitGenericPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    for (linalg::GenericOp op : ops) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInits() == 0 ||
          op.getNumReductionLoops() != 0 ||
          !op.getIndexingMapsArray()[op.getNumDpsInputs()].isPermutation())
        continue;
      size_t numOps = op.getBlock()->getOperations().size() - 1;
      if (numOps < 2)
        continue;
      // The middle, or the nearest split point where a value crosses.
      SmallVector<size_t> order;
      for (size_t k = numOps / 2; k < numOps; ++k)
        order.push_back(k);
      for (size_t k = numOps / 2; k > 1; --k)
        order.push_back(k - 1);
      for (size_t k : order)
        if (k >= 1 && succeeded(splitAt(rewriter, op, k)))
          break;
    }
  }
};
} // namespace
