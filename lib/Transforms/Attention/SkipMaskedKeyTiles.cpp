//===- SkipMaskedKeyTiles.cpp - Skip key tiles no query of a tile sees ----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Inside the key loop of tiled attention, a key tile that is masked for every
// query of the query tile adds exp(−inf) = 0 to every row and leaves the
// running maximum alone: the online step is the identity on (acc, max, sum)
// and can be skipped. With a causal mask that is the upper triangle (half of
// prefill's work); with per-row positions (decode on a KV cache longer than
// the valid length) it is every tile beyond the row's position. The test is
// computed from the tile's own operands:
//   - causal/window without query_positions: the tile's first key position
//     against its last (first) query position, from query_offset/key_offset;
//   - query_positions: the max (min) of the tile's positions;
//   - a float mask: whether the tile's slice of it is −inf everywhere, or,
//     where every row of the query tile has some key the mask leaves above
//     −2^126, whether the slice is at most −2^126 everywhere (the masks
//     frontends build, torch.finfo(dtype).min, are not −inf).
//
// Why a tile of masks at most −2^126 contributes nothing (the argument
// python/tests/compiler/test_attention_fusion.py checks bitwise): masks are
// compared in the accumulator type (f32 or f64), where the float above −2^126
// is at least 2^102 above it. So a masked score s + mask is below any unmasked
// s' + mask' by about 2^102 (scores of finite models are far below 2^100),
// and exp of that difference is exactly 0. If the running max already comes
// from an unmasked key, the tile adds exact zeros and leaves the max: the
// identity. If it does not yet (the masked tile comes first), the tile's
// contributions are multiplied by the rescale exp(m_masked − m) = 0 when
// the row's first unmasked key arrives, which the row is known to have:
// the same bits as starting from (0, −inf, 0). A row masked everywhere
// would be a softmax over its masked keys, so the threshold is only used
// when every row has an unmasked key (one scan of the query tile's mask
// before the key loop); otherwise only −inf tiles are skipped.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Transforms/Attention/TileAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// `value` reduced with `combine` (a max or a min) over every element, from
/// `init`: innermost dim first, so that the row reductions vectorize.
Value reduceAll(OpBuilder &b, Location loc, Value value, TypedAttr init,
                bool isMax) {
  MLIRContext *ctx = b.getContext();
  while (true) {
    auto type = cast<RankedTensorType>(value.getType());
    unsigned rank = type.getRank();
    if (rank == 0)
      break;
    SmallVector<OpFoldResult> kept = tensor::getMixedSizes(b, loc, value);
    kept.pop_back();
    Value empty = tensor::EmptyOp::create(b, loc, kept, type.getElementType());
    Value initValue = arith::ConstantOp::create(b, loc, init);
    Value acc = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = id.dropResult(rank - 1);
    value = linalg::GenericOp::create(
                b, loc, acc.getType(), value, acc, ArrayRef{id, row}, iterators,
                [&](OpBuilder &b, Location loc, ValueRange args) {
                  Value r;
                  if (isa<FloatType>(args[0].getType()) && isMax)
                    r = arith::MaximumFOp::create(b, loc, args[0], args[1]);
                  else if (isa<FloatType>(args[0].getType()))
                    r = arith::MinimumFOp::create(b, loc, args[0], args[1]);
                  else if (args[0].getType().isInteger(1))
                    // Any true entry (as signed i1, true is -1 < false).
                    r = arith::OrIOp::create(b, loc, args[0], args[1]);
                  else if (isMax)
                    r = arith::MaxSIOp::create(b, loc, args[0], args[1]);
                  else
                    r = arith::MinSIOp::create(b, loc, args[0], args[1]);
                  linalg::YieldOp::create(b, loc, r);
                })
                .getResult(0);
  }
  return tensor::ExtractOp::create(b, loc, value, ValueRange{});
}

/// −2^126 in `type`: a mask at or below it is a masked key.
Value maskedThreshold(OpBuilder &b, Location loc, FloatType type) {
  return arith::ConstantOp::create(b, loc,
                                   b.getFloatAttr(type, -std::ldexp(1.0, 126)));
}

/// Whether every row of the key loop's whole mask has a key above −2^126,
/// computed before `loop` (an i1), or null where the op's mask is not a
/// slice, along the loop's keys, of one loop-invariant mask covering them
/// all from 0. Rows are the mask's dims other than the key dim.
Value everyRowSeesAKey(OpBuilder &b, OnlineAttentionOp op, scf::ForOp loop) {
  Value mask = op.getMask();
  auto type = dyn_cast<FloatType>(getElementTypeOrSelf(mask.getType()));
  auto slice = mask.getDefiningOp<tensor::ExtractSliceOp>();
  if (!type || !slice || op.hasPositionMask() ||
      slice.getSourceType().getRank() != slice.getType().getRank() ||
      !loop.isDefinedOutsideOfLoop(slice.getSource()) ||
      !isConstantIntValue(loop.getLowerBound(), 0))
    return Value();
  AffineMap maskMap = op.getIndexingMapsArray()[3];
  std::optional<unsigned> keyDim = maskMap.getResultPosition(
      getAffineDimExpr(op.getDims().k2, b.getContext()));
  if (!keyDim)
    return Value();
  // The slice starts at the induction variable along the keys, and the
  // source's key extent is the loop's upper bound: the loop visits all of it.
  OpFoldResult offset = slice.getMixedOffsets()[*keyDim];
  Value source = slice.getSource();
  if (offset != OpFoldResult(loop.getInductionVar()))
    return Value();
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  OpFoldResult keys = tensor::getMixedSize(b, loc, source, *keyDim);
  if (!isEqualConstantIntOrValue(keys, loop.getUpperBound()) &&
      !(getConstantIntValue(keys) &&
        getConstantIntValue(loop.getUpperBound()) == getConstantIntValue(keys)))
    return Value();
  // Max over the key dim (moved last), min over the rows.
  auto sourceType = cast<RankedTensorType>(source.getType());
  unsigned rank = sourceType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<unsigned> permutation;
  for (unsigned d = 0; d < rank; ++d)
    if (d != *keyDim)
      permutation.push_back(d);
  permutation.push_back(*keyDim);
  // Loop j is source dim permutation[j]: the source is read through the
  // inverse permutation.
  AffineMap read =
      inversePermutation(AffineMap::getPermutationMap(permutation, ctx));
  SmallVector<OpFoldResult> rowSizes;
  for (unsigned d = 0; d + 1 < rank; ++d)
    rowSizes.push_back(tensor::getMixedSize(b, loc, source, permutation[d]));
  Value empty = tensor::EmptyOp::create(b, loc, rowSizes, type);
  Value negInf = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(type, APFloat::getInf(type.getFloatSemantics(), true)));
  Value init = linalg::FillOp::create(b, loc, negInf, empty).getResult(0);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  AffineMap rowMap =
      AffineMap::getMultiDimIdentityMap(rank, ctx).dropResult(rank - 1);
  Value rowMax =
      linalg::GenericOp::create(
          b, loc, init.getType(), source, init, ArrayRef{read, rowMap},
          iterators,
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(nb, nloc,
                                    ValueRange{arith::MaximumFOp::create(
                                        nb, nloc, args[0], args[1])});
          })
          .getResult(0);
  APFloat posInf = APFloat::getInf(type.getFloatSemantics(), false);
  Value least =
      reduceAll(b, loc, rowMax, b.getFloatAttr(type, posInf), /*isMax=*/false);
  FloatType acc = op.getAccumulatorType();
  least = convertFloat(b, loc, least, acc);
  // NaN rows are not known to see a key (ordered compare).
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, least,
                               maskedThreshold(b, loc, acc));
}

/// Whether some key of `op`'s tile is visible to some query of it; null when
/// the op has no mask to test. `rowsSeeAKey` (an i1, or null): every row of
/// the op's whole mask has a key above −2^126 (everyRowSeesAKey).
Value anyKeyVisible(OpBuilder &b, Location loc, OnlineAttentionOp op,
                    Value rowsSeeAKey) {
  AttentionDims dims = op.getDims();
  Value visible;
  auto conj = [&](Value c) {
    visible = visible ? arith::AndIOp::create(b, loc, visible, c) : c;
  };
  if (op.hasPositionMask()) {
    // Sizes of the tile's query and key dims.
    auto sizeOf = [&](unsigned loop) -> Value {
      // V and Q rather than K: the K tile may be a rotation fused here,
      // which then stays movable into the branch.
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      for (auto [map, value] : {std::pair{maps[2], op.getValue()},
                                {maps[0], op.getQuery()},
                                {maps[1], op.getKey()}}) {
        if (std::optional<unsigned> r =
                map.getResultPosition(getAffineDimExpr(loop, b.getContext())))
          return getValueOrCreateConstantIndexOp(
              b, loc, tensor::getMixedSize(b, loc, value, *r));
      }
      return Value();
    };
    Value keys = sizeOf(dims.k2), queries = sizeOf(dims.m);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value firstKey =
        op.getKeyOffset()
            ? op.getKeyOffset()
            : arith::ConstantIndexOp::create(b, loc, 0).getResult();
    Value lastKey = arith::AddIOp::create(
        b, loc, firstKey, arith::SubIOp::create(b, loc, keys, one));
    Type i64 = b.getI64Type();
    Value firstQuery, lastQuery; // i64
    if (Value positions = op.getQueryPositions()) {
      Type element = getElementTypeOrSelf(positions.getType());
      unsigned bits = element.getIntOrFloatBitWidth();
      auto maxAttr = b.getIntegerAttr(element, APInt::getSignedMinValue(bits));
      auto minAttr = b.getIntegerAttr(element, APInt::getSignedMaxValue(bits));
      lastQuery = reduceAll(b, loc, positions, maxAttr, /*isMax=*/true);
      firstQuery = reduceAll(b, loc, positions, minAttr, /*isMax=*/false);
      if (element != i64) {
        lastQuery = arith::ExtSIOp::create(b, loc, i64, lastQuery);
        firstQuery = arith::ExtSIOp::create(b, loc, i64, firstQuery);
      }
    } else {
      // query_offset defaults to Sk − Sq, which a tile no longer knows;
      // tiling always sets it, so an op without it is the whole op.
      Value offset = op.getQueryOffset();
      if (!offset)
        offset = arith::SubIOp::create(b, loc, keys, queries);
      Value first = offset;
      Value last = arith::AddIOp::create(
          b, loc, offset, arith::SubIOp::create(b, loc, queries, one));
      firstQuery = arith::IndexCastOp::create(b, loc, i64, first);
      lastQuery = arith::IndexCastOp::create(b, loc, i64, last);
    }
    Value firstKey64 = arith::IndexCastOp::create(b, loc, i64, firstKey);
    Value lastKey64 = arith::IndexCastOp::create(b, loc, i64, lastKey);
    // Some key at or before the last query: firstKey <= lastQuery.
    conj(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, firstKey64,
                               lastQuery));
    if (std::optional<int64_t> window = op.getWindow()) {
      // Some key inside the first query's window: lastKey > firstQuery − W.
      Value w = arith::ConstantIntOp::create(b, loc, i64, *window);
      conj(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lastKey64,
                                 arith::SubIOp::create(b, loc, firstQuery, w)));
    }
  }
  if (Value mask = op.getMask()) {
    auto type = dyn_cast<FloatType>(getElementTypeOrSelf(mask.getType()));
    if (type) {
      APFloat negInf = APFloat::getInf(type.getFloatSemantics(), true);
      Value max = reduceAll(b, loc, mask, b.getFloatAttr(type, negInf), true);
      Value negInfValue =
          arith::ConstantOp::create(b, loc, b.getFloatAttr(type, negInf));
      // NaN counts as visible, so that it propagates.
      Value notNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                              max, negInfValue);
      if (!rowsSeeAKey) {
        conj(notNegInf);
      } else {
        FloatType acc = op.getAccumulatorType();
        Value aboveThreshold = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::UGT, convertFloat(b, loc, max, acc),
            maskedThreshold(b, loc, acc));
        conj(arith::SelectOp::create(b, loc, rowsSeeAKey, aboveThreshold,
                                     notNegInf));
      }
    } else {
      // i1: any true entry.
      Value any = reduceAll(b, loc, mask, b.getBoolAttr(false), true);
      conj(any);
    }
  }
  return visible;
}

/// Moves into the taken branch the pure ops of the loop body that only the
/// online step uses (the K tile's rotation fused there, its slices): a
/// skipped tile should not rotate its keys either.
void sinkProducers(RewriterBase &rewriter, Operation *op, scf::IfOp ifOp) {
  Block *body = ifOp->getBlock();
  SmallVector<Operation *> worklist = {op};
  while (!worklist.empty()) {
    Operation *user = worklist.pop_back_val();
    for (Value operand : user->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != body || !isPure(def) ||
          def->getNumRegions() != 0)
        continue;
      bool onlyInside = llvm::all_of(def->getUsers(), [&](Operation *u) {
        return ifOp.getThenRegion().isAncestor(u->getParentRegion());
      });
      if (!onlyInside)
        continue;
      rewriter.moveOpBefore(def, user);
      worklist.push_back(def);
    }
  }
}

/// rope.online_attention in a key loop → scf.if (some key visible) { step }
/// else { the running state unchanged }.
struct SkipMaskedKeyTile : OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa_and_nonnull<scf::ForOp>(op->getParentOp()))
      return rewriter.notifyMatchFailure(op, "not directly in a key loop");
    if (!op.hasPositionMask() && !op.getMask())
      return rewriter.notifyMatchFailure(op, "nothing masks a key tile");
    Location loc = op.getLoc();
    Value rowsSeeAKey;
    if (op.getMask())
      rowsSeeAKey =
          everyRowSeesAKey(rewriter, op, cast<scf::ForOp>(op->getParentOp()));
    rewriter.setInsertionPoint(op);
    Value visible = anyKeyVisible(rewriter, loc, op, rowsSeeAKey);
    if (!visible)
      return failure();
    auto ifOp = scf::IfOp::create(rewriter, loc, op->getResultTypes(), visible,
                                  /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(rewriter, loc,
                         ValueRange{op.getAcc(), op.getMax(), op.getSum()});
    rewriter.replaceAllUsesWith(op->getResults(), ifOp.getResults());
    Block &then = ifOp.getThenRegion().front();
    rewriter.moveOpBefore(op, &then, then.end());
    rewriter.setInsertionPointToEnd(&then);
    scf::YieldOp::create(rewriter, loc, op->getResults());
    sinkProducers(rewriter, op, ifOp);
    return success();
  }
};

} // namespace

void mlir::rope::populateSkipMaskedKeyTilesPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SkipMaskedKeyTile>(patterns.getContext());
}
