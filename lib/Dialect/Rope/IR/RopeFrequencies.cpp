//===- RopeFrequencies.cpp - Frequency-scaling schemes --------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The FrequencyAttrInterface implementations: one attribute per scheme of
// SEMANTICS.md §4. Static schemes compute their table in float64 at compile
// time (folded into the IR as a constant, so its accuracy is that of libm and
// its run-time cost zero). Dynamic schemes (dynamic NTK, LongRoPE) depend on
// the call's runtime length and build IR that computes the P/2 frequencies once
// per call, before the per-(position, frequency) cos/sin table.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/Utils/FixedPoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::rope;

namespace {
using EmitErrorFn = function_ref<InFlightDiagnostic()>;

double toDouble(const llvm::APFloat &value) { return value.convertToDouble(); }

LogicalResult verifyPositive(EmitErrorFn emitError, StringRef scheme,
                             StringRef name, double value) {
  if (!(value > 0.0) || !std::isfinite(value))
    return emitError() << scheme << ": " << name
                       << " must be a positive finite number, got " << value;
  return success();
}

LogicalResult verifyPositive(EmitErrorFn emitError, StringRef scheme,
                             StringRef name,
                             const std::optional<llvm::APFloat> &value) {
  if (!value)
    return success();
  return verifyPositive(emitError, scheme, name, toDouble(*value));
}

LogicalResult verifyBase(EmitErrorFn emitError, StringRef scheme,
                         const llvm::APFloat &base) {
  return verifyPositive(emitError, scheme, "base", toDouble(base));
}

/// The two parameters every scaled scheme has.
LogicalResult verifyBaseAndFactor(EmitErrorFn emitError, StringRef scheme,
                                  const llvm::APFloat &base,
                                  const llvm::APFloat &factor) {
  if (failed(verifyBase(emitError, scheme, base)))
    return failure();
  return verifyPositive(emitError, scheme, "factor", toDouble(factor));
}

/// NTK's exponent P/(P-2) is undefined for a single pair.
LogicalResult verifyNtkRotaryDim(EmitErrorFn emitError, StringRef scheme,
                                 int64_t rotaryDim) {
  if (rotaryDim == 2)
    return emitError() << scheme
                       << " frequencies are undefined for rotary_dim = 2 "
                          "(the base exponent P/(P-2) divides by zero)";
  return success();
}

/// theta_i = base^(-2i/P) for i in [0, P/2).
SmallVector<double> unscaledFrequencies(double base, int64_t rotaryDim) {
  SmallVector<double> thetas;
  thetas.reserve(rotaryDim / 2);
  for (int64_t i = 0; i < rotaryDim / 2; ++i)
    thetas.push_back(std::pow(base, -2.0 * static_cast<double>(i) /
                                        static_cast<double>(rotaryDim)));
  return thetas;
}

std::optional<llvm::APFloat> optionalF64(std::optional<double> value) {
  if (!value)
    return std::nullopt;
  return llvm::APFloat(*value);
}

/// Null, after recording `message` (for the buildFromHF hooks).
FrequencyAttrInterface failHF(HFConfigReader &reader,
                              const llvm::Twine &message) {
  (void)reader.fail(message);
  return {};
}

/// YaRN's g(s, m) = 0.1 m ln s + 1 (1 when s <= 1).
double yarnMscale(double factor, double m) {
  return factor <= 1.0 ? 1.0 : 0.1 * m * std::log(factor) + 1.0;
}

Value f64Constant(OpBuilder &builder, Location loc, double value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getF64FloatAttr(value));
}

Value i64Constant(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getI64IntegerAttr(value));
}

/// The pair index `index` (an `index` value) as f64: a scalar when `lanes`
/// is 0, else the vector [index, index + 1, ..., index + lanes - 1].
Value pairIndexAsF64(OpBuilder &builder, Location loc, Value index,
                     int64_t lanes) {
  Type f64 = builder.getF64Type();
  Value i = arith::SIToFPOp::create(
      builder, loc, f64,
      arith::IndexCastOp::create(builder, loc, builder.getI64Type(), index));
  if (lanes == 0)
    return i;
  auto type = VectorType::get({lanes}, f64);
  SmallVector<double> steps;
  for (int64_t lane = 0; lane < lanes; ++lane)
    steps.push_back(static_cast<double>(lane));
  Value step = arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(type, ArrayRef<double>(steps)));
  return arith::AddFOp::create(
      builder, loc, vector::BroadcastOp::create(builder, loc, type, i), step);
}
} // namespace

//===----------------------------------------------------------------------===//
// HFConfigReader
//===----------------------------------------------------------------------===//

HFConfigReader::~HFConfigReader() = default;

FailureOr<double> HFConfigReader::requireFloat(StringRef key) {
  FailureOr<std::optional<double>> value = getFloat(key);
  if (failed(value))
    return failure();
  if (!*value)
    return fail(llvm::Twine("rope_type '") + getRopeType() + "' needs '" + key +
                "'");
  return **value;
}

FailureOr<SmallVector<double>>
HFConfigReader::requireFloatArray(StringRef key) {
  FailureOr<std::optional<SmallVector<double>>> values = getFloatArray(key);
  if (failed(values))
    return failure();
  if (!*values)
    return fail(llvm::Twine("rope_type '") + getRopeType() + "' needs '" + key +
                "'");
  return std::move(**values);
}

FailureOr<int64_t> HFConfigReader::getOriginalMaxPositionEmbeddings() {
  for (StringRef key :
       {"original_max_position_embeddings", "max_position_embeddings"}) {
    FailureOr<std::optional<int64_t>> value = getPositiveInt(key);
    if (failed(value))
      return failure();
    if (*value)
      return **value;
  }
  return fail(llvm::Twine("rope_type '") + getRopeType() +
              "' needs 'original_max_position_embeddings' (or "
              "'max_position_embeddings')");
}

std::string HFConfigReader::formatNumber(double value) {
  char text[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

Value mlir::rope::detail::buildFrequencyTableFromElements(
    OpBuilder &builder, Location loc, FrequencyAttrInterface freqs,
    Value length, int64_t rotaryDim) {
  Value state = freqs.buildFrequencyState(builder, loc, length, rotaryDim);
  auto readByExtract = [](OpBuilder &nb, Location nloc, ArrayRef<double> table,
                          Value index, int64_t lanes) -> Value {
    assert(lanes == 0 && "the table generic reads one pair at a time");
    (void)lanes;
    Value constant = buildConstantFrequencyTable(nb, nloc, table);
    return tensor::ExtractOp::create(nb, nloc, constant, ValueRange{index});
  };
  return buildPerPairTable(builder, loc, rotaryDim / 2, builder.getF64Type(),
                           [&](OpBuilder &nb, Location nloc, Value index) {
                             return freqs.buildInverseFrequencyAt(
                                 nb, nloc, state, index,
                                 /*lanes=*/0, rotaryDim, readByExtract);
                           });
}

Value mlir::rope::detail::buildPerPairTable(
    OpBuilder &builder, Location loc, int64_t numPairs, Type element,
    function_ref<Value(OpBuilder &, Location, Value index)> valueAt) {
  Value init = tensor::EmptyOp::create(builder, loc,
                                       ArrayRef<int64_t>{numPairs}, element);
  MLIRContext *ctx = builder.getContext();
  return linalg::GenericOp::create(
             builder, loc, TypeRange{init.getType()}, ValueRange{},
             ValueRange{init}, {AffineMap::getMultiDimIdentityMap(1, ctx)},
             {utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               Value value =
                   valueAt(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
               linalg::YieldOp::create(nb, nloc, ValueRange{value});
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// default
//===----------------------------------------------------------------------===//

LogicalResult DefaultFrequenciesAttr::verify(EmitErrorFn emitError,
                                             llvm::APFloat base) {
  return verifyBase(emitError, "default", base);
}

SmallVector<double>
DefaultFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  return unscaledFrequencies(toDouble(getBase()), rotaryDim);
}

FrequencyAttrInterface
DefaultFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  // Hugging Face ignores the factor of an unscaled config, but not a
  // nonsensical one.
  FailureOr<std::optional<double>> factor = reader.getFloat("factor");
  if (failed(factor))
    return {};
  if (*factor && !(**factor > 0.0))
    return failHF(reader, "factor must be > 0, got " +
                              HFConfigReader::formatNumber(**factor));
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()));
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

LogicalResult LinearFrequenciesAttr::verify(EmitErrorFn emitError,
                                            llvm::APFloat base,
                                            llvm::APFloat factor) {
  return verifyBaseAndFactor(emitError, "linear", base, factor);
}

SmallVector<double>
LinearFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  SmallVector<double> thetas =
      unscaledFrequencies(toDouble(getBase()), rotaryDim);
  for (double &theta : thetas)
    theta /= toDouble(getFactor());
  return thetas;
}

FrequencyAttrInterface
LinearFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<double> factor = reader.requireFloat("factor");
  if (failed(factor))
    return {};
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()), llvm::APFloat(*factor));
}

//===----------------------------------------------------------------------===//
// ntk (static)
//===----------------------------------------------------------------------===//

LogicalResult NtkFrequenciesAttr::verify(EmitErrorFn emitError,
                                         llvm::APFloat base,
                                         llvm::APFloat factor) {
  return verifyBaseAndFactor(emitError, "ntk", base, factor);
}

LogicalResult NtkFrequenciesAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                                     int64_t rotaryDim) const {
  return verifyNtkRotaryDim(emitError, "ntk", rotaryDim);
}

SmallVector<double>
NtkFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  double p = static_cast<double>(rotaryDim);
  double base =
      toDouble(getBase()) * std::pow(toDouble(getFactor()), p / (p - 2.0));
  return unscaledFrequencies(base, rotaryDim);
}

FrequencyAttrInterface NtkFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<double> factor = reader.requireFloat("factor");
  if (failed(factor))
    return {};
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()), llvm::APFloat(*factor));
}

//===----------------------------------------------------------------------===//
// dynamic_ntk
//===----------------------------------------------------------------------===//

LogicalResult DynamicNtkFrequenciesAttr::verify(EmitErrorFn emitError,
                                                llvm::APFloat base,
                                                llvm::APFloat factor,
                                                int64_t maxPositions) {
  if (failed(verifyBaseAndFactor(emitError, "dynamic_ntk", base, factor)))
    return failure();
  if (maxPositions <= 0)
    return emitError() << "dynamic_ntk: max_position_embeddings must be "
                          "positive, got "
                       << maxPositions;
  return success();
}

LogicalResult
DynamicNtkFrequenciesAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                              int64_t rotaryDim) const {
  return verifyNtkRotaryDim(emitError, "dynamic_ntk", rotaryDim);
}

bool DynamicNtkFrequenciesAttr::isStatic() const { return false; }

SmallVector<double>
DynamicNtkFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  // A call no longer than M: (s * M / M) - (s - 1) = 1, the unscaled base.
  return unscaledFrequencies(toDouble(getBase()), rotaryDim);
}

Value DynamicNtkFrequenciesAttr::buildFrequencyState(OpBuilder &builder,
                                                     Location loc, Value length,
                                                     int64_t rotaryDim) const {
  // ln base' = ln base + P/(P-2) * ln(s * L'/M - (s - 1)), L' = max(l, M);
  // the state is -2/P * ln base', so theta_i = exp(i * state). In f64, once
  // per call.
  double s = toDouble(getFactor());
  int64_t m = getMaxPositionEmbeddings();
  double p = static_cast<double>(rotaryDim);
  Value clamped = arith::MaxSIOp::create(builder, loc, length,
                                         i64Constant(builder, loc, m));
  Value lengthF =
      arith::SIToFPOp::create(builder, loc, builder.getF64Type(), clamped);
  Value ratio = arith::MulFOp::create(
      builder, loc, lengthF,
      f64Constant(builder, loc, s / static_cast<double>(m)));
  Value growth = arith::SubFOp::create(builder, loc, ratio,
                                       f64Constant(builder, loc, s - 1.0));
  Value logBase = math::FmaOp::create(
      builder, loc, math::LogOp::create(builder, loc, growth),
      f64Constant(builder, loc, p / (p - 2.0)),
      f64Constant(builder, loc, std::log(toDouble(getBase()))));
  return arith::MulFOp::create(builder, loc, logBase,
                               f64Constant(builder, loc, -2.0 / p));
}

Value DynamicNtkFrequenciesAttr::buildInverseFrequencyAt(
    OpBuilder &builder, Location loc, Value state, Value index, int64_t lanes,
    int64_t rotaryDim, FrequencyTableReader readTable) const {
  Value i = pairIndexAsF64(builder, loc, index, lanes);
  if (lanes > 0)
    state = vector::BroadcastOp::create(builder, loc, i.getType(), state);
  return math::ExpOp::create(builder, loc,
                             arith::MulFOp::create(builder, loc, i, state));
}

bool DynamicNtkFrequenciesAttr::hasPhaseSteps() const {
  // The steps are the unscaled ones times w^i <= 1: a theta_i above one
  // turn (base < 1) would have wrapped before the product.
  return toDouble(getBase()) >= 1.0;
}

Value DynamicNtkFrequenciesAttr::buildPhaseStepState(OpBuilder &builder,
                                                     Location loc, Value length,
                                                     int64_t rotaryDim) const {
  // theta'_i = theta_i * w^i with w = r^(-2/(P-2)), r = 1 + s * d / M and
  // d = max(l - M, 0); the state is w as Q62, built from integers only (no
  // float of any width): d * (s / M) as an exact 128-bit product of
  // normalized mantissas, 1 added at the product's exponent, log2 r digit
  // by digit (Q52), times 2/(P-2), and 2^-t digit by digit. Relative error
  // of w below 2^-50, so that even w^(P/2-1) moves a phase step (2^-52 of
  // a turn) by less than one unit.
  using namespace fixed;
  Type i64 = builder.getI64Type();
  auto cst = [&](uint64_t v) { return constant(builder, loc, i64, v); };
  auto add = [&](Value a, Value b) {
    return arith::AddIOp::create(builder, loc, a, b).getResult();
  };
  auto sub = [&](Value a, Value b) {
    return arith::SubIOp::create(builder, loc, a, b).getResult();
  };
  int64_t m = getMaxPositionEmbeddings();
  Value d = arith::MaxSIOp::create(builder, loc, sub(length, cst(m)), cst(0));
  Value grows =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt, d, cst(0));
  // d as a Q62 mantissa in [1, 2) and its exponent (d >= 1 from here; a
  // call no longer than M selects w = 1 at the end).
  Value dSafe = arith::MaxSIOp::create(builder, loc, d, cst(1));
  Value dZeros = math::CountLeadingZerosOp::create(builder, loc, dSafe);
  Value dMantissa =
      arith::ShLIOp::create(builder, loc, dSafe, sub(dZeros, cst(1)));
  Value dExponent = sub(cst(63), dZeros);
  // s / M as a Q62 mantissa in [1, 2) and its exponent, on the host in
  // long double.
  int exponent = 0;
  long double kappa = static_cast<long double>(toDouble(getFactor())) /
                      static_cast<long double>(m);
  long double fraction = std::frexp(kappa, &exponent);
  auto kappaMantissa =
      static_cast<uint64_t>(std::nearbyint(std::ldexp(fraction, 63)));
  if (kappaMantissa == (uint64_t(1) << 63)) {
    kappaMantissa >>= 1;
    ++exponent;
  }
  // d * s / M = product * 2^e, product in [1, 4) as Q62 (exact but for the
  // truncation below 2^-62).
  Value product = mulQ62(builder, loc, dMantissa, cst(kappaMantissa));
  Value e = add(dExponent,
                cst(static_cast<uint64_t>(static_cast<int64_t>(exponent - 1))));
  Value product60 = arith::ShRUIOp::create(builder, loc, product, cst(2));
  // r = 2^max(e, 0) * v with v in [1, 5) as Q60: for e >= 0, product + 2^-e;
  // for e < 0, 1 + product * 2^e.
  Value one60 = cst(uint64_t(1) << 60);
  Value nonNegative =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge, e, cst(0));
  Value v = arith::SelectOp::create(
      builder, loc, nonNegative,
      add(product60, shiftRightAny(builder, loc, one60, e)),
      add(one60, shiftRightAny(builder, loc, product60, sub(cst(0), e))));
  Value rExponent = arith::MaxSIOp::create(builder, loc, e, cst(0));
  // v normalized to [1, 2) as Q62 (exactly: v < 2^63), its top digit's
  // place added to the exponent.
  Value vZeros = math::CountLeadingZerosOp::create(builder, loc, v);
  Value vMantissa = arith::ShLIOp::create(builder, loc, v, sub(vZeros, cst(1)));
  Value log2Whole = add(rExponent, sub(cst(3), vZeros));
  constexpr unsigned kLogBits = 52;
  Value log2R = arith::OrIOp::create(
      builder, loc,
      arith::ShLIOp::create(builder, loc, log2Whole, cst(kLogBits)),
      log2FractionQ62(builder, loc, vMantissa, kLogBits));
  // t = log2 r * 2/(P-2) (Q52), w = 2^-t (Q62).
  long double p = static_cast<long double>(rotaryDim);
  auto scale =
      static_cast<uint64_t>(std::nearbyint(std::ldexp(2.0L / (p - 2.0L), 62)));
  Value t = mulShift(builder, loc, log2R, cst(scale), 62);
  Value w = exp2NegQ62(builder, loc, t, kLogBits);
  return arith::SelectOp::create(builder, loc, grows, w,
                                 cst(uint64_t(1) << 62));
}

Value DynamicNtkFrequenciesAttr::buildPhaseStepAt(
    OpBuilder &builder, Location loc, Value state, Value index, int64_t lanes,
    int64_t rotaryDim, FrequencyTableReader readTable) const {
  // step'_i = round(step_i * w^i), step_i the unscaled phase step and w^i
  // by squaring and multiplying over the digits of i (Q62).
  using namespace fixed;
  Type i64 = builder.getI64Type();
  Value steps = readTable(builder, loc,
                          unscaledFrequencies(toDouble(getBase()), rotaryDim),
                          index, lanes);
  Type type = steps.getType();
  Value i = arith::IndexCastOp::create(builder, loc, i64, index);
  if (lanes > 0) {
    SmallVector<int64_t> offsets;
    for (int64_t lane = 0; lane < lanes; ++lane)
      offsets.push_back(lane);
    i = arith::AddIOp::create(
        builder, loc, vector::BroadcastOp::create(builder, loc, type, i),
        arith::ConstantOp::create(
            builder, loc,
            DenseElementsAttr::get(cast<VectorType>(type),
                                   ArrayRef<int64_t>(offsets))));
  }
  auto splat = [&](Value scalar) -> Value {
    if (lanes == 0)
      return scalar;
    return vector::BroadcastOp::create(builder, loc, type, scalar);
  };
  Type i1 = lanes == 0 ? Type(builder.getI1Type())
                       : Type(VectorType::get({lanes}, builder.getI1Type()));
  Value power = constant(builder, loc, type, uint64_t(1) << 62);
  Value square = state;
  int64_t largest = std::max<int64_t>(rotaryDim / 2 - 1, 1);
  for (int64_t bit = 0; (largest >> bit) != 0; ++bit) {
    Value digit = arith::TruncIOp::create(
        builder, loc, i1,
        arith::ShRUIOp::create(builder, loc, i,
                               constant(builder, loc, type, bit)));
    power = arith::SelectOp::create(
        builder, loc, digit, mulQ62(builder, loc, power, splat(square)), power);
    if ((largest >> (bit + 1)) != 0)
      square = mulQ62(builder, loc, square, square);
  }
  return mulShift(builder, loc, steps, power, 62, /*round=*/true);
}

FrequencyAttrInterface
DynamicNtkFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<double> factor = reader.requireFloat("factor");
  if (failed(factor))
    return {};
  // Hugging Face's dynamic NTK scales past `max_position_embeddings`, and
  // reads no `original_max_position_embeddings` (a Phi-3 config carries
  // one, which its dynamic parameters copy); that is only the fallback of
  // a dict without `max_position_embeddings`.
  FailureOr<std::optional<int64_t>> maxPositions =
      reader.getPositiveInt("max_position_embeddings");
  if (failed(maxPositions))
    return {};
  int64_t threshold = 0;
  if (*maxPositions) {
    threshold = **maxPositions;
  } else {
    FailureOr<int64_t> original = reader.getOriginalMaxPositionEmbeddings();
    if (failed(original))
      return {};
    threshold = *original;
  }
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()), llvm::APFloat(*factor),
                    threshold);
}

//===----------------------------------------------------------------------===//
// yarn
//===----------------------------------------------------------------------===//

LogicalResult YarnFrequenciesAttr::verify(
    EmitErrorFn emitError, llvm::APFloat base, llvm::APFloat factor,
    int64_t originalMax, llvm::APFloat betaFast, llvm::APFloat betaSlow,
    bool truncate, std::optional<llvm::APFloat> attentionFactor,
    std::optional<llvm::APFloat> mscale,
    std::optional<llvm::APFloat> mscaleAllDim) {
  if (failed(verifyBaseAndFactor(emitError, "yarn", base, factor)) ||
      failed(
          verifyPositive(emitError, "yarn", "beta_slow", toDouble(betaSlow))) ||
      failed(verifyPositive(emitError, "yarn", "attention_factor",
                            attentionFactor)))
    return failure();
  if (toDouble(base) <= 1.0)
    return emitError() << "yarn: base must be > 1 (the correction range "
                          "divides by ln base), got "
                       << toDouble(base);
  if (originalMax <= 0)
    return emitError() << "yarn: original_max_position_embeddings must be "
                          "positive, got "
                       << originalMax;
  if (!(toDouble(betaFast) > toDouble(betaSlow)) ||
      !std::isfinite(toDouble(betaFast)))
    return emitError() << "yarn: beta_fast (" << toDouble(betaFast)
                       << ") must be greater than beta_slow ("
                       << toDouble(betaSlow) << ")";
  for (const std::optional<llvm::APFloat> &m : {mscale, mscaleAllDim})
    if (m && !std::isfinite(toDouble(*m)))
      return emitError() << "yarn: mscale values must be finite";
  if (static_cast<bool>(mscale) != static_cast<bool>(mscaleAllDim) &&
      !attentionFactor)
    return emitError() << "yarn: mscale and mscale_all_dim are used together "
                          "(g(s, mscale) / g(s, mscale_all_dim)); give both "
                          "or neither";
  if (mscaleAllDim && !attentionFactor &&
      yarnMscale(toDouble(factor), toDouble(*mscaleAllDim)) <= 0.0)
    return emitError() << "yarn: g(factor, mscale_all_dim) must be positive";
  if (mscale && !attentionFactor &&
      yarnMscale(toDouble(factor), toDouble(*mscale)) <= 0.0)
    return emitError() << "yarn: g(factor, mscale) must be positive";
  if (!attentionFactor && !mscale && yarnMscale(toDouble(factor), 1.0) <= 0.0)
    return emitError() << "yarn: g(factor) must be positive";
  return success();
}

SmallVector<double>
YarnFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  double p = static_cast<double>(rotaryDim);
  double base = toDouble(getBase());
  double s = toDouble(getFactor());
  double l = static_cast<double>(getOriginalMaxPositionEmbeddings());
  // The frequency index whose wavelength makes `r` turns over L.
  auto correctionDim = [&](double r) {
    return p * std::log(l / (2.0 * M_PI * r)) / (2.0 * std::log(base));
  };
  double low = correctionDim(toDouble(getBetaFast()));
  double high = correctionDim(toDouble(getBetaSlow()));
  if (getTruncate()) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::clamp(low, 0.0, p - 1.0);
  high = std::clamp(high, 0.0, p - 1.0);
  if (low == high)
    high += 0.001;
  SmallVector<double> thetas = unscaledFrequencies(base, rotaryDim);
  for (auto [i, theta] : llvm::enumerate(thetas)) {
    double ramp =
        std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    double extrapolation = 1.0 - ramp;
    theta = (theta / s) * (1.0 - extrapolation) + theta * extrapolation;
  }
  return thetas;
}

std::optional<double> YarnFrequenciesAttr::getImpliedMagnitude() const {
  if (std::optional<llvm::APFloat> a = getAttentionFactor())
    return toDouble(*a);
  double s = toDouble(getFactor());
  if (getMscale() && getMscaleAllDim())
    return yarnMscale(s, toDouble(*getMscale())) /
           yarnMscale(s, toDouble(*getMscaleAllDim()));
  return yarnMscale(s, 1.0);
}

FrequencyAttrInterface
YarnFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<double> factor = reader.requireFloat("factor");
  if (failed(factor))
    return {};
  FailureOr<int64_t> originalMax = reader.getOriginalMaxPositionEmbeddings();
  if (failed(originalMax))
    return {};
  FailureOr<std::optional<double>> betaFast = reader.getFloat("beta_fast");
  FailureOr<std::optional<double>> betaSlow = reader.getFloat("beta_slow");
  FailureOr<std::optional<bool>> truncate = reader.getBool("truncate");
  FailureOr<std::optional<double>> attentionFactor =
      reader.getFloat("attention_factor");
  FailureOr<std::optional<double>> mscale = reader.getFloat("mscale");
  FailureOr<std::optional<double>> mscaleAllDim =
      reader.getFloat("mscale_all_dim");
  if (failed(betaFast) || failed(betaSlow) || failed(truncate) ||
      failed(attentionFactor) || failed(mscale) || failed(mscaleAllDim))
    return {};
  // Hugging Face uses mscale and mscale_all_dim only as a pair (DeepSeek's
  // g(s, mscale) / g(s, mscale_all_dim)); one alone is ignored.
  if (!*mscale || !*mscaleAllDim)
    *mscale = *mscaleAllDim = std::nullopt;
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()), llvm::APFloat(*factor),
                    *originalMax, llvm::APFloat(betaFast->value_or(32.0)),
                    llvm::APFloat(betaSlow->value_or(1.0)),
                    truncate->value_or(true), optionalF64(*attentionFactor),
                    optionalF64(*mscale), optionalF64(*mscaleAllDim));
}

//===----------------------------------------------------------------------===//
// llama3
//===----------------------------------------------------------------------===//

LogicalResult Llama3FrequenciesAttr::verify(EmitErrorFn emitError,
                                            llvm::APFloat base,
                                            llvm::APFloat factor,
                                            llvm::APFloat lowFreqFactor,
                                            llvm::APFloat highFreqFactor,
                                            int64_t originalMax) {
  if (failed(verifyBaseAndFactor(emitError, "llama3", base, factor)) ||
      failed(verifyPositive(emitError, "llama3", "low_freq_factor",
                            toDouble(lowFreqFactor))))
    return failure();
  if (!(toDouble(highFreqFactor) > toDouble(lowFreqFactor)) ||
      !std::isfinite(toDouble(highFreqFactor)))
    return emitError() << "llama3: high_freq_factor ("
                       << toDouble(highFreqFactor)
                       << ") must be greater than low_freq_factor ("
                       << toDouble(lowFreqFactor) << ")";
  if (originalMax <= 0)
    return emitError() << "llama3: original_max_position_embeddings must be "
                          "positive, got "
                       << originalMax;
  return success();
}

SmallVector<double>
Llama3FrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  double s = toDouble(getFactor());
  double lf = toDouble(getLowFreqFactor());
  double hf = toDouble(getHighFreqFactor());
  double l = static_cast<double>(getOriginalMaxPositionEmbeddings());
  SmallVector<double> thetas =
      unscaledFrequencies(toDouble(getBase()), rotaryDim);
  for (double &theta : thetas) {
    double wavelength = 2.0 * M_PI / theta;
    if (wavelength < l / hf)
      continue; // High frequencies are kept.
    if (wavelength > l / lf) {
      theta /= s; // Low frequencies are interpolated.
      continue;
    }
    double mu = (l / wavelength - lf) / (hf - lf);
    theta = (1.0 - mu) * theta / s + mu * theta;
  }
  return thetas;
}

FrequencyAttrInterface
Llama3FrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<std::optional<double>> factor = reader.getFloat("factor");
  FailureOr<std::optional<double>> low = reader.getFloat("low_freq_factor");
  FailureOr<std::optional<double>> high = reader.getFloat("high_freq_factor");
  // Hugging Face reads L here from original_max_position_embeddings only.
  FailureOr<std::optional<int64_t>> originalMax =
      reader.getPositiveInt("original_max_position_embeddings");
  if (failed(factor) || failed(low) || failed(high) || failed(originalMax))
    return {};
  return getChecked(
      [&] { return reader.emitError(); }, reader.getContext(),
      llvm::APFloat(reader.getBase()), llvm::APFloat(factor->value_or(8.0)),
      llvm::APFloat(low->value_or(1.0)), llvm::APFloat(high->value_or(4.0)),
      originalMax->value_or(8192));
}

//===----------------------------------------------------------------------===//
// longrope
//===----------------------------------------------------------------------===//

LogicalResult LongRopeFrequenciesAttr::verify(
    EmitErrorFn emitError, llvm::APFloat base, DenseF64ArrayAttr shortFactor,
    DenseF64ArrayAttr longFactor, int64_t originalMax,
    std::optional<llvm::APFloat> factor,
    std::optional<llvm::APFloat> attentionFactor) {
  if (failed(verifyBase(emitError, "longrope", base)) ||
      failed(verifyPositive(emitError, "longrope", "factor", factor)) ||
      failed(verifyPositive(emitError, "longrope", "attention_factor",
                            attentionFactor)))
    return failure();
  if (!shortFactor || !longFactor)
    return emitError() << "longrope: short_factor and long_factor are required";
  for (auto [name, values] :
       {std::pair(StringRef("short_factor"), shortFactor.asArrayRef()),
        std::pair(StringRef("long_factor"), longFactor.asArrayRef())})
    for (double v : values)
      if (failed(verifyPositive(emitError, "longrope",
                                (name + " entries").str(), v)))
        return failure();
  if (originalMax <= 0)
    return emitError() << "longrope: original_max_position_embeddings must be "
                          "positive, got "
                       << originalMax;
  if (!attentionFactor && factor && toDouble(*factor) > 1.0 && originalMax < 2)
    return emitError() << "longrope: the magnitude sqrt(1 + ln s / ln L) needs "
                          "original_max_position_embeddings > 1";
  return success();
}

LogicalResult
LongRopeFrequenciesAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                            int64_t rotaryDim) const {
  int64_t pairs = rotaryDim / 2;
  if (getShortFactor().size() != pairs || getLongFactor().size() != pairs)
    return emitError() << "longrope: short_factor and long_factor must have "
                          "rotary_dim / 2 = "
                       << pairs << " entries, got " << getShortFactor().size()
                       << " and " << getLongFactor().size();
  return success();
}

bool LongRopeFrequenciesAttr::isStatic() const { return false; }

/// theta_i / ext_i.
static SmallVector<double> divideByFactors(double base, int64_t rotaryDim,
                                           ArrayRef<double> factors) {
  SmallVector<double> thetas = unscaledFrequencies(base, rotaryDim);
  for (auto [theta, ext] : llvm::zip_equal(thetas, factors))
    theta /= ext;
  return thetas;
}

SmallVector<double>
LongRopeFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  return divideByFactors(toDouble(getBase()), rotaryDim,
                         getShortFactor().asArrayRef());
}

Value LongRopeFrequenciesAttr::buildFrequencyState(OpBuilder &builder,
                                                   Location loc, Value length,
                                                   int64_t rotaryDim) const {
  // Whether the long factors apply: one i1 per call.
  return arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::sgt, length,
      i64Constant(builder, loc, getOriginalMaxPositionEmbeddings()));
}

Value LongRopeFrequenciesAttr::buildInverseFrequencyAt(
    OpBuilder &builder, Location loc, Value state, Value index, int64_t lanes,
    int64_t rotaryDim, FrequencyTableReader readTable) const {
  double base = toDouble(getBase());
  Value shortTheta =
      readTable(builder, loc,
                divideByFactors(base, rotaryDim, getShortFactor().asArrayRef()),
                index, lanes);
  Value longTheta =
      readTable(builder, loc,
                divideByFactors(base, rotaryDim, getLongFactor().asArrayRef()),
                index, lanes);
  return arith::SelectOp::create(builder, loc, state, longTheta, shortTheta);
}

Value LongRopeFrequenciesAttr::materializeInverseFrequencies(
    OpBuilder &builder, Location loc, Value length, int64_t rotaryDim) const {
  // Both tables are constants; the call picks one with a single select on
  // its length, so the switch costs nothing per element.
  double base = toDouble(getBase());
  Value shortTable = detail::buildConstantFrequencyTable(
      builder, loc,
      divideByFactors(base, rotaryDim, getShortFactor().asArrayRef()));
  Value longTable = detail::buildConstantFrequencyTable(
      builder, loc,
      divideByFactors(base, rotaryDim, getLongFactor().asArrayRef()));
  Value isLong = buildFrequencyState(builder, loc, length, rotaryDim);
  return arith::SelectOp::create(builder, loc, isLong, longTable, shortTable);
}

std::optional<double> LongRopeFrequenciesAttr::getImpliedMagnitude() const {
  if (std::optional<llvm::APFloat> a = getAttentionFactor())
    return toDouble(*a);
  double s = getFactor() ? toDouble(*getFactor()) : 1.0;
  if (s <= 1.0)
    return 1.0;
  return std::sqrt(1.0 +
                   std::log(s) / std::log(static_cast<double>(
                                     getOriginalMaxPositionEmbeddings())));
}

FrequencyAttrInterface
LongRopeFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<int64_t> originalMax = reader.getOriginalMaxPositionEmbeddings();
  if (failed(originalMax))
    return {};
  FailureOr<SmallVector<double>> shortFactor =
      reader.requireFloatArray("short_factor");
  if (failed(shortFactor))
    return {};
  FailureOr<SmallVector<double>> longFactor =
      reader.requireFloatArray("long_factor");
  if (failed(longFactor))
    return {};
  FailureOr<std::optional<double>> factor = reader.getFloat("factor");
  FailureOr<std::optional<int64_t>> maxPositions =
      reader.getPositiveInt("max_position_embeddings");
  FailureOr<std::optional<double>> attentionFactor =
      reader.getFloat("attention_factor");
  if (failed(factor) || failed(maxPositions) || failed(attentionFactor))
    return {};
  // Without a factor, Hugging Face scales by M / L (Phi-3 keeps L at the
  // top level of config.json); the attribute states the resolved factor.
  if (!*factor && *maxPositions)
    *factor =
        static_cast<double>(**maxPositions) / static_cast<double>(*originalMax);
  MLIRContext *context = reader.getContext();
  return getChecked([&] { return reader.emitError(); }, context,
                    llvm::APFloat(reader.getBase()),
                    DenseF64ArrayAttr::get(context, *shortFactor),
                    DenseF64ArrayAttr::get(context, *longFactor), *originalMax,
                    optionalF64(*factor), optionalF64(*attentionFactor));
}

//===----------------------------------------------------------------------===//
// proportional
//===----------------------------------------------------------------------===//

LogicalResult
ProportionalFrequenciesAttr::verify(EmitErrorFn emitError, llvm::APFloat base,
                                    llvm::APFloat factor,
                                    llvm::APFloat partialRotaryFactor) {
  if (failed(verifyBaseAndFactor(emitError, "proportional", base, factor)))
    return failure();
  double f = toDouble(partialRotaryFactor);
  if (!(f >= 0.0 && f <= 1.0))
    return emitError() << "proportional: partial_rotary_factor must be in "
                          "[0, 1], got "
                       << f;
  return success();
}

bool ProportionalFrequenciesAttr::requiresFullRotation() { return true; }

SmallVector<double>
ProportionalFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  // Hugging Face truncates k = int(f * D / 2) toward zero.
  auto rotated = static_cast<int64_t>(toDouble(getPartialRotaryFactor()) *
                                      static_cast<double>(rotaryDim) / 2.0);
  SmallVector<double> thetas =
      unscaledFrequencies(toDouble(getBase()), rotaryDim);
  for (auto [i, theta] : llvm::enumerate(thetas))
    theta =
        static_cast<int64_t>(i) < rotated ? theta / toDouble(getFactor()) : 0.0;
  return thetas;
}

FrequencyAttrInterface
ProportionalFrequenciesAttr::buildFromHF(HFConfigReader &reader) {
  FailureOr<std::optional<double>> factor = reader.getFloat("factor");
  FailureOr<std::optional<double>> partial =
      reader.getFloat("partial_rotary_factor");
  if (failed(factor) || failed(partial))
    return {};
  return getChecked([&] { return reader.emitError(); }, reader.getContext(),
                    llvm::APFloat(reader.getBase()),
                    llvm::APFloat(factor->value_or(1.0)),
                    llvm::APFloat(partial->value_or(1.0)));
}

//===----------------------------------------------------------------------===//
// table
//===----------------------------------------------------------------------===//

LogicalResult TableFrequenciesAttr::verify(EmitErrorFn emitError,
                                           DenseF64ArrayAttr invFreq) {
  if (!invFreq || invFreq.empty())
    return emitError() << "table: inv_freq must not be empty";
  for (auto [i, theta] : llvm::enumerate(invFreq.asArrayRef()))
    if (!(theta >= 0.0) || !std::isfinite(theta))
      return emitError() << "table: inv_freq[" << i
                         << "] must be finite and non-negative, got " << theta;
  return success();
}

LogicalResult
TableFrequenciesAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                         int64_t rotaryDim) const {
  int64_t pairs = rotaryDim / 2;
  if (static_cast<int64_t>(getInvFreq().size()) != pairs)
    return emitError() << "table: inv_freq must have rotary_dim / "
                          "2 = "
                       << pairs << " entries, got " << getInvFreq().size();
  return success();
}

SmallVector<double>
TableFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  return SmallVector<double>(getInvFreq().asArrayRef());
}
