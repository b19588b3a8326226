//===- RopeDecompose.cpp - rope.apply as linalg/tensor ops ----------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AggregatedOpInterface::decomposeOperation for `rope.apply`: the op becomes
//   1. a *cos/sin table* (one linalg.generic with two results) holding one
//      (cos, sin) per (position, frequency) pair: computed from the position
//      and the constant frequency table, or gathered from a cache;
//   2. a *rotation* (one linalg.generic) over the rotated channels viewed as
//      pairs ([..., 2, P/2] for `half`, [..., P/2, 2] for `interleaved`,
//      through tensor.expand_shape), reading the two members of each pair as
//      two slices through maps that drop the member dim (projected
//      permutations only: upstream's vectorizer and IREE take them);
//   3. tensor.insert_slice of the rotated channels and of the pass-through
//      channels [P, D) into the destination.
// With `slots` (KV-cache append) the destination is a temporary shaped like
// the input, scattered into the cache by CacheWriteDecompose.cpp's
// buildCacheScatter (the form of rope.cache_write).
// The fused neighbours (RotationCore's buildRmsNormFactor, applyRmsNorm,
// buildStoredValue) add:
//   - QK-norm: a reduction generic (the sum of squares of each row over its
//     D channels, compute type) and a per-row generic turning it into the
//     row's factor; the rotation and pass-through generics normalize the
//     channels they read (x' is never materialized);
//   - quantized output: the rotation and pass-through generics store
//     sat(y * s) into a destination of the storage type, `s` read through a
//     broadcast map (per tensor) or by the head dim (per head). The
//     pass-through channels then become a generic too.
// The table is indexed only by the dims positions depend on, so the trig is
// never repeated across heads (or across batch rows when positions do not
// vary per row). The rotation has a single output with an identity map, so it
// tiles and fuses with upstream machinery and bufferizes in place into the
// destination.
//
//===----------------------------------------------------------------------===//

#include "CacheWriteDecompose.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Builds the decomposition of one `rope.apply`.
class RopeDecomposer {
public:
  /// Rotates into `init` (the op's own, or with `slots` a temporary shaped
  /// like the input).
  RopeDecomposer(OpBuilder &b, ApplyOp op, Value init, AngleMethod angle)
      : b(b), op(op), init(init), angle(angle), loc(op.getLoc()),
        inputType(op.getInputType()), rank(inputType.getRank()),
        headDim(op.getHeadDim()), rotaryDim(op.getRotaryDimOrDefault()),
        numPairs(rotaryDim / 2), tokenDims(op.getTokenDimsOrDefault()),
        core(op) {
    elementType = inputType.getElementType();
    computeType = getComputeElementType(elementType);
    storageType = cast<RankedTensorType>(init.getType()).getElementType();
  }

  Value build();

private:
  /// The cos/sin table and, for each of its dims but the last (frequency),
  /// the dim of `input` it follows.
  struct Table {
    Value cos, sin;
    SmallVector<int64_t> inputDims;
  };

  Table buildTable();
  /// Axis `axis` of M-RoPE positions [3, tokens...], shaped like the tokens.
  Value positionAxis(int64_t axis);
  Table buildComputedOrGatheredTable();
  /// theta_i (or its phase step) of pair `freq` inside a payload, the
  /// scheme's table picked on the call's length: `length`, or `length` + 1
  /// when it is the positions' maximum (lengthIsMaxPosition).
  Value pickedFrequency(OpBuilder &nb, Location nloc, Value length, Value freq);
  bool lengthIsMaxPosition = false;
  Table buildPregatheredTable();

  /// QK-norm's factor rsqrt(mean_D(x^2) + eps) of each row (the input
  /// without its channel dim), in the compute type.
  Value buildNormFactors();
  /// The map of the per-tensor or per-head quantization scale in a generic
  /// with `numLoops` loops whose first rank - 1 follow the input's dims.
  AffineMap quantScaleMap(unsigned numLoops);
  /// Channels [P, D) of the result: a plain copy, or with neighbours x (or
  /// x') stored by buildStoredValue.
  Value buildPassThrough(Value result, Value normFactors);

  Value emptyTensor(ArrayRef<int64_t> inputDims, int64_t lastSize, Type type);
  /// `size` channels of the 1-D `source` from `offset`, `stride` apart.
  Value sliceVector(Value source, int64_t offset, int64_t size, int64_t stride);
  /// Channels [offset, offset + size) of the last dim of `source`.
  Value sliceChannels(Value source, int64_t offset, int64_t size);
  /// Inserts `slice` at channel `offset` of `dest`.
  Value insertChannels(Value slice, Value dest, int64_t offset, int64_t size);

  OpBuilder &b;
  ApplyOp op;
  Value init;
  AngleMethod angle;
  Location loc;
  RankedTensorType inputType;
  int64_t rank, headDim, rotaryDim, numPairs;
  SmallVector<int64_t> tokenDims;
  Type elementType, computeType, storageType;
  RotationCore core;
  TensorOperandReader tensorReader;
};

/// Reads inside a table generic's body: operands the generic takes as inputs
/// (positions, or M-RoPE's three position axes, a per-row offset, a
/// pre-gathered cache) are its block arguments, already indexed by their
/// maps; anything else (a gathered cache row) is read with tensor.extract.
class LinalgBodyReader : public TensorOperandReader {
public:
  /// `operand` (for M-RoPE positions: axis `axis`) is block argument `arg`.
  void map(Value operand, Value arg, int64_t axis = -1) {
    args[{operand, axis}] = arg;
  }

  Value read(OpBuilder &b, Location loc, Value operand, ValueRange indices,
             int64_t lanes) override {
    int64_t axis = -1;
    if (args.count({operand, 0}) && !indices.empty())
      axis = getConstantIntValue(indices.front()).value_or(-1);
    auto it = args.find({operand, axis});
    if (it != args.end())
      return it->second;
    return TensorOperandReader::read(b, loc, operand, indices, lanes);
  }

private:
  DenseMap<std::pair<Value, int64_t>, Value> args;
};

} // namespace

Value RopeDecomposer::emptyTensor(ArrayRef<int64_t> inputDims, int64_t lastSize,
                                  Type type) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : inputDims)
    sizes.push_back(tensor::getMixedSize(b, loc, op.getInput(), d));
  sizes.push_back(b.getIndexAttr(lastSize));
  return tensor::EmptyOp::create(b, loc, sizes, type);
}

Value RopeDecomposer::sliceVector(Value source, int64_t offset, int64_t size,
                                  int64_t stride) {
  return tensor::ExtractSliceOp::create(
      b, loc, source, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(stride)});
}

Value RopeDecomposer::buildNormFactors() {
  MLIRContext *ctx = b.getContext();
  Value input = op.getInput();
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, input);
  rowSizes.pop_back();
  Value zero = arith::ConstantOp::create(b, loc, computeType,
                                         b.getFloatAttr(computeType, 0.0));
  Value sumInit =
      linalg::FillOp::create(
          b, loc, zero,
          tensor::EmptyOp::create(b, loc, rowSizes, computeType).getResult())
          .getResult(0);
  // sum_D x^2 per row: rows parallel, channels reduced.
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rows = identity.getMajorSubMap(rank - 1);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{sumInit.getType()}, ValueRange{input},
          ValueRange{sumInit}, {identity, rows}, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value x = convertFloat(nb, nloc, args[0], computeType);
            Value square = arith::MulFOp::create(nb, nloc, x, x);
            linalg::YieldOp::create(
                nb, nloc,
                ValueRange{arith::AddFOp::create(nb, nloc, args[1], square)});
          })
          .getResult(0);
  // The factor once per row, not once per channel.
  AffineMap rowIdentity = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  double epsilon = op.getNormEpsilonAttr().getValueAsDouble();
  return linalg::GenericOp::create(
             b, loc, TypeRange{sumInit.getType()}, ValueRange{sums},
             ValueRange{tensor::EmptyOp::create(b, loc, rowSizes, computeType)},
             {rowIdentity, rowIdentity},
             SmallVector<utils::IteratorType>(rank - 1,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc,
                   ValueRange{buildRmsNormFactor(nb, nloc, args[0], headDim,
                                                 epsilon)});
             })
      .getResult(0);
}

AffineMap RopeDecomposer::quantScaleMap(unsigned numLoops) {
  Value scale = op.getQuantScale();
  if (cast<RankedTensorType>(scale.getType()).getRank() == 0)
    return AffineMap::get(numLoops, 0, {}, b.getContext());
  return AffineMap::get(
      numLoops, 0, {getAffineDimExpr(*op.getSingleHeadDim(), b.getContext())},
      b.getContext());
}

Value RopeDecomposer::positionAxis(int64_t axis) {
  Value positions = op.getPositions();
  auto type = cast<RankedTensorType>(positions.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, positions);
  offsets.front() = b.getIndexAttr(axis);
  sizes.front() = b.getIndexAttr(1);
  auto sliceType = RankedTensorType::get(type.getShape().drop_front(),
                                         type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, positions, offsets,
                                        sizes, strides);
}

RopeDecomposer::Table RopeDecomposer::buildComputedOrGatheredTable() {
  MLIRContext *ctx = b.getContext();
  Table table;
  ApplyOp::PositionKind kind = op.getPositionKind();
  Value offset = op.getOffset();
  auto offsetTensorType =
      offset ? dyn_cast<RankedTensorType>(offset.getType()) : nullptr;
  bool perRowOffset = offsetTensorType && offsetTensorType.getRank() == 1;

  if (kind == ApplyOp::PositionKind::Explicit)
    table.inputDims = tokenDims;
  else if (perRowOffset)
    table.inputDims = {tokenDims.front(), tokenDims.back()};
  else
    table.inputDims = {tokenDims.back()};
  unsigned numLoops = table.inputDims.size() + 1;
  unsigned seqLoop = table.inputDims.size() - 1;
  unsigned freqLoop = numLoops - 1;

  // Operands of the table generic: what positions are read from (mapped to
  // block arguments for the core's reads) and theta.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<std::pair<Value, int64_t>> readByArg; // (operand, axis)
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineMap tokenMap = AffineMap::getMultiDimIdentityMap(numLoops, ctx)
                           .getMajorSubMap(numLoops - 1);
  if (kind == ApplyOp::PositionKind::Explicit && op.getMropeAttr()) {
    // M-RoPE: the three position axes as three token-shaped operands; the
    // core picks one per pair.
    for (int64_t axis = 0; axis < 3; ++axis) {
      inputs.push_back(positionAxis(axis));
      maps.push_back(tokenMap);
      readByArg.push_back({op.getPositions(), axis});
    }
  } else if (kind == ApplyOp::PositionKind::Explicit) {
    inputs.push_back(op.getPositions());
    maps.push_back(tokenMap);
    readByArg.push_back({op.getPositions(), -1});
  }
  if (perRowOffset) {
    inputs.push_back(offset);
    maps.push_back(AffineMap::get(numLoops, 0, {dim(0)}, ctx));
    readByArg.push_back({offset, -1});
  }
  int invFreqArg = -1, lengthArg = -1;
  FrequencyAttrInterface freqs = op.getFreqsOrDefault();
  // LongRoPE picks its table per call on the length. Where the length is
  // on a tensor (the positions' maximum, or a length operand extracted
  // from a 0-d tensor: the frontend's own maximum), that tensor is read by
  // the table generic, which picks per element: a choice made outside
  // linalg on an extracted scalar is a read back to the host for a
  // compiler that places tensors on a device (IREE).
  Value lengthTensor;
  if (!op.getCos() && !freqs.isStatic() && hasConstantFrequencyTables(freqs)) {
    if (Value length = op.getLength()) {
      auto extract = length.getDefiningOp<tensor::ExtractOp>();
      if (extract && extract.getTensor().getType().getRank() == 0 &&
          isa<IntegerType>(extract.getType()))
        lengthTensor = extract.getTensor();
    } else if (op.getPositions()) {
      lengthTensor = buildMaxTensor(b, loc, op.getPositions());
      lengthIsMaxPosition = true;
    }
  }
  if (lengthTensor) {
    lengthArg = inputs.size();
    inputs.push_back(lengthTensor);
    maps.push_back(AffineMap::get(numLoops, 0, {}, ctx));
  } else if (!op.getCos()) {
    // theta_i: a folded constant for static schemes; for dynamic ones, code
    // that runs once per call on the call's runtime length.
    Value thetaTable =
        angle == AngleMethod::Turns
            ? buildPhaseStepTable(b, loc, op, core, tensorReader)
            : buildInverseFrequencies(b, loc, op, core, tensorReader);
    invFreqArg = inputs.size();
    inputs.push_back(thetaTable);
    maps.push_back(AffineMap::get(numLoops, 0, {dim(freqLoop)}, ctx));
  }

  Value cosInit = emptyTensor(table.inputDims, numPairs, computeType);
  Value sinInit = emptyTensor(table.inputDims, numPairs, computeType);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(numLoops, ctx);
  maps.push_back(identity);
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);

  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{cosInit.getType(), sinInit.getType()}, inputs,
      ValueRange{cosInit, sinInit}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        LinalgBodyReader reader;
        for (auto [i, operandAndAxis] : llvm::enumerate(readByArg))
          reader.map(operandAndAxis.first, args[i], operandAndAxis.second);
        // The token indices the core reads by: the table's loops but the
        // frequency (the last is the sequence index).
        SmallVector<Value> tokenIvs;
        for (unsigned loop = 0; loop <= seqLoop; ++loop)
          tokenIvs.push_back(linalg::IndexOp::create(nb, nloc, loop));
        Value freq = linalg::IndexOp::create(nb, nloc, freqLoop);
        Value theta = invFreqArg >= 0 ? args[invFreqArg] : Value();
        if (lengthArg >= 0)
          theta = pickedFrequency(nb, nloc, args[lengthArg], freq);
        auto [c, s] =
            core.cosSin(nb, nloc, reader, tokenIvs, freq, /*lanes=*/0, theta);
        linalg::YieldOp::create(nb, nloc, ValueRange{c, s});
      });
  table.cos = generic.getResult(0);
  table.sin = generic.getResult(1);
  return table;
}

Value RopeDecomposer::pickedFrequency(OpBuilder &nb, Location nloc,
                                      Value length, Value freq) {
  FrequencyAttrInterface freqs = op.getFreqsOrDefault();
  length = toI64(nb, nloc, length);
  if (lengthIsMaxPosition)
    length = arith::AddIOp::create(
        nb, nloc, length,
        arith::ConstantOp::create(nb, nloc, nb.getI64IntegerAttr(1)));
  Value state = angle == AngleMethod::Turns
                    ? freqs.buildPhaseStepState(nb, nloc, length, rotaryDim)
                    : freqs.buildFrequencyState(nb, nloc, length, rotaryDim);
  // Each constant table read at the pair: the f64 thetas, or their phase
  // steps.
  auto read = frequencyTableReader(
      angle,
      [](OpBuilder &tb, Location tloc, DenseElementsAttr table, Value at,
         int64_t) -> Value {
        Value values = arith::ConstantOp::create(tb, tloc, table);
        return tensor::ExtractOp::create(tb, tloc, values, ValueRange{at});
      });
  return buildFrequencyAt(nb, nloc, freqs, angle, state, freq, /*lanes=*/0,
                          rotaryDim, read);
}

RopeDecomposer::Table RopeDecomposer::buildPregatheredTable() {
  Table table;
  table.inputDims = tokenDims;
  Value cos = op.getCos(), sin = op.getSin();
  Type cacheElt = cast<RankedTensorType>(cos.getType()).getElementType();
  if (cacheElt == computeType && op.getMagnitude().convertToDouble() == 1.0 &&
      !op.getInverse()) {
    table.cos = cos;
    table.sin = sin;
    return table;
  }
  // Convert to the compute type and apply magnitude/direction once per
  // (token, frequency), not per head.
  unsigned numLoops = tokenDims.size() + 1;
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(numLoops, b.getContext());
  Value cosInit = emptyTensor(tokenDims, numPairs, computeType);
  Value sinInit = emptyTensor(tokenDims, numPairs, computeType);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{cosInit.getType(), sinInit.getType()},
      ValueRange{cos, sin}, ValueRange{cosInit, sinInit},
      SmallVector<AffineMap>(4, identity), iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        LinalgBodyReader reader;
        reader.map(cos, args[0]);
        reader.map(sin, args[1]);
        SmallVector<Value> tokenIvs;
        for (unsigned loop = 0; loop + 1 < numLoops; ++loop)
          tokenIvs.push_back(linalg::IndexOp::create(nb, nloc, loop));
        Value freq = linalg::IndexOp::create(nb, nloc, numLoops - 1);
        auto [c, s] = core.cosSin(nb, nloc, reader, tokenIvs, freq,
                                  /*lanes=*/0, Value());
        linalg::YieldOp::create(nb, nloc, ValueRange{c, s});
      });
  table.cos = generic.getResult(0);
  table.sin = generic.getResult(1);
  return table;
}

RopeDecomposer::Table RopeDecomposer::buildTable() {
  if (op.getCosSinSource() == ApplyOp::CosSinSource::PregatheredCache)
    return buildPregatheredTable();
  return buildComputedOrGatheredTable();
}

Value RopeDecomposer::sliceChannels(Value source, int64_t offset,
                                    int64_t size) {
  if (offset == 0 && size == headDim)
    return source;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
  offsets.back() = b.getIndexAttr(offset);
  sizes.back() = b.getIndexAttr(size);
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

Value RopeDecomposer::insertChannels(Value slice, Value dest, int64_t offset,
                                     int64_t size) {
  if (offset == 0 && size == headDim)
    return slice;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, slice);
  offsets.back() = b.getIndexAttr(offset);
  return tensor::InsertSliceOp::create(b, loc, slice, dest, offsets, sizes,
                                       strides);
}

Value RopeDecomposer::build() {
  MLIRContext *ctx = b.getContext();
  core.buildPerCall(b, loc, tensorReader);
  Table table = buildTable();
  Value normFactors = op.getNormWeight() ? buildNormFactors() : Value();

  // View the rotated channels [0, P) as pairs: [..., 2, P/2] for `half`
  // (channel k*P/2 + j is member k of pair j), [..., P/2, 2] for
  // `interleaved` (channel 2j + k).
  bool half = op.getLayout() == Layout::half;
  Value rotatedIn = sliceChannels(op.getInput(), 0, rotaryDim);
  Value rotatedInit = sliceChannels(init, 0, rotaryDim);
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < rank - 1; ++d)
    reassociation.push_back({d});
  reassociation.push_back({rank - 1, rank});
  auto expand = [&](Value v) {
    SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, v);
    shape.pop_back();
    SmallVector<int64_t> staticShape(
        cast<RankedTensorType>(v.getType()).getShape().drop_back());
    std::array<int64_t, 2> inner = half ? std::array<int64_t, 2>{2, numPairs}
                                        : std::array<int64_t, 2>{numPairs, 2};
    for (int64_t size : inner) {
      shape.push_back(b.getIndexAttr(size));
      staticShape.push_back(size);
    }
    auto type = RankedTensorType::get(
        staticShape, cast<RankedTensorType>(v.getType()).getElementType());
    return tensor::ExpandShapeOp::create(b, loc, type, v, reassociation, shape)
        .getResult();
  };
  Value pairsIn = expand(rotatedIn);
  Value pairsInit = expand(rotatedInit);

  // One generic over [..., pair member k, pair j] (in layout order) with a
  // single identity-mapped output, so the destination is written in place
  // (two outputs into two slices of one tensor would bufferize to a copy).
  // The two members are read as two operands, the slices k = 0 and k = 1 of
  // the pairs, through maps that drop k: projected permutations only, which
  // upstream's vectorizer and other MLIR compilers (IREE) take. Member k
  // rotates itself with its partner (rotatePairMember):
  //   k = 0: y = fma(x2, -s, x1 c)      k = 1: y = fma(x1, s, x2 c)
  // i.e. the complex product (x1 + i x2)(c + i s).
  // With QK-norm, both members are normalized first (the row's factor, each
  // member's weight: the weight's channels read as the same two slices);
  // the result is stored by buildStoredValue (converted, or quantized).
  unsigned numLoops = rank + 1;
  unsigned memberLoop = half ? rank - 1 : rank;
  unsigned pairLoop = half ? rank : rank - 1;
  auto member = [&](int64_t k) {
    // Pairs [..., 2, P/2] or [..., P/2, 2] -> member k: [..., P/2].
    int64_t pairsRank = rank + 1;
    SmallVector<OpFoldResult> offsets(pairsRank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(pairsRank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, pairsIn);
    offsets[memberLoop] = b.getIndexAttr(k);
    sizes[memberLoop] = b.getIndexAttr(1);
    // The slice keeps the member dim (size 1) and a collapse drops it: a
    // rank-reducing slice would be ambiguous where other dims are 1 too,
    // and canonicalization, once a dynamic size folds, re-infers it
    // dropping the leading unit dim instead (a tile holding one batch row
    // and several heads), which the generic's maps do not read.
    Value slice = tensor::ExtractSliceOp::create(b, loc, pairsIn, offsets,
                                                 sizes, strides);
    SmallVector<ReassociationIndices> merge;
    for (int64_t d = 0; d < pairsRank - 2; ++d)
      merge.push_back({d});
    merge.push_back({pairsRank - 2, pairsRank - 1});
    return tensor::CollapseShapeOp::create(b, loc, slice, merge).getResult();
  };
  Value firstMembers = member(0), secondMembers = member(1);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(numLoops, ctx);
  SmallVector<AffineExpr> memberExprs;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (loop != memberLoop)
      memberExprs.push_back(getAffineDimExpr(loop, ctx));
  AffineMap memberMap = AffineMap::get(numLoops, 0, memberExprs, ctx);
  SmallVector<AffineExpr> tableExprs;
  for (int64_t d : table.inputDims)
    tableExprs.push_back(getAffineDimExpr(d, ctx));
  tableExprs.push_back(getAffineDimExpr(pairLoop, ctx));
  AffineMap tableMap = AffineMap::get(numLoops, 0, tableExprs, ctx);
  SmallVector<Value> inputs{firstMembers, secondMembers, table.cos, table.sin};
  SmallVector<AffineMap> maps{memberMap, memberMap, tableMap, tableMap};
  int normArg = -1, scaleArg = -1;
  if (normFactors) {
    // Member k of pair j is channel k P/2 + j (half) or 2j + k
    // (interleaved): the weight's members are two (strided) slices.
    Value weight = op.getNormWeight();
    normArg = inputs.size();
    inputs.push_back(normFactors);
    inputs.push_back(half ? sliceVector(weight, 0, numPairs, 1)
                          : sliceVector(weight, 0, numPairs, 2));
    inputs.push_back(half ? sliceVector(weight, numPairs, numPairs, 1)
                          : sliceVector(weight, 1, numPairs, 2));
    maps.push_back(identity.getMajorSubMap(rank - 1));
    AffineMap pairMap =
        AffineMap::get(numLoops, 0, {getAffineDimExpr(pairLoop, ctx)}, ctx);
    maps.append({pairMap, pairMap});
  }
  if (Value scale = op.getQuantScale()) {
    scaleArg = inputs.size();
    inputs.push_back(scale);
    maps.push_back(quantScaleMap(numLoops));
  }
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  auto rotation = linalg::GenericOp::create(
      b, loc, TypeRange{pairsInit.getType()}, inputs, ValueRange{pairsInit},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x1 = convertFloat(nb, nloc, args[0], computeType);
        Value x2 = convertFloat(nb, nloc, args[1], computeType);
        if (normArg >= 0) {
          Value factor = args[normArg];
          x1 = applyRmsNorm(nb, nloc, x1, factor, args[normArg + 1]);
          x2 = applyRmsNorm(nb, nloc, x2, factor, args[normArg + 2]);
        }
        Value c = args[2], s = args[3];
        Value k = linalg::IndexOp::create(nb, nloc, memberLoop);
        Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
        Value isFirst =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, k, zero);
        Value self = arith::SelectOp::create(nb, nloc, isFirst, x1, x2);
        Value partner = arith::SelectOp::create(nb, nloc, isFirst, x2, x1);
        // The member's half of rotatePair, with the same rounding.
        Value y = rotatePairMember(nb, nloc, self, partner, c, s, isFirst);
        Value scale = scaleArg >= 0 ? args[scaleArg] : Value();
        linalg::YieldOp::create(
            nb, nloc, buildStoredValue(nb, nloc, y, storageType, scale));
      });

  Value rotated = tensor::CollapseShapeOp::create(
      b, loc, rotatedInit.getType(), rotation.getResult(0), reassociation);
  Value result = insertChannels(rotated, init, 0, rotaryDim);
  if (rotaryDim < headDim)
    result = buildPassThrough(result, normFactors);
  return result;
}

Value RopeDecomposer::buildPassThrough(Value result, Value normFactors) {
  // Into the destination's slice (not a bare insert_slice) so that
  // bufferization writes it in place with inlined loops instead of a strided
  // memref.copy runtime call.
  int64_t passSize = headDim - rotaryDim;
  Value in = sliceChannels(op.getInput(), rotaryDim, passSize);
  Value init = sliceChannels(result, rotaryDim, passSize);
  if (!op.getNormWeight() && !op.getQuantScale())
    return insertChannels(linalg::CopyOp::create(b, loc, in, init).getResult(0),
                          result, rotaryDim, passSize);

  // With neighbours the channels are not copied: x' with QK-norm, stored
  // quantized with quant_scale.
  MLIRContext *ctx = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<Value> inputs{in};
  SmallVector<AffineMap> maps{identity};
  int normArg = -1, scaleArg = -1;
  if (normFactors) {
    normArg = inputs.size();
    inputs.push_back(normFactors);
    inputs.push_back(
        sliceVector(op.getNormWeight(), rotaryDim, passSize, /*stride=*/1));
    maps.push_back(identity.getMajorSubMap(rank - 1));
    maps.push_back(identity.getMinorSubMap(1));
  }
  if (Value scale = op.getQuantScale()) {
    scaleArg = inputs.size();
    inputs.push_back(scale);
    maps.push_back(quantScaleMap(rank));
  }
  maps.push_back(identity);
  Value pass =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value x = convertFloat(nb, nloc, args[0], computeType);
            if (normArg >= 0)
              x = applyRmsNorm(nb, nloc, x, args[normArg], args[normArg + 1]);
            Value scale = scaleArg >= 0 ? args[scaleArg] : Value();
            linalg::YieldOp::create(
                nb, nloc, buildStoredValue(nb, nloc, x, storageType, scale));
          })
          .getResult(0);
  return insertChannels(pass, result, rotaryDim, passSize);
}

FailureOr<SmallVector<Value>> ApplyOp::decomposeOperation(OpBuilder &b) {
  return decomposeApply(b, *this, AngleMethod::F64);
}

FailureOr<SmallVector<Value>>
mlir::rope::decomposeApply(OpBuilder &b, ApplyOp op, AngleMethod requested) {
  FailureOr<AngleMethod> angle = angleMethodFor(op, requested);
  if (failed(angle))
    return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Value slots = op.getSlots();
  if (!slots)
    return SmallVector<Value>{
        RopeDecomposer(b, op, op.getInit(), *angle).build()};
  // KV-cache append: the rotation (with its neighbours: the stored values
  // are final) into a temporary shaped like the input, then scattered into
  // the cache at the slots as rope.cache_write is (a slot out of range
  // writes nothing). The portable form; the fused ones (no rotated
  // temporary) are the vector and GPU lowerings'.
  Value rotatedInit = tensor::EmptyOp::create(
      b, op.getLoc(), tensor::getMixedSizes(b, op.getLoc(), op.getInput()),
      op.getStorageElementType());
  Value rotated = RopeDecomposer(b, op, rotatedInit, *angle).build();
  return SmallVector<Value>{buildCacheScatter(
      b, op.getLoc(), rotated, slots, /*scale=*/Value(), op.getInit(),
      op.getTokenDimsOrDefault(), op.getSingleHeadDim())};
}
