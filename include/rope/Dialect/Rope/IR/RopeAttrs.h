//===- RopeAttrs.h - Rope attributes ----------------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
#define ROPE_DIALECT_ROPE_IR_ROPEATTRS_H

#include "rope/Dialect/Rope/IR/HFConfigReader.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include <optional>

namespace mlir::rope {
class FrequencyAttrInterface;

/// Reads a constant per-pair table at a pair index inside a loop body: a
/// scalar f64 when `lanes` is 0, else `lanes` consecutive entries as a
/// vector (FrequencyAttrInterface::buildInverseFrequencyAt).
using FrequencyTableReader = llvm::function_ref<Value(
    OpBuilder &, Location, ArrayRef<double> table, Value index, int64_t lanes)>;
} // namespace mlir::rope

namespace mlir::rope::detail {
/// Parses a plain floating-point number as an attribute parameter.
FailureOr<llvm::APFloat> parseF64(AsmParser &parser);
/// Prints a float64 attribute parameter so that it parses back exactly.
void printF64(AsmPrinter &printer, const llvm::APFloat &value);
/// Parses a number for a parameter that may be absent.
FailureOr<std::optional<llvm::APFloat>> parseOptionalF64(AsmParser &parser);
/// Parses `[v0, v1, ...]` (numbers as parseF64 takes them).
FailureOr<DenseF64ArrayAttr> parseF64Array(AsmParser &parser);
/// Prints `[v0, v1, ...]` so that every element parses back exactly.
void printF64Array(AsmPrinter &printer, DenseF64ArrayAttr values);
/// Parses `true` or `false`.
FailureOr<bool> parseBool(AsmParser &parser);
/// Materializes `thetas` as an `arith.constant : tensor<N x f64>`.
Value buildConstantFrequencyTable(OpBuilder &builder, Location loc,
                                  ArrayRef<double> thetas);
/// The `tensor<P/2 x f64>` of a dynamic scheme built from its per-element
/// method: the state once, then one `linalg.generic` over the pairs whose
/// body is `buildInverseFrequencyAt` (tables read by `tensor.extract`).
Value buildFrequencyTableFromElements(OpBuilder &builder, Location loc,
                                      FrequencyAttrInterface freqs,
                                      Value length, int64_t rotaryDim);
/// A `tensor<numPairs x element>` built by one `linalg.generic` over the
/// pairs whose body yields `valueAt(pair index)`: how a per-call table (f64
/// thetas, or i64 phase steps) is computed once per call.
Value buildPerPairTable(
    OpBuilder &builder, Location loc, int64_t numPairs, Type element,
    function_ref<Value(OpBuilder &, Location, Value index)> valueAt);
} // namespace mlir::rope::detail

#include "rope/Dialect/Rope/IR/RopeEnums.h.inc"

#include "rope/Dialect/Rope/IR/RopeAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rope/Dialect/Rope/IR/RopeAttrs.h.inc"

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
