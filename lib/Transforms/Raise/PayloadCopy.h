//===- PayloadCopy.h - A generic copied up to a value -----------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A host's elementwise fusion puts a value the raises need as a tensor (Q
// before SDPA's sqrt(scale), a QK-norm's x before its widening to f32)
// inside the payload of a generic that computes more. The raises compute it
// by a copy of that generic that stops there.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_PAYLOADCOPY_H
#define ROPE_LIB_TRANSFORMS_RAISE_PAYLOADCOPY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::rope::raise {

/// A copy of the all-parallel, one-result generic `op` (before it) that
/// yields `inner`, a value of its payload, into a new empty tensor of
/// `inner`'s type: the same inputs and maps, only the payload ops `inner`
/// depends on.
inline Value copyYielding(RewriterBase &rewriter, linalg::GenericOp op,
                          Value inner) {
  Block *body = op.getBody();
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> worklist = {inner};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !needed.insert(def))
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value init = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op->getResult(0)),
      inner.getType());
  auto copy = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, op.getInputs(),
      ValueRange{init}, op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(body->getArguments(), args);
        for (Operation &payloadOp : body->without_terminator())
          if (needed.contains(&payloadOp))
            b.clone(payloadOp, mapping);
        linalg::YieldOp::create(b, l, mapping.lookupOrDefault(inner));
      });
  return copy.getResult(0);
}

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_PAYLOADCOPY_H
