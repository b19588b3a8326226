//===- IRGuards.cpp - Reject parsed IR that crashes MLIR's passes ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verified IR can still hold what its ops' semantics leave undefined and
// MLIR 22's passes do not survive. The ops are matched by name: the check
// needs no dialect library, only the IR.
//
//===----------------------------------------------------------------------===//

#include "rope/Guards/InputGuards.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

bool isDimOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return (name == "tensor.dim" || name == "memref.dim") &&
         op->getNumOperands() == 2;
}

/// Whether `index`, the folded index of dim op `op`, is a constant inside
/// its source's rank.
bool dimIndexInRank(Operation *op, Attribute index) {
  auto shaped = dyn_cast<ShapedType>(op->getOperand(0).getType());
  auto constant = dyn_cast_if_present<IntegerAttr>(index);
  return shaped && shaped.hasRank() && constant &&
         !constant.getValue().isNegative() &&
         constant.getValue().ult(shaped.getRank());
}

/// What the canonicalizer's folding would make of index and integer values,
/// for checks on constants: an upstream pass crashes on a dim index of -1
/// whether the IR spells it `arith.constant -1` or `arith.subi %c0, %c1`,
/// which the canonicalizer folds into that constant before the pattern that
/// crashes sees it.
class FoldedConstants {
public:
  /// The integer `value` holds after folding, if folding makes it constant.
  std::optional<APInt> integer(Value value) {
    auto attr = dyn_cast_if_present<IntegerAttr>(fold(value));
    if (!attr)
      return std::nullopt;
    return attr.getValue();
  }

private:
  /// The attribute `value` folds to, or null: a constant; the result of an
  /// op without regions whose fold, given its operands' folded attributes,
  /// yields an attribute or a value that folds in turn (arith, index,
  /// affine.apply, tensor.dim of a static size, tensor.extract of a
  /// constant, ...); what the taken branch of an `scf.if` on a constant
  /// yields; the induction variable of an `scf.for` that the canonicalizer
  /// unrolls because it runs once. Branches between blocks (`cf.cond_br` on
  /// a constant) are not followed: the C API's crash recovery is the net
  /// there. The fold runs on a detached clone: a fold that updates its op in
  /// place must not change the IR being checked.
  Attribute fold(Value value) {
    Attribute constant;
    if (matchPattern(value, m_Constant(&constant)))
      return constant;
    auto [it, inserted] = memo.try_emplace(value, Attribute());
    // Also a value being evaluated: a cycle folds to nothing.
    if (!inserted || budget == 0 || depth == kMaxDepth)
      return it->second;
    --budget;
    ++depth;
    Attribute result = foldUncached(value);
    --depth;
    memo[value] = result;
    return result;
  }

  Attribute foldUncached(Value value) {
    if (auto argument = dyn_cast<BlockArgument>(value))
      return foldSingleTripInductionVariable(argument);
    Operation *def = value.getDefiningOp();
    if (def && def->getName().getStringRef() == "scf.if")
      return foldTakenBranch(def, cast<OpResult>(value).getResultNumber());
    if (!def || def->getNumRegions() != 0 || def->getNumSuccessors() != 0)
      return {};
    SmallVector<Attribute> operands;
    for (Value operand : def->getOperands())
      operands.push_back(fold(operand));
    // A dim op is folded only with its index inside the rank: the one
    // outside is what the check refuses, and no folder should see it.
    if (isDimOp(def) && !dimIndexInRank(def, operands[1]))
      return {};
    Operation *clone = def->clone();
    SmallVector<OpFoldResult> results;
    OpFoldResult folded;
    if (succeeded(clone->fold(operands, results)) &&
        results.size() == def->getNumResults())
      folded = results[cast<OpResult>(value).getResultNumber()];
    clone->destroy();
    if (!folded)
      return {};
    if (auto attr = dyn_cast<Attribute>(folded))
      return attr;
    // An in-place fold returns the clone's own result: nothing known.
    Value same = cast<Value>(folded);
    if (same.getDefiningOp() == clone)
      return {};
    return fold(same);
  }

  /// Result `number` of an `scf.if` (matched by name) whose condition folds
  /// to a constant: what the branch taken yields, as the canonicalizer
  /// inlines that branch.
  Attribute foldTakenBranch(Operation *branch, unsigned number) {
    std::optional<APInt> condition;
    if (branch->getNumOperands() == 1 && branch->getNumRegions() == 2)
      condition = integer(branch->getOperand(0));
    if (!condition || condition->getBitWidth() != 1)
      return {};
    Region &taken = branch->getRegion(condition->isOne() ? 0 : 1);
    if (!taken.hasOneBlock())
      return {};
    Block &body = taken.front();
    Operation *yield = body.empty() ? nullptr : &body.back();
    if (!yield || yield->getName().getStringRef() != "scf.yield" ||
        number >= yield->getNumOperands())
      return {};
    return fold(yield->getOperand(number));
  }

  /// An `scf.for` (matched by name) whose constant bounds run it once: its
  /// induction variable is its lower bound.
  Attribute foldSingleTripInductionVariable(BlockArgument argument) {
    Operation *loop = argument.getOwner()->getParentOp();
    if (!loop || loop->getName().getStringRef() != "scf.for" ||
        argument.getArgNumber() != 0 || loop->getNumOperands() < 3 ||
        argument.getOwner() != &loop->getRegion(0).front())
      return {};
    std::optional<APInt> lower = integer(loop->getOperand(0));
    std::optional<APInt> upper = integer(loop->getOperand(1));
    std::optional<APInt> step = integer(loop->getOperand(2));
    if (!lower || !upper || !step || lower->getBitWidth() != 64 ||
        upper->getBitWidth() != 64 || step->getBitWidth() != 64 ||
        !step->isStrictlyPositive() || !lower->slt(*upper))
      return {};
    // Both signed and unsigned loops run once when upper - lower <= step,
    // without overflow: the difference is taken in 65 bits.
    APInt trip = upper->sext(65) - lower->sext(65);
    if (trip.sgt(step->sext(65)))
      return {};
    return IntegerAttr::get(argument.getType(), *lower);
  }

  DenseMap<Value, Attribute> memo;
  /// Values evaluated in one check, and producers followed from one value:
  /// bounds on its time and on its stack (it runs on the caller's thread)
  /// for IR whose index values are long chains.
  unsigned budget = 4096;
  unsigned depth = 0;
  static constexpr unsigned kMaxDepth = 128;
};

/// The type `value` has once a `tensor.cast` producing it is folded into its
/// user, as canonicalization folds a cast that only drops static sizes
/// (tensor::canFoldIntoConsumerOp, read by name): the cast's source type;
/// `value`'s own type otherwise.
Type typeAfterCastFold(Value value, bool &folded) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getName().getStringRef() != "tensor.cast" ||
      def->getNumOperands() != 1)
    return value.getType();
  auto source = dyn_cast<RankedTensorType>(def->getOperand(0).getType());
  auto result = dyn_cast<RankedTensorType>(value.getType());
  if (!source || !result || source.getRank() != result.getRank() ||
      source.getElementType() != result.getElementType())
    return value.getType();
  bool moreStatic = false;
  for (auto [s, r] : llvm::zip(source.getShape(), result.getShape())) {
    if (!ShapedType::isDynamic(r) && s != r)
      return value.getType();
    moreStatic |= ShapedType::isDynamic(r) && !ShapedType::isDynamic(s);
  }
  if (!moreStatic)
    return value.getType();
  folded = true;
  return source;
}

/// Whether the static sizes of `types`, read through `maps`, agree on every
/// loop (results that are not a loop dim are not compared).
bool staticExtentsAgree(ArrayRef<AffineMap> maps, ArrayRef<Type> types) {
  DenseMap<unsigned, int64_t> extents;
  for (auto [map, type] : llvm::zip(maps, types)) {
    auto shaped = dyn_cast<RankedTensorType>(type);
    if (!shaped || map.getNumResults() != shaped.getRank())
      continue;
    for (auto [expr, size] : llvm::zip(map.getResults(), shaped.getShape())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || ShapedType::isDynamic(size))
        continue;
      auto [it, inserted] = extents.try_emplace(dim.getPosition(), size);
      if (!inserted && it->second != size)
        return false;
    }
  }
  return true;
}

/// A destination-style op into which canonicalization would fold
/// `tensor.cast`s that give it contradicting static sizes: an op that fails
/// at run time as written, which the fold turns into IR that does not
/// verify (upstream's FoldTensorCastProducerOp, and rope's own folds for the
/// attention ops, MLIR 22). Ops with indexing maps (linalg.generic, the
/// rope attention ops: their tensor operands in map order) and rope.apply
/// (its input and init shaped alike).
bool castFoldContradicts(Operation *op) {
  StringRef name = op->getName().getStringRef();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  if (name == "rope.apply") {
    // With slots (operand segment 8: input, positions, offset, length, cos,
    // sin, norm_weight, quant_scale, slots, init) the init is a cache of its
    // own shape.
    std::optional<Attribute> segments =
        op->getInherentAttr("operandSegmentSizes");
    auto sizes = dyn_cast_if_present<DenseI32ArrayAttr>(segments ? *segments
                                                                 : Attribute());
    if (!sizes || sizes.size() != 10 || sizes[8] != 0 ||
        op->getNumOperands() < 2)
      return false;
    operands = {op->getOperand(0), op->getOperands().back()};
    auto type = dyn_cast<RankedTensorType>(operands[0].getType());
    if (!type)
      return false;
    // Input and init read alike.
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(type.getRank(), op->getContext());
    maps = {identity, identity};
  } else if (name == "linalg.generic" || name == "rope.attention" ||
             name == "rope.online_attention") {
    std::optional<Attribute> attr = op->getInherentAttr("indexing_maps");
    auto array = dyn_cast_if_present<ArrayAttr>(attr ? *attr : Attribute());
    if (!array)
      return false;
    for (Attribute map : array) {
      auto mapAttr = dyn_cast<AffineMapAttr>(map);
      if (!mapAttr)
        return false;
      maps.push_back(mapAttr.getValue());
    }
    for (Value operand : op->getOperands())
      if (name == "linalg.generic" || isa<RankedTensorType>(operand.getType()))
        operands.push_back(operand);
    if (operands.size() < maps.size())
      return false;
    operands.resize(maps.size());
  } else {
    return false;
  }
  bool folded = false;
  SmallVector<Type> types;
  for (Value operand : operands)
    types.push_back(typeAfterCastFold(operand, folded));
  return folded && !staticExtentsAgree(maps, types);
}

} // namespace

LogicalResult mlir::rope::checkIRSafety(Operation *root, std::string &reason) {
  FoldedConstants folded;
  WalkResult result = root->walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (castFoldContradicts(op)) {
      llvm::raw_string_ostream os(reason);
      os << "a " << name << " at " << op->getLoc()
         << " whose operands' tensor.casts, folded, give it contradicting "
            "static sizes (the op fails at run time as written; MLIR 22's "
            "canonicalization builds invalid IR from it, docs/RELIABILITY.md)";
      return WalkResult::interrupt();
    }
    if (name.starts_with("transform.structured.")) {
      // Tiling transforms take negative tile sizes and build slices of
      // negative size: invalid IR from a transform that reports success
      // (MLIR 22, transform.structured.fuse tile_sizes [0, 1, -1, 0]).
      for (NamedAttribute attr : op->getAttrs()) {
        auto sizes = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
        StringRef attrName = attr.getName().strref();
        if (!sizes ||
            (!attrName.contains("size") && !attrName.contains("num_threads")))
          continue;
        for (int64_t size : sizes.asArrayRef()) {
          // kDynamic marks a size given by an SSA value.
          if (size >= 0 || ShapedType::isDynamic(size))
            continue;
          llvm::raw_string_ostream os(reason);
          os << "a " << name << " at " << op->getLoc() << " with " << attrName
             << " entry " << size
             << " (negative: MLIR 22's tiling builds invalid slices from it, "
                "docs/RELIABILITY.md)";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    }
    if (name == "gpu.launch") {
      // Upstream's kernel outlining turns constant grid and block sizes into
      // i32 attributes (nvvm.maxntid); one outside (0, 2^31) makes LLVM's
      // NVPTX backend exit the process ("can't parse integer attribute").
      for (Value size : op->getOperands()) {
        std::optional<APInt> constant;
        if (isa<IndexType>(size.getType()))
          constant = folded.integer(size);
        if (!constant)
          continue;
        APInt value = *constant;
        if ((!value.isNegative() && !value.isZero() &&
             value.getActiveBits() < 32))
          continue;
        llvm::raw_string_ostream os(reason);
        os << "a gpu.launch at " << op->getLoc() << " with a constant size "
           << value.getSExtValue()
           << " outside (0, 2^31) (LLVM's NVPTX backend exits on it, "
              "docs/RELIABILITY.md)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (!isDimOp(op))
      return WalkResult::advance();
    auto shaped = dyn_cast<ShapedType>(op->getOperand(0).getType());
    std::optional<APInt> constant;
    if (shaped && shaped.hasRank())
      constant = folded.integer(op->getOperand(1));
    if (!constant)
      return WalkResult::advance();
    APInt index = *constant;
    // A dim index outside the rank is undefined behaviour that MLIR 22's
    // passes do not survive: a negative one crashes the canonicalizer; one
    // past the rank makes upstream's value bounds read the shape past its
    // end (ValueBoundsConstraintSet::getExpr), which one-shot bufferization
    // asks when it compares two slices offset by it (a SEGV the fuzzer found
    // at dim 2^31 - 1). rope's own passes still guard their value bounds
    // against it (GuardedValueBounds), for IR that reaches them unchecked.
    if (!index.isNegative() && index.ult(shaped.getRank()))
      return WalkResult::advance();
    llvm::raw_string_ostream os(reason);
    os << "a " << name << " of dim " << index.getSExtValue() << " of a rank-"
       << shaped.getRank() << " value at " << op->getLoc()
       << (index.isNegative()
               ? ": a negative dim index (undefined behaviour; MLIR 22's "
                 "canonicalizer crashes on it, docs/RELIABILITY.md)"
               : ": a dim index past the rank (undefined behaviour; MLIR "
                 "22's value bounds read past the shape on it, "
                 "docs/RELIABILITY.md)");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
