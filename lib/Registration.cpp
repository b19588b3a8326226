//===- Registration.cpp - Register everything rope-mlir provides ----------===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

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
  registerRopePipelines();
}
