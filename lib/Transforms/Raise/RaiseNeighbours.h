//===- RaiseNeighbours.h - Neighbours folded into rope.apply ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_RAISENEIGHBOURS_H
#define ROPE_LIB_TRANSFORMS_RAISE_RAISENEIGHBOURS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds two patterns rooted at `rope.apply`: one folds an RMSNorm over the
/// head dim written out in linalg (Qwen3's / Gemma-3's QK-norm as torch-mlir
/// emits it) that produces the op's input into `norm(%w)` with
/// `norm_epsilon`; one folds a quantization of the op's only result (a scale,
/// a saturating clamp, a round-to-nearest-even conversion to f8E4M3FN,
/// f8E5M2 or i8) into `quant_scale(%s)` with a destination of the storage
/// type. Each folds only when the matched IR computes what the op computes
/// (RaiseNeighbours.cpp states the rules).
void populateRopeRaiseNeighbourPatterns(RewritePatternSet &patterns);

/// Before the rotation raise: gathers each RMSNorm over the last dim that
/// the norm fold would accept (its result, or a transpose of it) into one
/// linalg.generic computing the same scalar ops in the same order, which the
/// uses of the result read instead. The rotation raise reads that generic as
/// one tensor (it does not look through rsqrt), so a rotation of a
/// normalized tensor is raised with it as its input. Returns the pairs
/// (original result, gathered generic) for `raiseNeighbours`.
SmallVector<std::pair<Value, Value>> isolateNorms(Operation *root);

/// Tries both folds once on every `rope.apply` under `root` (the norm first)
/// and erases the ops that only fed what was folded. Each gathered norm of
/// `isolated` that no fold consumed is put back (its original result
/// restored).
void raiseNeighbours(Operation *root,
                     ArrayRef<std::pair<Value, Value>> isolated = {});

} // namespace mlir::rope

#endif // ROPE_LIB_TRANSFORMS_RAISE_RAISENEIGHBOURS_H
