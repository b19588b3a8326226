//===- RopePlugin.cpp - rope-mlir as an mlir-opt plugin -------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Loaded into the stock mlir-opt with --load-dialect-plugin and
// --load-pass-plugin. Pass plugins are registered after the command line is
// parsed, so call the passes through --pass-pipeline="builtin.module(...)".
//
//===----------------------------------------------------------------------===//

#include "rope/InitAllRope.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RopeDialect", LLVM_VERSION_STRING,
          [](::mlir::DialectRegistry *registry) {
            ::mlir::rope::registerAllRopeDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RopePasses", LLVM_VERSION_STRING,
          []() { ::mlir::rope::registerAllRopePasses(); }};
}
