//===- RopeAttrs.cpp - Rope attributes ------------------------------------===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rope;

FailureOr<llvm::APFloat> mlir::rope::detail::parseF64(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
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
// DefaultFrequenciesAttr
//===----------------------------------------------------------------------===//

LogicalResult
DefaultFrequenciesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               llvm::APFloat baseAttr) {
  double base = baseAttr.convertToDouble();
  if (!(base > 0.0) || !std::isfinite(base))
    return emitError() << "frequency base must be a positive finite number, "
                          "got "
                       << base;
  return success();
}

LogicalResult DefaultFrequenciesAttr::verifyForRotaryDim(
    function_ref<InFlightDiagnostic()> emitError, int64_t rotaryDim) const {
  return success();
}

bool DefaultFrequenciesAttr::isStatic() const { return true; }

SmallVector<double>
DefaultFrequenciesAttr::getInverseFrequencies(int64_t rotaryDim) const {
  // theta_i = base^(-2i/P), evaluated in float64 at compile time: the table
  // is folded into the IR as a constant, so its cost is never paid at run
  // time and its accuracy is that of libm's pow.
  SmallVector<double> thetas;
  thetas.reserve(rotaryDim / 2);
  for (int64_t i = 0; i < rotaryDim / 2; ++i)
    thetas.push_back(std::pow(getBase().convertToDouble(),
                              -2.0 * static_cast<double>(i) /
                                  static_cast<double>(rotaryDim)));
  return thetas;
}
