//===- AttentionDims.h - Loop-dim roles of the attention ops ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one place that says which loop of `rope.attention` /
// `rope.online_attention` is a batch dim, the queries, the keys or a channel
// dim, read from the indexing maps (as IREE's attention does). The verifier,
// tiling, decomposition, fusion and the GPU lowering all ask it.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ATTENTIONDIMS_H
#define ROPE_DIALECT_ROPE_IR_ATTENTIONDIMS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::rope {

/// The roles of an attention op's loops: exactly one query dim `m`, one
/// channel dim of Q·Kᵀ `k1`, one key dim `k2`, one channel dim of V `n`; the
/// rest are batch dims (in Q and the output; K and V may omit them).
struct AttentionDims {
  SmallVector<unsigned> batch;
  unsigned m = 0, k1 = 0, k2 = 0, n = 0;
  unsigned numLoops = 0;

  /// The roles implied by the query, key, value and output maps, or a
  /// message saying why there are none (for the verifier). Loops in the
  /// query and output maps only are `m` candidates: `queryDim` picks one
  /// when there are several (the others, e.g. a GQA group, are batch dims).
  static FailureOr<AttentionDims> infer(AffineMap query, AffineMap key,
                                        AffineMap value, AffineMap output,
                                        std::optional<int64_t> queryDim,
                                        std::string *why = nullptr);

  /// The loops a score (and a softmax row entry) is indexed by: every loop
  /// but `k1` and `n`, in loop order. The score region's indices follow it.
  SmallVector<unsigned> scoreDims() const;
  /// The loops a softmax row is indexed by: scoreDims() without `k2`.
  SmallVector<unsigned> rowDims() const;
};

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_ATTENTIONDIMS_H
