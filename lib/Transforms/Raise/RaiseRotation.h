//===- RaiseRotation.h - A written-out rotation to rope.apply ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_RAISEROTATION_H
#define ROPE_LIB_TRANSFORMS_RAISE_RAISEROTATION_H

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::rope::raise {

class ElementAlgebra;

/// Raises the rotation `op` ends, if it is one: replaces `op` and returns
/// success. Otherwise leaves the IR unchanged, sets `why`, and sets
/// `worthARemark` when `op` ends a computation that multiplies by a cos or
/// sin (the last op of a rotation-shaped computation). `shared`: an algebra
/// kept across candidates (rope-raise's driver), else one per call.
LogicalResult raiseRotation(Operation *op, RewriterBase &rewriter,
                            std::string &why, bool &worthARemark,
                            ElementAlgebra *shared = nullptr);

/// Adds the pattern that calls raiseRotation on any op (`remarks`: say why
/// a rotation-shaped computation is not raised).
void populateRaiseRotationPatterns(RewritePatternSet &patterns, bool remarks);

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_RAISEROTATION_H
