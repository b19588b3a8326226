//===- Outlining.h - Shared by the passes that outline code -----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What rope-outline-chunks and rope-outline-repeats share: where to cut a
// function body (how many values each cut between two top-level ops would
// pass, and whether one of them is a view of a stack allocation, which must
// not leave the function it is allocated in), and the functions they make.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_OUTLINING_H
#define ROPE_CODEGEN_CPU_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::rope {

/// For a cut after each top-level op of a block.
struct TopLevelLiveness {
  /// live[i]: values defined at or before op i (or block arguments) and used
  /// after it.
  SmallVector<int64_t> live;
  /// blocked[i]: how many of them derive from a `memref.alloca` of the block.
  SmallVector<int64_t> blocked;
};

/// `ops` are the block's top-level ops but its terminator, `index` their
/// positions. Results of ops for which `isCloned` holds are not counted: the
/// outlining clones them rather than passing them.
TopLevelLiveness
computeTopLevelLiveness(Block *block, ArrayRef<Operation *> ops,
                        const DenseMap<Operation *, int64_t> &index,
                        function_ref<bool(Operation *)> isCloned);

/// A private function `name` of the given signature with an entry block,
/// inserted by `builder` and into `symbols`: internal to the module, and
/// `passthrough = ["noinline"]`, because LLVM's inliner would otherwise put
/// every internal function with one call site back (func-to-llvm carries
/// both attributes).
func::FuncOp createOutlinedFunction(OpBuilder &builder, Location loc,
                                    StringRef name, TypeRange inputs,
                                    TypeRange outputs, SymbolTable &symbols);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_OUTLINING_H
