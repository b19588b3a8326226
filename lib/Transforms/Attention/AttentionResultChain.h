//===- AttentionResultChain.h - Attention results via reshapes --*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the folds of a copy or a conversion of rope.attention's result into
// the op (FoldOutputPermutation.cpp, FoldOutputConversion.cpp) both read:
// the reshapes between the attention and the op that consumes its result.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_ATTENTION_ATTENTIONRESULTCHAIN_H
#define ROPE_LIB_TRANSFORMS_ATTENTION_ATTENTIONRESULTCHAIN_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::rope {

/// The rope.attention whose result `value` is, through expand_shape and
/// collapse_shape ops only (appended to `reshapes`, the one producing
/// `value` first), every value on the way used once (else the attention's
/// result is read elsewhere too, and folding would compute it twice).
/// Null with `why` set otherwise.
inline AttentionOp
attentionThroughReshapes(Value value, SmallVectorImpl<Operation *> &reshapes,
                         const char *&why) {
  while (isa_and_present<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      value.getDefiningOp())) {
    if (!value.hasOneUse()) {
      why = "a reshape's result is used elsewhere";
      return {};
    }
    reshapes.push_back(value.getDefiningOp());
    value = value.getDefiningOp()->getOperand(0);
  }
  auto attention = value.getDefiningOp<AttentionOp>();
  if (!attention || !value.hasOneUse()) {
    why = "not the only use of an attention's result";
    return {};
  }
  return attention;
}

} // namespace mlir::rope

#endif // ROPE_LIB_TRANSFORMS_ATTENTION_ATTENTIONRESULTCHAIN_H
