//===- EmptyGuard.cpp - Lowered rope ops cost nothing on empty input ------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/EmptyGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;

bool mlir::rope::hasStaticZeroDim(Value value) {
  return llvm::is_contained(cast<ShapedType>(value.getType()).getShape(), 0);
}

Value mlir::rope::buildHeadsNonEmptyCondition(OpBuilder &b, Location loc,
                                              Value input,
                                              ArrayRef<int64_t> tokenDims) {
  auto type = cast<RankedTensorType>(input.getType());
  Value nonEmpty;
  for (int64_t d = 0; d + 1 < type.getRank(); ++d) {
    if (!type.isDynamicDim(d) || llvm::is_contained(tokenDims, d))
      continue;
    Value size = tensor::DimOp::create(b, loc, input, d);
    Value nonZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, size,
                              arith::ConstantIndexOp::create(b, loc, 0));
    nonEmpty =
        nonEmpty ? arith::AndIOp::create(b, loc, nonEmpty, nonZero).getResult()
                 : nonZero;
  }
  return nonEmpty;
}

SmallVector<Value>
mlir::rope::buildUnlessEmpty(OpBuilder &b, Location loc, Value nonEmpty,
                             ValueRange inits,
                             function_ref<SmallVector<Value>()> body) {
  if (!nonEmpty)
    return body();
  auto branch = scf::IfOp::create(b, loc, inits.getTypes(), nonEmpty,
                                  /*withElseRegion=*/true);
  b.setInsertionPointToStart(branch.thenBlock());
  SmallVector<Value> results = body();
  b.setInsertionPointToEnd(branch.thenBlock());
  scf::YieldOp::create(b, loc, results);
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, loc, inits);
  b.setInsertionPointAfter(branch);
  return SmallVector<Value>(branch.getResults());
}
