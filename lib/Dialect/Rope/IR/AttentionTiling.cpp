//===- AttentionTiling.cpp - TilingInterface for the attention ops --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `rope.attention` and `rope.online_attention` tile like a linalg op over
// their loop dims (AttentionDims): every operand is sliced by its indexing
// map, so K, V, the mask and the query positions only along the dims they
// have (a GQA group dim broadcasts K and V). What a tile cannot see is where
// it is: positions and the score region's indices are of the whole op, so
//   - with a causal/window mask and no `query_positions`, the tile gets an
//     explicit `query_offset` = (the op's, or Sk − Sq of the *whole* op) +
//     the tile's start along m, and a `key_offset` shifted by its start
//     along k2;
//   - the score region is cloned with the tile's start added to each of its
//     index arguments.
// The sinks of `rope.attention` (batch dims only) are sliced like any input.
// `rope.attention` needs every key in a tile (its softmax is over k2) and
// `k1` whole; `rope.online_attention` tiles k2 too: its destinations (acc,
// max, sum) are the running state, so a sequential loop over key tiles
// threads them through iter_args (upstream's FullReduction tiling), as
// flash attention does. `n` stays whole there (max and sum have no n).
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// The inputs of an attention op with their maps, then its first
/// destination (the output, or acc) with the last map.
template <typename OpTy>
SmallVector<std::pair<Value, AffineMap>> mappedOperands(OpTy op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> values = {op.getQuery(), op.getKey(), op.getValue()};
  if (op.getMask())
    values.push_back(op.getMask());
  if (op.getQueryPositions())
    values.push_back(op.getQueryPositions());
  if (op.getSinks())
    values.push_back(op.getSinks());
  values.push_back(op.getDpsInits().front());
  SmallVector<std::pair<Value, AffineMap>> result;
  for (auto [value, map] : llvm::zip_equal(values, maps))
    result.push_back({value, map});
  return result;
}

/// The extent of every loop: static where an operand has it static, else a
/// tensor.dim of the first operand that has the loop.
template <typename OpTy>
SmallVector<OpFoldResult> loopExtents(OpBuilder &b, OpTy op) {
  unsigned numLoops = op.getNumLoops();
  SmallVector<OpFoldResult> extents(numLoops);
  auto operands = mappedOperands(op);
  for (auto [value, map] : operands)
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(r);
      unsigned d = map.getDimPosition(r);
      if (!extents[d] && !ShapedType::isDynamic(size))
        extents[d] = b.getIndexAttr(size);
    }
  for (auto [value, map] : operands)
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      unsigned d = map.getDimPosition(r);
      if (!extents[d])
        extents[d] = tensor::getMixedSize(b, op.getLoc(), value, r);
    }
  return extents;
}

/// Whether the tile [offset, offset + size) of loop `d` is the whole loop:
/// offset 0 and the static extent, or a tensor.dim of an operand along `d`
/// (what getIterationDomain gave for an untiled dynamic loop).
template <typename OpTy>
bool isWholeLoop(OpTy op, unsigned d, OpFoldResult offset, OpFoldResult size) {
  if (!isConstantIntValue(offset, 0))
    return false;
  std::optional<int64_t> constSize = getConstantIntValue(size);
  auto dim = dyn_cast_if_present<Value>(size)
                 ? cast<Value>(size).getDefiningOp<tensor::DimOp>()
                 : tensor::DimOp();
  std::optional<int64_t> dimIndex = dim ? dim.getConstantIndex() : std::nullopt;
  for (auto [value, map] : mappedOperands(op))
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      if (map.getDimPosition(r) != d)
        continue;
      int64_t extent = cast<RankedTensorType>(value.getType()).getDimSize(r);
      if (!ShapedType::isDynamic(extent))
        return constSize == extent;
      if (dim && dim.getSource() == value && dimIndex == r)
        return true;
    }
  return false;
}

/// `source` sliced along its map's dims of the iteration tile.
Value sliceByMap(OpBuilder &b, Location loc, Value source, AffineMap map,
                 ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                 SmallVectorImpl<Operation *> &slices) {
  SmallVector<OpFoldResult> tileOffsets, tileSizes;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    tileOffsets.push_back(offsets[map.getDimPosition(r)]);
    tileSizes.push_back(sizes[map.getDimPosition(r)]);
  }
  SmallVector<OpFoldResult> strides(tileOffsets.size(), b.getIndexAttr(1));
  auto slice = tensor::ExtractSliceOp::create(b, loc, source, tileOffsets,
                                              tileSizes, strides);
  slices.push_back(slice);
  return slice;
}

/// `map` without the result that is loop `drop` (acc's map -> max/sum).
AffineMap withoutDim(AffineMap map, unsigned drop) {
  std::optional<unsigned> pos =
      map.getResultPosition(getAffineDimExpr(drop, map.getContext()));
  return pos ? map.dropResult(*pos) : map;
}

/// Positions of a tile: `query_offset` and `key_offset` made absolute.
struct TilePositions {
  Value queryOffset, keyOffset;
};

template <typename OpTy>
TilePositions tilePositions(OpBuilder &b, OpTy op,
                            ArrayRef<OpFoldResult> offsets) {
  TilePositions result{op.getQueryOffset(), op.getKeyOffset()};
  if (!op.hasPositionMask())
    return result;
  Location loc = op.getLoc();
  AttentionDims dims = op.getDims();
  AffineExpr s0, s1, s2;
  bindSymbols(b.getContext(), s0, s1, s2);
  if (!op.getQueryPositions()) {
    OpFoldResult queryOffset;
    if (Value given = op.getQueryOffset()) {
      queryOffset = affine::makeComposedFoldedAffineApply(
          b, loc, s0 + s1, {given, offsets[dims.m]});
    } else {
      // Bottom-right alignment of the whole op: Sk − Sq.
      SmallVector<OpFoldResult> extents = loopExtents(b, op);
      queryOffset = affine::makeComposedFoldedAffineApply(
          b, loc, s0 - s1 + s2,
          {extents[dims.k2], extents[dims.m], offsets[dims.m]});
    }
    result.queryOffset = getValueOrCreateConstantIndexOp(b, loc, queryOffset);
  }
  if (!isConstantIntValue(offsets[dims.k2], 0)) {
    OpFoldResult base =
        op.getKeyOffset() ? OpFoldResult(op.getKeyOffset()) : b.getIndexAttr(0);
    result.keyOffset = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, s0 + s1,
                                              {base, offsets[dims.k2]}));
  }
  return result;
}

/// Clones the score region of `op` into `tiled`, adding the tile's start to
/// each index argument so that the region sees the whole op's indices.
template <typename OpTy>
void cloneShiftedRegion(OpBuilder &b, OpTy op, Operation *tiled,
                        ArrayRef<OpFoldResult> offsets) {
  Block *block = op.getModifierBlock();
  if (!block)
    return;
  Region &region = tiled->getRegion(0);
  IRMapping mapping;
  op.getModifier().cloneInto(&region, mapping);
  Block *clone = &region.front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(clone);
  SmallVector<unsigned> scoreDims = op.getDims().scoreDims();
  for (auto [arg, dim] :
       llvm::zip_equal(clone->getArguments().drop_front(), scoreDims)) {
    OpFoldResult offset = offsets[dim];
    if (isConstantIntValue(offset, 0) || arg.use_empty())
      continue;
    Value shift = getValueOrCreateConstantIndexOp(b, op.getLoc(), offset);
    Value absolute = arith::AddIOp::create(b, op.getLoc(), arg, shift);
    arg.replaceAllUsesExcept(absolute, absolute.getDefiningOp());
  }
}

/// The operands every tile shares: Q, K, V, mask, positions and sinks
/// sliced.
struct TiledInputs {
  Value query, key, value, mask, queryPositions, sinks;
};

template <typename OpTy>
TiledInputs sliceInputs(OpBuilder &b, OpTy op, ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVectorImpl<Operation *> &slices) {
  Location loc = op.getLoc();
  TiledInputs in;
  in.query = sliceByMap(b, loc, op.getQuery(), op.getQueryMap(), offsets, sizes,
                        slices);
  in.key =
      sliceByMap(b, loc, op.getKey(), op.getKeyMap(), offsets, sizes, slices);
  in.value = sliceByMap(b, loc, op.getValue(), op.getValueMap(), offsets, sizes,
                        slices);
  if (op.getMask())
    in.mask = sliceByMap(b, loc, op.getMask(), op.getMaskMap(), offsets, sizes,
                         slices);
  if (op.getQueryPositions())
    in.queryPositions =
        sliceByMap(b, loc, op.getQueryPositions(), op.getQueryPositionsMap(),
                   offsets, sizes, slices);
  if (op.getSinks())
    in.sinks = sliceByMap(b, loc, op.getSinks(), op.getSinksMap(), offsets,
                          sizes, slices);
  return in;
}

template <typename OpTy>
SmallVector<utils::IteratorType> iteratorTypes(OpTy op) {
  AttentionDims dims = op.getDims();
  SmallVector<utils::IteratorType> types(op.getNumLoops(),
                                         utils::IteratorType::parallel);
  types[dims.k1] = utils::IteratorType::reduction;
  types[dims.k2] = utils::IteratorType::reduction;
  return types;
}

template <typename OpTy>
SmallVector<Range> iterationDomain(OpBuilder &b, OpTy op) {
  SmallVector<Range> domain;
  for (OpFoldResult extent : loopExtents(b, op))
    domain.push_back(Range{b.getIndexAttr(0), extent, b.getIndexAttr(1)});
  return domain;
}

/// Offsets and sizes of `map`'s results in an iteration tile.
void projectTile(AffineMap map, ArrayRef<OpFoldResult> offsets,
                 ArrayRef<OpFoldResult> sizes,
                 SmallVector<OpFoldResult> &resultOffsets,
                 SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.clear();
  resultSizes.clear();
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    resultOffsets.push_back(offsets[map.getDimPosition(r)]);
    resultSizes.push_back(sizes[map.getDimPosition(r)]);
  }
}

/// The iteration tile whose result tile is `offsets`/`sizes` through `map`:
/// the loops `map` does not have are whole.
template <typename OpTy>
void iterationTileOf(OpBuilder &b, OpTy op, AffineMap map,
                     ArrayRef<OpFoldResult> offsets,
                     ArrayRef<OpFoldResult> sizes,
                     SmallVector<OpFoldResult> &loopOffsets,
                     SmallVector<OpFoldResult> &loopSizes) {
  loopSizes = loopExtents(b, op);
  loopOffsets.assign(loopSizes.size(), b.getIndexAttr(0));
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    loopOffsets[map.getDimPosition(r)] = offsets[r];
    loopSizes[map.getDimPosition(r)] = sizes[r];
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> AttentionOp::getLoopIteratorTypes() {
  return iteratorTypes(*this);
}

SmallVector<Range> AttentionOp::getIterationDomain(OpBuilder &b) {
  return iterationDomain(b, *this);
}

FailureOr<TilingResult>
AttentionOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  AttentionDims dims = getDims();
  // The softmax needs every key; k1 is a plain reduction but splitting it
  // would need partial scores.
  if (!isWholeLoop(*this, dims.k1, offsets[dims.k1], sizes[dims.k1]) ||
      !isWholeLoop(*this, dims.k2, offsets[dims.k2], sizes[dims.k2]))
    return emitOpError("tiles only batch, query and value channel dims; "
                       "tile the keys through rope.online_attention");
  Location loc = getLoc();
  TilingResult result;
  TiledInputs in =
      sliceInputs(b, *this, offsets, sizes, result.generatedSlices);
  Value init = sliceByMap(b, loc, getInit(), getOutputMap(), offsets, sizes,
                          result.generatedSlices);
  TilePositions positions = tilePositions(b, *this, offsets);
  auto tiled = AttentionOp::create(
      b, loc, init.getType(), in.query, in.key, in.value, in.mask,
      in.queryPositions, positions.queryOffset, positions.keyOffset, in.sinks,
      getIndexingMapsAttr(), getScaleAttr(), getCausalAttr(), getWindowAttr(),
      getQueryDimAttr(), init);
  cloneShiftedRegion(b, *this, tiled, offsets);
  result.tiledOps.push_back(tiled);
  result.tiledValues.push_back(tiled.getResult());
  return result;
}

LogicalResult AttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  projectTile(getOutputMap(), offsets, sizes, resultOffsets, resultSizes);
  return success();
}

FailureOr<TilingResult>
AttentionOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                     ArrayRef<OpFoldResult> offsets,
                                     ArrayRef<OpFoldResult> sizes) {
  // The output has every loop but k1 and k2, which a tile has whole.
  SmallVector<OpFoldResult> loopOffsets, loopSizes;
  iterationTileOf(b, *this, getOutputMap(), offsets, sizes, loopOffsets,
                  loopSizes);
  return getTiledImplementation(b, loopOffsets, loopSizes);
}

//===----------------------------------------------------------------------===//
// rope.online_attention
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> OnlineAttentionOp::getLoopIteratorTypes() {
  return iteratorTypes(*this);
}

SmallVector<Range> OnlineAttentionOp::getIterationDomain(OpBuilder &b) {
  return iterationDomain(b, *this);
}

FailureOr<TilingResult>
OnlineAttentionOp::getTiledImplementation(OpBuilder &b,
                                          ArrayRef<OpFoldResult> offsets,
                                          ArrayRef<OpFoldResult> sizes) {
  AttentionDims dims = getDims();
  // max and sum have no n dim, and splitting k1 would need partial scores.
  if (!isWholeLoop(*this, dims.k1, offsets[dims.k1], sizes[dims.k1]) ||
      !isWholeLoop(*this, dims.n, offsets[dims.n], sizes[dims.n]))
    return emitOpError("tiles only batch, query and key dims (k1 and the "
                       "value channels stay whole)");
  Location loc = getLoc();
  TilingResult result;
  TiledInputs in =
      sliceInputs(b, *this, offsets, sizes, result.generatedSlices);
  AffineMap accMap = getOutputMap();
  AffineMap rowMap = withoutDim(accMap, dims.n);
  Value acc = sliceByMap(b, loc, getAcc(), accMap, offsets, sizes,
                         result.generatedSlices);
  Value max = sliceByMap(b, loc, getMax(), rowMap, offsets, sizes,
                         result.generatedSlices);
  Value sum = sliceByMap(b, loc, getSum(), rowMap, offsets, sizes,
                         result.generatedSlices);
  TilePositions positions = tilePositions(b, *this, offsets);
  auto tiled = OnlineAttentionOp::create(
      b, loc, acc.getType(), max.getType(), sum.getType(), in.query, in.key,
      in.value, in.mask, in.queryPositions, positions.queryOffset,
      positions.keyOffset, getIndexingMapsAttr(), getScaleAttr(),
      getCausalAttr(), getWindowAttr(), getQueryDimAttr(), acc, max, sum);
  cloneShiftedRegion(b, *this, tiled, offsets);
  result.tiledOps.push_back(tiled);
  llvm::append_range(result.tiledValues, tiled->getResults());
  return result;
}

LogicalResult OnlineAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  AffineMap map = getOutputMap();
  if (resultNumber != 0)
    map = withoutDim(map, getDims().n);
  projectTile(map, offsets, sizes, resultOffsets, resultSizes);
  return success();
}

FailureOr<TilingResult>
OnlineAttentionOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                           ArrayRef<OpFoldResult> offsets,
                                           ArrayRef<OpFoldResult> sizes) {
  // A tile of any result is the state after every key: k1 and k2 whole, and
  // n whole for max and sum (they have none).
  AttentionDims dims = getDims();
  AffineMap map = getOutputMap();
  if (resultNumber != 0)
    map = withoutDim(map, dims.n);
  SmallVector<OpFoldResult> loopOffsets, loopSizes;
  iterationTileOf(b, *this, map, offsets, sizes, loopOffsets, loopSizes);
  // A consumer tiling acc's n dim cannot take this producer (quietly: a
  // fusion driver asks, it does not require).
  if (!isWholeLoop(*this, dims.n, loopOffsets[dims.n], loopSizes[dims.n]))
    return failure();
  return getTiledImplementation(b, loopOffsets, loopSizes);
}
