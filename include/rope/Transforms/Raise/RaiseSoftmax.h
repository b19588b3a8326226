//===- RaiseSoftmax.h - Written-out softmax to linalg.softmax ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_RAISE_RAISESOFTMAX_H
#define ROPE_TRANSFORMS_RAISE_RAISESOFTMAX_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds a pattern that replaces a softmax written out in structured ops,
///   e = exp(x − broadcast(max_d x)),  p = e / broadcast(sum_d e),
/// by `linalg.softmax dimension(d) ins(x)`. It is rooted at the division, and
/// recognizes the form upstream's linalg.softmax decomposition produces
/// (linalg.generic reductions, exp(x − max) fused in one generic) as well as
/// the frontend form (linalg.reduce, linalg.broadcast, linalg.sub/exp/div or
/// the equivalent generics), in any split of the elementwise steps over ops:
/// every value is followed through its producers' payloads. It only raises
/// when the max is of the same x that is shifted, the sum is of the same e
/// that is divided, both reduce over d, with −inf (or NaN for maxnumf, or
/// the lowest float) and zero as initial values, and every op between x and
/// the division is used only by the softmax (nothing is computed twice).
/// `remarks`: once a division by a row sum is found, say why it is not raised.
void populateRopeRaiseSoftmaxPatterns(RewritePatternSet &patterns,
                                      bool remarks = false);

/// Applies the patterns once to every division under `root` (not folding
/// the rest of the IR).
void raiseSoftmax(Operation *root, bool remarks = false);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_RAISE_RAISESOFTMAX_H
