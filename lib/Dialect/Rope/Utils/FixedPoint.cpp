//===- FixedPoint.cpp - Unsigned fixed-point arithmetic in i64 ------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/FixedPoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cassert>
#include <cmath>

using namespace mlir;
using namespace mlir::rope;

Value fixed::constant(OpBuilder &b, Location loc, Type like, uint64_t value) {
  llvm::APInt bits(64, value);
  if (auto vector = dyn_cast<VectorType>(like))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vector, bits));
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(b.getI64Type(), bits));
}

Value fixed::mulShift(OpBuilder &b, Location loc, Value a, Value bValue,
                      unsigned shift, bool round) {
  assert(shift > 0 && shift < 128 && "a shift inside the 128-bit product");
  Type type = a.getType();
  auto cst = [&](uint64_t v) { return constant(b, loc, type, v); };
  auto product = arith::MulUIExtendedOp::create(b, loc, a, bValue);
  Value low = product.getLow(), high = product.getHigh();
  if (shift > 64) {
    if (round)
      high =
          arith::AddIOp::create(b, loc, high, cst(uint64_t(1) << (shift - 65)));
    return arith::ShRUIOp::create(b, loc, high, cst(shift - 64));
  }
  if (round) {
    // Half a unit of the result added to the low word, its carry to the
    // high word.
    Value sum =
        arith::AddIOp::create(b, loc, low, cst(uint64_t(1) << (shift - 1)));
    Value carried =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, sum, low);
    high = arith::AddIOp::create(b, loc, high,
                                 arith::ExtUIOp::create(b, loc, type, carried));
    low = sum;
  }
  if (shift == 64)
    return high;
  return arith::OrIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, high, cst(64 - shift)),
      arith::ShRUIOp::create(b, loc, low, cst(shift)));
}

Value fixed::mulQ62(OpBuilder &b, Location loc, Value a, Value bValue) {
  return mulShift(b, loc, a, bValue, 62);
}

namespace {
/// i1 of the shape of `like`.
Type withI1(Type like) {
  auto i1 = IntegerType::get(like.getContext(), 1);
  if (auto vector = dyn_cast<VectorType>(like))
    return vector.clone(i1);
  return i1;
}

/// `shifted` where `amount` is below 64, else 0; `amount` clamped to 63 for
/// the shift itself (a shift by 64 or more is poison).
Value shiftAny(OpBuilder &b, Location loc, Value x, Value amount, bool left) {
  Type type = x.getType();
  Value max = fixed::constant(b, loc, type, 63);
  Value clamped = arith::MinUIOp::create(b, loc, amount, max);
  Value shifted = left ? arith::ShLIOp::create(b, loc, x, clamped).getResult()
                       : arith::ShRUIOp::create(b, loc, x, clamped).getResult();
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, amount, max);
  return arith::SelectOp::create(b, loc, inRange, shifted,
                                 fixed::constant(b, loc, type, 0));
}
} // namespace

Value fixed::shiftRightAny(OpBuilder &b, Location loc, Value x, Value amount) {
  return shiftAny(b, loc, x, amount, /*left=*/false);
}

Value fixed::shiftLeftAny(OpBuilder &b, Location loc, Value x, Value amount) {
  return shiftAny(b, loc, x, amount, /*left=*/true);
}

Value fixed::log2FractionQ62(OpBuilder &b, Location loc, Value m,
                             unsigned bits) {
  assert(bits > 0 && bits < 64 && "digits of a fraction in i64");
  Type type = m.getType();
  Value two = constant(b, loc, type, uint64_t(1) << 63);
  Value one = constant(b, loc, type, 1);
  Value fraction = constant(b, loc, type, 0);
  for (unsigned digit = 0; digit < bits; ++digit) {
    // m in [1, 2): m^2 in [1, 4), below 2^64 as Q62. A square of 2 or more
    // is a digit 1 and is halved back to [1, 2).
    Value square = mulQ62(b, loc, m, m);
    Value reached =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, square, two);
    m = arith::SelectOp::create(
        b, loc, reached, arith::ShRUIOp::create(b, loc, square, one), square);
    fraction = arith::OrIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, fraction, one),
        arith::ExtUIOp::create(b, loc, type, reached));
  }
  return fraction;
}

Value fixed::exp2NegQ62(OpBuilder &b, Location loc, Value t, unsigned bits) {
  assert(bits > 0 && bits < 63 && "digits of a fraction in i64");
  Type type = t.getType();
  auto cst = [&](uint64_t v) { return constant(b, loc, type, v); };
  Value whole = arith::ShRUIOp::create(b, loc, t, cst(bits));
  Value fraction =
      arith::AndIOp::create(b, loc, t, cst((uint64_t(1) << bits) - 1));
  Value power = cst(uint64_t(1) << 62);
  for (unsigned j = 1; j <= bits; ++j) {
    // 2^(-2^-j) as Q62, rounded from long double (64-bit mantissa where the
    // host has it: far below the Q62 unit).
    long double factor = std::exp2(-std::ldexp(1.0L, -static_cast<int>(j)));
    auto factorQ62 =
        static_cast<uint64_t>(std::nearbyint(std::ldexp(factor, 62)));
    Value digit = arith::TruncIOp::create(
        b, loc, withI1(type),
        arith::ShRUIOp::create(b, loc, fraction, cst(bits - j)));
    power = arith::SelectOp::create(
        b, loc, digit, mulQ62(b, loc, power, cst(factorQ62)), power);
  }
  return shiftRightAny(b, loc, power, whole);
}
