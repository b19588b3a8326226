//===- Registration.cpp - Register everything rope-mlir provides ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/InitAllRope.h"
#include "rope/Pipelines/Pipelines.h"
#include "rope/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

void mlir::rope::registerAllRopeDialects(DialectRegistry &registry) {
  registry.insert<RopeDialect>();
}

void mlir::rope::registerAllRopePasses() {
  registerRopeConversionPasses();
  registerRopeTransformsPasses();
  registerRopeCPUCodegenPasses();
  registerRopePipelines();
}
