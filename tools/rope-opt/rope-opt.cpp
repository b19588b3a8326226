//===- rope-opt.cpp - The rope-mlir optimizer driver ----------------------===//
//
// Part of the rope-mlir project.
//
// mlir-opt with every upstream dialect, pass, extension and LLVM IR
// translation, plus the rope dialect, its passes and named pipelines.
//
//===----------------------------------------------------------------------===//

#include "rope/InitAllRope.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::rope::registerAllRopePasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // GPU serialization (gpu-module-to-binary) translates to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::rope::registerAllRopeDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rope-mlir optimizer driver\n", registry));
}
