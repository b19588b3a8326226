//===- RopeArith.cpp - Arithmetic shared by rope.apply lowerings ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rope;

namespace {
// 2*pi split in two doubles (hi + lo = 2*pi to ~2^-107) for the
// Cody-Waite range reduction of the angle.
constexpr double kTwoPiHi = 6.283185307179586232;
constexpr double kTwoPiLo = 2.4492935982947064e-16;
constexpr double kInvTwoPi = 0.15915494309189533577;

/// `type` with its element type replaced by `element` (scalar or vector).
Type withElementType(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

} // namespace

Value mlir::rope::buildMaxElement(OpBuilder &b, Location loc, Value tensor) {
  return tensor::ExtractOp::create(b, loc, buildMaxTensor(b, loc, tensor),
                                   ValueRange{});
}

Value mlir::rope::buildMaxTensor(OpBuilder &b, Location loc, Value tensor) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(tensor.getType());
  Type i64 = b.getI64Type();
  Value lowest = arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
  Value init =
      linalg::FillOp::create(
          b, loc, lowest,
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64).getResult())
          .getResult(0);
  unsigned numLoops = type.getRank();
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  auto reduce = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{tensor}, ValueRange{init},
      {AffineMap::getMultiDimIdentityMap(numLoops, ctx),
       AffineMap::get(numLoops, 0, {}, ctx)},
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = toI64(nb, nloc, args[0]);
        linalg::YieldOp::create(
            nb, nloc, ValueRange{arith::MaxSIOp::create(nb, nloc, v, args[1])});
      });
  return reduce.getResult(0);
}

Value TensorOperandReader::read(OpBuilder &b, Location loc, Value operand,
                                ValueRange indices, int64_t lanes) {
  if (lanes == 0)
    return tensor::ExtractOp::create(b, loc, operand, indices);
  // A whole, statically sized range of the last dim: in bounds by
  // construction (the verifier proves the cache widths).
  Type element = cast<ShapedType>(operand.getType()).getElementType();
  Value padding =
      arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
  return vector::TransferReadOp::create(
      b, loc, VectorType::get({lanes}, element), operand, indices, padding,
      ArrayRef<bool>{true});
}

Value TensorOperandReader::dimSize(OpBuilder &b, Location loc, Value operand,
                                   int64_t dim) {
  return tensor::DimOp::create(b, loc, operand, dim);
}

Value TensorOperandReader::maxElement(OpBuilder &b, Location loc,
                                      Value operand) {
  return buildMaxElement(b, loc, operand);
}

Type mlir::rope::getComputeElementType(Type elementType) {
  Builder b(elementType.getContext());
  return elementType.isF64() ? Type(b.getF64Type()) : Type(b.getF32Type());
}

Value mlir::rope::buildFloatConstant(OpBuilder &b, Location loc, Type type,
                                     double value) {
  if (auto vector = dyn_cast<VectorType>(type)) {
    auto element = cast<FloatType>(vector.getElementType());
    Attribute splat = b.getFloatAttr(element, value);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vector, ArrayRef<Attribute>(splat)));
  }
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value mlir::rope::convertFloat(OpBuilder &b, Location loc, Value value,
                               Type to) {
  Type from = getElementTypeOrSelf(value.getType());
  if (from == to)
    return value;
  Type type = withElementType(value.getType(), to);
  if (isa<BFloat16Type>(from) && isa<VectorType>(value.getType())) {
    // bf16 is the top half of an f32: widen the bits (exact). LLVM's x86
    // backend cannot extend some bf16 vector widths (e.g. 25 lanes: "Do not
    // know how to soft promote this operator's operand"); integer ops can.
    Type i16 = withElementType(value.getType(), b.getIntegerType(16));
    Type i32 = withElementType(value.getType(), b.getIntegerType(32));
    Value bits = arith::ExtUIOp::create(
        b, loc, i32, arith::BitcastOp::create(b, loc, i16, value));
    Value shift = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(cast<ShapedType>(i32),
                               b.getI32IntegerAttr(16).getValue()));
    Value f32 = arith::BitcastOp::create(
        b, loc, withElementType(value.getType(), b.getF32Type()),
        arith::ShLIOp::create(b, loc, bits, shift));
    return convertFloat(b, loc, f32, to);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth || (fromWidth == toWidth && isa<BFloat16Type>(from)))
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value mlir::rope::toI64(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  if (value.getType() == i64)
    return value;
  if (isa<IndexType>(value.getType()))
    return arith::IndexCastOp::create(b, loc, i64, value);
  if (value.getType().getIntOrFloatBitWidth() < 64)
    return arith::ExtSIOp::create(b, loc, i64, value);
  return arith::TruncIOp::create(b, loc, i64, value);
}

std::pair<Value, Value>
mlir::rope::buildCosSinOfAngle(OpBuilder &b, Location loc, Value position,
                               Value theta, Type computeType) {
  // Precision (SEMANTICS.md §5): the angle pos * theta_i is formed in f64 (pos
  // is exact below 2^53, the product has relative error 2^-53), then reduced to
  // [-pi, pi] by a two-constant Cody-Waite step with FMAs: the first FMA is
  // exact and the second rounds once, so the reduction adds at most half an ulp
  // of |r| < 4 (2^-52 rad) at any |angle| below 2^50, no more than the
  // product's own error once |angle| >= 2. Only the reduced angle is rounded to
  // f32 before cos/sin, so f32 results stay within the 1e-6 contract (measured
  // maxima ~3e-7) at every position up to 2^24 and beyond, where `f32(pos) *
  // f32(theta)` is off by up to ~1 rad (docs/PRECISION.md).
  Type f64Type = theta.getType();
  auto cst = [&](double v) { return buildFloatConstant(b, loc, f64Type, v); };
  Value angle = arith::MulFOp::create(b, loc, position, theta);
  Value turns = math::RoundEvenOp::create(
      b, loc, arith::MulFOp::create(b, loc, angle, cst(kInvTwoPi)));
  Value negTurns = arith::NegFOp::create(b, loc, turns);
  Value reduced = math::FmaOp::create(b, loc, negTurns, cst(kTwoPiHi), angle);
  reduced = math::FmaOp::create(b, loc, negTurns, cst(kTwoPiLo), reduced);
  reduced = convertFloat(b, loc, reduced, computeType);
  return {math::CosOp::create(b, loc, reduced),
          math::SinOp::create(b, loc, reduced)};
}

SmallVector<double> mlir::rope::phaseSteps(ArrayRef<double> thetas) {
  // theta / 2pi in long double (64-bit mantissa where the host has it):
  // its error, times 2^52 and a position below 2^24, stays far below the
  // half-unit rounding of the step.
  const long double twoPi = 6.283185307179586476925286766559L;
  const long double scale = std::ldexp(1.0L, kPhaseBits);
  SmallVector<double> steps;
  for (double theta : thetas) {
    long double turns = static_cast<long double>(theta) / twoPi;
    turns -= std::floor(turns);
    long double step = std::nearbyint(turns * scale);
    if (step >= scale)
      step -= scale;
    steps.push_back(static_cast<double>(step));
  }
  return steps;
}

bool mlir::rope::hasConstantFrequencyTables(FrequencyAttrInterface freqs) {
  return freqs.isStatic() || isa<LongRopeFrequenciesAttr>(freqs);
}

std::pair<Value, Value> mlir::rope::buildCosSinOfPhase(OpBuilder &b,
                                                       Location loc,
                                                       Value position,
                                                       Value step) {
  Type i64Type = position.getType();
  Type f32Type = withElementType(i64Type, b.getF32Type());
  auto intConstant = [&](int64_t v) -> Value {
    if (auto vector = dyn_cast<VectorType>(i64Type))
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(vector, b.getI64IntegerAttr(v).getValue()));
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  // The phase in 2^-52 turns: the low 52 bits of the wrapped product,
  // shifted up to the sign bit and back arithmetically, which centres it
  // to [-2^51, 2^51).
  Value product = arith::MulIOp::create(b, loc, position, step);
  Value up =
      arith::ShLIOp::create(b, loc, product, intConstant(64 - kPhaseBits));
  Value phase =
      arith::ShRSIOp::create(b, loc, up, intConstant(64 - kPhaseBits));
  // Exact in f32: the top part (|hi| < 2^23) and the low 28 bits (rounded
  // to 24 bits: 2^-48 of a turn at most).
  Value hi = arith::ShRSIOp::create(b, loc, phase, intConstant(28));
  Value lo =
      arith::AndIOp::create(b, loc, phase, intConstant((int64_t(1) << 28) - 1));
  Value hiF = arith::SIToFPOp::create(b, loc, f32Type, hi);
  Value loF = arith::SIToFPOp::create(b, loc, f32Type, lo);
  // radians = hi * 2pi/2^24 + lo * 2pi/2^52, with 2pi/2^24 in two parts;
  // the last FMA rounds once.
  const double unitHi = static_cast<double>(
      static_cast<float>(6.283185307179586476925286766559 / 16777216.0));
  const double unitLo = 6.283185307179586476925286766559 / 16777216.0 - unitHi;
  auto cst = [&](double v) { return buildFloatConstant(b, loc, f32Type, v); };
  Value small = arith::MulFOp::create(
      b, loc, loF, cst(6.283185307179586476925286766559 / 4503599627370496.0));
  small = math::FmaOp::create(b, loc, hiF, cst(unitLo), small);
  Value angle = math::FmaOp::create(b, loc, hiF, cst(unitHi), small);
  return {math::CosOp::create(b, loc, angle),
          math::SinOp::create(b, loc, angle)};
}

std::pair<Value, Value>
mlir::rope::applyMagnitudeAndDirection(OpBuilder &b, Location loc, ApplyOp op,
                                       Value cos, Value sin) {
  double magnitude = op.getMagnitude().convertToDouble();
  if (magnitude != 1.0) {
    Value a = buildFloatConstant(b, loc, cos.getType(), magnitude);
    cos = arith::MulFOp::create(b, loc, cos, a);
    sin = arith::MulFOp::create(b, loc, sin, a);
  }
  if (op.getInverse())
    sin = arith::NegFOp::create(b, loc, sin);
  return {cos, sin};
}

std::pair<Value, Value> mlir::rope::spreadForInterleavedLanes(OpBuilder &b,
                                                              Location loc,
                                                              Value cos,
                                                              Value sin) {
  int64_t pairs = cast<VectorType>(cos.getType()).getNumElements();
  SmallVector<int64_t> duplicate, alternate;
  for (int64_t j = 0; j < pairs; ++j) {
    duplicate.append({j, j});
    alternate.append({j, pairs + j});
  }
  Value negSin = arith::NegFOp::create(b, loc, sin);
  return {vector::ShuffleOp::create(b, loc, cos, cos, duplicate),
          vector::ShuffleOp::create(b, loc, negSin, sin, alternate)};
}

Value mlir::rope::rotateInterleavedLanes(OpBuilder &b, Location loc, Value x,
                                         Value cos, Value sin) {
  int64_t lanes = cast<VectorType>(x.getType()).getNumElements();
  SmallVector<int64_t> swap;
  for (int64_t j = 0; j < lanes / 2; ++j)
    swap.append({2 * j + 1, 2 * j});
  Value swapped = vector::ShuffleOp::create(b, loc, x, x, swap);
  return math::FmaOp::create(b, loc, swapped, sin,
                             arith::MulFOp::create(b, loc, x, cos));
}

Value mlir::rope::buildRuntimeLength(OpBuilder &b, Location loc, ApplyOp op) {
  TensorOperandReader reader;
  RotationCore core(op);
  core.buildPerCall(b, loc, reader);
  return core.runtimeLength(b, loc, reader);
}

Value mlir::rope::buildInverseFrequencies(OpBuilder &b, Location loc,
                                          ApplyOp op, RotationCore &core,
                                          RopeOperandReader &reader) {
  FrequencyAttrInterface freqs = op.getFreqsOrDefault();
  Value length =
      freqs.isStatic() ? Value() : core.runtimeLength(b, loc, reader);
  return freqs.materializeInverseFrequencies(b, loc, length,
                                             op.getRotaryDimOrDefault());
}

Value mlir::rope::buildFrequencyStateOf(OpBuilder &b, Location loc, ApplyOp op,
                                        RotationCore &core,
                                        RopeOperandReader &reader,
                                        AngleMethod angle) {
  FrequencyAttrInterface freqs = op.getFreqsOrDefault();
  if (freqs.isStatic())
    return Value();
  Value length = core.runtimeLength(b, loc, reader);
  int64_t rotaryDim = op.getRotaryDimOrDefault();
  if (angle == AngleMethod::Turns)
    return freqs.buildPhaseStepState(b, loc, length, rotaryDim);
  return freqs.buildFrequencyState(b, loc, length, rotaryDim);
}

Value mlir::rope::buildFrequencyAt(OpBuilder &b, Location loc,
                                   FrequencyAttrInterface freqs,
                                   AngleMethod angle, Value state, Value index,
                                   int64_t lanes, int64_t rotaryDim,
                                   FrequencyTableReader readTable) {
  if (angle == AngleMethod::Turns)
    return freqs.buildPhaseStepAt(b, loc, state, index, lanes, rotaryDim,
                                  readTable);
  return freqs.buildInverseFrequencyAt(b, loc, state, index, lanes, rotaryDim,
                                       readTable);
}

Value mlir::rope::buildPhaseStepTable(OpBuilder &b, Location loc, ApplyOp op,
                                      RotationCore &core,
                                      RopeOperandReader &reader) {
  FrequencyAttrInterface freqs = op.getFreqsOrDefault();
  int64_t rotaryDim = op.getRotaryDimOrDefault();
  Value state =
      buildFrequencyStateOf(b, loc, op, core, reader, AngleMethod::Turns);
  if (hasConstantFrequencyTables(freqs)) {
    // A scheme with constant tables only reads tables and selects between
    // them (one i1 per call), so a whole table can stand for each read.
    auto table = frequencyTableReader(
        AngleMethod::Turns, [](OpBuilder &tb, Location tloc,
                               DenseElementsAttr steps, Value, int64_t) {
          return arith::ConstantOp::create(tb, tloc, steps).getResult();
        });
    return freqs.buildPhaseStepAt(b, loc, state,
                                  arith::ConstantIndexOp::create(b, loc, 0),
                                  /*lanes=*/0, rotaryDim, table);
  }
  // Steps computed per pair (dynamic NTK): one linalg.generic over the
  // pairs, once per call.
  auto readByExtract = frequencyTableReader(
      AngleMethod::Turns, [](OpBuilder &tb, Location tloc,
                             DenseElementsAttr steps, Value at, int64_t) {
        Value values = arith::ConstantOp::create(tb, tloc, steps);
        return tensor::ExtractOp::create(tb, tloc, values, ValueRange{at})
            .getResult();
      });
  return detail::buildPerPairTable(
      b, loc, rotaryDim / 2, b.getI64Type(),
      [&](OpBuilder &nb, Location nloc, Value index) {
        return freqs.buildPhaseStepAt(nb, nloc, state, index, /*lanes=*/0,
                                      rotaryDim, readByExtract);
      });
}

std::function<Value(OpBuilder &, Location, ArrayRef<double>, Value, int64_t)>
mlir::rope::frequencyTableReader(AngleMethod angle,
                                 ConstantTableRead readTable) {
  return [angle, readTable](OpBuilder &b, Location loc, ArrayRef<double> thetas,
                            Value index, int64_t lanes) {
    auto shape = [&](Type element) {
      return RankedTensorType::get({static_cast<int64_t>(thetas.size())},
                                   element);
    };
    if (angle != AngleMethod::Turns)
      return readTable(b, loc,
                       DenseElementsAttr::get(shape(b.getF64Type()), thetas),
                       index, lanes);
    SmallVector<int64_t> steps;
    for (double step : phaseSteps(thetas))
      steps.push_back(static_cast<int64_t>(step));
    return readTable(
        b, loc,
        DenseElementsAttr::get(shape(b.getI64Type()), ArrayRef<int64_t>(steps)),
        index, lanes);
  };
}

FailureOr<AngleMethod> mlir::rope::angleMethodFor(ApplyOp op,
                                                  AngleMethod requested) {
  if (requested == AngleMethod::F64 || op.getCos() ||
      !getComputeElementType(op.getInputType().getElementType()).isF32())
    return AngleMethod::F64;
  if (!op.getFreqsOrDefault().hasPhaseSteps()) {
    if (requested == AngleMethod::TurnsOrF64)
      return AngleMethod::F64;
    return op.emitOpError()
           << "angle=turns has no phase steps for " << op.getFreqsOrDefault()
           << " (a frequency above one turn before scaling: base < 1); use "
              "angle=f64";
  }
  return AngleMethod::Turns;
}

std::pair<Value, Value> mlir::rope::buildGatherOrNaN(
    OpBuilder &b, Location loc, Value position, Value rows, Type type,
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value row)>
        read) {
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value inRange = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, position, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, position, rows));
  auto gathered = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &tb, Location tloc) {
        Value row =
            arith::IndexCastOp::create(tb, tloc, tb.getIndexType(), position);
        auto [c, s] = read(tb, tloc, row);
        scf::YieldOp::create(tb, tloc, ValueRange{c, s});
      },
      [&](OpBuilder &eb, Location eloc) {
        Value nan = buildFloatConstant(
            eb, eloc, type, std::numeric_limits<double>::quiet_NaN());
        scf::YieldOp::create(eb, eloc, ValueRange{nan, nan});
      });
  return {gathered.getResult(0), gathered.getResult(1)};
}
