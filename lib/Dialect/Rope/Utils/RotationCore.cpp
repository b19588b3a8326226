//===- RotationCore.cpp - What every rope.apply lowering computes ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/RotationCore.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rope;

namespace {
/// An index constant of `type` (index, or a vector of index: splat).
Value indexConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vector,
                               ArrayRef<Attribute>(b.getIndexAttr(value))));
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// [pair, pair + 1, ..., pair + lanes - 1] as a vector of index, or `pair`
/// when `lanes` is 0.
Value pairIndices(OpBuilder &b, Location loc, Value pair, int64_t lanes) {
  if (lanes == 0)
    return pair;
  auto type = VectorType::get({lanes}, b.getIndexType());
  if (std::optional<int64_t> first = getConstantIntValue(pair)) {
    // A constant, so that what depends on it (M-RoPE's axes) folds.
    SmallVector<Attribute> indices;
    for (int64_t lane = 0; lane < lanes; ++lane)
      indices.push_back(b.getIndexAttr(*first + lane));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, indices));
  }
  return arith::AddIOp::create(b, loc,
                               vector::BroadcastOp::create(b, loc, type, pair),
                               vector::StepOp::create(b, loc, type));
}

/// `value` broadcast to `lanes` lanes (unchanged when `lanes` is 0).
Value splat(OpBuilder &b, Location loc, Value value, int64_t lanes) {
  if (lanes == 0 || isa<VectorType>(value.getType()))
    return value;
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({lanes}, value.getType()), value);
}
} // namespace

RotationCore::RotationCore(ApplyOp op)
    : op(op), numPairs(op.getRotaryDimOrDefault() / 2),
      tokenDims(op.getTokenDimsOrDefault()),
      computeType(getComputeElementType(op.getInputType().getElementType())) {}

void RotationCore::buildPerCall(OpBuilder &b, Location loc,
                                RopeOperandReader &reader) {
  if (Value offset = op.getOffset()) {
    auto offsetType = dyn_cast<ShapedType>(offset.getType());
    if (!offsetType)
      scalarOffset = toI64(b, loc, offset);
    else if (offsetType.getRank() == 0)
      scalarOffset =
          toI64(b, loc, reader.read(b, loc, offset, ValueRange{}, 0));
  }
  if (op.getCosSinSource() == ApplyOp::CosSinSource::GatheredCache)
    cacheRows = toI64(b, loc, reader.dimSize(b, loc, op.getCos(), 0));
}

Value RotationCore::runtimeLength(OpBuilder &b, Location loc,
                                  RopeOperandReader &reader) {
  if (Value length = op.getLength())
    return toI64(b, loc, length);
  Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
  if (Value positions = op.getPositions())
    return arith::AddIOp::create(b, loc, reader.maxElement(b, loc, positions),
                                 one);
  Value seqLen =
      toI64(b, loc, reader.dimSize(b, loc, op.getInput(), tokenDims.back()));
  Value offset = op.getOffset();
  if (!offset)
    return seqLen;
  Value base = scalarOffset;
  if (!base) {
    auto offsetType = dyn_cast<ShapedType>(offset.getType());
    base = !offsetType ? toI64(b, loc, offset)
           : offsetType.getRank() == 0
               ? toI64(b, loc, reader.read(b, loc, offset, ValueRange{}, 0))
               : reader.maxElement(b, loc, offset);
  }
  return arith::AddIOp::create(b, loc, base, seqLen);
}

Value RotationCore::tokenPosition(OpBuilder &b, Location loc,
                                  RopeOperandReader &reader,
                                  ValueRange tokenIvs) {
  assert(!op.getMropeAttr() && "M-RoPE positions are per pair");
  if (Value positions = op.getPositions())
    return toI64(b, loc, reader.read(b, loc, positions, tokenIvs, 0));
  if (tokenIvs.empty())
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value pos = toI64(b, loc, tokenIvs.back());
  Value base = scalarOffset;
  if (Value offset = op.getOffset(); offset && !base)
    base = toI64(b, loc,
                 reader.read(b, loc, offset, ValueRange{tokenIvs.front()}, 0));
  return base ? arith::AddIOp::create(b, loc, base, pos).getResult() : pos;
}

Value RotationCore::mropeAxis(OpBuilder &b, Location loc, Value pair) {
  MRopeAttr mrope = op.getMropeAttr();
  ArrayRef<int64_t> section = mrope.getSection().asArrayRef();
  Type type = pair.getType();
  auto cst = [&](int64_t v) { return indexConstant(b, loc, type, v); };
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  };
  if (!mrope.getInterleaved()) {
    // Qwen2-VL: consecutive chunks t, h, w.
    Value pastT = cmp(arith::CmpIPredicate::sge, pair, cst(section[0]));
    Value pastH =
        cmp(arith::CmpIPredicate::sge, pair, cst(section[0] + section[1]));
    return arith::SelectOp::create(
        b, loc, pastH, cst(2),
        arith::SelectOp::create(b, loc, pastT, cst(1), cst(0)));
  }
  // Qwen3-VL: h and w take every third pair (from 1 and 2) until their
  // share is used up; t takes the rest.
  Value phase = arith::RemUIOp::create(b, loc, pair, cst(3));
  Value isH = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::eq, phase, cst(1)),
      cmp(arith::CmpIPredicate::ult, pair, cst(3 * section[1])));
  Value isW = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::eq, phase, cst(2)),
      cmp(arith::CmpIPredicate::ult, pair, cst(3 * section[2])));
  return arith::SelectOp::create(
      b, loc, isH, cst(1),
      arith::SelectOp::create(b, loc, isW, cst(2), cst(0)));
}

Value RotationCore::pairPosition(OpBuilder &b, Location loc,
                                 RopeOperandReader &reader, ValueRange tokenIvs,
                                 Value pair, int64_t lanes) {
  if (!op.getMropeAttr())
    return splat(b, loc, tokenPosition(b, loc, reader, tokenIvs), lanes);
  // The token's position on each axis, then per pair the axis it reads.
  SmallVector<Value> perAxis;
  for (int64_t axis = 0; axis < 3; ++axis) {
    SmallVector<Value> indices{arith::ConstantIndexOp::create(b, loc, axis)};
    llvm::append_range(indices, tokenIvs);
    perAxis.push_back(
        splat(b, loc,
              toI64(b, loc, reader.read(b, loc, op.getPositions(), indices, 0)),
              lanes));
  }
  Value axis = mropeAxis(b, loc, pairIndices(b, loc, pair, lanes));
  Type axisType = axis.getType();
  auto isAxis = [&](int64_t a) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis,
                                 indexConstant(b, loc, axisType, a));
  };
  return arith::SelectOp::create(
      b, loc, isAxis(1), perAxis[1],
      arith::SelectOp::create(b, loc, isAxis(2), perAxis[2], perAxis[0]));
}

std::pair<Value, Value> RotationCore::cosSin(OpBuilder &b, Location loc,
                                             RopeOperandReader &reader,
                                             ValueRange tokenIvs, Value pair,
                                             int64_t lanes, Value theta) {
  Type type =
      lanes == 0 ? computeType : Type(VectorType::get({lanes}, computeType));
  switch (op.getCosSinSource()) {
  case ApplyOp::CosSinSource::Computed: {
    if (isa<IntegerType>(getElementTypeOrSelf(theta.getType()))) {
      // AngleMethod::Turns: theta is the pairs' phase steps (i64); the
      // position stays an integer.
      Value pos;
      if (op.getMropeAttr()) {
        pos = pairPosition(b, loc, reader, tokenIvs, pair, lanes);
      } else {
        pos = tokenPosition(b, loc, reader, tokenIvs);
        if (isa<VectorType>(theta.getType()))
          pos = vector::BroadcastOp::create(b, loc, theta.getType(), pos);
      }
      auto [c, s] = buildCosSinOfPhase(b, loc, pos, theta);
      return applyMagnitudeAndDirection(b, loc, op,
                                        convertFloat(b, loc, c, computeType),
                                        convertFloat(b, loc, s, computeType));
    }
    // The angle in f64 from the position and theta (SEMANTICS.md §5). One
    // position per token is converted once and broadcast; M-RoPE's per-pair
    // positions are converted lane by lane.
    Type f64 = b.getF64Type();
    Value pos;
    if (op.getMropeAttr()) {
      pos = pairPosition(b, loc, reader, tokenIvs, pair, lanes);
      Type posType = lanes == 0 ? f64 : Type(VectorType::get({lanes}, f64));
      pos = arith::SIToFPOp::create(b, loc, posType, pos);
    } else {
      pos = arith::SIToFPOp::create(b, loc, f64,
                                    tokenPosition(b, loc, reader, tokenIvs));
      if (isa<VectorType>(theta.getType()))
        pos = vector::BroadcastOp::create(b, loc, theta.getType(), pos);
    }
    auto [c, s] = buildCosSinOfAngle(b, loc, pos, theta, computeType);
    return applyMagnitudeAndDirection(b, loc, op, c, s);
  }
  case ApplyOp::CosSinSource::PregatheredCache: {
    SmallVector<Value> indices(tokenIvs);
    indices.push_back(pair);
    Value c = reader.read(b, loc, op.getCos(), indices, lanes);
    Value s = reader.read(b, loc, op.getSin(), indices, lanes);
    return applyMagnitudeAndDirection(b, loc, op,
                                      convertFloat(b, loc, c, computeType),
                                      convertFloat(b, loc, s, computeType));
  }
  case ApplyOp::CosSinSource::GatheredCache:
    break;
  }
  // Gathered from a [M, P/2] cache by position: a position outside [0, M)
  // reads nothing and yields NaN (buildGatherOrNaN). With M-RoPE each pair
  // may read another row: lanes are gathered one by one.
  if (op.getMropeAttr() && lanes > 0) {
    SmallVector<Value> cosLanes, sinLanes;
    for (int64_t lane = 0; lane < lanes; ++lane) {
      Value at = arith::AddIOp::create(
          b, loc, pair, arith::ConstantIndexOp::create(b, loc, lane));
      auto [c, s] = cosSin(b, loc, reader, tokenIvs, at, 0, theta);
      cosLanes.push_back(c);
      sinLanes.push_back(s);
    }
    return {vector::FromElementsOp::create(b, loc, cast<VectorType>(type),
                                           cosLanes),
            vector::FromElementsOp::create(b, loc, cast<VectorType>(type),
                                           sinLanes)};
  }
  Value pos = pairPosition(b, loc, reader, tokenIvs, pair, 0);
  auto [c, s] = buildGatherOrNaN(
      b, loc, pos, cacheRows, type,
      [&](OpBuilder &rb, Location rloc, Value row) -> std::pair<Value, Value> {
        return {convertFloat(rb, rloc,
                             reader.read(rb, rloc, op.getCos(),
                                         ValueRange{row, pair}, lanes),
                             computeType),
                convertFloat(rb, rloc,
                             reader.read(rb, rloc, op.getSin(),
                                         ValueRange{row, pair}, lanes),
                             computeType)};
      });
  return applyMagnitudeAndDirection(b, loc, op, c, s);
}

std::pair<Value, Value> mlir::rope::rotatePair(OpBuilder &b, Location loc,
                                               Value x1, Value x2, Value cos,
                                               Value sin) {
  Value negSin = arith::NegFOp::create(b, loc, sin);
  Value y1 = math::FmaOp::create(b, loc, x2, negSin,
                                 arith::MulFOp::create(b, loc, x1, cos));
  Value y2 = math::FmaOp::create(b, loc, x1, sin,
                                 arith::MulFOp::create(b, loc, x2, cos));
  return {y1, y2};
}

Value mlir::rope::rotatePairMember(OpBuilder &b, Location loc, Value self,
                                   Value partner, Value cos, Value sin,
                                   Value isFirst) {
  Value signedSin = arith::SelectOp::create(
      b, loc, isFirst, arith::NegFOp::create(b, loc, sin), sin);
  return math::FmaOp::create(b, loc, partner, signedSin,
                             arith::MulFOp::create(b, loc, self, cos));
}

//===----------------------------------------------------------------------===//
// Fused neighbours
//===----------------------------------------------------------------------===//

namespace {
/// `value` broadcast to the shape of `like` when `like` is a vector and
/// `value` is not.
Value splatLike(OpBuilder &b, Location loc, Value value, Value like) {
  auto vector = dyn_cast<VectorType>(like.getType());
  if (!vector || isa<VectorType>(value.getType()))
    return value;
  return vector::BroadcastOp::create(b, loc, vector.clone(value.getType()),
                                     value);
}
} // namespace

Value mlir::rope::buildRmsNormFactor(OpBuilder &b, Location loc,
                                     Value sumSquares, int64_t headDim,
                                     double epsilon) {
  Type type = sumSquares.getType();
  Value mean = arith::DivFOp::create(
      b, loc, sumSquares,
      buildFloatConstant(b, loc, type, static_cast<double>(headDim)));
  Value shifted = arith::AddFOp::create(
      b, loc, mean, buildFloatConstant(b, loc, type, epsilon));
  return math::RsqrtOp::create(b, loc, shifted);
}

Value mlir::rope::applyRmsNorm(OpBuilder &b, Location loc, Value x,
                               Value factor, Value weight) {
  Type compute = getElementTypeOrSelf(x.getType());
  Value normalized =
      arith::MulFOp::create(b, loc, x, splatLike(b, loc, factor, x));
  Value w = splatLike(b, loc, convertFloat(b, loc, weight, compute), x);
  return arith::MulFOp::create(b, loc, w, normalized);
}

Value mlir::rope::buildStoredValue(OpBuilder &b, Location loc, Value y,
                                   Type storage, Value scale) {
  if (!scale)
    return convertFloat(b, loc, y, storage);
  auto shapedLike = [&](Type element) -> Type {
    if (auto vector = dyn_cast<VectorType>(y.getType()))
      return vector.clone(element);
    return element;
  };
  Type f32 = b.getF32Type();
  Type type = shapedLike(f32);
  Value v = arith::MulFOp::create(b, loc, convertFloat(b, loc, y, f32),
                                  splatLike(b, loc, scale, y));
  // Clamps to [low, high]; minimumf/maximumf propagate NaN.
  auto clamp = [&](Value x, double low, double high) -> Value {
    Value below = arith::MinimumFOp::create(
        b, loc, x, buildFloatConstant(b, loc, type, high));
    return arith::MaximumFOp::create(b, loc, below,
                                     buildFloatConstant(b, loc, type, low));
  };
  Type storageType = shapedLike(storage);
  if (auto f8 = dyn_cast<FloatType>(storage)) {
    double limit =
        APFloat::getLargest(f8.getFloatSemantics()).convertToDouble();
    return arith::TruncFOp::create(b, loc, storageType,
                                   clamp(v, -limit, limit));
  }
  // i8: round half to even, clamp, NaN -> 0 (fptosi of NaN is poison).
  Value rounded = clamp(math::RoundEvenOp::create(b, loc, v), -128.0, 127.0);
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                      rounded, rounded);
  Value zero = buildFloatConstant(b, loc, type, 0.0);
  rounded = arith::SelectOp::create(b, loc, isNaN, zero, rounded);
  return arith::FPToSIOp::create(b, loc, storageType, rounded);
}
