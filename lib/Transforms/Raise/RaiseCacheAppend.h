//===- RaiseCacheAppend.h - A rotation inserted into a cache ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_RAISECACHEAPPEND_H
#define ROPE_LIB_TRANSFORMS_RAISE_RAISECACHEAPPEND_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds the pattern rooted at `tensor.insert_slice` that folds the insertion
/// of a rope.apply's only result into a KV cache into one rope.apply with
/// `slots` writing into the cache (RaiseCacheAppend.cpp states the rules).
void populateRopeRaiseCacheAppendPatterns(RewritePatternSet &patterns);

/// Tries the fold once on every `tensor.insert_slice` under `root`.
void raiseCacheAppends(Operation *root);

} // namespace mlir::rope

#endif // ROPE_LIB_TRANSFORMS_RAISE_RAISECACHEAPPEND_H
