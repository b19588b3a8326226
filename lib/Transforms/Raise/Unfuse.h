//===- Unfuse.h - IR the raises read, as frontends spell it -----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What rope-raise does to a module before it reads it: a host's elementwise
// fusion and canonicalization put values the raises need as tensors inside
// payloads, or read one tensor through two views; these semantics-preserving
// rewrites undo that, so the readers meet the tensors the frontend wrote.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_UNFUSE_H
#define ROPE_LIB_TRANSFORMS_RAISE_UNFUSE_H

#include "mlir/IR/Operation.h"

namespace mlir::rope::raise {

/// Undoes what linalg-fuse-elementwise-ops does to tensors the raisings
/// read: in every linalg.generic under `root`, a payload value that depends
/// on fewer loops than a value computed from it (a rotation fused into the
/// contraction that reads it, or into a broadcast of it; cos/sin computed
/// inside the op that multiplies by them) is computed by a generic of its
/// own over those loops, which the op reads as an input. A value the op
/// widens (extf, possibly times constants) is materialized before the
/// widening, and a narrowing (truncf) the op reads over more loops (a
/// broadcast, a contraction) is materialized even though it computes
/// nothing else: the bf16 tensors a bf16 model had.
/// Semantics preserving; the frontends' unfused IR has no such values.
void materializeFusedOperands(Operation *root);

/// Makes two expand_shapes of one tensor that differ only in unit dims
/// (canonicalize folds the copy between a projection's [H, D] view and its
/// [1, H, 1, D] view into two expands of the flat [H*D]) read one another:
/// the one with more dims becomes an expand of the other, so that the
/// algebra reads both as one leaf (it does not look through a reshape that
/// mixes a frame with channels). Semantics preserving.
void shareReshapeSources(Operation *root);

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_UNFUSE_H
