//===- FixedPoint.h - Unsigned fixed-point arithmetic in i64 ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builders for unsigned fixed-point numbers held in i64 (or vectors of i64):
// products through `arith.mului_extended` (exact 128-bit), logarithm and
// power of two digit by digit. They let a per-call frequency (dynamic NTK)
// become a phase step (AngleMethod::Turns) with no float wider than f32 and
// no float at all: every operation is exact or truncates below 2^-61
// relative, whatever the target's f64 support or float contraction.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_FIXEDPOINT_H
#define ROPE_DIALECT_ROPE_UTILS_FIXEDPOINT_H

#include "mlir/IR/Builders.h"

namespace mlir::rope::fixed {

/// An i64 constant of the shape of `like` (a scalar, or a splat vector).
Value constant(OpBuilder &b, Location loc, Type like, uint64_t value);

/// (a * b) >> shift for unsigned a, b and 0 < shift < 128, the 128-bit
/// product exact and rounded to nearest when `round` (the result must fit
/// in 64 bits).
Value mulShift(OpBuilder &b, Location loc, Value a, Value bValue,
               unsigned shift, bool round = false);

/// Q62 product: (a * b) >> 62, truncated (a, b < 2^64 unsigned, the product
/// below 2^126).
Value mulQ62(OpBuilder &b, Location loc, Value a, Value bValue);

/// x >> amount (unsigned) for any amount in [0, 2^63): 0 at 64 and beyond,
/// where the plain shift is poison.
Value shiftRightAny(OpBuilder &b, Location loc, Value x, Value amount);

/// x << amount for any amount in [0, 2^63): 0 at 64 and beyond.
Value shiftLeftAny(OpBuilder &b, Location loc, Value x, Value amount);

/// The fractional part of log2(m) for m in [1, 2) as Q62 (m in
/// [2^62, 2^63)), to `bits` binary digits (a Q`bits` result), by repeated
/// squaring: each digit is whether the square reached 2. Accurate to one
/// unit of the last digit.
Value log2FractionQ62(OpBuilder &b, Location loc, Value m, unsigned bits);

/// 2^-t as Q62 for t >= 0 given as Q`bits` (t < 2^63 / 2^bits): the
/// integer part a shift, the fraction digit by digit as a product of
/// 2^(-2^-j) for its set digits. Relative error below 2^-55.
Value exp2NegQ62(OpBuilder &b, Location loc, Value t, unsigned bits);

} // namespace mlir::rope::fixed

#endif // ROPE_DIALECT_ROPE_UTILS_FIXEDPOINT_H
