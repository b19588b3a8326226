//===- RopeAttrs.h - Rope attributes ----------------------------*- C++ -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
#define ROPE_DIALECT_ROPE_IR_ROPEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include <optional>

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
} // namespace mlir::rope::detail

#include "rope/Dialect/Rope/IR/RopeEnums.h.inc"

#include "rope/Dialect/Rope/IR/RopeAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rope/Dialect/Rope/IR/RopeAttrs.h.inc"

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_H
