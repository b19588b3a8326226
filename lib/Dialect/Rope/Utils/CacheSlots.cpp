//===- CacheSlots.cpp - Where a token goes in a KV cache ------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/CacheSlots.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rope;

CacheSlot mlir::rope::buildCacheSlot(OpBuilder &b, Location loc, Value slot,
                                     ValueRange cacheTokenSizes) {
  // In i64: an i32 slot is sign-extended, so -1 (padding) stays negative.
  Value slot64 = toI64(b, loc, slot);
  Value rows = arith::ConstantIntOp::create(b, loc, 1, 64);
  for (Value size : cacheTokenSizes)
    rows = arith::MulIOp::create(b, loc, rows, toI64(b, loc, size));
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value nonNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, slot64, zero);
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, slot64, rows);
  CacheSlot result;
  result.valid = arith::AndIOp::create(b, loc, nonNegative, below);
  Value clamped = arith::SelectOp::create(b, loc, result.valid, slot64, zero);
  Value rest = arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
  // Row-major: the last token dim varies fastest. The first dim takes the
  // remaining quotient, below its size when the slot is valid.
  result.indices.resize(cacheTokenSizes.size());
  for (int64_t i = static_cast<int64_t>(cacheTokenSizes.size()) - 1; i > 0;
       --i) {
    Value size = cacheTokenSizes[i];
    result.indices[i] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  result.indices[0] = rest;
  return result;
}
