//===- ExpandFloat8.cpp - f32 to fp8 rounding as integer arithmetic -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LLVM IR has no fp8 types: MLIR 22's arith-to-llvm maps f8E4M3FN and f8E5M2
// to i8 but leaves `arith.truncf` to them unconverted (an unrealized cast
// that fails translation). The rounding is written here on the f32 bits, with
// ops that stay vectors on the CPU and are plain integer instructions on the
// GPU (where cvt.rn.satfinite saturates instead, and only from sm_89).
//
// Normal results round to nearest even by adding half an f8 ulp minus one,
// plus the lowest kept bit, before the shift; a carry out of the mantissa
// bumps the exponent, which is right for the next binade and for overflow.
// Subnormal results (and the round-up to the smallest normal) come from one
// f32 addition of a power of two whose f32 ulp is the f8 subnormal step: the
// FPU rounds the sum to nearest even, and the sum's low bits are the f8
// encoding. The sum is never subnormal and a subnormal input rounds to zero
// either way, so flush-to-zero modes do not change the result.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Legalize/ExpandFloat8.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEXPANDFLOAT8PASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// What the expansion needs of an fp8 format: IEEE-like layout with one sign
/// bit, `mantissaBits` and an exponent of bias `bias`.
struct Float8Format {
  int64_t mantissaBits;
  int64_t bias;
  /// The magnitude stored for results above the largest finite value.
  int64_t overflow;
  /// The magnitude stored for NaN inputs, or -1 when `overflow` is the NaN
  /// too (f8E4M3FN has no infinity).
  int64_t nan;
};

std::optional<Float8Format> getFloat8Format(Type type) {
  // f8E4M3FN: 448 = 0x7e is the largest finite value, 0x7f the only NaN.
  if (isa<Float8E4M3FNType>(type))
    return Float8Format{3, 7, 0x7f, -1};
  // f8E5M2: 0x7c is infinity; 0x7e is the quiet NaN ml_dtypes gives for
  // every f32 NaN (APFloat for the canonical one; it keeps payload bits).
  if (isa<Float8E5M2Type>(type))
    return Float8Format{2, 15, 0x7c, 0x7e};
  return std::nullopt;
}

struct ExpandTruncFToFloat8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type inType = op.getIn().getType();
    Type outType = op.getType();
    if (!isa<FloatType, VectorType>(inType) ||
        !getElementTypeOrSelf(inType).isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 scalar or vector");
    std::optional<Float8Format> format =
        getFloat8Format(getElementTypeOrSelf(outType));
    if (!format)
      return rewriter.notifyMatchFailure(op, "not f8E4M3FN or f8E5M2");
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "not round to nearest even");

    Location loc = op.getLoc();
    auto like = [&](Type element) -> Type {
      if (auto vector = dyn_cast<VectorType>(inType))
        return vector.clone(element);
      return element;
    };
    Type i32 = like(rewriter.getI32Type());
    Type i8 = like(rewriter.getI8Type());
    Type f32 = inType;
    auto c32 = [&](int64_t value) {
      return createScalarOrSplatConstant(rewriter, loc, i32, value);
    };
    auto c8 = [&](int64_t value) {
      return createScalarOrSplatConstant(rewriter, loc, i8, value);
    };

    const int64_t shift = 23 - format->mantissaBits;
    // Exponent field (f32 bias 127) of the smallest f8 normal, 2^(1 - bias).
    const int64_t minNormalExponent = 127 + 1 - format->bias;
    // 2^(24 - bias - mantissaBits): its f32 ulp, 2^(1 - bias -
    // mantissaBits), is the f8 subnormal step.
    const int64_t magicExponent =
        127 + 24 - format->bias - format->mantissaBits;

    Value bits = arith::BitcastOp::create(rewriter, loc, i32, op.getIn());
    Value magnitude =
        arith::AndIOp::create(rewriter, loc, bits, c32(0x7fffffff));
    Value sign = arith::AndIOp::create(
        rewriter, loc,
        arith::TruncIOp::create(
            rewriter, loc, i8,
            arith::ShRUIOp::create(rewriter, loc, bits, c32(24))),
        c8(0x80));

    // Normal: round the mantissa to nearest even, rebias the exponent.
    Value lowestKept = arith::AndIOp::create(
        rewriter, loc,
        arith::ShRUIOp::create(rewriter, loc, magnitude, c32(shift)), c32(1));
    Value rounded = arith::AddIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, magnitude,
                              c32((int64_t(1) << (shift - 1)) - 1)),
        lowestKept);
    Value normal = arith::SubIOp::create(
        rewriter, loc,
        arith::ShRUIOp::create(rewriter, loc, rounded, c32(shift)),
        c32((127 - format->bias) << format->mantissaBits));
    // Overflow, infinities (and for f8E4M3FN NaN): all above the largest
    // finite encoding once rounded.
    normal =
        arith::MinUIOp::create(rewriter, loc, normal, c32(format->overflow));

    // Subnormal: the f32 sum's mantissa counts the f8 subnormal steps.
    Value magic = c32(magicExponent << 23);
    Value sum = arith::AddFOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, f32, magnitude),
        arith::BitcastOp::create(rewriter, loc, f32, magic));
    Value subnormal = arith::SubIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, sum),
        magic);

    Value isSubnormal =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                              magnitude, c32(minNormalExponent << 23));
    Value result =
        arith::SelectOp::create(rewriter, loc, isSubnormal, subnormal, normal);
    if (format->nan >= 0) {
      Value isNaN = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ugt, magnitude, c32(0x7f800000));
      result = arith::SelectOp::create(rewriter, loc, isNaN, c32(format->nan),
                                       result);
    }
    Value encoded = arith::OrIOp::create(
        rewriter, loc, arith::TruncIOp::create(rewriter, loc, i8, result),
        sign);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, outType, encoded);
    return success();
  }
};

struct RopeExpandFloat8Pass
    : rope::impl::RopeExpandFloat8PassBase<RopeExpandFloat8Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    rope::populateExpandFloat8TruncPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rope::populateExpandFloat8TruncPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandTruncFToFloat8>(patterns.getContext());
}
