//===- RopeTiling.cpp - TilingInterface for rope.apply --------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `rope.apply` tiles like an elementwise op over every dimension but the
// channel (head) dimension, which is never split: a rotated pair spans it
// (channels i and i + P/2 in the half layout), and the pass-through channels
// follow the rotated ones. A tile of the op is a `rope.apply` on the tile of
// the input and destination whose position operands are re-expressed for
// the tile:
//   - explicit positions (and M-RoPE's [3, tokens...]) and pre-gathered
//     caches are sliced along the token dims;
//   - `pos = offset + s` and implicit `pos = s` become an offset shifted by
//     the tile's start along the sequence dim (per-row offsets are sliced
//     along the row dim too);
//   - a gathered cache ([M, P/2], indexed by position) is used whole;
//   - dynamic frequency schemes depend on the call's length (max position +
//     1): the tile gets the *whole* op's length as its `length` operand, so
//     every tile rotates by the same frequencies as the untiled op.
// This is what upstream tiling, tile-and-fuse and the transform dialect
// need to move the rotation into consumer loops (e.g. an attention matmul).
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// `source` sliced to `offsets`/`sizes` (unit strides).
Value sliceOf(OpBuilder &b, Location loc, Value source,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
              SmallVectorImpl<Operation *> &slices) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  auto slice =
      tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes, strides);
  slices.push_back(slice);
  return slice;
}

/// The tile offsets and sizes of the token dims (in token-dim order).
void tokenTile(ApplyOp op, ArrayRef<OpFoldResult> offsets,
               ArrayRef<OpFoldResult> sizes,
               SmallVectorImpl<OpFoldResult> &tokenOffsets,
               SmallVectorImpl<OpFoldResult> &tokenSizes) {
  for (int64_t d : op.getTokenDimsOrDefault()) {
    tokenOffsets.push_back(offsets[d]);
    tokenSizes.push_back(sizes[d]);
  }
}

} // namespace

SmallVector<utils::IteratorType> ApplyOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(getInputType().getRank() - 1,
                                          utils::IteratorType::parallel);
}

SmallVector<Range> ApplyOp::getIterationDomain(OpBuilder &b) {
  Location loc = getLoc();
  SmallVector<Range> domain;
  for (int64_t d = 0, e = getInputType().getRank() - 1; d < e; ++d)
    domain.push_back(Range{b.getIndexAttr(0),
                           tensor::getMixedSize(b, loc, getInput(), d),
                           b.getIndexAttr(1)});
  return domain;
}

LogicalResult ApplyOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  if (getSlots())
    return failure();
  // The channel dim is whole in every tile.
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  resultOffsets.push_back(b.getIndexAttr(0));
  resultSizes.push_back(b.getIndexAttr(getHeadDim()));
  return success();
}

FailureOr<TilingResult>
ApplyOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes) {
  // A cache append scatters its tokens to slots: no tile of the cache is
  // the result of a tile of the tokens.
  if (getSlots())
    return failure();
  Location loc = getLoc();
  TilingResult result;
  SmallVector<Operation *> &slices = result.generatedSlices;

  SmallVector<OpFoldResult> dataOffsets(offsets), dataSizes(sizes);
  dataOffsets.push_back(b.getIndexAttr(0));
  dataSizes.push_back(b.getIndexAttr(getHeadDim()));
  Value input = sliceOf(b, loc, getInput(), dataOffsets, dataSizes, slices);
  Value init = getInput() == getInit()
                   ? input
                   : sliceOf(b, loc, getInit(), dataOffsets, dataSizes, slices);

  SmallVector<OpFoldResult> tokenOffsets, tokenSizes;
  tokenTile(*this, offsets, sizes, tokenOffsets, tokenSizes);
  OpFoldResult seqOffset = tokenOffsets.back();

  // Dynamic schemes: the whole op's length, computed before slicing.
  Value length = getLength();
  if (!length && !getCos() && !getFreqsOrDefault().isStatic())
    length = buildRuntimeLength(b, loc, *this);

  Value positions, offset;
  if (Value pos = getPositions()) {
    SmallVector<OpFoldResult> posOffsets(tokenOffsets), posSizes(tokenSizes);
    if (getMropeAttr()) {
      posOffsets.insert(posOffsets.begin(), b.getIndexAttr(0));
      posSizes.insert(posSizes.begin(), b.getIndexAttr(3));
    }
    positions = sliceOf(b, loc, pos, posOffsets, posSizes, slices);
  } else if (getCosSinSource() != CosSinSource::PregatheredCache) {
    // pos = offset + s: shift the offset by the tile's start along s.
    Value shift =
        toI64(b, loc, getValueOrCreateConstantIndexOp(b, loc, seqOffset));
    Value base = getOffset();
    auto baseType =
        base ? dyn_cast<RankedTensorType>(base.getType()) : RankedTensorType();
    if (baseType && baseType.getRank() == 1) {
      Value rows = sliceOf(b, loc, base, {tokenOffsets.front()},
                           {tokenSizes.front()}, slices);
      auto rowsType = cast<RankedTensorType>(rows.getType());
      Value rowsI64 = rows;
      if (rowsType.getElementType() != b.getI64Type())
        rowsI64 = arith::ExtSIOp::create(b, loc, rowsType.clone(b.getI64Type()),
                                         rows);
      Value splat = tensor::SplatOp::create(
          b, loc, shift, tensor::getMixedSizes(b, loc, rowsI64));
      offset = arith::AddIOp::create(b, loc, rowsI64, splat);
    } else if (base) {
      Value scalar = baseType
                         ? tensor::ExtractOp::create(b, loc, base, ValueRange{})
                               .getResult()
                         : base;
      offset = arith::AddIOp::create(b, loc, toI64(b, loc, scalar), shift);
    } else if (!isConstantIntValue(seqOffset, 0)) {
      offset = shift;
    }
  }

  Value cos = getCos(), sin = getSin();
  if (getCosSinSource() == CosSinSource::PregatheredCache) {
    SmallVector<OpFoldResult> cacheOffsets(tokenOffsets),
        cacheSizes(tokenSizes);
    cacheOffsets.push_back(b.getIndexAttr(0));
    cacheSizes.push_back(b.getIndexAttr(getRotaryDimOrDefault() / 2));
    cos = sliceOf(b, loc, cos, cacheOffsets, cacheSizes, slices);
    sin = sliceOf(b, loc, sin, cacheOffsets, cacheSizes, slices);
  }

  // A per-head quantization scale follows the tile's heads; the norm weight
  // spans the channels, which every tile holds whole.
  Value scale = getQuantScale();
  if (scale && cast<RankedTensorType>(scale.getType()).getRank() == 1) {
    int64_t head = *getSingleHeadDim();
    scale = sliceOf(b, loc, scale, {offsets[head]}, {sizes[head]}, slices);
  }

  auto tiled = ApplyOp::create(
      b, loc, init.getType(), input, positions, offset, length, cos, sin,
      getNormWeight(), scale, /*slots=*/Value(), init, getLayoutAttr(),
      getRotaryDimAttr(), getTokenDimsAttr(), getFreqsAttr(), getMropeAttr(),
      getMagnitudeAttr(), getInverseAttr(), getNormEpsilonAttr());
  result.tiledOps.push_back(tiled);
  result.tiledValues.push_back(tiled.getResult());
  return result;
}

FailureOr<TilingResult>
ApplyOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                 ArrayRef<OpFoldResult> offsets,
                                 ArrayRef<OpFoldResult> sizes) {
  if (getSlots())
    return failure();
  // A result tile maps to an iteration tile only if it covers every channel.
  if (!isConstantIntValue(offsets.back(), 0) ||
      !isConstantIntValue(sizes.back(), getHeadDim()))
    return failure();
  return getTiledImplementation(b, offsets.drop_back(), sizes.drop_back());
}
