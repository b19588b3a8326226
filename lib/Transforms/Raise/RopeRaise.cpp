//===- RopeRaise.cpp - The rope-raise pass --------------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The driver of rope-raise: every op tried once as the end of a rotation,
// last ops first (RaiseRotation.cpp), sharing one element algebra; then the
// rotation's neighbours (RaiseNeighbours.cpp), cache appends
// (RaiseCacheAppend.cpp) and attention (RaiseAttention.cpp).
//
//===----------------------------------------------------------------------===//

#include "ElementAlgebra.h"
#include "RaiseCacheAppend.h"
#include "RaiseNeighbours.h"
#include "RaiseRotation.h"
#include "Unfuse.h"

#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Transforms/Passes.h"
#include "rope/Transforms/Raise/RaiseAttention.h"
#include "rope/Transforms/Raise/RopeRaise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISEPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::raise;

namespace {

void raiseRopeCounting(Operation *root, bool remarks, int64_t &evaluated);

struct RopeRaisePass : rope::impl::RopeRaisePassBase<RopeRaisePass> {
  using Base::Base;

  // No pass Statistic for `evaluated`: a Statistic member makes the pass
  // uncopyable (clonePass) where LLVM tracks statistics (the sanitizer
  // build), and this LLVM's release build compiles them out.
  void runOnOperation() override {
    int64_t evaluated = 0;
    raiseRopeCounting(getOperation(), remarks, evaluated);
    (void)evaluated;
  }
};

/// Forgets what the algebra knows of ops as they are erased.
struct ForgetErased : RewriterBase::Listener {
  explicit ForgetErased(ElementAlgebra &algebra) : algebra(algebra) {}
  void notifyOperationErased(Operation *op) override { algebra.forget(op); }
  ElementAlgebra &algebra;
};

} // namespace

void mlir::rope::populateRopeRaisePatterns(RewritePatternSet &patterns,
                                           bool remarks) {
  raise::populateRaiseRotationPatterns(patterns, remarks);
  populateRopeRaiseNeighbourPatterns(patterns);
  populateRopeRaiseCacheAppendPatterns(patterns);
  populateRopeRaiseAttentionPatterns(patterns, remarks);
}

void mlir::rope::raiseRope(Operation *root, bool remarks) {
  int64_t evaluated = 0;
  raiseRopeCounting(root, remarks, evaluated);
}

namespace {
/// Whether `a` and `b` are one value: the same SSA value, or the same
/// result of two equivalent side-effect-free ops whose operands are (to
/// `depth` producers up).
bool sameValue(Value a, Value b, int depth, DenseMap<Value, Value> &marked) {
  if (a == b)
    return true;
  if (auto it = marked.find(a); it != marked.end() && it->second == b)
    return true;
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  if (depth <= 0 || !ra || !rb || ra.getResultNumber() != rb.getResultNumber())
    return false;
  Operation *opA = ra.getOwner(), *opB = rb.getOwner();
  if (!isMemoryEffectFree(opA) || !isMemoryEffectFree(opB))
    return false;
  return OperationEquivalence::isEquivalentTo(
      opA, opB,
      [&](Value x, Value y) {
        return success(sameValue(x, y, depth - 1, marked));
      },
      [&](Value x, Value y) { marked[x] = y; },
      OperationEquivalence::IgnoreLocations);
}

/// Merges raised rotations that compute one tensor twice: a host's
/// rewrite may duplicate a producer per consumer (linalg-fold-unit-extent-
/// dims does, through reshapes of its own), and each copy is raised. A
/// later rope.apply of the same attributes whose operands are the same
/// values as an earlier one's in its block (destinations both empty; none
/// appending to a cache) is replaced by it. What only fed the copy is
/// erased, but for `keep` (the isolated norms, which raiseNeighbours
/// settles).
void mergeDuplicateRotations(Operation *root, RewriterBase &rewriter,
                             const DenseSet<Operation *> &keep) {
  // An empty tensor, or a reshape of one (a rotation raised with a unit
  // token dim inserted).
  auto isEmpty = [](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
        break;
      v = def->getOperand(0);
    }
    return static_cast<bool>(v.getDefiningOp<tensor::EmptyOp>());
  };
  llvm::MapVector<std::pair<Block *, Type>, SmallVector<ApplyOp>> groups;
  root->walk([&](ApplyOp op) {
    if (!op.getSlots() && isEmpty(op.getInit()))
      groups[{op->getBlock(), op.getType()}].push_back(op);
  });
  for (auto &[key, ops] : groups) {
    for (size_t j = 1; j < ops.size(); ++j) {
      ApplyOp later = ops[j];
      for (size_t i = 0; i < j; ++i) {
        ApplyOp earlier = ops[i];
        if (!earlier || !earlier->isBeforeInBlock(later))
          continue;
        DenseMap<Value, Value> marked;
        bool same = OperationEquivalence::isEquivalentTo(
            earlier, later,
            [&](Value x, Value y) {
              // The destinations: two empty tensors of one type.
              if (x == earlier.getInit() && y == later.getInit())
                return success(x.getType() == y.getType());
              return success(sameValue(x, y, /*depth=*/8, marked));
            },
            nullptr, OperationEquivalence::IgnoreLocations);
        if (!same)
          continue;
        SmallVector<Value> operands(later->getOperands());
        rewriter.replaceOp(later, earlier.getResult());
        ops[j] = {};
        // What only fed the copy.
        SmallVector<Value> worklist(operands);
        while (!worklist.empty()) {
          Operation *def = worklist.pop_back_val().getDefiningOp();
          if (!def || keep.contains(def) || !isOpTriviallyDead(def))
            continue;
          worklist.append(def->operand_begin(), def->operand_end());
          rewriter.eraseOp(def);
        }
        break;
      }
    }
  }
}
} // namespace

namespace {
void raiseRopeCounting(Operation *root, bool remarks, int64_t &evaluated) {
  // Values a host's elementwise fusion moved into the ops that read them
  // become tensors again (Unfuse.h).
  raise::materializeFusedOperands(root);
  // Views of one tensor that differ in unit dims read one another.
  raise::shareReshapeSources(root);
  // A QK-norm producing a rotated tensor is gathered into one generic first,
  // so that the rotation is raised with the normalized tensor as its input.
  SmallVector<std::pair<Value, Value>> norms = isolateNorms(root);
  // Last ops first: a rotation is raised from the op that ends it, before
  // the ops it reads are tried (so a partial rotation is raised whole, not
  // its rotated slice alone). Each op is tried once (a remark is said
  // once); ops that only fed a raised rotation are erased as they die.
  SmallVector<Operation *> ops;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != root)
      ops.push_back(op);
    return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                     : WalkResult::advance();
  });
  // One algebra for every candidate: each is read back through the same
  // earlier layers (the residual stream), evaluated once per pass run, not
  // once per candidate (issue 33). What it knows stays true while raising:
  // candidates are tried last to first, so a candidate's producers are
  // ops no raise has created or rewired (a raise replaces the candidate,
  // rewiring its users, which come later); ops erased as they die are
  // forgotten (their storage may be reused).
  ElementAlgebra shared;
  ForgetErased forgetErased(shared);
  IRRewriter rewriter(root->getContext(), &forgetErased);
  DenseSet<Operation *> mayDie, erased;
  auto feedersOf = [&](Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        mayDie.insert(def);
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp())
          mayDie.insert(def);
    });
  };
  SmallVector<std::pair<Operation *, std::string>> pending;
  for (Operation *op : llvm::reverse(ops)) {
    if (erased.contains(op))
      continue;
    if (mayDie.contains(op) && isOpTriviallyDead(op)) {
      feedersOf(op);
      op->walk([&](Operation *nested) { erased.insert(nested); });
      rewriter.eraseOp(op);
      continue;
    }
    std::string why;
    bool worthARemark = false;
    SmallVector<Operation *> feeders;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        feeders.push_back(def);
    if (succeeded(raiseRotation(op, rewriter, why, worthARemark, &shared))) {
      erased.insert(op);
      mayDie.insert(feeders.begin(), feeders.end());
    } else if (remarks && worthARemark) {
      pending.emplace_back(op, why);
    }
  }
  evaluated = shared.numEvaluated();
  // A remark for what stays unraised, unless the op only reshapes or
  // continues a rotation that was raised (vLLM's [T, H*D] view of a raised
  // [T, H, D] rotation).
  for (auto &[op, why] : pending) {
    if (erased.contains(op))
      continue;
    bool feedsOnRaised = false;
    SmallVector<std::pair<Operation *, int>> stack{{op, 0}};
    while (!stack.empty() && !feedsOnRaised) {
      auto [current, depth] = stack.pop_back_val();
      for (Value operand : current->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def)
          continue;
        if (isa<ApplyOp>(def))
          feedsOnRaised = true;
        else if (depth < 8)
          stack.push_back({def, depth + 1});
      }
    }
    if (!feedsOnRaised)
      op->emitRemark("rope-raise: not raised: ") << why;
  }
  // The QK-norm before a raised rotation and the quantization after it.
  // A rotation the host's rewrites computed twice is raised once.
  {
    DenseSet<Operation *> keep;
    for (auto [original, fused] : norms)
      for (Value value : {original, fused})
        if (Operation *def = value.getDefiningOp())
          keep.insert(def);
    IRRewriter merger(root->getContext());
    mergeDuplicateRotations(root, merger, keep);
  }
  raiseNeighbours(root, norms);
  // A rotation (with its neighbours) inserted into a KV cache: one rope.apply
  // with slots writing into the cache.
  raiseCacheAppends(root);
  // Attention after the rotations, so that rope.apply produces Q and K.
  raiseAttention(root, remarks);
}
} // namespace
