//===- GuardedValueBounds.cpp - Value bounds that never read past a shape -===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/GuardedValueBounds.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Values a guarded query visits at most. Sizes in frontend IR are proven
/// equal a few ops away (a tensor.dim through a reshape or two); the cap
/// keeps a query on a deep model with dynamic shapes from walking the whole
/// model for each slice it is asked about.
constexpr int64_t kVisitBudget = 512;

/// Whether a dim op's constant `index` may be read on `source`.
bool isReadableDim(Value source, std::optional<int64_t> index) {
  auto type = dyn_cast<ShapedType>(source.getType());
  if (!type || !type.hasRank())
    return false;
  // A dynamic index is no constraint: the op's bounds skip it.
  return !index || (*index >= 0 && *index < type.getRank());
}

/// The stop condition of every guarded query: unsafe dim ops, and the end
/// of the budget.
ValueBoundsConstraintSet::StopConditionFn makeStopCondition() {
  auto visited = std::make_shared<int64_t>(0);
  return [visited](Value value, std::optional<int64_t> dim,
                   ValueBoundsConstraintSet &) {
    return ++*visited > kVisitBudget || isUnsafeForValueBounds(value, dim);
  };
}

/// Gives access to the constructor that takes a stop condition.
class GuardedConstraintSet : public ValueBoundsConstraintSet {
public:
  explicit GuardedConstraintSet(MLIRContext *context)
      : ValueBoundsConstraintSet(context, makeStopCondition()) {}
};

} // namespace

bool mlir::rope::isUnsafeForValueBounds(Value value,
                                        std::optional<int64_t> dim) {
  if (dim) {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || !type.hasRank() || *dim < 0 || *dim >= type.getRank())
      return true;
  }
  if (auto dimOp = value.getDefiningOp<tensor::DimOp>())
    return !isReadableDim(dimOp.getSource(), dimOp.getConstantIndex());
  if (auto dimOp = value.getDefiningOp<memref::DimOp>())
    return !isReadableDim(dimOp.getSource(), dimOp.getConstantIndex());
  return false;
}

static bool isSafeVariable(const ValueBoundsConstraintSet::Variable &var) {
  // A Variable is an affine map over value/dim operands; a query on an
  // unsafe operand is refused before any op is asked.
  for (const auto &[value, dim] : var.getOperands())
    if (isUnsafeForValueBounds(value, dim))
      return false;
  return true;
}

bool mlir::rope::provablyEqual(const ValueBoundsConstraintSet::Variable &lhs,
                               const ValueBoundsConstraintSet::Variable &rhs) {
  if (!isSafeVariable(lhs) || !isSafeVariable(rhs))
    return false;
  GuardedConstraintSet constraints(lhs.getContext());
  return constraints.populateAndCompare(lhs, ValueBoundsConstraintSet::EQ, rhs);
}

FailureOr<int64_t>
mlir::rope::guardedConstantBound(presburger::BoundType type,
                                 const ValueBoundsConstraintSet::Variable &var,
                                 bool closedUB) {
  if (!isSafeVariable(var))
    return failure();
  return ValueBoundsConstraintSet::computeConstantBound(
      type, var, makeStopCondition(), closedUB);
}
