//===- RopeDialect.cpp - Rope dialect registration ------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::rope;

#include "rope/Dialect/Rope/IR/RopeOpsDialect.cpp.inc"

void RopeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "rope/Dialect/Rope/IR/RopeOps.cpp.inc"
      >();
  registerAttributes();
}
