//===- LowerAssertsToTraps.cpp - cf.assert as a call of the runtime trap --===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream lowers a failed cf.assert to a message on stderr and abort(): in
// rope-opt's output run by mlir-runner that is what a user wants, inside a
// Python process it kills the interpreter. Here the failing branch calls
// `ropeRuntimeTrap(kind, message)` instead, which the JIT's runtime turns
// into a return to the guarded call that ran the code (include/rope/Runtime/
// RuntimeSymbols.h), so the failure becomes an exception.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPELOWERASSERTSTOTRAPSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kTrapFunction = "ropeRuntimeTrap";

/// `llvm.func @ropeRuntimeTrap(i32, !llvm.ptr)`, declared once in `module`.
FailureOr<LLVM::LLVMFuncOp> trapFunction(ModuleOp module) {
  MLIRContext *context = module.getContext();
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(context),
      {IntegerType::get(context, 32), LLVM::LLVMPointerType::get(context)});
  if (Operation *existing = module.lookupSymbol(kTrapFunction)) {
    auto function = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (!function || function.getFunctionType() != type)
      return existing->emitError("@")
             << kTrapFunction
             << " is the rope runtime's trap: the module must not define "
                "it otherwise";
    return function;
  }
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), kTrapFunction, type);
}

/// A module-unique name for the global holding the message of a trap.
std::string messageName(ModuleOp module, unsigned &counter) {
  std::string name;
  do {
    name = "rope_trap_message_" + std::to_string(counter++);
  } while (module.lookupSymbol(name));
  return name;
}

struct RopeLowerAssertsToTrapsPass
    : rope::impl::RopeLowerAssertsToTrapsPassBase<RopeLowerAssertsToTrapsPass> {
  void runOnOperation() override {
    SmallVector<cf::AssertOp> asserts;
    getOperation()->walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;
    auto module = dyn_cast<ModuleOp>(getOperation());
    if (!module)
      module = getOperation()->getParentOfType<ModuleOp>();
    if (!module) {
      getOperation()->emitError("rope-lower-asserts-to-traps needs a module "
                                "to declare the trap in");
      return signalPassFailure();
    }
    FailureOr<LLVM::LLVMFuncOp> trap = trapFunction(module);
    if (failed(trap))
      return signalPassFailure();
    unsigned counter = 0;
    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      int32_t kind =
          op->getAttrOfType<StringAttr>(rope::kTrapAttrName) ==
                  StringAttr::get(op.getContext(), rope::kTrapOutOfMemory)
              ? 1
              : 2;
      Block *before = op->getBlock();
      Block *after = before->splitBlock(op->getIterator());
      Block *failure = new Block();
      failure->insertBefore(after);
      OpBuilder b(op.getContext());
      b.setInsertionPointToEnd(before);
      cf::CondBranchOp::create(b, loc, op.getArg(), after, ValueRange(),
                               failure, ValueRange());
      b.setInsertionPointToEnd(failure);
      std::string text = op.getMsg().str();
      text.push_back('\0');
      Value message = LLVM::createGlobalString(
          loc, b, messageName(module, counter), text, LLVM::Linkage::Internal);
      Value code = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                            b.getI32IntegerAttr(kind));
      LLVM::CallOp::create(b, loc, *trap, ValueRange{code, message});
      LLVM::UnreachableOp::create(b, loc);
      op.erase();
    }
  }
};

} // namespace
