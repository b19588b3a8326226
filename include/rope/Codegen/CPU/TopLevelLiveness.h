//===- TopLevelLiveness.h - Values live across cuts of a body ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where to cut a function body into outlined pieces (rope-outline-chunks,
// rope-outline-repeats): how many values each cut between two top-level ops
// would pass, and whether one of them is a view of a stack allocation (which
// must not leave the function it is allocated in).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_TOPLEVELLIVENESS_H
#define ROPE_CODEGEN_CPU_TOPLEVELLIVENESS_H

#include "mlir/IR/Block.h"
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

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_TOPLEVELLIVENESS_H
