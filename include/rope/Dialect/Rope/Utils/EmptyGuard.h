//===- EmptyGuard.h - Empty inputs skip the lowered loops -------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An op whose input has no element has nothing to compute, but the loops a
// lowering builds need not see it: x of shape [2^40, 0, 4] has 2^40 tokens
// and no head, and a token loop computing cos/sin per token runs 2^40 times
// for nothing. Every lowering of rope.apply and rope.cache_write therefore
// returns the destination at once when the input is empty: folded when a
// size is statically 0, and under one `scf.if` outside every loop when a
// head dim (neither a token dim nor the channels) is dynamic. Token dims
// need no guard: the token loops are outermost, so a zero token dim already
// runs none of them; the channels are static and non-zero. Where no head
// dim is dynamic the code is what it was without the guard.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_EMPTYGUARD_H
#define ROPE_DIALECT_ROPE_UTILS_EMPTYGUARD_H

#include "mlir/IR/Builders.h"

namespace mlir::rope {

/// Whether some dim of the shaped `value` is statically 0.
bool hasStaticZeroDim(Value value);

/// i1: every dynamic head dim of `input` (a rope op's `[tokens..., heads...,
/// D]` input; neither one of `tokenDims` nor the last) is non-zero. Null
/// when no head dim is dynamic.
Value buildHeadsNonEmptyCondition(OpBuilder &b, Location loc, Value input,
                                  ArrayRef<int64_t> tokenDims);

/// The results of `body` (built at `b`'s insertion point), under
/// `scf.if (nonEmpty)` whose else branch yields `inits` when `nonEmpty` is
/// non-null; `body`'s results directly when it is null. `b` is left after
/// what was built.
SmallVector<Value> buildUnlessEmpty(OpBuilder &b, Location loc, Value nonEmpty,
                                    ValueRange inits,
                                    function_ref<SmallVector<Value>()> body);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_UTILS_EMPTYGUARD_H
