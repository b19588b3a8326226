//===- GuardedValueBounds.h - Value bounds within shapes --------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream's ValueBoundsConstraintSet walks the backward slice of a size and
// asks every op on it for constraints. `tensor.dim %t, %c9` on a rank-2
// tensor verifies (the index is a run-time value; reading it is undefined
// behaviour, not an invalid op), and its bounds read dim 9 of the type's
// shape: past the end of an array, a crash or a garbage size in the host's
// compiler. The raise asks such questions of whatever IR a frontend hands
// it, so every query of ours goes through these wrappers: they stop the walk
// at any dim op whose constant index is outside its source's rank (or whose
// source is unranked), and at a fixed number of visited values, so a query
// on a whole model with dynamic shapes stays cheap.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_GUARDEDVALUEBOUNDS_H
#define ROPE_DIALECT_ROPE_UTILS_GUARDEDVALUEBOUNDS_H

#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::rope {

/// Whether the bounds of `value` (an index value, or dim `dim` of a shaped
/// value) must not be asked of its defining op: a tensor.dim or memref.dim
/// whose constant index is outside its source's rank, or whose source is
/// unranked.
bool isUnsafeForValueBounds(Value value, std::optional<int64_t> dim);

/// Whether `lhs == rhs` is proven by value bounds (false when unknown).
bool provablyEqual(const ValueBoundsConstraintSet::Variable &lhs,
                   const ValueBoundsConstraintSet::Variable &rhs);

/// `ValueBoundsConstraintSet::computeConstantBound`, guarded.
FailureOr<int64_t>
guardedConstantBound(presburger::BoundType type,
                     const ValueBoundsConstraintSet::Variable &var,
                     bool closedUB = false);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_UTILS_GUARDEDVALUEBOUNDS_H
