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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace mlir::rope {

/// Adds a pattern that replaces a softmax written out in structured ops,
///   e = exp(x − broadcast(max_d x)),  p = e / broadcast(sum_d e),
/// by `linalg.softmax dimension(d) ins(x)`. It is rooted at the division, and
/// recognizes the form upstream's linalg.softmax decomposition produces
/// (linalg.generic reductions, exp(x − max) fused in one generic) as well as
/// the frontend forms (linalg.reduce, linalg.broadcast, linalg.sub/exp/div or
/// the equivalent generics, keepdim rows through constant-0 maps or
/// expand_shape), in any split of the elementwise steps over ops: every
/// value is followed through its producers' payloads (by the softmax reader
/// the attention raise uses too). Static shapes only. It only raises
/// when the max is of the same x that is shifted, the sum is of the same e
/// that is divided, both reduce over d, with −inf (or NaN for maxnumf, or
/// the lowest float) and zero as initial values, and every op between x and
/// the division is used only by the softmax (nothing is computed twice).
/// `remarks`: once a division by a row sum is found, say why it is not raised.
void populateRopeRaiseSoftmaxPatterns(RewritePatternSet &patterns,
                                      bool remarks = false);

/// A softmax written out in structured ops, rooted at its division.
struct SoftmaxMatch {
  /// x, the value the softmax is of, and the dim it is over.
  Value input;
  unsigned dim = 0;
  /// The row max and the row sum.
  linalg::LinalgOp max, sum;
  /// The ops the softmax replaces (the division included): each used only
  /// inside the chain but for the division.
  SmallPtrSet<Operation *, 8> chain;
};

/// Why matchWrittenSoftmax failed: `op` null when the root is no division
/// of a softmax's shape at all; `remark` once it looks like a softmax (a
/// division by a row sum), so that a remark saying why is worth it.
struct SoftmaxMismatch {
  std::string why;
  Operation *op = nullptr;
  bool remark = false;
};

/// The softmax the rope-raise-softmax pattern raises (see above), matched at
/// `division` without rewriting anything.
FailureOr<SoftmaxMatch>
matchWrittenSoftmax(linalg::LinalgOp division,
                    SoftmaxMismatch *mismatch = nullptr);

/// Applies the patterns once to every division under `root` (not folding
/// the rest of the IR).
void raiseSoftmax(Operation *root, bool remarks = false);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_RAISE_RAISESOFTMAX_H
