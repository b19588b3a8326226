//===- ExpandFloat8.h - f32 to fp8 rounding as integers ---------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_LEGALIZE_EXPANDFLOAT8_H
#define ROPE_TRANSFORMS_LEGALIZE_EXPANDFLOAT8_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// Adds a pattern that rewrites `arith.truncf` from f32 (scalars and vectors)
/// to f8E4M3FN or f8E5M2, with no rounding mode or to_nearest_even, into
/// integer arithmetic on the bits followed by `arith.bitcast` from i8, with
/// arith.truncf's (APFloat's, ml_dtypes') semantics: round to nearest, ties
/// to even; subnormals exact; f8E4M3FN: overflow, infinities and NaN give
/// NaN (0x7f with the sign); f8E5M2: overflow and infinities give infinity
/// (0x7c with the sign), any NaN the quiet NaN 0x7e with the sign (as
/// ml_dtypes; APFloat keeps a NaN's top payload bits). Upstream
/// MLIR 22 has no LLVM lowering of these truncations. Other truncations are
/// left alone.
void populateExpandFloat8TruncPatterns(RewritePatternSet &patterns);

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_LEGALIZE_EXPANDFLOAT8_H
