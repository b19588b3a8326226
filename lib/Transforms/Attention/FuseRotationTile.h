//===- FuseRotationTile.h - Fuse rope.apply into a tile's loops -*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_FUSEROTATIONTILE_H
#define ROPE_LIB_TRANSFORMS_FUSEROTATIONTILE_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::rope {

/// Makes `operand`, when a slice of a slice (of a slice...), one slice of
/// the outermost one's source, so that producer fusion finds the producer
/// (a key tile of a query tile's slice of K, or of a key block's).
void mergeSliceOfSlice(RewriterBase &rewriter, OpOperand &operand);

/// Fuses `rope` into the slice of it that operand `index` of `tiled` reads,
/// inside `loops` (scf::tileAndFuseProducerOfSlice through rope.apply's
/// TilingInterface), after merging a slice of a slice; erases the whole
/// rotation when nothing else reads it; gives the tile a tile-sized empty
/// destination. The tile rotation, or null when it cannot be fused.
ApplyOp fuseRotationTile(RewriterBase &rewriter, Operation *tiled,
                         unsigned index, ApplyOp rope,
                         MutableArrayRef<LoopLikeOpInterface> loops);

} // namespace mlir::rope

#endif // ROPE_LIB_TRANSFORMS_FUSEROTATIONTILE_H
