//===- rope-opt.cpp - The rope-mlir optimizer driver ----------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with every upstream dialect, pass, extension and LLVM IR
// translation, plus the rope dialect, its passes and named pipelines, and the
// test-only passes of test/lib.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
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
  // Test-only passes (test/lib): not in the plugin or the JIT library.
  mlir::rope::test::registerRopeTestPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // GPU serialization (gpu-module-to-binary) translates to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::rope::registerAllRopeDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rope-mlir optimizer driver\n", registry));
}
