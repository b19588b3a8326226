//===- main.cpp - A downstream user of rope-mlir --------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds a rope.apply with the C++ API, verifies it, lowers it with the
// exported conversion and prints the result.
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/InitAllRope.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main() {
  DialectRegistry registry;
  registry.insert<func::FuncDialect>();
  rope::registerAllRopeDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  ModuleOp module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto x = RankedTensorType::get({4, 2, 8}, b.getF32Type());
  auto fn =
      func::FuncOp::create(b, loc, "rope", b.getFunctionType({x, x}, {x}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  auto apply = rope::ApplyOp::create(b, loc, entry->getArgument(0),
                                     entry->getArgument(1));
  apply.setFreqsAttr(
      rope::DefaultFrequenciesAttr::get(&context, llvm::APFloat(500000.0)));
  func::ReturnOp::create(b, loc, apply.getResult());
  if (failed(verify(module))) {
    llvm::errs() << "verification failed\n";
    return 1;
  }
  module.print(llvm::outs());

  PassManager pm(&context);
  pm.addPass(rope::createConvertRopeToLinalgPass());
  if (failed(pm.run(module))) {
    llvm::errs() << "lowering failed\n";
    return 1;
  }
  module.print(llvm::outs());
  module.erase();
  return 0;
}
