//===- RopeAttrs.cpp - Rope attributes ------------------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rope;

FailureOr<llvm::APFloat> mlir::rope::detail::parseF64(AsmParser &parser) {
  // config.json files write integral values as integers (`rope_theta:
  // 500000`); accept them too.
  // A hexadecimal literal is a float's bit pattern (how MLIR spells NaN and
  // infinities): leave it to parseFloat.
  StringRef rest(parser.getCurrentLocation().getPointer());
  rest = rest.ltrim().drop_while([](char c) { return c == '-'; }).ltrim();
  if (rest.starts_with_insensitive("0x")) {
    double bits;
    if (parser.parseFloat(bits))
      return failure();
    return llvm::APFloat(bits);
  }
  bool negative = succeeded(parser.parseOptionalMinus());
  double sign = negative ? -1.0 : 1.0;
  int64_t integer;
  OptionalParseResult isInteger = parser.parseOptionalDecimalInteger(integer);
  if (isInteger.has_value()) {
    if (failed(*isInteger))
      return failure();
    return llvm::APFloat(sign * static_cast<double>(integer));
  }
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(sign * value);
}

FailureOr<std::optional<llvm::APFloat>>
mlir::rope::detail::parseOptionalF64(AsmParser &parser) {
  FailureOr<llvm::APFloat> value = parseF64(parser);
  if (failed(value))
    return failure();
  return std::optional<llvm::APFloat>(*value);
}

FailureOr<DenseF64ArrayAttr>
mlir::rope::detail::parseF64Array(AsmParser &parser) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<llvm::APFloat> value = parseF64(parser);
        if (failed(value))
          return failure();
        values.push_back(value->convertToDouble());
        return success();
      }))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

void mlir::rope::detail::printF64Array(AsmPrinter &printer,
                                       DenseF64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer, [&](double value) {
    printer.printFloat(llvm::APFloat(value));
  });
  printer << ']';
}

FailureOr<bool> mlir::rope::detail::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

Value mlir::rope::detail::buildConstantFrequencyTable(OpBuilder &builder,
                                                      Location loc,
                                                      ArrayRef<double> thetas) {
  auto type = RankedTensorType::get({static_cast<int64_t>(thetas.size())},
                                    builder.getF64Type());
  return arith::ConstantOp::create(builder, loc,
                                   DenseElementsAttr::get(type, thetas));
}

void mlir::rope::detail::printF64(AsmPrinter &printer,
                                  const llvm::APFloat &value) {
  printer.printFloat(value);
}

#include "rope/Dialect/Rope/IR/RopeEnums.cpp.inc"

#include "rope/Dialect/Rope/IR/RopeAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "rope/Dialect/Rope/IR/RopeAttrs.cpp.inc"

void RopeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rope/Dialect/Rope/IR/RopeAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MRopeAttr
//===----------------------------------------------------------------------===//

LogicalResult MRopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                DenseI64ArrayAttr section, bool interleaved) {
  if (!section || section.size() != 3)
    return emitError() << "M-RoPE section must have three entries [t, h, w]";
  for (int64_t n : section.asArrayRef())
    if (n < 0 || n > kMaxHeadDim / 2)
      return emitError() << "M-RoPE section entries must be in [0, "
                         << kMaxHeadDim / 2 << "] (pairs of a head), got " << n;
  return success();
}

SmallVector<int64_t> MRopeAttr::getPairAxes(int64_t numPairs) const {
  ArrayRef<int64_t> section = getSection().asArrayRef();
  SmallVector<int64_t> axes(numPairs, 0);
  for (int64_t j = 0; j < numPairs; ++j) {
    if (getInterleaved()) {
      // Qwen3-VL: h and w take every third frequency (from 1 and 2) until
      // their share is used up; t takes the rest.
      if (j % 3 == 1 && j < 3 * section[1])
        axes[j] = 1;
      else if (j % 3 == 2 && j < 3 * section[2])
        axes[j] = 2;
    } else {
      // Qwen2-VL: consecutive chunks t, h, w.
      axes[j] = j < section[0] ? 0 : j < section[0] + section[1] ? 1 : 2;
    }
  }
  return axes;
}
