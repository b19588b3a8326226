//===- HuggingFace.cpp - Hugging Face rope_scaling to attributes ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads a Hugging Face rope_scaling dict the way the float64 reference
// (python/rope_mlir/reference.py) does and builds the matching attributes.
// Only the config-level rules live here (which keys exist, which fall back to
// which, defaults Hugging Face applies before the formulas); every check of a
// value that an attribute verifier makes is left to that verifier, so its
// message is the one the user sees.
//
//===----------------------------------------------------------------------===//

#include "rope/Interop/HuggingFace.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::rope;

namespace {
enum class Scheme {
  Default,
  Linear,
  Ntk,
  Dynamic,
  Yarn,
  Llama3,
  LongRope,
  Proportional
};

// The keys real config.json rope_scaling / rope_parameters dicts carry.
constexpr llvm::StringLiteral kFloatKeys[] = {
    "factor",          "attention_factor", "beta_fast",
    "beta_slow",       "mscale",           "mscale_all_dim",
    "low_freq_factor", "high_freq_factor", "partial_rotary_factor",
    "rope_theta",
};
constexpr llvm::StringLiteral kIntKeys[] = {"original_max_position_embeddings",
                                            "max_position_embeddings"};
constexpr llvm::StringLiteral kOtherKeys[] = {
    "rope_type",   "type",          "truncate",          "short_factor",
    "long_factor", "mrope_section", "mrope_interleaved", "finetuned"};
// Keys that say nothing about the frequencies: a dict of only these needs no
// type (Qwen3-VL's text config writes the M-RoPE split this way).
constexpr llvm::StringLiteral kTypelessKeys[] = {
    "mrope_section", "mrope_interleaved", "finetuned"};

/// A failure with `message`, for the FailureOr-returning helpers below.
class Reader {
public:
  Reader(const llvm::json::Object &dict, std::string &error)
      : dict(dict), error(error) {}

  LogicalResult fail(const llvm::Twine &message) {
    error = message.str();
    return failure();
  }

  /// The value of `key`, or null when absent or JSON null (Hugging Face
  /// writes `null` for "not set").
  const llvm::json::Value *lookup(llvm::StringRef key) const {
    const llvm::json::Value *value = dict.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return nullptr;
    return value;
  }

  bool has(llvm::StringRef key) const { return lookup(key) != nullptr; }

  FailureOr<std::optional<double>> getFloat(llvm::StringRef key) {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<double>();
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return fail(key + " must be a real number, got " + render(*value));
    if (!std::isfinite(*number))
      return fail(key + " must be finite, got " + render(*value));
    return number;
  }

  FailureOr<std::optional<int64_t>> getPositiveInt(llvm::StringRef key) {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<int64_t>();
    std::optional<int64_t> number = value->getAsInteger();
    if (!number)
      return fail(key + " must be an integer, got " + render(*value));
    if (*number <= 0)
      return fail(key + " must be positive, got " + llvm::Twine(*number));
    return number;
  }

  FailureOr<std::optional<bool>> getBool(llvm::StringRef key) {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<bool>();
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return fail(key + " must be a bool, got " + render(*value));
    return flag;
  }

  FailureOr<std::optional<SmallVector<double>>>
  getFloatArray(llvm::StringRef key) {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<SmallVector<double>>();
    const llvm::json::Array *array = value->getAsArray();
    if (!array)
      return fail(key + " must be a list of numbers");
    SmallVector<double> out;
    for (const llvm::json::Value &element : *array) {
      std::optional<double> number = element.getAsNumber();
      if (!number)
        return fail(key + " must be a list of numbers");
      out.push_back(*number);
    }
    return std::optional<SmallVector<double>>(std::move(out));
  }

  FailureOr<std::optional<SmallVector<int64_t>>>
  getIntArray(llvm::StringRef key) {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<SmallVector<int64_t>>();
    const llvm::json::Array *array = value->getAsArray();
    if (!array)
      return fail(key + " must be a list of integers");
    SmallVector<int64_t> out;
    for (const llvm::json::Value &element : *array) {
      std::optional<int64_t> number = element.getAsInteger();
      if (!number || element.getAsBoolean())
        return fail(key + " must be a list of integers");
      out.push_back(*number);
    }
    return std::optional<SmallVector<int64_t>>(std::move(out));
  }

  static std::string render(const llvm::json::Value &value) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << value;
    return text;
  }

private:
  const llvm::json::Object &dict;
  std::string &error;
};

std::optional<Scheme> parseScheme(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Scheme>>(name)
      .Case("default", Scheme::Default)
      // Qwen2-VL's {"type": "mrope"}: Hugging Face treats it as "default";
      // the section split is a separate attribute.
      .Case("mrope", Scheme::Default)
      .Case("linear", Scheme::Linear)
      .Case("ntk", Scheme::Ntk)
      .Case("dynamic", Scheme::Dynamic)
      .Case("yarn", Scheme::Yarn)
      .Case("llama3", Scheme::Llama3)
      .Case("longrope", Scheme::LongRope)
      // The first Phi-3 128k configs called LongRoPE "su".
      .Case("su", Scheme::LongRope)
      .Case("proportional", Scheme::Proportional)
      .Default(std::nullopt);
}

FailureOr<Scheme> readScheme(Reader &reader,
                             const llvm::json::Object &scaling) {
  std::optional<Scheme> scheme;
  std::string spelled;
  for (llvm::StringRef key : {"rope_type", "type"}) {
    const llvm::json::Value *value = reader.lookup(key);
    if (!value)
      continue;
    std::optional<llvm::StringRef> name = value->getAsString();
    if (!name)
      return reader.fail(key + " must be a string, got " +
                         Reader::render(*value));
    std::optional<Scheme> parsed = parseScheme(*name);
    if (!parsed)
      return reader.fail("unknown rope_type '" + *name +
                         "'; expected one of default, linear, ntk, dynamic, "
                         "yarn, llama3, longrope (or su), proportional (or "
                         "mrope, meaning default)");
    // Saved configs often carry both spellings ("type": "su",
    // "rope_type": "longrope"); they must name the same scheme.
    if (scheme && *scheme != *parsed)
      return reader.fail("scaling has both rope_type='" + *name +
                         "' and type='" + spelled +
                         "' naming different schemes");
    scheme = parsed;
    spelled = name->str();
  }
  if (scheme)
    return *scheme;
  for (const auto &entry : scaling)
    if (!llvm::is_contained(kTypelessKeys, llvm::StringRef(entry.first)))
      return reader.fail("scaling needs a 'rope_type' (or legacy 'type') key");
  return Scheme::Default;
}

/// The shortest decimal that reads back as `value` (what Python prints).
std::string formatNumber(double value) {
  char text[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

llvm::APFloat f64(double value) { return llvm::APFloat(value); }

std::optional<llvm::APFloat> optionalF64(std::optional<double> value) {
  if (!value)
    return std::nullopt;
  return llvm::APFloat(*value);
}
} // namespace

FailureOr<HuggingFaceRope> mlir::rope::buildFrequencyAttrFromHF(
    MLIRContext *context, const llvm::json::Object &scaling, double base,
    int64_t headDim, int64_t rotaryDim, std::string &error) {
  context->getOrLoadDialect<RopeDialect>();
  Reader reader(scaling, error);

  // A misspelt key would otherwise silently fall back to a default (e.g.
  // beta_fast = 32).
  SmallVector<std::string> unknown;
  for (const auto &entry : scaling) {
    llvm::StringRef key = entry.first;
    if (!llvm::is_contained(kFloatKeys, key) &&
        !llvm::is_contained(kIntKeys, key) &&
        !llvm::is_contained(kOtherKeys, key))
      unknown.push_back(key.str());
  }
  if (!unknown.empty()) {
    llvm::sort(unknown);
    return reader.fail("unknown rope_scaling key(s): " +
                       llvm::join(unknown, ", "));
  }

  FailureOr<Scheme> scheme = readScheme(reader, scaling);
  if (failed(scheme))
    return failure();

  // Read and type-check every key up front, whichever scheme uses it.
  llvm::StringMap<std::optional<double>> floats;
  for (llvm::StringRef key : kFloatKeys) {
    FailureOr<std::optional<double>> value = reader.getFloat(key);
    if (failed(value))
      return failure();
    floats[key] = *value;
  }
  llvm::StringMap<std::optional<int64_t>> ints;
  for (llvm::StringRef key : kIntKeys) {
    FailureOr<std::optional<int64_t>> value = reader.getPositiveInt(key);
    if (failed(value))
      return failure();
    ints[key] = *value;
  }
  FailureOr<std::optional<bool>> truncate = reader.getBool("truncate");
  FailureOr<std::optional<bool>> interleaved =
      reader.getBool("mrope_interleaved");
  FailureOr<std::optional<SmallVector<double>>> shortFactor =
      reader.getFloatArray("short_factor");
  FailureOr<std::optional<SmallVector<double>>> longFactor =
      reader.getFloatArray("long_factor");
  FailureOr<std::optional<SmallVector<int64_t>>> section =
      reader.getIntArray("mrope_section");
  if (failed(truncate) || failed(interleaved) || failed(shortFactor) ||
      failed(longFactor) || failed(section))
    return failure();

  auto schemeName = [&]() -> std::string {
    for (llvm::StringRef key : {"rope_type", "type"})
      if (const llvm::json::Value *value = reader.lookup(key))
        return value->getAsString()->str();
    return "default";
  };
  auto require = [&](llvm::StringRef key) -> FailureOr<double> {
    if (!floats[key])
      return reader.fail(llvm::Twine("rope_type '") + schemeName() +
                         "' needs '" + key + "'");
    return *floats[key];
  };
  // L: original_max_position_embeddings, else max_position_embeddings (the
  // Hugging Face fallback).
  auto originalMax = [&]() -> FailureOr<int64_t> {
    for (llvm::StringRef key : kIntKeys)
      if (ints[key])
        return *ints[key];
    return reader.fail(llvm::Twine("rope_type '") + schemeName() +
                       "' needs 'original_max_position_embeddings' (or "
                       "'max_position_embeddings')");
  };

  if (headDim <= 0 || headDim > kMaxHeadDim)
    return reader.fail("head_dim must be in [1, " + llvm::Twine(kMaxHeadDim) +
                       "], got " + llvm::Twine(headDim));
  if (std::optional<double> theta = floats["rope_theta"];
      theta && *theta != base) {
    // New-style rope_parameters carry the base; silently preferring either
    // value would hide a mistake.
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "scaling['rope_theta'] = " << formatNumber(*theta)
       << " disagrees with base = " << formatNumber(base)
       << "; pass base explicitly";
    return reader.fail(text);
  }
  std::optional<double> partial = floats["partial_rotary_factor"];
  if (partial && !(*partial >= 0.0 && *partial <= 1.0))
    return reader.fail("partial_rotary_factor must be in [0, 1], got " +
                       formatNumber(*partial));
  if (rotaryDim <= 0)
    rotaryDim =
        partial && *scheme != Scheme::Proportional
            ? static_cast<int64_t>(static_cast<double>(headDim) * *partial)
            : headDim;
  if (rotaryDim <= 0 || rotaryDim % 2)
    return reader.fail("rotary_dim must be a positive even integer, got " +
                       llvm::Twine(rotaryDim));
  if (rotaryDim > headDim)
    return reader.fail("rotary_dim " + llvm::Twine(rotaryDim) +
                       " exceeds head_dim " + llvm::Twine(headDim));
  if (partial && *scheme != Scheme::Proportional) {
    auto implied =
        static_cast<int64_t>(static_cast<double>(headDim) * *partial);
    if (implied != rotaryDim)
      return reader.fail("partial_rotary_factor " + formatNumber(*partial) +
                         " with head_dim " + llvm::Twine(headDim) +
                         " means rotary_dim " + llvm::Twine(implied) +
                         ", not " + llvm::Twine(rotaryDim));
  }
  if (*scheme == Scheme::Proportional && rotaryDim != headDim)
    return reader.fail("proportional RoPE rotates the whole head (zero "
                       "frequencies are identity pairs): rotary_dim " +
                       llvm::Twine(rotaryDim) + " must equal head_dim " +
                       llvm::Twine(headDim));

  // Diagnostics of getChecked/verifyForRotaryDim become `error`.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    if (!diagnostics.empty())
      diagnostics += "\n";
    diagnostics += diag.str();
    return success();
  });
  Location loc = UnknownLoc::get(context);
  auto emitError = [&] { return mlir::emitError(loc); };
  auto verifierFailure = [&]() -> FailureOr<HuggingFaceRope> {
    return reader.fail(diagnostics.empty() ? "invalid RoPE configuration"
                                           : diagnostics);
  };

  Attribute attr;
  switch (*scheme) {
  case Scheme::Default: {
    if (std::optional<double> s = floats["factor"]; s && !(*s > 0.0))
      return reader.fail("factor must be > 0, got " + formatNumber(*s));
    attr = DefaultFrequenciesAttr::getChecked(emitError, context, f64(base));
    break;
  }
  case Scheme::Linear:
  case Scheme::Ntk: {
    FailureOr<double> s = require("factor");
    if (failed(s))
      return failure();
    attr = *scheme == Scheme::Linear
               ? Attribute(LinearFrequenciesAttr::getChecked(
                     emitError, context, f64(base), f64(*s)))
               : Attribute(NtkFrequenciesAttr::getChecked(emitError, context,
                                                          f64(base), f64(*s)));
    break;
  }
  case Scheme::Dynamic: {
    FailureOr<double> s = require("factor");
    if (failed(s))
      return failure();
    FailureOr<int64_t> m = originalMax();
    if (failed(m))
      return failure();
    attr = DynamicNtkFrequenciesAttr::getChecked(emitError, context, f64(base),
                                                 f64(*s), *m);
    break;
  }
  case Scheme::Yarn: {
    FailureOr<double> s = require("factor");
    if (failed(s))
      return failure();
    FailureOr<int64_t> l = originalMax();
    if (failed(l))
      return failure();
    // Hugging Face uses mscale and mscale_all_dim only as a pair (DeepSeek's
    // g(s, mscale) / g(s, mscale_all_dim)); one alone is ignored.
    std::optional<double> mscale = floats["mscale"];
    std::optional<double> mscaleAllDim = floats["mscale_all_dim"];
    if (!mscale || !mscaleAllDim)
      mscale = mscaleAllDim = std::nullopt;
    attr = YarnFrequenciesAttr::getChecked(
        emitError, context, f64(base), f64(*s), *l,
        f64(floats["beta_fast"].value_or(32.0)),
        f64(floats["beta_slow"].value_or(1.0)), truncate->value_or(true),
        optionalF64(floats["attention_factor"]), optionalF64(mscale),
        optionalF64(mscaleAllDim));
    break;
  }
  case Scheme::Llama3: {
    // Hugging Face reads L here from original_max_position_embeddings only.
    attr = Llama3FrequenciesAttr::getChecked(
        emitError, context, f64(base), f64(floats["factor"].value_or(8.0)),
        f64(floats["low_freq_factor"].value_or(1.0)),
        f64(floats["high_freq_factor"].value_or(4.0)),
        ints["original_max_position_embeddings"].value_or(8192));
    break;
  }
  case Scheme::LongRope: {
    FailureOr<int64_t> l = originalMax();
    if (failed(l))
      return failure();
    for (auto [key, values] : {std::pair("short_factor", &*shortFactor),
                               std::pair("long_factor", &*longFactor)})
      if (!*values)
        return reader.fail(llvm::Twine("rope_type '") + schemeName() +
                           "' needs '" + key + "'");
    // Without a factor, Hugging Face scales by M / L (Phi-3 keeps L at the
    // top level of config.json); the attribute states the resolved factor.
    std::optional<double> s = floats["factor"];
    if (!s && ints["max_position_embeddings"])
      s = static_cast<double>(*ints["max_position_embeddings"]) /
          static_cast<double>(*l);
    attr = LongRopeFrequenciesAttr::getChecked(
        emitError, context, f64(base),
        DenseF64ArrayAttr::get(context, **shortFactor),
        DenseF64ArrayAttr::get(context, **longFactor), *l, optionalF64(s),
        optionalF64(floats["attention_factor"]));
    break;
  }
  case Scheme::Proportional: {
    attr = ProportionalFrequenciesAttr::getChecked(
        emitError, context, f64(base), f64(floats["factor"].value_or(1.0)),
        f64(partial.value_or(1.0)));
    break;
  }
  }
  if (!attr)
    return verifierFailure();

  HuggingFaceRope result;
  result.freqs = cast<FrequencyAttrInterface>(attr);
  result.rotaryDim = rotaryDim;
  if (failed(result.freqs.verifyForRotaryDim(emitError, rotaryDim)))
    return verifierFailure();
  result.magnitude = result.freqs.getImpliedMagnitude().value_or(1.0);

  if (*section) {
    result.mrope = MRopeAttr::getChecked(
        emitError, context, DenseI64ArrayAttr::get(context, **section),
        interleaved->value_or(false));
    if (!result.mrope)
      return verifierFailure();
    int64_t total = 0;
    for (int64_t n : **section)
      total += n;
    if (total != rotaryDim / 2)
      return reader.fail(
          "M-RoPE section sums to " + llvm::Twine(total) +
          ", expected rotary_dim / 2 = " + llvm::Twine(rotaryDim / 2));
  } else if (interleaved->value_or(false)) {
    return reader.fail("mrope_interleaved needs mrope_section");
  }
  return result;
}

FailureOr<std::string> mlir::rope::printAttributeExactly(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream(text) << attr;
  // A failed parse must not reach the user's diagnostic handler.
  MLIRContext *context = attr.getContext();
  ScopedDiagnosticHandler silence(context,
                                  [](Diagnostic &) { return success(); });
  size_t numRead = 0;
  if (parseAttribute(text, context, Type(), &numRead) != attr ||
      numRead != text.size())
    return failure();
  return text;
}
