//===- RopeRaise.h - Decomposed RoPE back to rope.apply ---------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_RAISE_ROPERAISE_H
#define ROPE_TRANSFORMS_RAISE_ROPERAISE_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds a pattern that replaces a rotary position embedding written out in
/// linalg and tensor ops (as torch-mlir, StableHLO -> linalg and ONNX ->
/// linalg emit it: rotate_half, the expanded half-split, interleaved pairs,
/// complex multiplication, partial rotation, a magnitude) by `rope.apply`.
/// It is rooted at the op that ends the rotation, reads every channel of
/// its result as a polynomial over the tensors it is computed from, and
/// raises only when each channel is exactly a*(x[k] cos - x[k'] sin) or
/// a*(x[k] cos + x[k'] sin) of one input x, one pair layout, one magnitude,
/// with cos/sin computed from integer positions times a constant frequency
/// table, or gathered from tables by positions (docs/DESIGN.md, "Raising").
/// `remarks`: on the last op of a computation that multiplies by a cos or
/// sin but is not raised, say which check failed.
void populateRopeRaisePatterns(RewritePatternSet &patterns,
                               bool remarks = false);

/// Applies the pattern once to every op under `root`, last ops first, and
/// erases the ops that only fed a raised rotation.
void raiseRope(Operation *root, bool remarks = false);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_RAISE_ROPERAISE_H
