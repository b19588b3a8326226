//===- RotateKeysInScores.h - Rotate keys inside Q·Kᵀ -----------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_ATTENTION_ROTATEKEYSINSCORES_H
#define ROPE_TRANSFORMS_ATTENTION_ROTATEKEYSINSCORES_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Patterns of `rope-rotate-keys-in-scores`: a rope.online_attention whose
/// keys are a rope.apply result decomposed into linalg, and its scores
/// contraction over the rotated keys rewritten to rotate each key inside
/// the contraction's payload from the un-rotated key's halves and a cos/sin
/// table (the rotation of [1, 0], computed by a rope.apply of its own).
void populateRotateKeysInScoresPatterns(RewritePatternSet &patterns);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_ATTENTION_ROTATEKEYSINSCORES_H
