//===- FuseRotationTile.cpp - Fuse a rope.apply into a tile's loops -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one way a rotation is moved into the loops of a tiled consumer (the
// Q·Kᵀ tiles of FuseIntoScores.cpp, the attention tiles of
// TileAttention.cpp): upstream producer fusion of the slice the tile
// reads, with two repairs it needs here.
//
//===----------------------------------------------------------------------===//

#include "FuseRotationTile.h"

#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;

void mlir::rope::mergeSliceOfSlice(RewriterBase &rewriter, OpOperand &operand) {
  // Every level: a key tile of a key block (split-K) of a query tile's slice.
  while (true) {
    auto inner = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
    auto outer = inner
                     ? inner.getSource().getDefiningOp<tensor::ExtractSliceOp>()
                     : tensor::ExtractSliceOp();
    if (!outer)
      return;
    rewriter.setInsertionPoint(inner);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (failed(affine::mergeOffsetsSizesAndStrides(
            rewriter, inner.getLoc(), outer, inner, outer.getDroppedDims(),
            offsets, sizes, strides)))
      return;
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        inner, inner.getType(), outer.getSource(), offsets, sizes, strides);
    if (outer->use_empty())
      rewriter.eraseOp(outer);
  }
}

ApplyOp
mlir::rope::fuseRotationTile(RewriterBase &rewriter, Operation *tiled,
                             unsigned index, ApplyOp rope,
                             MutableArrayRef<LoopLikeOpInterface> loops) {
  mergeSliceOfSlice(rewriter, tiled->getOpOperand(index));
  auto slice = tiled->getOperand(index).getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource().getDefiningOp() != rope)
    return {};
  std::optional<scf::SCFFuseProducerOfSliceResult> fused =
      scf::tileAndFuseProducerOfSlice(rewriter, slice, loops);
  if (!fused)
    return {};
  // The candidate slice is left dead; with it gone, so is the whole
  // rotation.
  if (slice->use_empty())
    rewriter.eraseOp(slice);
  if (rope->use_empty())
    rewriter.eraseOp(rope);
  auto tile = fused->tiledAndFusedProducer.getDefiningOp<ApplyOp>();
  if (!tile)
    return {};
  // A slice of a tensor.empty destination would bufferize to a slice of a
  // whole-size buffer: give the tile its own (tile-sized) empty tensor.
  if (auto init = tile.getInit().getDefiningOp<tensor::ExtractSliceOp>();
      init && init.getSource().getDefiningOp<tensor::EmptyOp>() &&
      tile.getInit() != tile.getInput()) {
    rewriter.setInsertionPoint(tile);
    Value empty =
        tensor::EmptyOp::create(rewriter, init.getLoc(), init.getMixedSizes(),
                                init.getType().getElementType());
    rewriter.modifyOpInPlace(tile,
                             [&] { tile.getInitMutable().assign(empty); });
  }
  return tile;
}
