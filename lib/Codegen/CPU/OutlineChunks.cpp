//===- OutlineChunks.cpp - Functions of bounded size for LLVM -------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A whole model is one function: a 32-layer Llama is one LLVM function of
// about 3,500 loops, and LLVM's IndVarSimplify and LoopRotate cost more than
// linear time in a function's size (most of `opt -O3`'s time, issue 33).
// This cuts such a body into consecutive chunks of its top-level ops and
// outlines each into a private, non-inlined function, so LLVM sees functions
// of bounded size, and calls them in order.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Outlining.h"
#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEOUTLINECHUNKSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Ops cloned into each chunk that uses them rather than passed.
bool isRematerializable(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         (op->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(op));
}

struct RopeOutlineChunksPass
    : rope::impl::RopeOutlineChunksPassBase<RopeOutlineChunksPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxOps <= 0)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions)
      if (!function.isExternal() && function.getBody().hasOneBlock())
        runOnFunction(function, symbols);
  }

  void runOnFunction(func::FuncOp function, SymbolTable &symbols) {
    Block &block = function.getBody().front();
    SmallVector<Operation *> ops;
    SmallVector<int64_t> sizes;
    DenseMap<Operation *, int64_t> index;
    int64_t total = 0;
    for (Operation &op : block.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
      int64_t size = 0;
      op.walk([&](Operation *) { ++size; });
      sizes.push_back(size);
      total += size;
    }
    if (total <= maxOps)
      return;
    int64_t n = ops.size();

    // live[i]: values live across the cut after op i; blocked[i]: a stack
    // allocation's value would leave.
    rope::TopLevelLiveness liveness =
        rope::computeTopLevelLiveness(&block, ops, index, isRematerializable);
    ArrayRef<int64_t> live = liveness.live, blocked = liveness.blocked;

    // Chunks: from `begin`, the cut after op i (chunk [begin, i]) with the
    // fewest live values among those where the chunk holds between half
    // and all of max-ops; the rest stays whole once it is small enough.
    SmallVector<std::pair<int64_t, int64_t>> chunks;
    int64_t begin = 0, remaining = total;
    while (remaining > maxOps) {
      int64_t size = 0, best = -1;
      for (int64_t i = begin; i < n; ++i) {
        size += sizes[i];
        if (size > maxOps && best >= 0)
          break;
        if (2 * size < maxOps || blocked[i] > 0 || i == n - 1)
          continue;
        if (best < 0 || live[i] <= live[best])
          best = i;
        if (size > maxOps)
          break;
      }
      if (best < 0)
        break;
      chunks.push_back({begin, best + 1});
      for (int64_t i = begin; i <= best; ++i)
        remaining -= sizes[i];
      begin = best + 1;
    }
    if (begin < n && begin > 0)
      chunks.push_back({begin, n});
    if (chunks.size() < 2)
      return;

    auto module = function->getParentOfType<ModuleOp>();
    OpBuilder moduleBuilder(module.getContext());
    moduleBuilder.setInsertionPointAfter(function);
    int64_t number = 0;
    for (auto [first, last] : chunks) {
      // Constants stay: each chunk that uses one gets a clone.
      SmallVector<Operation *> chunk;
      for (Operation *op : ArrayRef(ops).slice(first, last - first))
        if (!isRematerializable(op))
          chunk.push_back(op);
      if (chunk.empty())
        continue;
      std::string name =
          (function.getSymName() + "__chunk" + Twine(number++)).str();
      outline(chunk, name, symbols, moduleBuilder);
    }
  }

  /// Outlines `ops` (consecutive top-level ops of one block) into a private
  /// function and replaces them with a call to it.
  void outline(ArrayRef<Operation *> ops, StringRef name, SymbolTable &symbols,
               OpBuilder &moduleBuilder) {
    Block *block = ops.front()->getBlock();
    Operation *after = ops.back()->getNextNode();
    Location loc = ops.front()->getLoc();
    llvm::SmallPtrSet<Operation *, 32> inChunk(ops.begin(), ops.end());

    // Live-ins: used in the chunk (at any depth), defined outside it; the
    // constants among them are cloned instead.
    llvm::SetVector<Value> inputs;
    llvm::SetVector<Operation *> cloned;
    for (Operation *op : ops) {
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *owner;
          if (Operation *def = operand.getDefiningOp())
            owner = def;
          else
            owner = cast<BlockArgument>(operand).getOwner()->getParentOp();
          // Defined in the chunk (at any depth); the function's own
          // arguments have no ancestor in the block.
          Operation *top = block->findAncestorOpInBlock(*owner);
          if (top && inChunk.contains(top))
            continue;
          Operation *def = operand.getDefiningOp();
          if (def && isRematerializable(def)) {
            cloned.insert(def);
            continue;
          }
          inputs.insert(operand);
        }
      });
    }
    // Live-outs: results of the chunk's ops used after it.
    SmallVector<Value> outputs;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inChunk.contains(block->findAncestorOpInBlock(*user));
            }))
          outputs.push_back(result);

    SmallVector<Type> inputTypes, outputTypes;
    for (Value value : inputs)
      inputTypes.push_back(value.getType());
    for (Value value : outputs)
      outputTypes.push_back(value.getType());
    // Internal and never inlined (createOutlinedFunction).
    func::FuncOp callee = rope::createOutlinedFunction(
        moduleBuilder, loc, name, inputTypes, outputTypes, symbols);
    moduleBuilder.setInsertionPointAfter(callee);

    Block *body = &callee.getBody().front();
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(inputs, body->getArguments()))
      mapping.map(value, arg);
    OpBuilder builder = OpBuilder::atBlockBegin(body);
    for (Operation *op : cloned)
      builder.clone(*op, mapping);
    for (Operation *op : ops)
      op->moveBefore(body, body->end());
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (OpOperand &operand : nested->getOpOperands())
          if (Value mapped = mapping.lookupOrNull(operand.get()))
            operand.set(mapped);
      });
    builder.setInsertionPointToEnd(body);
    func::ReturnOp::create(builder, loc, outputs);

    // The call, where the chunk was; its results replace the live-outs
    // after it.
    builder.setInsertionPoint(after);
    auto call =
        func::CallOp::create(builder, loc, callee, inputs.getArrayRef());
    for (auto [value, result] : llvm::zip(outputs, call.getResults()))
      value.replaceUsesWithIf(result, [&](OpOperand &use) {
        return use.getOwner()->getParentOfType<func::FuncOp>() != callee;
      });
  }
};

} // namespace
