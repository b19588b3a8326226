//===- HFConfigReader.h - Reading a Hugging Face rope_scaling ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a frequency attribute sees of a Hugging Face `rope_scaling` (or
// `rope_parameters`) dict when it builds itself from one. Each attribute that
// Hugging Face names declares its `rope_type` values and keys in
// RopeAttrs.td (`hfRopeTypes`, `hfKeys`) and implements
// `static FrequencyAttrInterface buildFromHF(HFConfigReader &)` beside its
// other methods; the importer (lib/Interop/HuggingFace.cpp) implements this
// reader over llvm::json, so the dialect does not depend on the JSON form.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_HFCONFIGREADER_H
#define ROPE_DIALECT_ROPE_IR_HFCONFIGREADER_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::rope {

/// The JSON type the value of a `rope_scaling` key must have.
enum class HFKeyKind {
  /// A finite number.
  Float,
  /// A positive integer.
  PositiveInt,
  /// `true` or `false`.
  Bool,
  /// A list of numbers.
  FloatArray,
  /// A list of integers.
  IntArray,
};

/// A `rope_scaling` key a scheme reads, and its type. The importer accepts
/// exactly the keys some scheme (or the importer itself) declares, and checks
/// the type of every one present, whichever scheme is selected.
struct HFKey {
  llvm::StringLiteral name;
  HFKeyKind kind;
};

/// Typed access to one `rope_scaling` dict. A getter returns none for an
/// absent key (or JSON `null`, Hugging Face's "not set") and fails, with a
/// message naming the key, for a value of the wrong type. `fail` records the
/// message the user sees; `emitError` is for `getChecked`, so that an
/// attribute verifier's message is the one the user sees.
class HFConfigReader {
public:
  virtual ~HFConfigReader();

  /// The context the attribute is built in.
  virtual MLIRContext *getContext() const = 0;
  /// The model's `rope_theta` (the importer checked that the dict agrees).
  virtual double getBase() const = 0;
  /// The `rope_type` (or legacy `type`) as the dict spells it, for messages.
  virtual StringRef getRopeType() const = 0;

  virtual FailureOr<std::optional<double>> getFloat(StringRef key) = 0;
  virtual FailureOr<std::optional<int64_t>> getPositiveInt(StringRef key) = 0;
  virtual FailureOr<std::optional<bool>> getBool(StringRef key) = 0;
  virtual FailureOr<std::optional<SmallVector<double>>>
  getFloatArray(StringRef key) = 0;
  virtual FailureOr<std::optional<SmallVector<int64_t>>>
  getIntArray(StringRef key) = 0;

  /// Records `message` as the error and returns failure.
  virtual LogicalResult fail(const Twine &message) = 0;
  /// An error diagnostic whose text becomes the error.
  virtual InFlightDiagnostic emitError() = 0;

  /// `key`'s value; fails with "rope_type '<type>' needs '<key>'" when absent.
  FailureOr<double> requireFloat(StringRef key);
  FailureOr<SmallVector<double>> requireFloatArray(StringRef key);
  /// `L`: `original_max_position_embeddings`, else `max_position_embeddings`
  /// (Hugging Face's fallback); fails when neither is present.
  FailureOr<int64_t> getOriginalMaxPositionEmbeddings();

  /// The shortest decimal that reads back as `value` (what Python prints).
  static std::string formatNumber(double value);
};

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_HFCONFIGREADER_H
