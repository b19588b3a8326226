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
// Only the config-level rules live here (which keys exist and their types,
// the rope_type, the rotary dimension, M-RoPE). Each scheme is a frequency
// attribute that declares its rope_type names and keys in RopeAttrs.td and
// reads them in its buildFromHF hook (RopeFrequencies.cpp), applying Hugging
// Face's defaults and fallbacks; this file finds schemes by iterating over
// the dialect's attributes, so it names none. Every check of a value that an
// attribute verifier makes is left to that verifier, so its message is the
// one the user sees.
//
//===----------------------------------------------------------------------===//

#include "rope/Interop/HuggingFace.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::rope;

namespace {
/// What the importer needs of one scheme, from its attribute's declarations
/// (`hfRopeTypes`, `hfKeys` in RopeAttrs.td) and hooks.
struct Scheme {
  TypeID id;
  ArrayRef<llvm::StringLiteral> ropeTypes;
  ArrayRef<HFKey> keys;
  bool requiresFullRotation;
  FrequencyAttrInterface (*build)(HFConfigReader &);
};

template <typename AttrT>
using HFRopeTypesHook = decltype(AttrT::getHFRopeTypes());

template <typename AttrT> void addScheme(SmallVectorImpl<Scheme> &schemes) {
  if constexpr (llvm::is_detected<HFRopeTypesHook, AttrT>::value) {
    if (!AttrT::getHFRopeTypes().empty())
      schemes.push_back({TypeID::get<AttrT>(), AttrT::getHFRopeTypes(),
                         AttrT::getHFKeys(), AttrT::requiresFullRotation(),
                         &AttrT::buildFromHF});
  }
}

template <typename... AttrTs> SmallVector<Scheme> collectSchemes() {
  SmallVector<Scheme> schemes;
  (addScheme<AttrTs>(schemes), ...);
  return schemes;
}

/// Every attribute of the dialect that Hugging Face names, in the order
/// RopeAttrs.td declares them.
ArrayRef<Scheme> getSchemes() {
  static const SmallVector<Scheme> schemes = collectSchemes<
#define GET_ATTRDEF_LIST
#include "rope/Dialect/Rope/IR/RopeAttrs.cpp.inc"
      >();
  return schemes;
}

// Keys the importer reads itself, or that from_hf_config merges into every
// dict from the top level of config.json.
constexpr HFKey kCommonKeys[] = {
    {"partial_rotary_factor", HFKeyKind::Float},
    {"rope_theta", HFKeyKind::Float},
    {"original_max_position_embeddings", HFKeyKind::PositiveInt},
    {"max_position_embeddings", HFKeyKind::PositiveInt},
    {"mrope_interleaved", HFKeyKind::Bool},
    {"mrope_section", HFKeyKind::IntArray},
};
// Keys with no value to type-check here: the scheme's name (readScheme) and
// one Hugging Face ignores.
constexpr llvm::StringLiteral kUncheckedKeys[] = {"rope_type", "type",
                                                  "finetuned"};
// Keys that say nothing about the frequencies: a dict of only these needs no
// type (Qwen3-VL's text config writes the M-RoPE split this way).
constexpr llvm::StringLiteral kTypelessKeys[] = {
    "mrope_section", "mrope_interleaved", "finetuned"};

/// Every key some scheme or the importer reads, ordered by type, then as
/// declared (schemes first): the order their types are checked in.
SmallVector<HFKey> getKnownKeys() {
  SmallVector<HFKey> keys;
  auto add = [&](ArrayRef<HFKey> more) {
    for (const HFKey &key : more) {
      const HFKey *known = llvm::find_if(
          keys, [&](const HFKey &other) { return other.name == key.name; });
      if (known == keys.end())
        keys.push_back(key);
      else
        assert(known->kind == key.kind && "a key declared with two types");
    }
  };
  for (const Scheme &scheme : getSchemes())
    add(scheme.keys);
  add(kCommonKeys);
  // A stable partition by kind, in HFKeyKind's order.
  SmallVector<HFKey> ordered;
  for (int kind = 0; kind <= static_cast<int>(HFKeyKind::IntArray); ++kind)
    for (const HFKey &key : keys)
      if (static_cast<int>(key.kind) == kind)
        ordered.push_back(key);
  return ordered;
}

/// The rope_scaling dict as llvm::json sees it.
class JsonConfigReader final : public HFConfigReader {
public:
  JsonConfigReader(MLIRContext *context, const llvm::json::Object &dict,
                   double base, std::string &error)
      : context(context), dict(dict), base(base), error(error) {}

  MLIRContext *getContext() const override { return context; }
  double getBase() const override { return base; }
  StringRef getRopeType() const override { return ropeType; }
  void setRopeType(StringRef name) { ropeType = name.str(); }
  bool hasFailed() const { return failedOnce; }

  LogicalResult fail(const llvm::Twine &message) override {
    error = message.str();
    failedOnce = true;
    return failure();
  }

  InFlightDiagnostic emitError() override {
    return mlir::emitError(UnknownLoc::get(context));
  }

  /// The value of `key`, or null when absent or JSON null (Hugging Face
  /// writes `null` for "not set").
  const llvm::json::Value *lookup(llvm::StringRef key) const {
    const llvm::json::Value *value = dict.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return nullptr;
    return value;
  }

  FailureOr<std::optional<double>> getFloat(llvm::StringRef key) override {
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

  FailureOr<std::optional<int64_t>>
  getPositiveInt(llvm::StringRef key) override {
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

  FailureOr<std::optional<bool>> getBool(llvm::StringRef key) override {
    const llvm::json::Value *value = lookup(key);
    if (!value)
      return std::optional<bool>();
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return fail(key + " must be a bool, got " + render(*value));
    return flag;
  }

  FailureOr<std::optional<SmallVector<double>>>
  getFloatArray(llvm::StringRef key) override {
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
  getIntArray(llvm::StringRef key) override {
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

  /// Checks the type of `key`'s value, if present.
  LogicalResult check(const HFKey &key) {
    switch (key.kind) {
    case HFKeyKind::Float:
      return getFloat(key.name);
    case HFKeyKind::PositiveInt:
      return getPositiveInt(key.name);
    case HFKeyKind::Bool:
      return getBool(key.name);
    case HFKeyKind::FloatArray:
      return getFloatArray(key.name);
    case HFKeyKind::IntArray:
      return getIntArray(key.name);
    }
    llvm_unreachable("unknown HFKeyKind");
  }

  static std::string render(const llvm::json::Value &value) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << value;
    return text;
  }

private:
  MLIRContext *context;
  const llvm::json::Object &dict;
  double base;
  std::string &error;
  std::string ropeType;
  bool failedOnce = false;
};

const Scheme *findScheme(llvm::StringRef name) {
  for (const Scheme &scheme : getSchemes())
    if (llvm::is_contained(scheme.ropeTypes, name))
      return &scheme;
  return nullptr;
}

/// "a, b (or b2), c": the rope_type values the importer knows.
std::string describeRopeTypes() {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(getSchemes(), os, [&](const Scheme &scheme) {
    os << scheme.ropeTypes.front();
    if (scheme.ropeTypes.size() > 1) {
      os << " (or ";
      llvm::interleaveComma(scheme.ropeTypes.drop_front(), os);
      os << ")";
    }
  });
  return text;
}

FailureOr<const Scheme *> readScheme(JsonConfigReader &reader,
                                     const llvm::json::Object &scaling) {
  const Scheme *scheme = nullptr;
  std::string spelled;
  for (llvm::StringRef key : {"rope_type", "type"}) {
    const llvm::json::Value *value = reader.lookup(key);
    if (!value)
      continue;
    std::optional<llvm::StringRef> name = value->getAsString();
    if (!name)
      return reader.fail(key + " must be a string, got " +
                         JsonConfigReader::render(*value));
    const Scheme *parsed = findScheme(*name);
    if (!parsed)
      return reader.fail("unknown rope_type '" + *name + "'; expected one of " +
                         describeRopeTypes());
    // Saved configs often carry both spellings (Phi-3: a legacy alias in
    // "type", the current name in "rope_type"); they must name one scheme.
    if (scheme && scheme != parsed)
      return reader.fail("scaling has both rope_type='" + *name +
                         "' and type='" + spelled +
                         "' naming different schemes");
    if (!scheme)
      reader.setRopeType(*name);
    scheme = parsed;
    spelled = name->str();
  }
  if (scheme)
    return scheme;
  for (const auto &entry : scaling)
    if (!llvm::is_contained(kTypelessKeys, llvm::StringRef(entry.first)))
      return reader.fail("scaling needs a 'rope_type' (or legacy 'type') key");
  // Without a type, Hugging Face uses the unscaled frequencies.
  for (const Scheme &candidate : getSchemes())
    if (candidate.id == TypeID::get<DefaultFrequenciesAttr>()) {
      reader.setRopeType(candidate.ropeTypes.front());
      return &candidate;
    }
  llvm_unreachable("the unscaled scheme has a Hugging Face name");
}
} // namespace

FailureOr<HuggingFaceRope> mlir::rope::buildFrequencyAttrFromHF(
    MLIRContext *context, const llvm::json::Object &scaling, double base,
    int64_t headDim, int64_t rotaryDim, std::string &error) {
  context->getOrLoadDialect<RopeDialect>();
  JsonConfigReader reader(context, scaling, base, error);
  SmallVector<HFKey> knownKeys = getKnownKeys();

  // A misspelt key would otherwise silently fall back to a default (e.g.
  // beta_fast = 32).
  SmallVector<std::string> unknown;
  for (const auto &entry : scaling) {
    llvm::StringRef key = entry.first;
    if (llvm::none_of(knownKeys,
                      [&](const HFKey &known) { return known.name == key; }) &&
        !llvm::is_contained(kUncheckedKeys, key))
      unknown.push_back(key.str());
  }
  if (!unknown.empty()) {
    llvm::sort(unknown);
    return reader.fail("unknown rope_scaling key(s): " +
                       llvm::join(unknown, ", "));
  }

  FailureOr<const Scheme *> scheme = readScheme(reader, scaling);
  if (failed(scheme))
    return failure();
  bool wholeHead = (*scheme)->requiresFullRotation;

  // Type-check every key up front, whichever scheme uses it.
  for (const HFKey &key : knownKeys)
    if (failed(reader.check(key)))
      return failure();

  if (headDim <= 0 || headDim > kMaxHeadDim)
    return reader.fail("head_dim must be in [1, " + llvm::Twine(kMaxHeadDim) +
                       "], got " + llvm::Twine(headDim));
  std::optional<double> theta = *reader.getFloat("rope_theta");
  if (theta && *theta != base) {
    // New-style rope_parameters carry the base; silently preferring either
    // value would hide a mistake.
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "scaling['rope_theta'] = " << HFConfigReader::formatNumber(*theta)
       << " disagrees with base = " << HFConfigReader::formatNumber(base)
       << "; pass base explicitly";
    return reader.fail(text);
  }
  // A scheme over the whole head reads partial_rotary_factor itself (zero
  // frequencies); for the others it sets the rotary dimension.
  std::optional<double> partial = *reader.getFloat("partial_rotary_factor");
  if (partial && !(*partial >= 0.0 && *partial <= 1.0))
    return reader.fail("partial_rotary_factor must be in [0, 1], got " +
                       HFConfigReader::formatNumber(*partial));
  if (rotaryDim <= 0)
    rotaryDim =
        partial && !wholeHead
            ? static_cast<int64_t>(static_cast<double>(headDim) * *partial)
            : headDim;
  if (rotaryDim <= 0 || rotaryDim % 2)
    return reader.fail("rotary_dim must be a positive even integer, got " +
                       llvm::Twine(rotaryDim));
  if (rotaryDim > headDim)
    return reader.fail("rotary_dim " + llvm::Twine(rotaryDim) +
                       " exceeds head_dim " + llvm::Twine(headDim));
  if (partial && !wholeHead) {
    auto implied =
        static_cast<int64_t>(static_cast<double>(headDim) * *partial);
    if (implied != rotaryDim)
      return reader.fail(
          "partial_rotary_factor " + HFConfigReader::formatNumber(*partial) +
          " with head_dim " + llvm::Twine(headDim) + " means rotary_dim " +
          llvm::Twine(implied) + ", not " + llvm::Twine(rotaryDim));
  }
  if (wholeHead && rotaryDim != headDim)
    return reader.fail(reader.getRopeType() +
                       " RoPE rotates the whole head (zero frequencies are "
                       "identity pairs): rotary_dim " +
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
  auto emitError = [&] { return reader.emitError(); };
  auto verifierFailure = [&]() -> FailureOr<HuggingFaceRope> {
    return reader.fail(diagnostics.empty() ? "invalid RoPE configuration"
                                           : diagnostics);
  };

  HuggingFaceRope result;
  result.freqs = (*scheme)->build(reader);
  if (!result.freqs) {
    if (reader.hasFailed())
      return failure();
    return verifierFailure();
  }
  result.rotaryDim = rotaryDim;
  if (failed(result.freqs.verifyForRotaryDim(emitError, rotaryDim)))
    return verifierFailure();
  result.magnitude = result.freqs.getImpliedMagnitude().value_or(1.0);

  std::optional<SmallVector<int64_t>> section =
      *reader.getIntArray("mrope_section");
  bool interleaved = reader.getBool("mrope_interleaved")->value_or(false);
  if (section) {
    result.mrope = MRopeAttr::getChecked(
        emitError, context, DenseI64ArrayAttr::get(context, *section),
        interleaved);
    if (!result.mrope)
      return verifierFailure();
    int64_t total = 0;
    for (int64_t n : *section)
      total += n;
    if (total != rotaryDim / 2)
      return reader.fail(
          "M-RoPE section sums to " + llvm::Twine(total) +
          ", expected rotary_dim / 2 = " + llvm::Twine(rotaryDim / 2));
  } else if (interleaved) {
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
