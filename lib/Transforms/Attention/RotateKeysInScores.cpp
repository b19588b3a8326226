//===- RotateKeysInScores.cpp - Rotate keys inside Q·Kᵀ -------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A decode step whose cache holds keys before RoPE rotates every key tile
// inside the key loop (rope-tile-attention fuses the rotation there), writes
// the rotated tile and reads it back in Q·Kᵀ: a store and a load of every key
// element per step that the scores do not need. Here the scores contraction
// reads the un-rotated key instead and rotates it in its payload:
//
//   s[q, j] = Σ_i q0[q, i]·(k0[j, i]·c[j, i] − k1[j, i]·s[j, i])
//           + Σ_i q1[q, i]·(k1[j, i]·c[j, i] + k0[j, i]·s[j, i])
//
// over the halves 0 and 1 of the head dim (the `half` layout pairs channel i
// with i + D/2). The cos/sin table c, s is the rotation of the vector
// (1, 0) (first half 1, second 0) by the same rope.apply with every head dim
// of extent 1: rotating (1, 0) gives (c, s) exactly, whatever the
// frequencies, positions, magnitude or direction, so the angle's meaning
// stays in rope.apply's lowering, computed once per key for all heads. The
// rotated halves are computed as rope-to-vector computes them (a product,
// then one fma), so each rotated key element has the same bits; only the
// order of the dot's additions differs. rope-vectorize-contractions' Dot
// form over a sum of products turns the payload into register tiles that
// rotate each key vector once per reduction step and use it for every query
// row of the tile.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Attention/RotateKeysInScores.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEROTATEKEYSINSCORESPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// The most query rows per key (a KV head's query group times the query
/// tokens) whose scores rotate the keys (RotateKeysInScoresContraction).
constexpr int64_t kMaxQueryRows = 16;

/// Whether `apply` rotates f32 keys in a way the scores can redo: a plain
/// rotation (no norm, quantized output or cache append) of every channel in the
/// `half` layout, with more than one head row per token (with one, the table
/// would be as large as the rotated keys it replaces).
bool rotatesInScores(ApplyOp apply) {
  if (!apply.isPlainRotation() || apply.getLayout() != Layout::half ||
      apply.getRotaryDimOrDefault() != apply.getHeadDim())
    return false;
  // bf16 keys are left to the stored rotation: rotated in the scores (in
  // f32, rounded to bf16, multiplied in vdpbf16ps pairs) a Llama-3 decode
  // step ran 0.85-0.88x as fast (AMD EPYC, L = 4096): the f32 cos/sin rows
  // each head reads are twice the bytes of its bf16 key rows.
  RankedTensorType type = apply.getInputType();
  if (!type.getElementType().isF32() || !apply.getStorageElementType().isF32())
    return false;
  SmallVector<int64_t> tokenDims = apply.getTokenDimsOrDefault();
  int64_t heads = 1;
  for (int64_t d = 0, e = type.getRank() - 1; d < e; ++d) {
    if (llvm::is_contained(tokenDims, d))
      continue;
    if (type.isDynamicDim(d))
      return false;
    heads *= type.getDimSize(d);
  }
  return heads > 1;
}

/// Whether the rotation is read by `reader` once and otherwise only for its
/// sizes (the runtime checks of `checked` read them with tensor.dim).
bool readOnceBy(ApplyOp apply, Operation *reader) {
  int64_t reads = 0;
  for (OpOperand &use : apply->getUses()) {
    if (use.getOwner() == reader)
      ++reads;
    else if (!isa<tensor::DimOp>(use.getOwner()))
      return false;
  }
  return reads == 1;
}

/// The sizes of the rotation read from its input instead (the same), so
/// that the rotation can go.
void readSizesFromInput(PatternRewriter &rewriter, ApplyOp apply) {
  for (OpOperand &use : llvm::make_early_inc_range(apply->getUses()))
    if (auto dim = dyn_cast<tensor::DimOp>(use.getOwner()))
      rewriter.modifyOpInPlace(
          dim, [&] { dim.getSourceMutable().assign(apply.getInput()); });
}

/// One online-softmax step over rotated keys, decomposed into linalg so that
/// its scores contraction is visible to RotateKeysInScoresContraction.
struct DecomposeStepOverRotatedKeys
    : public OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    auto apply = op.getKey().getDefiningOp<ApplyOp>();
    if (!apply || !readOnceBy(apply, op) || !rotatesInScores(apply))
      return rewriter.notifyMatchFailure(op, "keys not rotated by a plain "
                                             "f32 rope.apply of their own");
    FailureOr<SmallVector<Value>> decomposed =
        cast<linalg::AggregatedOpInterface>(op.getOperation())
            .decomposeOperation(rewriter);
    if (failed(decomposed))
      return rewriter.notifyMatchFailure(op, "no linalg form");
    readSizesFromInput(rewriter, apply);
    rewriter.replaceOp(op, *decomposed);
    return success();
  }
};

/// Whether the payload is exactly `out + in0 * in1`: upstream's
/// contraction reader (a multiplication then an addition, unary ops between
/// allowed) with no op beside the two and the yield.
bool isMulAdd(linalg::GenericOp op) {
  return linalg::isaContractionOpInterface(op) &&
         op.getBody()->getOperations().size() == 3;
}

/// Q·Kᵀ over keys rotated by rope.apply -> the same contraction over the
/// un-rotated keys' halves, rotated in the payload by a cos/sin table.
struct RotateKeysInScoresContraction
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !isMulAdd(op))
      return rewriter.notifyMatchFailure(op, "not a mul-add of two tensors");
    // The keys: of the operands rotated here, the one with more tokens (a
    // decode step rotates one query token and a tile of keys); the second
    // operand on a tie, as in Q·Kᵀ.
    ApplyOp apply;
    unsigned keyIndex = 0;
    int64_t mostTokens = 0;
    for (unsigned i = 0; i < 2; ++i) {
      auto candidate = op.getDpsInputOperand(i)->get().getDefiningOp<ApplyOp>();
      if (!candidate || !readOnceBy(candidate, op) ||
          !rotatesInScores(candidate))
        continue;
      // A dynamic count of tokens counts as the most.
      int64_t tokens = 1;
      for (int64_t d : candidate.getTokenDimsOrDefault()) {
        int64_t size = candidate.getInputType().getDimSize(d);
        tokens = ShapedType::isDynamic(size) || tokens == INT64_MAX
                     ? INT64_MAX
                     : tokens * size;
      }
      if (!apply || tokens >= mostTokens) {
        apply = candidate;
        keyIndex = i;
        mostTokens = tokens;
      }
    }
    if (!apply)
      return rewriter.notifyMatchFailure(op, "no operand rotated by a plain "
                                             "f32 rope.apply of its own");
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    if (reductions.size() != 1)
      return rewriter.notifyMatchFailure(op, "not one reduction dim");
    OpOperand *keyOperand = op.getDpsInputOperand(keyIndex);
    OpOperand *queryOperand = op.getDpsInputOperand(1 - keyIndex);
    AffineMap keyMap = op.getMatchingIndexingMap(keyOperand);
    AffineMap queryMap = op.getMatchingIndexingMap(queryOperand);
    AffineExpr reduction = rewriter.getAffineDimExpr(reductions.front());
    auto reducesLast = [&](AffineMap map) {
      return map.isProjectedPermutation() && map.getNumResults() > 0 &&
             map.getResults().back() == reduction;
    };
    int64_t headDim = apply.getHeadDim();
    auto queryType = cast<RankedTensorType>(queryOperand->get().getType());
    if (!reducesLast(keyMap) || !reducesLast(queryMap) ||
        queryType.getShape().back() != headDim ||
        !queryType.getElementType().isF32() ||
        !getElementTypeOrSelf(op.getResult(0).getType()).isF32())
      return rewriter.notifyMatchFailure(op, "the reduction is not both "
                                             "operands' head dim (f32)");

    // Each register row tile rotates every key vector again: measured on a
    // Llama-3 decode step (AMD EPYC, 8 KV heads, L = 4096), 4-16 query rows
    // per KV head ran 1.09-1.22x faster rotated in the scores, 32 rows
    // 0.86x.
    // The rows must be one dim (the tiles iterate any other one around
    // them, rotating the keys once per index: 4 heads × 4 tokens ran 0.81x).
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t rows = 1, rowDims = 0;
    for (AffineExpr e : queryMap.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (keyMap.isFunctionOfDim(d) || d == reductions.front())
        continue;
      if (ShapedType::isDynamic(ranges[d]))
        return rewriter.notifyMatchFailure(op, "a dynamic count of queries");
      rows *= ranges[d];
      rowDims += ranges[d] > 1;
    }
    if (rows > kMaxQueryRows || rowDims > 1)
      return rewriter.notifyMatchFailure(op, "more query rows per key than "
                                             "one register tile rotates for");

    readSizesFromInput(rewriter, apply);
    Location loc = op.getLoc();
    int64_t half = headDim / 2;
    Type f32 = rewriter.getF32Type();
    auto sliceAlongHeadDim = [&](Value source, ArrayRef<OpFoldResult> sizes,
                                 int64_t which) -> Value {
      int64_t rank = sizes.size();
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> halfSizes(sizes);
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      offsets.back() = rewriter.getIndexAttr(which * half);
      halfSizes.back() = rewriter.getIndexAttr(half);
      return tensor::ExtractSliceOp::create(rewriter, loc, source, offsets,
                                            halfSizes, strides);
    };
    auto halfOf = [&](Value v, int64_t which) {
      return sliceAlongHeadDim(v, tensor::getMixedSizes(rewriter, loc, v),
                               which);
    };

    // The table: (1, 0) rotated, shaped like the keys with unit head dims.
    Value key = apply.getInput();
    RankedTensorType keyType = apply.getInputType();
    int64_t rank = keyType.getRank();
    SmallVector<int64_t> tokenDims = apply.getTokenDimsOrDefault();
    SmallVector<OpFoldResult> unitSizes =
        tensor::getMixedSizes(rewriter, loc, key);
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == rank - 1 || llvm::is_contained(tokenDims, d))
        kept.push_back(d);
      else
        unitSizes[d] = rewriter.getIndexAttr(1);
    }
    auto filled = [&](ArrayRef<OpFoldResult> sizes, double value) {
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
      Value scalar = arith::ConstantOp::create(rewriter, loc,
                                               rewriter.getF32FloatAttr(value));
      return linalg::FillOp::create(rewriter, loc, scalar, empty).getResult(0);
    };
    SmallVector<OpFoldResult> halfSizes(unitSizes);
    halfSizes.back() = rewriter.getIndexAttr(half);
    // (1, 0) is the same for every key tile: with static sizes it is filled
    // once per call at the function's entry, not once per tile inside the
    // key loop; a tile of dynamic size fills its own.
    Value unit;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      auto function = op->getParentOfType<FunctionOpInterface>();
      if (function && llvm::all_of(unitSizes, [](OpFoldResult size) {
            return getConstantIntValue(size).has_value();
          }))
        rewriter.setInsertionPointToStart(&function.getFunctionBody().front());
      unit = tensor::InsertSliceOp::create(
          rewriter, loc, filled(halfSizes, 1.0), filled(unitSizes, 0.0),
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)), halfSizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }
    IRMapping mapping;
    mapping.map(apply.getInput(), unit);
    mapping.map(apply.getInit(),
                tensor::EmptyOp::create(rewriter, loc, unitSizes, f32));
    Operation *table = rewriter.clone(*apply, mapping);
    table->getResult(0).setType(unit.getType());

    // cos and sin without the unit head dims (collapsed into a neighbouring
    // token dim, a view; a rank-reducing slice would leave to the
    // canonicalizer which unit dims it drops), indexed as the keys are.
    SmallVector<ReassociationIndices> groups;
    SmallVector<AffineExpr> tableResults;
    ReassociationIndices pending;
    for (int64_t d = 0; d < rank; ++d) {
      pending.push_back(d);
      if (!llvm::is_contained(kept, d))
        continue;
      groups.push_back(pending);
      pending.clear();
      tableResults.push_back(keyMap.getResult(d));
    }
    // Unit dims after the last kept one: none, the head dim is last.
    auto tableHalf = [&](int64_t which) -> Value {
      return tensor::CollapseShapeOp::create(
          rewriter, loc,
          sliceAlongHeadDim(table->getResult(0), unitSizes, which), groups);
    };
    Value cos = tableHalf(0), sin = tableHalf(1);
    AffineMap tableMap = AffineMap::get(keyMap.getNumDims(), 0, tableResults,
                                        rewriter.getContext());

    Value query = queryOperand->get();
    SmallVector<Value> inputs = {halfOf(query, 0),
                                 halfOf(query, 1),
                                 halfOf(key, 0),
                                 halfOf(key, 1),
                                 cos,
                                 sin};
    SmallVector<AffineMap> maps = {
        queryMap,
        queryMap,
        keyMap,
        keyMap,
        tableMap,
        tableMap,
        op.getMatchingIndexingMap(op.getDpsInitOperand(0))};
    auto rotated = linalg::GenericOp::create(
        rewriter, loc, op.getResultTypes(), inputs, op.getDpsInits(), maps,
        op.getIteratorTypesArray(),
        [](OpBuilder &b, Location loc, ValueRange args) {
          Value q0 = args[0], q1 = args[1], k0 = args[2], k1 = args[3],
                c = args[4], s = args[5], acc = args[6];
          // y0 = k0·c − k1·s, y1 = k1·c + k0·s, as rope-to-vector computes
          // them.
          Value y0 =
              math::FmaOp::create(b, loc, k1, arith::NegFOp::create(b, loc, s),
                                  arith::MulFOp::create(b, loc, k0, c));
          Value y1 = math::FmaOp::create(b, loc, k0, s,
                                         arith::MulFOp::create(b, loc, k1, c));
          Value sum = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, q0, y0), acc);
          sum = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, q1, y1), sum);
          linalg::YieldOp::create(b, loc, sum);
        });
    rewriter.replaceOp(op, rotated.getResults());
    return success();
  }
};

struct RopeRotateKeysInScoresPass
    : rope::impl::RopeRotateKeysInScoresPassBase<RopeRotateKeysInScoresPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRotateKeysInScoresPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRotateKeysInScoresPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeStepOverRotatedKeys, RotateKeysInScoresContraction>(
      patterns.getContext());
}
