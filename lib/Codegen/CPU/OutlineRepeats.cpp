//===- OutlineRepeats.cpp - One function for a model's repeated layers ----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A whole model lowered to one function repeats its layer's code once per
// layer, on other weights: every pass after bufferization and LLVM then
// compile the same layer 32 times (issue 33). This finds the repeated
// stretch of a body's top-level ops, proves each repeat is the first one
// with other inputs, and calls one outlined copy per repeat.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Outlining.h"
#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEOUTLINEREPEATSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Weights: passed to the outlined function, whatever global they name.
bool isPassedGlobal(Operation *op) { return isa<memref::GetGlobalOp>(op); }

/// Constants without operands: cloned into the outlined function when every
/// repeat uses an equal one.
bool isClonedConstant(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

/// Top-level ops that belong to no repeat: they have no operands, so they
/// stay where they are and the call after them reads them.
bool staysOutside(Operation *op) {
  return isPassedGlobal(op) || isClonedConstant(op);
}

/// A hash of what a top-level op is, not of what it reads: equal repeats
/// give equal sequences. A global's name is left out (each layer has its
/// own weights).
llvm::hash_code shapeHash(Operation *op) {
  if (isPassedGlobal(op))
    return llvm::hash_combine(op->getName(), op->getResultTypes());
  llvm::hash_code hash = OperationEquivalence::computeHash(
      op, OperationEquivalence::ignoreHashValue,
      OperationEquivalence::ignoreHashValue,
      OperationEquivalence::IgnoreLocations);
  // Regions are not part of computeHash; their sizes tell loops apart.
  op->walk([&](Operation *nested) {
    if (nested != op)
      hash = llvm::hash_combine(hash, nested->getName());
  });
  return hash;
}

/// One repeat: the top-level ops it runs (those that stay outside left
/// out) and the index range of the body it covers.
struct Repeat {
  int64_t begin = 0, end = 0;
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 32> opSet;

  bool holds(Value value, Block *body) const {
    Operation *owner = value.getDefiningOp();
    if (!owner)
      owner = cast<BlockArgument>(value).getOwner()->getParentOp();
    Operation *top = body->findAncestorOpInBlock(*owner);
    return top && opSet.contains(top);
  }
};

/// Proves `other` computes what `first` does with other inputs, op for op,
/// and records how: the values from outside `first` in the order it first
/// reads them (`inputs`), `other`'s value for each (`otherInputs`), the
/// constants to clone, and `mapping` from `first`'s values to `other`'s.
struct RepeatMatcher {
  Block *body;
  const Repeat &first, &other;
  SmallVector<Value> inputs, otherInputs;
  DenseMap<Value, int64_t> slots;
  llvm::SetVector<Operation *> cloned;
  IRMapping mapping;

  RepeatMatcher(Block *body, const Repeat &first, const Repeat &other)
      : body(body), first(first), other(other) {}

  bool match() {
    if (first.ops.size() != other.ops.size())
      return false;
    for (auto [a, b] : llvm::zip(first.ops, other.ops))
      if (!matchOp(a, b))
        return false;
    return true;
  }

private:
  bool matchOp(Operation *a, Operation *b) {
    if (a->getName() != b->getName() ||
        a->getNumOperands() != b->getNumOperands() ||
        a->getNumSuccessors() != b->getNumSuccessors() ||
        a->getResultTypes() != b->getResultTypes() ||
        a->getNumRegions() != b->getNumRegions() ||
        a->getPropertiesAsAttribute() != b->getPropertiesAsAttribute() ||
        a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
      return false;
    for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands()))
      if (!matchValue(x, y))
        return false;
    for (auto [x, y] : llvm::zip(a->getSuccessors(), b->getSuccessors()))
      if (mapping.lookupOrNull(x) != y)
        return false;
    for (auto [x, y] : llvm::zip(a->getResults(), b->getResults()))
      mapping.map(x, y);
    for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions())) {
      if (ra.getBlocks().size() != rb.getBlocks().size())
        return false;
      // Blocks and their arguments first: successors may name later blocks.
      for (auto [ba, bb] : llvm::zip(ra, rb)) {
        if (ba.getArgumentTypes() != bb.getArgumentTypes() ||
            ba.getOperations().size() != bb.getOperations().size())
          return false;
        mapping.map(&ba, &bb);
        for (auto [x, y] : llvm::zip(ba.getArguments(), bb.getArguments()))
          mapping.map(x, y);
      }
      for (auto [ba, bb] : llvm::zip(ra, rb))
        for (auto [oa, ob] : llvm::zip(ba, bb))
          if (!matchOp(&oa, &ob))
            return false;
    }
    return true;
  }

  bool matchValue(Value a, Value b) {
    if (first.holds(a, body))
      return mapping.lookupOrNull(a) == b;
    if (other.holds(b, body))
      return false;
    Operation *defA = a.getDefiningOp(), *defB = b.getDefiningOp();
    bool constantA = defA && isClonedConstant(defA);
    bool constantB = defB && isClonedConstant(defB);
    if (constantA || constantB) {
      if (!constantA || !constantB ||
          !OperationEquivalence::isEquivalentTo(
              defA, defB, OperationEquivalence::IgnoreLocations))
        return false;
      cloned.insert(defA);
      return true;
    }
    // From outside: the same argument of the outlined function in both.
    auto [it, inserted] = slots.try_emplace(a, inputs.size());
    if (inserted) {
      inputs.push_back(a);
      otherInputs.push_back(b);
      return true;
    }
    return otherInputs[it->second] == b;
  }
};

struct RopeOutlineRepeatsPass
    : rope::impl::RopeOutlineRepeatsPassBase<RopeOutlineRepeatsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions)
      if (!function.isExternal() && function.getBody().hasOneBlock())
        runOnFunction(function, symbols);
  }

  void runOnFunction(func::FuncOp function, SymbolTable &symbols);
  void outline(Block *body, const Repeat &reference,
               const RepeatMatcher &witness,
               ArrayRef<std::unique_ptr<RepeatMatcher>> matches,
               SymbolTable &symbols, func::FuncOp function);
};

void RopeOutlineRepeatsPass::runOnFunction(func::FuncOp function,
                                           SymbolTable &symbols) {
  Block *body = &function.getBody().front();
  SmallVector<Operation *> ops;
  SmallVector<llvm::hash_code> hashes;
  SmallVector<int64_t> sizes;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body->without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
    hashes.push_back(shapeHash(&op));
    int64_t size = 0;
    op.walk([&](Operation *) { ++size; });
    sizes.push_back(size);
  }
  int64_t n = ops.size();
  if (n < 4)
    return;

  // The period: the most frequent distance from an op to the next equal
  // one (ops that stay outside aside: constants repeat everywhere).
  DenseMap<int64_t, int64_t> distances;
  {
    DenseMap<llvm::hash_code, int64_t> last;
    for (int64_t i = 0; i < n; ++i) {
      if (staysOutside(ops[i]))
        continue;
      auto [it, inserted] = last.try_emplace(hashes[i], i);
      if (!inserted) {
        ++distances[i - it->second];
        it->second = i;
      }
    }
  }
  SmallVector<std::pair<int64_t, int64_t>> candidates; // (count, period)
  for (auto [period, count] : distances)
    candidates.push_back({count, period});
  llvm::sort(candidates, [](auto x, auto y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  if (candidates.size() > 8)
    candidates.resize(8);

  // For each candidate, the longest stretch where every op equals the one
  // a period later; the candidate whose repeats cover the most ops wins.
  int64_t bestPeriod = 0, bestStart = 0, bestLength = 0, bestCovered = 0;
  for (auto [count, period] : candidates) {
    if (period > n / 2)
      continue;
    int64_t run = 0;
    for (int64_t i = 0; i + period < n; ++i) {
      run = hashes[i] == hashes[i + period] ? run + 1 : 0;
      // [i + 1 - run, i + period] repeats with `period`.
      int64_t length = run + period;
      int64_t covered = run >= period ? (length / period) * period : 0;
      if (covered > bestCovered) {
        bestCovered = covered;
        bestPeriod = period;
        bestStart = i + 1 - run;
        bestLength = length;
      }
    }
  }
  if (bestPeriod == 0)
    return;

  // Values crossing the cut before op `cut` (those after op cut - 1), and
  // whether one is a view of a stack allocation.
  TopLevelLiveness liveness =
      computeTopLevelLiveness(body, ops, index, staysOutside);
  auto liveBefore = [&](int64_t cut) {
    return cut == 0 ? 0 : liveness.live[cut - 1];
  };
  auto blockedBefore = [&](int64_t cut) {
    return cut == 0 ? 0 : liveness.blocked[cut - 1];
  };

  // The phase: repeats start at bestStart + phase + k * period; of the
  // phases that keep the most repeats, the one with the fewest values live
  // at its cuts, and none with a stack value crossing one.
  int64_t bestPhase = -1, bestRepeats = 0, bestLive = 0;
  for (int64_t phase = 0; phase < bestPeriod; ++phase) {
    int64_t start = bestStart + phase;
    int64_t count = (bestLength - phase) / bestPeriod;
    if (count < 2)
      continue;
    int64_t liveAtCuts = 0;
    bool ok = true;
    for (int64_t k = 0; k <= count && ok; ++k) {
      int64_t cut = start + k * bestPeriod;
      ok = blockedBefore(cut) == 0;
      liveAtCuts += liveBefore(cut);
    }
    if (!ok)
      continue;
    if (count > bestRepeats ||
        (count == bestRepeats && liveAtCuts < bestLive)) {
      bestPhase = phase;
      bestRepeats = count;
      bestLive = liveAtCuts;
    }
  }
  if (bestPhase < 0)
    return;

  std::vector<Repeat> repeats(bestRepeats);
  int64_t start = bestStart + bestPhase;
  for (int64_t k = 0; k < bestRepeats; ++k) {
    Repeat &repeat = repeats[k];
    repeat.begin = start + k * bestPeriod;
    repeat.end = repeat.begin + bestPeriod;
    for (int64_t i = repeat.begin; i < repeat.end; ++i)
      if (!staysOutside(ops[i])) {
        repeat.ops.push_back(ops[i]);
        repeat.opSet.insert(ops[i]);
      }
  }
  int64_t repeatSize = 0;
  for (Operation *op : repeats.front().ops)
    repeatSize += sizes[index.lookup(op)];
  if (repeatSize < minOps || repeats.front().ops.empty())
    return;

  // The reference: the first repeat that most others match (the first
  // layer often reads the prologue's values another way).
  for (int64_t reference = 0; reference < std::min<int64_t>(bestRepeats, 3);
       ++reference) {
    // Matching the reference against itself records its inputs (the
    // function's arguments) in the order every other match reads them.
    SmallVector<std::unique_ptr<RepeatMatcher>> matches;
    const RepeatMatcher *witness = nullptr;
    for (int64_t k = 0; k < bestRepeats; ++k) {
      auto matcher =
          std::make_unique<RepeatMatcher>(body, repeats[reference], repeats[k]);
      if (!matcher->match())
        continue;
      if (k == reference)
        witness = matcher.get();
      matches.push_back(std::move(matcher));
    }
    if (!witness || matches.size() < 2 ||
        2 * static_cast<int64_t>(matches.size()) < bestRepeats)
      continue;
    outline(body, repeats[reference], *witness, matches, symbols, function);
    return;
  }
}

void RopeOutlineRepeatsPass::outline(
    Block *body, const Repeat &reference, const RepeatMatcher &witness,
    ArrayRef<std::unique_ptr<RepeatMatcher>> matches, SymbolTable &symbols,
    func::FuncOp function) {
  MLIRContext *context = &getContext();
  // Outputs: the results of the reference's top-level ops that any repeat
  // uses after itself, by (op, result) position.
  SmallVector<std::pair<int64_t, int64_t>> outputPositions;
  for (int64_t opIndex = 0, end = reference.ops.size(); opIndex < end;
       ++opIndex)
    for (int64_t r = 0, e = reference.ops[opIndex]->getNumResults(); r < e; ++r)
      if (llvm::any_of(matches, [&](const auto &match) {
            Value value = match->other.ops[opIndex]->getResult(r);
            return llvm::any_of(value.getUsers(), [&](Operation *user) {
              return !match->other.opSet.contains(
                  body->findAncestorOpInBlock(*user));
            });
          }))
        outputPositions.push_back({opIndex, r});

  SmallVector<Type> inputTypes, outputTypes;
  for (Value value : witness.inputs)
    inputTypes.push_back(value.getType());
  for (auto [opIndex, r] : outputPositions)
    outputTypes.push_back(reference.ops[opIndex]->getResult(r).getType());

  // The function: a clone of the reference.
  Location loc = reference.ops.front()->getLoc();
  OpBuilder moduleBuilder(context);
  moduleBuilder.setInsertionPointAfter(function);
  std::string name = (function.getSymName() + "__repeat").str();
  func::FuncOp callee = createOutlinedFunction(
      moduleBuilder, loc, name, inputTypes, outputTypes, symbols);
  Block *entry = &callee.getBody().front();
  IRMapping cloneMapping;
  for (auto [value, arg] : llvm::zip(witness.inputs, entry->getArguments()))
    cloneMapping.map(value, arg);
  OpBuilder builder = OpBuilder::atBlockBegin(entry);
  for (Operation *constant : witness.cloned)
    builder.clone(*constant, cloneMapping);
  for (Operation *op : reference.ops)
    builder.clone(*op, cloneMapping);
  SmallVector<Value> returned;
  for (auto [opIndex, r] : outputPositions)
    returned.push_back(
        cloneMapping.lookup(reference.ops[opIndex]->getResult(r)));
  func::ReturnOp::create(builder, loc, returned);

  // Each repeat, in order, becomes a call after its last op (what it reads
  // is defined before that). A repeat may read an earlier one's results:
  // those are the earlier call's by then.
  IRMapping replaced;
  for (const auto &match : matches) {
    const Repeat &repeat = match->other;
    SmallVector<Value> operands;
    for (Value value : match->otherInputs)
      operands.push_back(replaced.lookupOrDefault(value));
    builder.setInsertionPointAfter(repeat.ops.back());
    auto call = func::CallOp::create(builder, loc, callee, operands);
    for (auto [result, position] :
         llvm::zip(call.getResults(), outputPositions)) {
      Value value = repeat.ops[position.first]->getResult(position.second);
      value.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !repeat.opSet.contains(
            body->findAncestorOpInBlock(*use.getOwner()));
      });
      replaced.map(value, result);
    }
    for (Operation *op : llvm::reverse(repeat.ops))
      op->erase();
  }
}

} // namespace
