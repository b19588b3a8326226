//===- RaiseAttention.h - Raising written-out attention ---------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_RAISE_RAISEATTENTION_H
#define ROPE_TRANSFORMS_RAISE_RAISEATTENTION_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds a pattern rooted at a P·V contraction that replaces attention
/// written out in linalg on tensors (softmax(scale·Q·Kᵀ + mask)·V, in any
/// dim order, through reshapes, transposes and a GQA repeat of K/V) by
/// `rope.attention`, when every part of it is proven to be what the op's
/// contract says (RaiseAttention.cpp). `remarks`: on a contraction fed by a
/// softmax or an exp that is not raised, say which check failed.
void populateRopeRaiseAttentionPatterns(RewritePatternSet &patterns,
                                        bool remarks = false);

/// Tries every contraction under `root` once, in order, and erases the ops
/// that only fed a raised attention.
void raiseAttention(Operation *root, bool remarks = false);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_RAISE_RAISEATTENTION_H
