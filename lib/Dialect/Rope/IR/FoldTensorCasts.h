//===- FoldTensorCasts.h - Casts folded into rope ops -----------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the rope ops' own cast folds (rope.apply's, the attention ops') share:
// the operands with the casts that only drop static sizes looked through.
// Each op then rebuilds itself keeping what its verifier asks.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_DIALECT_ROPE_IR_FOLDTENSORCASTS_H
#define ROPE_LIB_DIALECT_ROPE_IR_FOLDTENSORCASTS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::rope {

/// `op`'s operands, each `tensor.cast` that only drops static sizes
/// (tensor::canFoldIntoConsumerOp) replaced by its source; false when there
/// is no such cast.
inline bool operandsWithCastsFolded(Operation *op,
                                    SmallVectorImpl<Value> &operands) {
  bool changed = false;
  for (Value operand : op->getOperands()) {
    auto cast = operand.getDefiningOp<tensor::CastOp>();
    if (cast && tensor::canFoldIntoConsumerOp(cast)) {
      operands.push_back(cast.getSource());
      changed = true;
    } else {
      operands.push_back(operand);
    }
  }
  return changed;
}

} // namespace mlir::rope

#endif // ROPE_LIB_DIALECT_ROPE_IR_FOLDTENSORCASTS_H
