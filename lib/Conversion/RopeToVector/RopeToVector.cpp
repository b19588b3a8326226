//===- RopeToVector.cpp - rope.apply to vector code -----------------------===//
//
// Part of the rope-mlir project.
//
// The CPU fast path for `rope.apply`. RoPE is memory bound: each element of
// x is read once and written once, and the lowering's job is to add nothing
// on top. The op becomes
//
//   scf.forall (token indices) shared_outs(%out = %init) {
//     c, s = cos/sin of the P/2 frequencies      // once per token, vectors
//     scf.for (head indices) {                    // every other non-head dim
//       y = rotate(x[token, head, :], c, s)       // vector loads/FMAs/stores
//     }
//   }
//
// so cos/sin are computed (or gathered from a cache row) once per (token,
// frequency) and reused from registers across all heads, nothing is
// materialized between them and the rotation, and the token loop is the
// unit of parallelism (scf.forall -> OpenMP in rope-to-llvm-cpu).
//
// Why not linalg's vectorizer: the linalg form (RopeDecompose.cpp) pairs
// channels through an affine partner map (`1 - k` over a size-2 member dim)
// to keep one in-place output, and such maps are not projected permutations,
// which the vectorizer requires. Here the pairing is explicit instead: for
// the `half` layout the two members are the contiguous halves x[0:P/2] and
// x[P/2:P]; for `interleaved` one contiguous load of x[0:P] is combined
// with its pair-swapped shuffle and cos/sin spread over the lanes.
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToVector/RopeToVector.h"
#include "rope/Dialect/Rope/IR/RopeArith.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOVECTORPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Builds the vector form of one `rope.apply`.
class RopeVectorizer {
public:
  RopeVectorizer(OpBuilder &b, ApplyOp op)
      : b(b), op(op), loc(op.getLoc()), inputType(op.getInputType()),
        rank(inputType.getRank()), headDim(op.getHeadDim()),
        rotaryDim(op.getRotaryDimOrDefault()), numPairs(rotaryDim / 2),
        tokenDims(op.getTokenDimsOrDefault()),
        elementType(inputType.getElementType()),
        computeType(getComputeElementType(elementType)) {
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (!llvm::is_contained(tokenDims, d))
        headDims.push_back(d);
  }

  Value build();

private:
  /// Values computed once per call, before the token loop.
  struct Hoisted {
    Value theta;      // vector<P/2 x f64>, computed cos/sin
    Value scalarBase; // i64 offset added to the sequence index
    Value cacheRows;  // i64 number of rows of a gathered cache
    Value axisIsH;    // vector<P/2 x i1>, M-RoPE pairs taking axis h
    Value axisIsW;    // vector<P/2 x i1>, M-RoPE pairs taking axis w
  };

  Hoisted buildHoisted();
  /// The position of the token at `tokenIvs` (i64), or for M-RoPE the f64
  /// vector of per-pair positions.
  Value positionOf(OpBuilder &nb, Location nloc, ValueRange tokenIvs,
                   const Hoisted &hoisted);
  /// (cos, sin) as vector<P/2 x computeType> for the token at `tokenIvs`.
  std::pair<Value, Value> cosSinOf(OpBuilder &nb, Location nloc,
                                   ValueRange tokenIvs, const Hoisted &hoisted);
  /// Rotates the row `rowIvs` (indices into the token slice, without the
  /// channel index) of `source` into `dest`; returns the updated `dest`.
  /// `cos`/`sin` are per pair (half) or spread over the lanes (interleaved).
  Value rotateRow(OpBuilder &nb, Location nloc, Value source, Value dest,
                  ValueRange rowIvs, Value cos, Value sin);
  /// The slice of `tensor` holding one token, rank-reduced by as many
  /// dims as there are token dims.
  RankedTensorType tokenSliceType(Value tensor, ArrayRef<OpFoldResult> sizes);
  void tokenSliceParams(OpBuilder &nb, Location nloc, Value tensor,
                        ValueRange tokenIvs,
                        SmallVectorImpl<OpFoldResult> &offsets,
                        SmallVectorImpl<OpFoldResult> &sizes,
                        SmallVectorImpl<OpFoldResult> &strides);

  VectorType vectorOf(int64_t size, Type element) {
    return VectorType::get({size}, element);
  }
  Value readVector(OpBuilder &nb, Location nloc, Value tensor,
                   ValueRange indices, int64_t size);
  Value writeVector(OpBuilder &nb, Location nloc, Value vector, Value tensor,
                    ValueRange indices);

  OpBuilder &b;
  ApplyOp op;
  Location loc;
  RankedTensorType inputType;
  int64_t rank, headDim, rotaryDim, numPairs;
  SmallVector<int64_t> tokenDims, headDims;
  Type elementType, computeType;
};

} // namespace

Value RopeVectorizer::readVector(OpBuilder &nb, Location nloc, Value tensor,
                                 ValueRange indices, int64_t size) {
  Type element = cast<RankedTensorType>(tensor.getType()).getElementType();
  // Every read is a whole, statically sized channel range of a row: in
  // bounds by construction (the verifier proves P <= D and the cache width).
  Value padding =
      arith::ConstantOp::create(nb, nloc, element, nb.getZeroAttr(element));
  return vector::TransferReadOp::create(nb, nloc, vectorOf(size, element),
                                        tensor, indices, padding,
                                        ArrayRef<bool>{true});
}

Value RopeVectorizer::writeVector(OpBuilder &nb, Location nloc, Value vector,
                                  Value tensor, ValueRange indices) {
  return vector::TransferWriteOp::create(nb, nloc, vector, tensor, indices,
                                         ArrayRef<bool>{true})
      .getResult();
}

RopeVectorizer::Hoisted RopeVectorizer::buildHoisted() {
  Hoisted hoisted;
  if (!op.getCos()) {
    FrequencyAttrInterface freqs = op.getFreqsOrDefault();
    if (freqs.isStatic()) {
      // A static table is a vector constant.
      SmallVector<double> thetas = freqs.getInverseFrequencies(rotaryDim);
      hoisted.theta = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(vectorOf(numPairs, b.getF64Type()),
                                 ArrayRef<double>(thetas)));
    } else {
      // Computed once per call, before the token loop.
      Value table = buildInverseFrequencies(b, loc, op);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      hoisted.theta = readVector(b, loc, table, ValueRange{zero}, numPairs);
    }
  } else if (op.getCosSinSource() == ApplyOp::CosSinSource::GatheredCache) {
    hoisted.cacheRows =
        toI64(b, loc, tensor::DimOp::create(b, loc, op.getCos(), 0));
  }
  if (Value offset = op.getOffset()) {
    auto offsetType = dyn_cast<RankedTensorType>(offset.getType());
    if (!offsetType)
      hoisted.scalarBase = toI64(b, loc, offset);
    else if (offsetType.getRank() == 0)
      hoisted.scalarBase = toI64(
          b, loc, tensor::ExtractOp::create(b, loc, offset, ValueRange{}));
  }
  if (MRopeAttr mrope = op.getMropeAttr()) {
    SmallVector<int64_t> axes = mrope.getPairAxes(numPairs);
    auto maskOf = [&](int64_t axis) {
      SmallVector<bool> mask =
          llvm::map_to_vector(axes, [&](int64_t a) { return a == axis; });
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(vectorOf(numPairs, b.getI1Type()),
                                 ArrayRef<bool>(mask)));
    };
    hoisted.axisIsH = maskOf(1);
    hoisted.axisIsW = maskOf(2);
  }
  return hoisted;
}

Value RopeVectorizer::positionOf(OpBuilder &nb, Location nloc,
                                 ValueRange tokenIvs, const Hoisted &hoisted) {
  if (Value positions = op.getPositions()) {
    if (!op.getMropeAttr())
      return toI64(nb, nloc,
                   tensor::ExtractOp::create(nb, nloc, positions, tokenIvs));
    // M-RoPE: each pair takes its position from axis t, h or w.
    VectorType f64Vector = vectorOf(numPairs, nb.getF64Type());
    SmallVector<Value> perAxis;
    for (int64_t axis = 0; axis < 3; ++axis) {
      SmallVector<Value> indices{
          arith::ConstantIndexOp::create(nb, nloc, axis)};
      llvm::append_range(indices, tokenIvs);
      Value p = toI64(nb, nloc,
                      tensor::ExtractOp::create(nb, nloc, positions, indices));
      Value f = arith::SIToFPOp::create(nb, nloc, nb.getF64Type(), p);
      perAxis.push_back(vector::BroadcastOp::create(nb, nloc, f64Vector, f));
    }
    Value pos = arith::SelectOp::create(nb, nloc, hoisted.axisIsW, perAxis[2],
                                        perAxis[0]);
    return arith::SelectOp::create(nb, nloc, hoisted.axisIsH, perAxis[1], pos);
  }
  Value pos = toI64(nb, nloc, tokenIvs.back());
  Value base = hoisted.scalarBase;
  if (Value offset = op.getOffset(); offset && !base)
    base = toI64(nb, nloc,
                 tensor::ExtractOp::create(nb, nloc, offset,
                                           ValueRange{tokenIvs.front()}));
  return base ? arith::AddIOp::create(nb, nloc, base, pos).getResult() : pos;
}

std::pair<Value, Value> RopeVectorizer::cosSinOf(OpBuilder &nb, Location nloc,
                                                 ValueRange tokenIvs,
                                                 const Hoisted &hoisted) {
  ApplyOp::CosSinSource source = op.getCosSinSource();
  VectorType computeVector = vectorOf(numPairs, computeType);
  if (source == ApplyOp::CosSinSource::Computed) {
    Value pos = positionOf(nb, nloc, tokenIvs, hoisted);
    if (!isa<VectorType>(pos.getType()))
      pos = vector::BroadcastOp::create(
          nb, nloc, vectorOf(numPairs, nb.getF64Type()),
          arith::SIToFPOp::create(nb, nloc, nb.getF64Type(), pos));
    auto [c, s] = buildCosSinOfAngle(nb, nloc, pos, hoisted.theta, computeType);
    return applyMagnitudeAndDirection(nb, nloc, op, c, s);
  }

  Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
  if (source == ApplyOp::CosSinSource::PregatheredCache) {
    SmallVector<Value> indices(tokenIvs);
    indices.push_back(zero);
    Value c = readVector(nb, nloc, op.getCos(), indices, numPairs);
    Value s = readVector(nb, nloc, op.getSin(), indices, numPairs);
    return applyMagnitudeAndDirection(nb, nloc, op,
                                      convertFloat(nb, nloc, c, computeType),
                                      convertFloat(nb, nloc, s, computeType));
  }

  // Gathered cache: one row per token, read in a branch taken once per token
  // (shared by all its heads); an out-of-range position yields NaN.
  Value pos = positionOf(nb, nloc, tokenIvs, hoisted);
  auto [c, s] = buildGatherOrNaN(
      nb, nloc, pos, hoisted.cacheRows, computeVector,
      [&](OpBuilder &rb, Location rloc, Value row) -> std::pair<Value, Value> {
        return {convertFloat(
                    rb, rloc,
                    readVector(rb, rloc, op.getCos(), {row, zero}, numPairs),
                    computeType),
                convertFloat(
                    rb, rloc,
                    readVector(rb, rloc, op.getSin(), {row, zero}, numPairs),
                    computeType)};
      });
  return applyMagnitudeAndDirection(nb, nloc, op, c, s);
}

Value RopeVectorizer::rotateRow(OpBuilder &nb, Location nloc, Value source,
                                Value dest, ValueRange rowIvs, Value cos,
                                Value sin) {
  // In place, the pass-through channels are already where they belong.
  bool inPlace = source == dest;
  auto at = [&](int64_t channel) {
    SmallVector<Value> indices(rowIvs);
    indices.push_back(arith::ConstantIndexOp::create(nb, nloc, channel));
    return indices;
  };
  auto load = [&](int64_t channel, int64_t size) {
    return convertFloat(
        nb, nloc, readVector(nb, nloc, source, at(channel), size), computeType);
  };
  // (x1 + i x2)(c + i s): y1 = x1 c - x2 s, y2 = x2 c + x1 s.
  auto rotate = [&](Value x1, Value x2) {
    Value y1 = arith::SubFOp::create(nb, nloc,
                                     arith::MulFOp::create(nb, nloc, x1, cos),
                                     arith::MulFOp::create(nb, nloc, x2, sin));
    Value y2 = math::FmaOp::create(nb, nloc, x2, cos,
                                   arith::MulFOp::create(nb, nloc, x1, sin));
    return std::pair<Value, Value>(y1, y2);
  };
  auto store = [&](Value y, int64_t channel) {
    dest = writeVector(nb, nloc, convertFloat(nb, nloc, y, elementType), dest,
                       at(channel));
  };

  if (op.getLayout() == Layout::half) {
    auto [y1, y2] = rotate(load(0, numPairs), load(numPairs, numPairs));
    store(y1, 0);
    store(y2, numPairs);
  } else {
    // Interleaved pairs (2j, 2j + 1), with cos/sin already spread over the
    // P lanes as c = [c0, c0, c1, c1, ...] and s = [-s0, s0, -s1, s1, ...]
    // (once per token, see spreadForInterleavedLanes): y = x * c + swap(x) * s,
    // where swap exchanges the lanes of each pair. One in-register permute
    // per row instead of splitting and merging even and odd lanes.
    Value x = load(0, rotaryDim);
    Value y = rotateInterleavedLanes(nb, nloc, x, cos, sin);
    store(y, 0);
  }
  // Pass-through channels [P, D), unless they are already in place.
  if (rotaryDim < headDim && !inPlace) {
    int64_t size = headDim - rotaryDim;
    dest =
        writeVector(nb, nloc, readVector(nb, nloc, source, at(rotaryDim), size),
                    dest, at(rotaryDim));
  }
  return dest;
}

RankedTensorType RopeVectorizer::tokenSliceType(Value tensor,
                                                ArrayRef<OpFoldResult> sizes) {
  // Upstream's canonical rank reduction (the first unit dims go), not "the
  // token dims go": with unit head dims (e.g. a [1, 1, 2, S, D] tile) the
  // two differ, and canonicalization would rewrite the slice to the
  // canonical type and cast between incompatible shapes. The row loops only
  // need the rank: they walk the slice's own dims.
  auto [staticSizes, dynamicSizes] = decomposeMixedValues(sizes);
  (void)dynamicSizes;
  return tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
      headDims.size() + 1, cast<RankedTensorType>(tensor.getType()),
      staticSizes);
}

void RopeVectorizer::tokenSliceParams(OpBuilder &nb, Location nloc,
                                      Value tensor, ValueRange tokenIvs,
                                      SmallVectorImpl<OpFoldResult> &offsets,
                                      SmallVectorImpl<OpFoldResult> &sizes,
                                      SmallVectorImpl<OpFoldResult> &strides) {
  offsets.assign(rank, nb.getIndexAttr(0));
  sizes = tensor::getMixedSizes(nb, nloc, tensor);
  strides.assign(rank, nb.getIndexAttr(1));
  for (auto [d, iv] : llvm::zip_equal(tokenDims, tokenIvs)) {
    offsets[d] = iv;
    sizes[d] = nb.getIndexAttr(1);
  }
}

Value RopeVectorizer::build() {
  Hoisted hoisted = buildHoisted();
  SmallVector<OpFoldResult> tokenSizes =
      llvm::map_to_vector(tokenDims, [&](int64_t d) {
        return tensor::getMixedSize(b, loc, op.getInput(), d);
      });
  // In place (input and destination are one tensor): rows are read from the
  // destination's token slice before being overwritten, so one-shot
  // bufferization keeps the update in place.
  bool inPlace = op.getInput() == op.getInit();

  auto forall = scf::ForallOp::create(b, loc, tokenSizes,
                                      ValueRange{op.getInit()}, std::nullopt);
  OpBuilder nb = OpBuilder::atBlockBegin(forall.getBody());
  SmallVector<Value> tokenIvs(forall.getInductionVars());
  Value out = forall.getRegionIterArgs().front();

  Value cos, sin;
  std::tie(cos, sin) = cosSinOf(nb, loc, tokenIvs, hoisted);
  if (op.getLayout() == Layout::interleaved)
    std::tie(cos, sin) = spreadForInterleavedLanes(nb, loc, cos, sin);

  SmallVector<OpFoldResult> offsets, sizes, strides;
  tokenSliceParams(nb, loc, out, tokenIvs, offsets, sizes, strides);
  Value destSlice = tensor::ExtractSliceOp::create(
      nb, loc, tokenSliceType(out, sizes), out, offsets, sizes, strides);
  Value sourceSlice;
  if (!inPlace) {
    SmallVector<OpFoldResult> inOffsets, inSizes, inStrides;
    tokenSliceParams(nb, loc, op.getInput(), tokenIvs, inOffsets, inSizes,
                     inStrides);
    sourceSlice = tensor::ExtractSliceOp::create(
        nb, loc, tokenSliceType(op.getInput(), inSizes), op.getInput(),
        inOffsets, inSizes, inStrides);
  }

  // One scf.for per head dim around the row rotation.
  std::function<Value(OpBuilder &, unsigned, SmallVector<Value> &, Value)>
      loopNest = [&](OpBuilder &lb, unsigned depth, SmallVector<Value> &rowIvs,
                     Value dest) -> Value {
    if (depth == headDims.size())
      return rotateRow(lb, loc, inPlace ? dest : sourceSlice, dest, rowIvs, cos,
                       sin);
    Value zero = arith::ConstantIndexOp::create(lb, loc, 0);
    Value one = arith::ConstantIndexOp::create(lb, loc, 1);
    Value upper = tensor::DimOp::create(lb, loc, dest, depth);
    auto loop = scf::ForOp::create(
        lb, loc, zero, upper, one, ValueRange{dest},
        [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
          rowIvs.push_back(iv);
          Value next = loopNest(fb, depth + 1, rowIvs, args.front());
          rowIvs.pop_back();
          scf::YieldOp::create(fb, loc, next);
        });
    return loop.getResult(0);
  };
  SmallVector<Value> rowIvs;
  Value rotated = loopNest(nb, 0, rowIvs, destSlice);

  nb.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(nb, loc, rotated, out, offsets, sizes,
                                        strides);
  return forall.getResult(0);
}

namespace {
struct VectorizeRopeApply : OpRewritePattern<ApplyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, RopeVectorizer(rewriter, op).build());
    return success();
  }
};

struct ConvertRopeToVectorPass
    : rope::impl::ConvertRopeToVectorPassBase<ConvertRopeToVectorPass> {
  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalOp<ApplyOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateRopeToVectorConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToVectorConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<VectorizeRopeApply>(patterns.getContext());
}
