//===- VectorizeElementwise.cpp - Row-wise vectors for linalg on buffers --===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Once the contractions are register tiles, what is left scalar in a fused
// attention is the online softmax on each score tile: the mask and scale,
// row maxima, exp(s - max), row sums and the rescaling of the accumulator.
// convert-linalg-to-loops makes them scalar loops with one libm expf call per
// score, which cost more than the contractions themselves.
//
// This tiles each such op on buffers to rows (every loop dim by 1 except the
// innermost), vectorizes the rows with upstream linalg::vectorize, lowers the
// resulting n-D vector ops to 1-D ones, and expands f32 math.exp with
// upstream's polynomial approximation so that vectors of exp stay vectors.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEVECTORIZEELEMENTWISEPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The innermost loop's tile: the whole row when it fits `maxLanes`, else the
/// widest power of two up to min(64, maxLanes) that divides it; 0 when not
/// worth vectorizing (short rows: offsets, single scalars).
int64_t rowTile(int64_t extent, int64_t maxLanes) {
  if (ShapedType::isDynamic(extent) || extent < 4)
    return 0;
  if (extent <= maxLanes)
    return extent;
  for (int64_t tile = 64; tile >= 8; tile /= 2)
    if (tile <= maxLanes && extent % tile == 0)
      return tile;
  return 0;
}

/// Elementwise and row-reduction linalg ops on buffers whose rows (the
/// innermost loop) have a static extent that upstream can vectorize, and
/// are not contractions (those are rope-vectorize-contractions' work). The
/// other loops, tiled by 1, may be dynamic: the online softmax of a query
/// tile whose row count is only known at run time (the last tile of a
/// sequence that is not a multiple of the tile).
bool isRowWiseCandidate(linalg::LinalgOp op) {
  // A loop no operand indexes has no range (getStaticLoopRanges would
  // compose a null map): left to the scalar lowering.
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      linalg::isaContractionOpInterface(op) || !op.getShapesToLoopsMap() ||
      ShapedType::isDynamic(op.getStaticLoopRanges().back()))
    return false;
  // A reduction must be the innermost loop (row max/sum) or of extent 1, so
  // that the tiles below are single rows (a dynamic extent may not be 1).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (iterator == utils::IteratorType::reduction &&
        dim + 1 != ranges.size() && ranges[dim] != 1)
      return false;
  // A vector of i1 is bit-packed in memory (LLVM's <N x i1> store writes
  // N bits), a memref of i1 holds a byte per element: vector transfers of
  // such buffers would write the wrong bytes (masks, comparisons).
  if (llvm::any_of(op->getOperandTypes(), [](Type type) {
        auto memref = dyn_cast<MemRefType>(type);
        return memref && memref.getElementType().isIntOrFloat() &&
               memref.getElementType().getIntOrFloatBitWidth() % 8 != 0;
      }))
    return false;
  return llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return map.isProjectedPermutation(/*allowZeroInResults=*/true);
  });
}

/// The lane-th indices of a 1-D transfer along memref dim `dim`.
SmallVector<Value> laneIndices(OpBuilder &b, Location loc, ValueRange indices,
                               unsigned dim, int64_t lane) {
  SmallVector<Value> at(indices);
  if (lane != 0)
    at[dim] = arith::AddIOp::create(
        b, loc, at[dim], arith::ConstantIndexOp::create(b, loc, lane));
  return at;
}

/// The memref dim a 1-D, in-bounds, unmasked transfer on a buffer runs
/// along, when it is not a contiguous row (a column of a row-major buffer:
/// the transposed weight of a frontend's x·Wᵀ) and has at most `maxLanes`
/// lanes.
template <typename TransferOp>
std::optional<unsigned> stridedTransferDim(TransferOp op, int64_t maxLanes) {
  VectorType type = op.getVectorType();
  auto memref = dyn_cast<MemRefType>(op.getBase().getType());
  if (!memref || type.getRank() != 1 || type.isScalable() || op.getMask() ||
      type.getNumElements() > maxLanes || !op.getInBoundsValues().front())
    return std::nullopt;
  AffineMap map = op.getPermutationMap();
  if (map.getNumResults() != 1 || !isa<AffineDimExpr>(map.getResult(0)))
    return std::nullopt;
  unsigned dim = cast<AffineDimExpr>(map.getResult(0)).getPosition();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (dim + 1 == static_cast<unsigned>(memref.getRank()) &&
      succeeded(memref.getStridesAndOffset(strides, offset)) &&
      strides.back() == 1)
    return std::nullopt; // contiguous: a vector.load/store
  return dim;
}

/// A strided 1-D transfer read as one scalar load per lane. Left to
/// convert-vector-to-scf it becomes a loop inserting one lane per iteration
/// at a dynamic position, which LLVM compiles through the stack unless it
/// fully unrolls that loop (and every loop around it, at a large cost in
/// compile time).
struct UnrollStridedTransferRead : OpRewritePattern<vector::TransferReadOp> {
  UnrollStridedTransferRead(MLIRContext *context, int64_t maxLanes)
      : OpRewritePattern(context), maxLanes(maxLanes) {}

  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<unsigned> dim = stridedTransferDim(op, maxLanes);
    if (!dim)
      return rewriter.notifyMatchFailure(op, "not a short strided 1-D read");
    Location loc = op.getLoc();
    SmallVector<Value> lanes;
    for (int64_t lane = 0, e = op.getVectorType().getNumElements(); lane < e;
         ++lane)
      lanes.push_back(memref::LoadOp::create(
          rewriter, loc, op.getBase(),
          laneIndices(rewriter, loc, op.getIndices(), *dim, lane)));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, op.getVectorType(),
                                                        lanes);
    return success();
  }

  int64_t maxLanes;
};

/// A strided 1-D transfer write as one scalar store per lane (see above).
struct UnrollStridedTransferWrite : OpRewritePattern<vector::TransferWriteOp> {
  UnrollStridedTransferWrite(MLIRContext *context, int64_t maxLanes)
      : OpRewritePattern(context), maxLanes(maxLanes) {}

  LogicalResult matchAndRewrite(vector::TransferWriteOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<unsigned> dim = stridedTransferDim(op, maxLanes);
    if (!dim)
      return rewriter.notifyMatchFailure(op, "not a short strided 1-D write");
    Location loc = op.getLoc();
    for (int64_t lane = 0, e = op.getVectorType().getNumElements(); lane < e;
         ++lane) {
      Value element =
          vector::ExtractOp::create(rewriter, loc, op.getVector(), lane);
      memref::StoreOp::create(
          rewriter, loc, element, op.getBase(),
          laneIndices(rewriter, loc, op.getIndices(), *dim, lane));
    }
    rewriter.eraseOp(op);
    return success();
  }

  int64_t maxLanes;
};

/// A float vector.reduction (a row's sum, max or min) as a tree of
/// elementwise ops on halves of the vector. LLVM lowers an ordered fadd
/// reduction to a serial chain of scalar adds (a latency of one add per
/// lane) and fmaximum/fminimum reductions, whose NaN and signed-zero rules
/// no x86 horizontal instruction has, to scalar compare-and-select per
/// lane; halving keeps every level a vector op with the same NaN rules.
/// For sums this is pairwise summation: another rounding than the serial
/// order, with an error bound of log2(n) instead of n roundings.
struct ReductionAsTree : OpRewritePattern<vector::ReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ReductionOp op,
                                PatternRewriter &rewriter) const override {
    using Kind = vector::CombiningKind;
    VectorType type = op.getSourceVectorType();
    Kind kind = op.getKind();
    if (!isa<FloatType>(type.getElementType()) || type.getRank() != 1 ||
        type.isScalable() || !llvm::isPowerOf2_64(type.getNumElements()) ||
        type.getNumElements() < 2 || op.isMasked() ||
        !llvm::is_contained({Kind::ADD, Kind::MUL, Kind::MAXIMUMF,
                             Kind::MINIMUMF, Kind::MAXNUMF, Kind::MINNUMF},
                            kind))
      return rewriter.notifyMatchFailure(op, "not a float reduction of a "
                                             "power-of-two vector");
    Location loc = op.getLoc();
    Value v = op.getVector();
    for (int64_t n = type.getNumElements(); n > 1; n /= 2) {
      SmallVector<int64_t> low = llvm::to_vector(llvm::seq<int64_t>(0, n / 2));
      SmallVector<int64_t> high = llvm::to_vector(llvm::seq<int64_t>(n / 2, n));
      Value lo = vector::ShuffleOp::create(rewriter, loc, v, v, low);
      Value hi = vector::ShuffleOp::create(rewriter, loc, v, v, high);
      v = vector::makeArithReduction(rewriter, loc, kind, lo, hi,
                                     op.getFastmathAttr());
    }
    Value result = vector::ExtractOp::create(rewriter, loc, v, 0);
    if (Value acc = op.getAcc())
      result = vector::makeArithReduction(rewriter, loc, kind, result, acc,
                                          op.getFastmathAttr());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct RopeVectorizeElementwisePass
    : rope::impl::RopeVectorizeElementwisePassBase<
          RopeVectorizeElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxLanes < 4) {
      getOperation()->emitError("rope-vectorize-elementwise: max-lanes must "
                                "be at least 4");
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);

    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isRowWiseCandidate(op) &&
          rowTile(op.getStaticLoopRanges().back(), maxLanes) != 0)
        candidates.push_back(op);
    });

    for (linalg::LinalgOp op : candidates) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      // Every dim by 1 but the innermost (dynamic ones too); a tile size of
      // 0 is the whole dim (no loop), also for the extent-1 dims.
      SmallVector<int64_t> sizes;
      for (int64_t range : ArrayRef(ranges).drop_back())
        sizes.push_back(range == 1 ? 0 : 1);
      int64_t row = rowTile(ranges.back(), maxLanes);
      sizes.push_back(row == ranges.back() ? 0 : row);

      linalg::LinalgOp rowOp = op;
      if (llvm::any_of(sizes, [](int64_t s) { return s != 0; })) {
        scf::SCFTilingOptions options;
        options.setTileSizes(getAsIndexOpFoldResult(context, sizes))
            .setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
        rewriter.setInsertionPoint(op);
        FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), options);
        if (failed(tiled) || tiled->tiledOps.size() != 1)
          continue;
        rewriter.eraseOp(op);
        rowOp = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.front());
        if (!rowOp)
          continue;
      }
      if (failed(linalg::vectorizeOpPrecondition(rowOp)))
        continue;
      rewriter.setInsertionPoint(rowOp);
      if (succeeded(linalg::vectorize(rewriter, rowOp)))
        rewriter.eraseOp(rowOp);
    }

    // The rows are n-D vectors with leading unit dims: make them 1-D, and
    // row reductions vector.reduction. Kept apart from the transfer
    // lowering below: mixed in one greedy run, leading-unit-dim removal and
    // permutation-map lowering rewrite each other's results without end.
    {
      RewritePatternSet patterns(context);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
      vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
      vector::ShapeCastOp::getCanonicalizationPatterns(patterns, context);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(context);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // What is left of the transfers reads or writes a column, lane by lane.
    {
      RewritePatternSet patterns(context);
      patterns.add<UnrollStridedTransferRead, UnrollStridedTransferWrite>(
          context, maxLanes);
      patterns.add<ReductionAsTree>(context);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // A vector of math.exp would become one libm call per lane.
    {
      RewritePatternSet patterns(context);
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
        return name == math::ExpOp::getOperationName();
      });
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
  }
};
} // namespace
