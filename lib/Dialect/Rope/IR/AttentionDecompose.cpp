//===- AttentionDecompose.cpp - The attention ops as linalg ---------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AggregatedOpInterface::decomposeOperation for the attention ops:
//
// `rope.attention` is one online-softmax step over every key from the
// initial state (acc 0, max −inf, sum 0, in the accumulator type; with sinks
// max t and sum exp(t − t), the sink as the row's first logit) followed by
// the normalization O = acc / sum in the output type.
//
// `rope.online_attention` becomes plain linalg, in the order and forms the
// fused whole attention (rope-fuse-into-attention) produces for one key
// tile, so that the CPU vectorizers (rope-vectorize-contractions,
// rope-vectorize-elementwise) treat both alike:
//   1. the scores S over the score dims (every loop but k1 and n, in loop
//      order): a contraction over k1 of Q and K into zeros;
//   2. one elementwise generic: the scale, the score region (inlined, its
//      index arguments as linalg.index), the mask, and the causal/window
//      mask from the positions (masked scores become −inf);
//   3. the online update: row max, P = exp(S − shift), the rescale
//      exp(max − shift), the new max, the new sum, the rescaled acc, and P·V
//      as a contraction over k2 accumulating into it. From the initial
//      state (a whole rope.attention) the rescale and what uses it are
//      left out: they would multiply zeros by zero.
// Row tensors (max, sum, the row max) are laid out like acc without its n
// dim, i.e. like the op's max and sum.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A one-result linalg.generic writing into `out`.
Value generic(OpBuilder &b, Location loc, ValueRange ins, Value out,
              ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
              BodyFn body) {
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, ins, ValueRange{out}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args));
      });
  return op.getResult(0);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             FloatType type, const APFloat &value) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type);
  Value scalar = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// `value` (a float) as `type`: extended or truncated. (Only to or from
/// the accumulator type, f32 or f64: never between f16 and bf16.)
Value convertFloat(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  if (value.getType().getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value negInfOf(OpBuilder &b, Location loc, FloatType type) {
  return arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(type, APFloat::getInf(type.getFloatSemantics(), true)));
}

/// A running max of −inf (every key so far masked) used as the shift would
/// make exp(−inf − (−inf)) a NaN; shifting by 0 instead gives exp(−inf) = 0.
Value finiteShift(OpBuilder &b, Location loc, Value max) {
  auto type = cast<FloatType>(max.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value masked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                       negInfOf(b, loc, type));
  return arith::SelectOp::create(b, loc, masked, zero, max);
}

Value maximum(OpBuilder &b, Location loc, ValueRange a) {
  return arith::MaximumFOp::create(b, loc, a[0], a[1]);
}

Value multiply(OpBuilder &b, Location loc, ValueRange a) {
  return arith::MulFOp::create(b, loc, a[0], a[1]);
}

/// exp(x − shift), shift = the finite max of m0 and m1.
Value shiftedExp(OpBuilder &b, Location loc, Value x, Value m0, Value m1) {
  Value shift = finiteShift(b, loc, maximum(b, loc, {m0, m1}));
  return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, shift));
}

/// The extent of every loop, from the operands through their maps.
template <typename OpTy>
SmallVector<OpFoldResult> loopExtents(OpBuilder &b, OpTy op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> values = {op.getQuery(), op.getKey(), op.getValue()};
  if (op.getMask())
    values.push_back(op.getMask());
  if (op.getQueryPositions())
    values.push_back(op.getQueryPositions());
  if (op.getSinks())
    values.push_back(op.getSinks());
  values.push_back(op.getDpsInits().front());
  SmallVector<OpFoldResult> extents(op.getNumLoops());
  for (bool dynamic : {false, true})
    for (auto [value, map] : llvm::zip_equal(values, maps))
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        unsigned d = map.getDimPosition(r);
        bool isDynamic =
            cast<RankedTensorType>(value.getType()).isDynamicDim(r);
        if (!extents[d] && isDynamic == dynamic)
          extents[d] = tensor::getMixedSize(b, op.getLoc(), value, r);
      }
  return extents;
}

/// `map` (over the op's loops) re-expressed over the loops `kept` (in that
/// order); `map` must use only those.
AffineMap restrictTo(AffineMap map, ArrayRef<unsigned> kept) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> results;
  for (AffineExpr e : map.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    auto it = llvm::find(kept, d);
    assert(it != kept.end() && "map uses a dropped loop");
    results.push_back(getAffineDimExpr(it - kept.begin(), ctx));
  }
  return AffineMap::get(kept.size(), 0, results, ctx);
}

SmallVector<unsigned> loopsWithout(unsigned numLoops, unsigned drop) {
  SmallVector<unsigned> loops;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != drop)
      loops.push_back(d);
  return loops;
}

/// Whether `value` is a linalg.fill of a constant float for which `holds`.
bool isFilledWith(Value value, function_ref<bool(const APFloat &)> holds) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  FloatAttr constant;
  return fill && matchPattern(fill.getInputs()[0], m_Constant(&constant)) &&
         holds(constant.getValue());
}

/// Builds the linalg form of one `rope.online_attention`.
class OnlineAttentionDecomposer {
public:
  OnlineAttentionDecomposer(OpBuilder &b, OnlineAttentionOp op)
      : b(b), op(op), loc(op.getLoc()), ctx(op.getContext()),
        dims(op.getDims()), scoreDims(dims.scoreDims()),
        acc(op.getAccumulatorType()) {}

  SmallVector<Value> build();

private:
  Value scores();
  Value modifiedScores(Value s);
  /// The score at score-dim indices `idx` after the region, mask and
  /// positions (inside the elementwise generic).
  Value modify(OpBuilder &nb, Location nloc, ValueRange args);

  OpBuilder &b;
  OnlineAttentionOp op;
  Location loc;
  MLIRContext *ctx;
  AttentionDims dims;
  SmallVector<unsigned> scoreDims;
  FloatType acc;
  SmallVector<OpFoldResult> extents;
  /// Values the elementwise generic reads from outside (index type).
  Value keyOffset, queryOffset;
};

Value OnlineAttentionDecomposer::scores() {
  // Loops: all but n; k1 is the reduction.
  unsigned numLoops = op.getNumLoops();
  SmallVector<unsigned> loops = loopsWithout(numLoops, dims.n);
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d : loops)
    iterators.push_back(d == dims.k1 ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
  SmallVector<AffineExpr> scoreExprs;
  for (unsigned d : scoreDims)
    scoreExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap scoreMap = AffineMap::get(numLoops, 0, scoreExprs, ctx);
  SmallVector<OpFoldResult> sizes;
  for (unsigned d : scoreDims)
    sizes.push_back(extents[d]);
  Value zero =
      filled(b, loc, sizes, acc, APFloat::getZero(acc.getFloatSemantics()));
  return generic(
      b, loc, {op.getQuery(), op.getKey()}, zero,
      {restrictTo(op.getQueryMap(), loops), restrictTo(op.getKeyMap(), loops),
       restrictTo(scoreMap, loops)},
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value q = convertFloat(nb, nloc, a[0], acc);
        Value k = convertFloat(nb, nloc, a[1], acc);
        return arith::AddFOp::create(
            nb, nloc, arith::MulFOp::create(nb, nloc, q, k), a[2]);
      });
}

Value OnlineAttentionDecomposer::modify(OpBuilder &nb, Location nloc,
                                        ValueRange args) {
  Value s = args[0];
  double scale = op.getScale().convertToDouble();
  if (scale != 1.0)
    s = arith::MulFOp::create(
        nb, nloc, s,
        arith::ConstantOp::create(nb, nloc, nb.getFloatAttr(acc, scale)));
  auto index = [&](unsigned loop) -> Value {
    unsigned pos = llvm::find(scoreDims, loop) - scoreDims.begin();
    return linalg::IndexOp::create(nb, nloc, pos);
  };
  if (Block *block = op.getModifierBlock()) {
    IRMapping mapping;
    mapping.map(block->getArgument(0), s);
    for (auto [arg, loop] :
         llvm::zip_equal(block->getArguments().drop_front(), scoreDims))
      if (!arg.use_empty())
        mapping.map(arg, index(loop));
    for (Operation &inner : block->without_terminator())
      nb.clone(inner, mapping);
    s = mapping.lookup(cast<YieldOp>(block->getTerminator()).getValue());
  }
  unsigned next = 1;
  Value negInf = negInfOf(nb, nloc, acc);
  if (op.getMask()) {
    Value m = args[next++];
    if (m.getType().isInteger(1))
      s = arith::SelectOp::create(nb, nloc, m, s, negInf);
    else
      s = arith::AddFOp::create(nb, nloc, s, convertFloat(nb, nloc, m, acc));
  }
  if (op.hasPositionMask()) {
    Type i64 = nb.getI64Type();
    Value kpos = index(dims.k2);
    if (keyOffset)
      kpos = arith::AddIOp::create(nb, nloc, kpos, keyOffset);
    kpos = arith::IndexCastOp::create(nb, nloc, i64, kpos);
    Value qpos;
    if (op.getQueryPositions()) {
      qpos = args[next++];
      if (qpos.getType() != i64)
        qpos = arith::ExtSIOp::create(nb, nloc, i64, qpos);
    } else {
      qpos = arith::IndexCastOp::create(
          nb, nloc, i64,
          arith::AddIOp::create(nb, nloc, index(dims.m), queryOffset));
    }
    Value keep =
        arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sle, kpos, qpos);
    if (std::optional<int64_t> window = op.getWindow()) {
      Value w =
          arith::ConstantOp::create(nb, nloc, nb.getIntegerAttr(i64, *window));
      Value lowest = arith::SubIOp::create(nb, nloc, qpos, w);
      keep = arith::AndIOp::create(
          nb, nloc, keep,
          arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sgt, kpos,
                                lowest));
    }
    s = arith::SelectOp::create(nb, nloc, keep, s, negInf);
  }
  return s;
}

Value OnlineAttentionDecomposer::modifiedScores(Value s) {
  unsigned rank = scoreDims.size();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<Value> ins = {s};
  SmallVector<AffineMap> maps = {id};
  if (op.getMask()) {
    ins.push_back(op.getMask());
    maps.push_back(restrictTo(op.getMaskMap(), scoreDims));
  }
  if (op.getQueryPositions()) {
    ins.push_back(op.getQueryPositions());
    maps.push_back(restrictTo(op.getQueryPositionsMap(), scoreDims));
  }
  maps.push_back(id);
  if (op.hasPositionMask()) {
    keyOffset = op.getKeyOffset();
    if (!op.getQueryPositions()) {
      queryOffset = op.getQueryOffset();
      if (!queryOffset) {
        // Bottom-right aligned: Sk − Sq.
        std::optional<int64_t> keys = getConstantIntValue(extents[dims.k2]);
        std::optional<int64_t> queries = getConstantIntValue(extents[dims.m]);
        if (keys && queries)
          queryOffset =
              arith::ConstantIndexOp::create(b, loc, *keys - *queries);
        else
          queryOffset = arith::SubIOp::create(
              b, loc, getValueOrCreateConstantIndexOp(b, loc, extents[dims.k2]),
              getValueOrCreateConstantIndexOp(b, loc, extents[dims.m]));
      }
    }
  }
  Value out =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, s), acc);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return generic(b, loc, ins, out, maps, parallel,
                 [&](OpBuilder &nb, Location nloc, ValueRange a) {
                   return modify(nb, nloc, a);
                 });
}

SmallVector<Value> OnlineAttentionDecomposer::build() {
  extents = loopExtents(b, op);
  Value s = modifiedScores(scores());

  // Row layout: acc's without n.
  AffineMap accMap = op.getOutputMap();
  unsigned accRank = accMap.getNumResults();
  unsigned nPos = *accMap.getResultPosition(getAffineDimExpr(dims.n, ctx));
  AffineMap rowOfAcc =
      AffineMap::getMultiDimIdentityMap(accRank, ctx).dropResult(nPos);
  AffineMap rowOfScores = restrictTo(accMap.dropResult(nPos), scoreDims);
  unsigned rank = scoreDims.size();
  unsigned rowRank = accRank - 1;
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rowRank, ctx);
  AffineMap accId = AffineMap::getMultiDimIdentityMap(accRank, ctx);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> rowReduction(parallel);
  rowReduction[llvm::find(scoreDims, dims.k2) - scoreDims.begin()] =
      utils::IteratorType::reduction;
  SmallVector<utils::IteratorType> rowParallel(rowRank,
                                               utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> accParallel(accRank,
                                               utils::IteratorType::parallel);
  SmallVector<OpFoldResult> rowSizes =
      tensor::getMixedSizes(b, loc, op.getMax());
  Value max = op.getMax(), sum = op.getSum();
  // The first step from the initial state (acc 0, max −inf, sum 0: a whole
  // rope.attention, untiled) has nothing to rescale: exp(−inf − shift) = 0
  // times zeros. Leaving out the rescale, the new max and the two products
  // gives the same bits and four fewer generics (each a dispatch for a
  // compiler that forms one per generic, IREE).
  bool fresh = op.startsFromInitialState();

  // The running max is read (for P and the rescale) before it is updated in
  // place, so that it stays in its buffer.
  Value tileMax =
      generic(b, loc, s,
              filled(b, loc, rowSizes, acc,
                     APFloat::getInf(acc.getFloatSemantics(), true)),
              {id, rowOfScores}, rowReduction, maximum);
  Value emptyProbs =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, s), acc);
  Value probs = fresh ? generic(b, loc, {s, tileMax}, emptyProbs,
                                {id, rowOfScores, id}, parallel,
                                [](OpBuilder &nb, Location nloc, ValueRange a) {
                                  return shiftedExp(nb, nloc, a[0], a[1], a[1]);
                                })
                      : generic(b, loc, {s, tileMax, max}, emptyProbs,
                                {id, rowOfScores, rowOfScores, id}, parallel,
                                [](OpBuilder &nb, Location nloc, ValueRange a) {
                                  return shiftedExp(nb, nloc, a[0], a[1], a[2]);
                                });
  Value newMax = tileMax, newSum = sum, scaledAcc = op.getAcc(), rescale;
  if (!fresh) {
    rescale = generic(b, loc, {max, tileMax},
                      tensor::EmptyOp::create(b, loc, rowSizes, acc),
                      {rowId, rowId, rowId}, rowParallel,
                      [](OpBuilder &nb, Location nloc, ValueRange a) {
                        return shiftedExp(nb, nloc, a[0], a[0], a[1]);
                      });
    newMax =
        generic(b, loc, tileMax, max, {rowId, rowId}, rowParallel, maximum);
    newSum =
        generic(b, loc, rescale, sum, {rowId, rowId}, rowParallel, multiply);
  }
  newSum = generic(b, loc, probs, newSum, {id, rowOfScores}, rowReduction,
                   [](OpBuilder &nb, Location nloc, ValueRange a) {
                     return arith::AddFOp::create(nb, nloc, a[0], a[1]);
                   });
  if (!fresh)
    scaledAcc = generic(b, loc, rescale, op.getAcc(), {rowOfAcc, accId},
                        accParallel, multiply);

  // P·V over every loop but k1, k2 the reduction, into the rescaled acc.
  SmallVector<unsigned> loops = loopsWithout(op.getNumLoops(), dims.k1);
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d : loops)
    iterators.push_back(d == dims.k2 ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
  SmallVector<AffineExpr> scoreExprs;
  for (unsigned d : scoreDims)
    scoreExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap probsMap = AffineMap::get(op.getNumLoops(), 0, scoreExprs, ctx);
  Value newAcc = generic(
      b, loc, {probs, op.getValue()}, scaledAcc,
      {restrictTo(probsMap, loops), restrictTo(op.getValueMap(), loops),
       restrictTo(accMap, loops)},
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value v = convertFloat(nb, nloc, a[1], acc);
        return arith::AddFOp::create(
            nb, nloc, arith::MulFOp::create(nb, nloc, a[0], v), a[2]);
      });
  return {newAcc, newMax, newSum};
}

} // namespace

FailureOr<SmallVector<Value>> AttentionOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  MLIRContext *ctx = getContext();
  FloatType acc = getAccumulatorType();
  AttentionDims dims = getDims();
  AffineMap outMap = getOutputMap();
  unsigned outRank = outMap.getNumResults();
  unsigned nPos = *outMap.getResultPosition(getAffineDimExpr(dims.n, ctx));
  SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, getInit());
  SmallVector<OpFoldResult> rowSizes(outSizes);
  rowSizes.erase(rowSizes.begin() + nPos);
  APFloat zero = APFloat::getZero(acc.getFloatSemantics());
  Value acc0 = filled(b, loc, outSizes, acc, zero);
  Value max0, sum0;
  if (Value sinks = getSinks()) {
    // The sink t is the row's first logit: max t, sum exp(t − t) = 1 (0 for
    // t = −inf, no sink; NaN stays NaN), no V row. Row tensors are laid out
    // like the output without n; the sinks map names batch dims, all in it.
    AffineMap rowMap = outMap.dropResult(nPos);
    SmallVector<AffineExpr> sinkExprs;
    for (AffineExpr e : getSinksMap().getResults())
      sinkExprs.push_back(getAffineDimExpr(*rowMap.getResultPosition(e), ctx));
    unsigned rowRank = outRank - 1;
    AffineMap rowId = AffineMap::getMultiDimIdentityMap(rowRank, ctx);
    AffineMap sinkMap = AffineMap::get(rowRank, 0, sinkExprs, ctx);
    SmallVector<utils::IteratorType> rowParallel(rowRank,
                                                 utils::IteratorType::parallel);
    max0 =
        generic(b, loc, sinks, tensor::EmptyOp::create(b, loc, rowSizes, acc),
                {sinkMap, rowId}, rowParallel,
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  return convertFloat(nb, nloc, a[0], acc);
                });
    sum0 = generic(b, loc, max0, tensor::EmptyOp::create(b, loc, rowSizes, acc),
                   {rowId, rowId}, rowParallel,
                   [](OpBuilder &nb, Location nloc, ValueRange a) {
                     return shiftedExp(nb, nloc, a[0], a[0], a[0]);
                   });
  } else {
    max0 = filled(b, loc, rowSizes, acc,
                  APFloat::getInf(acc.getFloatSemantics(), true));
    sum0 = filled(b, loc, rowSizes, acc, zero);
  }

  // The online step's maps: this op's without the sinks'.
  ArrayAttr maps = getIndexingMapsAttr();
  if (getSinks()) {
    SmallVector<Attribute> kept(maps.getValue());
    kept.erase(kept.end() - 2);
    maps = b.getArrayAttr(kept);
  }
  auto online = OnlineAttentionOp::create(
      b, loc, acc0.getType(), max0.getType(), sum0.getType(), getQuery(),
      getKey(), getValue(), getMask(), getQueryPositions(), getQueryOffset(),
      getKeyOffset(), maps, getScaleAttr(), getCausalAttr(), getWindowAttr(),
      getQueryDimAttr(), acc0, max0, sum0);
  IRMapping mapping;
  getModifier().cloneInto(&online.getModifier(), mapping);

  // O = acc / sum in the output type.
  AffineMap id = AffineMap::getMultiDimIdentityMap(outRank, ctx);
  Type outType = getElementTypeOrSelf(getInit().getType());
  Value out = generic(
      b, loc, {online.getAccResult(), online.getSumResult()}, getInit(),
      {id, id.dropResult(nPos), id},
      SmallVector<utils::IteratorType>(outRank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        return convertFloat(
            nb, nloc, arith::DivFOp::create(nb, nloc, a[0], a[1]), outType);
      });
  return SmallVector<Value>{out};
}

bool OnlineAttentionOp::startsFromInitialState() {
  auto zero = [](const APFloat &v) { return v.isPosZero(); };
  return isFilledWith(getMax(),
                      [](const APFloat &v) {
                        return v.isInfinity() && v.isNegative();
                      }) &&
         isFilledWith(getSum(), zero) && isFilledWith(getAcc(), zero);
}

FailureOr<SmallVector<Value>>
OnlineAttentionOp::mergeKeyBlockStates(OpBuilder &b, Location loc,
                                       ValueRange partials) {
  if (partials.size() != 3)
    return failure();
  MLIRContext *ctx = getContext();
  FloatType acc = getAccumulatorType();
  auto accType = dyn_cast<RankedTensorType>(partials[0].getType());
  auto rowType = dyn_cast<RankedTensorType>(partials[1].getType());
  AffineMap accMap = getOutputMap();
  unsigned accRank = accMap.getNumResults();
  if (!accType || !rowType || accType.getRank() != accRank + 1 ||
      rowType.getRank() != accRank || partials[2].getType() != rowType)
    return failure();
  unsigned nPos = *accMap.getResultPosition(getAffineDimExpr(getDims().n, ctx));
  // Loops: the block (d0, a reduction), then the state's dims.
  auto withoutFirst = [](Value v, OpBuilder &b, Location loc) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
    sizes.erase(sizes.begin());
    return sizes;
  };
  auto iterators = [](unsigned rank) {
    SmallVector<utils::IteratorType> its(rank + 1,
                                         utils::IteratorType::parallel);
    its[0] = utils::IteratorType::reduction;
    return its;
  };
  unsigned rowRank = accRank - 1;
  AffineMap rowBlocks = AffineMap::getMultiDimIdentityMap(rowRank + 1, ctx);
  AffineMap row = rowBlocks.dropResult(0);
  APFloat zero = APFloat::getZero(acc.getFloatSemantics());
  SmallVector<OpFoldResult> rowSizes = withoutFirst(partials[1], b, loc);
  Value max = generic(b, loc, partials[1],
                      filled(b, loc, rowSizes, acc,
                             APFloat::getInf(acc.getFloatSemantics(), true)),
                      {rowBlocks, row}, iterators(rowRank), maximum);
  // Σ_b x_b · exp(max_b − m), the blocks in order.
  auto rescaledSum = [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
    Value scaled = arith::MulFOp::create(
        nb, nloc, a[0], shiftedExp(nb, nloc, a[1], a[1], a[2]));
    return arith::AddFOp::create(nb, nloc, scaled, a[3]);
  };
  Value sum = generic(b, loc, {partials[2], partials[1], max},
                      filled(b, loc, rowSizes, acc, zero),
                      {rowBlocks, rowBlocks, row, row}, iterators(rowRank),
                      rescaledSum);
  AffineMap accBlocks = AffineMap::getMultiDimIdentityMap(accRank + 1, ctx);
  AffineMap rowOfAccBlocks = accBlocks.dropResult(nPos + 1);
  Value accOut =
      generic(b, loc, {partials[0], partials[1], max},
              filled(b, loc, withoutFirst(partials[0], b, loc), acc, zero),
              {accBlocks, rowOfAccBlocks, rowOfAccBlocks.dropResult(0),
               accBlocks.dropResult(0)},
              iterators(accRank), rescaledSum);
  return SmallVector<Value>{accOut, max, sum};
}

FailureOr<SmallVector<Value>>
OnlineAttentionOp::decomposeOperation(OpBuilder &b) {
  return OnlineAttentionDecomposer(b, *this).build();
}
