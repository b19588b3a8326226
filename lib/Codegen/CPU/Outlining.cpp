//===- Outlining.cpp - Shared by the passes that outline code -------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Outlining.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

rope::TopLevelLiveness
rope::computeTopLevelLiveness(Block *block, ArrayRef<Operation *> ops,
                              const DenseMap<Operation *, int64_t> &index,
                              function_ref<bool(Operation *)> isCloned) {
  int64_t n = ops.size();
  // The last top-level op using `value`; the terminator counts as n.
  auto lastUse = [&](Value value) {
    int64_t last = -1;
    for (Operation *user : value.getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      last =
          std::max(last, top == block->getTerminator() ? n : index.lookup(top));
    }
    return last;
  };
  SmallVector<int64_t> delta(n + 1, 0), blockedDelta(n + 1, 0);
  for (BlockArgument arg : block->getArguments()) {
    int64_t last = lastUse(arg);
    if (last >= 0) {
      delta[0] += 1;
      delta[std::min(last, n)] -= 1;
    }
  }
  llvm::SmallPtrSet<Value, 16> onStack;
  for (int64_t i = 0; i < n; ++i) {
    Operation *op = ops[i];
    bool stack = isa<memref::AllocaOp>(op) ||
                 llvm::any_of(op->getOperands(), [&](Value operand) {
                   return onStack.contains(operand);
                 });
    for (Value result : op->getResults()) {
      if (stack && isa<BaseMemRefType>(result.getType()))
        onStack.insert(result);
      int64_t last = lastUse(result);
      if (last <= i || isCloned(op))
        continue;
      delta[i] += 1;
      delta[last] -= 1;
      if (onStack.contains(result)) {
        blockedDelta[i] += 1;
        blockedDelta[last] -= 1;
      }
    }
  }
  TopLevelLiveness liveness;
  liveness.live.resize(n);
  liveness.blocked.resize(n);
  int64_t running = 0, runningBlocked = 0;
  for (int64_t i = 0; i < n; ++i) {
    running += delta[i];
    runningBlocked += blockedDelta[i];
    liveness.live[i] = running;
    liveness.blocked[i] = runningBlocked;
  }
  return liveness;
}

func::FuncOp rope::createOutlinedFunction(OpBuilder &builder, Location loc,
                                          StringRef name, TypeRange inputs,
                                          TypeRange outputs,
                                          SymbolTable &symbols) {
  MLIRContext *context = builder.getContext();
  auto function = func::FuncOp::create(
      builder, loc, name, FunctionType::get(context, inputs, outputs));
  function.setPrivate();
  function->setAttr(
      "passthrough",
      ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
  function->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
  symbols.insert(function);
  function.addEntryBlock();
  return function;
}
