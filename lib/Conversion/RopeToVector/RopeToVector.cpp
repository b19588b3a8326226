//===- RopeToVector.cpp - rope.apply to vector code -----------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU fast path for `rope.apply`: a token-parallel scf.forall computing
// cos/sin once per token and rotating every head's rows in chunks (tiles of
// T tokens where a head dim precedes the last token dim); sibling Q/K,
// QK-norm, quantized stores and the KV-cache append ride on the same rows.
// The design: docs/DESIGN.md, "The lowering, as RopeToVector.cpp builds it".
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToVector/RopeToVector.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/CacheSlots.h"
#include "rope/Dialect/Rope/Utils/EmptyGuard.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <algorithm>
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOVECTORPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

/// Whether a head dim (of static size other than 1) precedes the last
/// token dim (of static size other than 1) of `op`'s input, so that one
/// token's rows are not contiguous.
static bool tokenRowsApart(ApplyOp op) {
  RankedTensorType inputType = op.getInputType();
  SmallVector<int64_t> tokenDims = op.getTokenDimsOrDefault();
  // With a last token dim of static size 1 (decode, [B, H, 1, D]) a token's
  // rows are contiguous whatever the order.
  if (inputType.getDimSize(tokenDims.back()) == 1)
    return false;
  for (int64_t d = 0; d < tokenDims.back(); ++d)
    if (!llvm::is_contained(tokenDims, d) && inputType.getDimSize(d) != 1)
      return true;
  return false;
}

namespace {

/// Builds the vector form of one `rope.apply`, or of a group of sibling
/// `rope.apply` (see areCosSinSiblings) as one token loop: cos/sin once per
/// token, then the heads of each member in turn.
class RopeVectorizer {
public:
  RopeVectorizer(OpBuilder &b, ArrayRef<ApplyOp> group,
                 const RopeToVectorOptions &options)
      : b(b), group(group), op(group.front()), loc(op.getLoc()),
        vectorBytes(options.vectorBytes), tileHeads(options.tileHeads),
        requestedTileTokens(options.tileTokens), threads(options.threads),
        inputType(op.getInputType()), rank(inputType.getRank()),
        headDim(op.getHeadDim()), rotaryDim(op.getRotaryDimOrDefault()),
        numPairs(rotaryDim / 2), tokenDims(op.getTokenDimsOrDefault()),
        elementType(inputType.getElementType()),
        computeType(getComputeElementType(elementType)), core(op) {
    // The pattern checked that the method applies (angleMethodFor).
    FailureOr<AngleMethod> method = angleMethodFor(op, options.angle);
    angle = succeeded(method) ? *method : AngleMethod::F64;
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (!llvm::is_contained(tokenDims, d))
        headDims.push_back(d);
    wordLanes = computeType.isF32() && llvm::all_of(group, [](ApplyOp m) {
                  return m.getInputType().getElementType().isBF16() &&
                         m.getStorageElementType().isBF16() &&
                         !m.getNormWeight() && !m.getQuantScale();
                });
    quantizedStore = llvm::any_of(
        group, [](ApplyOp m) { return static_cast<bool>(m.getQuantScale()); });
  }

  /// One result per member of the group.
  SmallVector<Value> build();

private:
  /// Values computed once per call, before the token loop.
  struct Hoisted {
    Value theta; // vector<P/2 x f64>, computed cos/sin
  };
  /// A member's fused neighbours, read once per call.
  struct Neighbours {
    Value weight;     // vector<D x computeType>: the norm weight, or null
    Value scale;      // f32: a per-tensor quant scale, or null
    Value headScales; // tensor<H x f32>: a per-head quant scale, or null
    Type storage;     // the destination's element type
  };
  /// What rotateRow does around the rotation of one row.
  struct RowNeighbours {
    Value weight; // as in Neighbours
    Value scale;  // f32: the row's quant scale, or null
    Type storage;
    /// The row's RMSNorm factor when its block computed it (normFactors),
    /// or null: rotateRow computes it (rowNormFactor).
    Value factor;
  };

  Hoisted buildHoisted();
  /// Reads `member`'s norm weight and per-tensor scale (at `b`, before the
  /// token loop).
  Neighbours buildNeighbours(ApplyOp member);
  /// The neighbours of one row of a member, `headIndex` its index along the
  /// op's single head dim (read only for a per-head scale).
  RowNeighbours rowNeighbours(OpBuilder &nb, Location nloc,
                              const Neighbours &neighbours, Value headIndex);
  /// Whether to build the tiled form: tokenRowsApart, and no member appends
  /// to a cache (slots: per token).
  bool headsOuterToTokens();
  /// Tokens per tile of buildTiled (the longest; see tileStep).
  int64_t tileTokens();
  /// The step of buildTiled's loop over a sequence's tokens: `tile`, or
  /// with threads (`threads` != 1) shorter tiles where the call's tokens
  /// (`tokenSizes`, the token dims' sizes) would not give every thread one.
  OpFoldResult tileStep(int64_t tile, ArrayRef<OpFoldResult> tokenSizes);
  /// The shortest tile tileStep makes for threads.
  static constexpr int64_t kMinThreadedTileTokens = 32;
  /// One forall iteration per token, cos/sin in registers across its heads.
  SmallVector<Value> buildPerToken(const Hoisted &hoisted);
  /// One forall iteration per tile of the last token dim, cos/sin of the
  /// tile's tokens in a stack buffer, heads outer and tokens inner.
  SmallVector<Value> buildTiled(const Hoisted &hoisted);
  /// Lanes [lane, lane + size) of a row's cos and sin: per pair for half
  /// (in wordLaneOrder with word lanes), spread over the lanes for
  /// interleaved (per pair with word lanes).
  using CosSinChunk = llvm::function_ref<std::pair<Value, Value>(
      OpBuilder &, Location, int64_t lane, int64_t size)>;
  /// (cos, sin) as vector<P/2 x computeType> for the token at `tokenIvs`.
  std::pair<Value, Value> cosSinOf(OpBuilder &nb, Location nloc,
                                   ValueRange tokenIvs, const Hoisted &hoisted);
  /// Rotates the row `rowIvs` (indices into the slice, without the channel
  /// index) of `source` into `dest`; returns the updated `dest`. In chunks
  /// of `chunk` lanes (chunkLanes) in ascending address
  /// order, each chunk's cos/sin from `cosSinChunk`: registers in the
  /// per-token form, the tile's table in the tiled one. Whole-row vectors
  /// (vector<64xf32> for D = 128) are split by LLVM into registers and
  /// scheduled in descending address order within the row, which defeats
  /// the hardware prefetcher: slower in both layouts, as much as a C loop
  /// walking its rows backwards (docs/PERFORMANCE.md, "Numbers from code
  /// comments").
  /// `neighbours`: QK-norm before the rotation, the stored value after it.
  Value rotateRow(OpBuilder &nb, Location nloc, Value source, Value dest,
                  ValueRange rowIvs, CosSinChunk cosSinChunk, int64_t chunk,
                  const RowNeighbours &neighbours);
  /// Half pairs in word lanes: `cos` and `sin` (vector<P/2>, one lane per
  /// pair) with each rotateRow chunk's even pairs first and its odd pairs
  /// after them (a chunk of odd size as it is): the order in which that
  /// chunk's words split (wordLaneOrder).
  std::pair<Value, Value> orderForWordLanes(OpBuilder &nb, Location nloc,
                                            Value cos, Value sin);
  SmallVector<int64_t> wordLaneOrder();
  /// The even and odd lanes of a bf16 vector of an even number of lanes,
  /// each widened to f32 (rope-expand-bf16: a shift and a mask of its
  /// words).
  std::pair<Value, Value> splitWordLanes(OpBuilder &nb, Location nloc,
                                         Value words);
  /// The inverse: f32 `even` and `odd` rounded to bf16 and interleaved
  /// (rope-expand-bf16: one or of the two roundings' words).
  Value joinWordLanes(OpBuilder &nb, Location nloc, Value even, Value odd);
  /// The sum of x^2 (compute type) over a row's D channels read by `load`
  /// (channel, lanes), in chunks of `chunk` lanes accumulated into one
  /// vector and reduced once.
  Value sumOfSquares(OpBuilder &nb, Location nloc,
                     llvm::function_ref<Value(int64_t, int64_t)> load,
                     int64_t chunk);
  /// The RMSNorm factor (compute type) of the row `rowIvs` of `source`.
  Value rowNormFactor(OpBuilder &nb, Location nloc, Value source,
                      ValueRange rowIvs);
  /// Rows per block of normFactors, or 0 where rows are normalized one by
  /// one: min(chunkLanes(), 4) when some member's rows convert (input or
  /// destination not of the compute type) and the chunks are a power of
  /// two that divides D.
  int64_t normBlockRows();
  /// The RMSNorm factors of `rows` consecutive rows of `source` along its
  /// last row dim, from `first` (`rowIvs` the indices before that dim): a
  /// vector<chunkLanes()> whose lane r is row first + r's factor. Each
  /// row's squares are summed chunk by chunk into one vector, and the rows'
  /// vectors are reduced together: each merge of two vectors is two
  /// shuffles and an add, about one merge per row, where a row's own
  /// horizontal reduction is a chain of log2(lanes) of them; one vector
  /// rsqrt (a sqrt and a divide) serves the block (faster than each row
  /// reduced and divided on its own: docs/PERFORMANCE.md, "Numbers from code
  /// comments").
  Value normFactors(OpBuilder &nb, Location nloc, Value source,
                    ValueRange rowIvs, Value first, int64_t rows);
  /// The sum of `terms` (at least one), added in pairs level by level.
  Value sumPairwise(OpBuilder &nb, Location nloc, ArrayRef<Value> terms);
  /// Lanes per chunk of rotateRow: `vectorBytes` of x's element type, or
  /// (0) one 64-byte cache line of the compute type. rope-to-llvm-cpu asks
  /// for 32 bytes: with 64-byte vectors of f32 (zmm on AVX-512) every
  /// access to a row not 64-byte aligned splits two cache lines, which made
  /// a large f32 rope.apply on Intel Sapphire Rapids slower on numpy's
  /// arrays (16 bytes into a page) than on aligned ones. In word lanes a
  /// chunk is at least 64 bytes of bf16 (halves of 16 f32 lanes), faster
  /// than 32-byte chunks and than 16-lane chunks without word lanes. A
  /// quantized store (one byte per lane) takes at least 64 bytes of the
  /// compute type, 16 f32 lanes: the fp8/int8 rounding is many vector ops
  /// per lane, and 8-lane chunks narrow to 8 bytes each (a vpmovdb and
  /// shuffles to merge them). The numbers: docs/PERFORMANCE.md, "Numbers
  /// from code comments".
  int64_t chunkLanes() {
    int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
    int64_t computeBytes = computeType.getIntOrFloatBitWidth() / 8;
    int64_t lanes = vectorBytes > 0
                        ? std::max<int64_t>(vectorBytes / elementBytes, 2)
                        : std::max<int64_t>(64 / computeBytes, 2);
    if (wordLanes)
      lanes = std::max<int64_t>(lanes, 64 / elementBytes);
    if (quantizedStore)
      lanes = std::max<int64_t>(lanes, 64 / computeBytes);
    return lanes;
  }
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
  Value readVector(OpBuilder &nb, Location nloc, Value source,
                   ValueRange indices, int64_t size);
  Value writeVector(OpBuilder &nb, Location nloc, Value vector, Value tensor,
                    ValueRange indices);

  OpBuilder &b;
  ArrayRef<ApplyOp> group;
  /// The first member: every member has its attributes, its operands other
  /// than input and init, its token sizes and its head dim.
  ApplyOp op;
  Location loc;
  int64_t vectorBytes;         // see chunkLanes
  int64_t tileHeads;           // see buildTiled
  int64_t requestedTileTokens; // see tileTokens (0: automatic)
  int64_t threads;             // see tileStep
  RankedTensorType inputType;
  int64_t rank, headDim, rotaryDim, numPairs;
  SmallVector<int64_t> tokenDims, headDims;
  Type elementType, computeType;
  RotationCore core;
  AngleMethod angle;
  TensorOperandReader reader;
  /// Per member of the group, in order (build).
  SmallVector<Neighbours> neighbours;
  /// bf16 rows rotated in word lanes: each chunk of 2N bf16 lanes is split
  /// into its even and odd lanes (N f32 each), rotated, and joined again.
  /// rope-expand-bf16 makes the split a shift and a mask of the chunk's
  /// 32-bit words and the join one or of the two roundings, where widening
  /// and narrowing N lanes at a time takes a vpmovzxwd and a vpmovdw per N
  /// lanes (one shuffle port on x86: the bf16 kernel's bottleneck). Pairs
  /// then sit in the same lane of the two halves: interleaved pairs (2j,
  /// 2j + 1) become the two halves themselves (no lane swap, cos/sin not
  /// spread); half pairs (j, P/2 + j) keep their chunk structure, with
  /// cos/sin in the order of the split (orderForWordLanes). Every member
  /// bf16 in and out, with no QK-norm (its weights would need the order
  /// too) and no quantized store.
  bool wordLanes = false;
  /// Some member stores quantized values (fp8 or int8); see chunkLanes.
  bool quantizedStore = false;
};

} // namespace

/// One token's write into a KV cache at its slot (`rope.apply`'s `slots`,
/// `rope.cache_write`), inside the token loop whose shared output `out`
/// holds `cache`: the slot `slots[tokenIvs]` is placed by buildCacheSlot
/// (the one slot rule), and the cache's slice at its coordinates has size
/// `n` = valid ? 1 : 0 along the last token dim (1 along the others), so an
/// invalid slot's parallel_insert_slice inserts nothing at all (not even
/// slot 0's own rows back: no conflict with the token that owns slot 0).
/// `scf.if valid` { the slot's rows (rank-reduced as the token slices are)
/// written by `writeRows`, inserted back } else { the slice unchanged }.
/// Sets the parallel_insert_slice's parameters; returns the value it
/// inserts. On buffers every step is a subview of the cache: written in
/// place.
static Value
buildSlotWrite(OpBuilder &nb, Location loc, Value cache, Value out, Value slots,
               ValueRange tokenIvs, ArrayRef<int64_t> tokenDims,
               SmallVectorImpl<OpFoldResult> &offsets,
               SmallVectorImpl<OpFoldResult> &sizes,
               SmallVectorImpl<OpFoldResult> &strides,
               llvm::function_ref<Value(OpBuilder &, Value)> writeRows) {
  int64_t rank = cast<RankedTensorType>(out.getType()).getRank();
  Value slot = tensor::ExtractOp::create(nb, loc, slots, tokenIvs);
  SmallVector<Value> cacheSizes =
      llvm::map_to_vector(tokenDims, [&](int64_t d) {
        return getValueOrCreateConstantIndexOp(
            nb, loc, tensor::getMixedSize(nb, loc, cache, d));
      });
  CacheSlot place = buildCacheSlot(nb, loc, slot, cacheSizes);
  Value count = arith::SelectOp::create(
      nb, loc, place.valid, arith::ConstantIndexOp::create(nb, loc, 1),
      arith::ConstantIndexOp::create(nb, loc, 0));
  offsets.assign(rank, nb.getIndexAttr(0));
  sizes = tensor::getMixedSizes(nb, loc, out);
  strides.assign(rank, nb.getIndexAttr(1));
  for (auto [d, index] : llvm::zip_equal(tokenDims, place.indices)) {
    offsets[d] = index;
    sizes[d] = nb.getIndexAttr(1);
  }
  sizes[tokenDims.back()] = count;
  Value tile =
      tensor::ExtractSliceOp::create(nb, loc, out, offsets, sizes, strides);
  auto branch = scf::IfOp::create(nb, loc, TypeRange{tile.getType()},
                                  place.valid, /*withElseRegion=*/true);
  OpBuilder tb = OpBuilder::atBlockBegin(branch.thenBlock());
  SmallVector<OpFoldResult> rowOffsets(rank, tb.getIndexAttr(0));
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(tb, loc, tile);
  SmallVector<OpFoldResult> rowStrides(rank, tb.getIndexAttr(1));
  for (int64_t d : tokenDims)
    rowSizes[d] = tb.getIndexAttr(1);
  // The canonical rank reduction, as tokenSliceType.
  auto [staticSizes, dynamicSizes] = decomposeMixedValues(rowSizes);
  (void)dynamicSizes;
  RankedTensorType rowType =
      tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
          rank - static_cast<int64_t>(tokenDims.size()),
          cast<RankedTensorType>(tile.getType()), staticSizes);
  Value rows = tensor::ExtractSliceOp::create(tb, loc, rowType, tile,
                                              rowOffsets, rowSizes, rowStrides);
  Value written = writeRows(tb, rows);
  scf::YieldOp::create(tb, loc,
                       tensor::InsertSliceOp::create(tb, loc, written, tile,
                                                     rowOffsets, rowSizes,
                                                     rowStrides)
                           .getResult());
  OpBuilder eb = OpBuilder::atBlockBegin(branch.elseBlock());
  scf::YieldOp::create(eb, loc, tile);
  return branch.getResult(0);
}

Value RopeVectorizer::readVector(OpBuilder &nb, Location nloc, Value source,
                                 ValueRange indices, int64_t size) {
  Type element = cast<ShapedType>(source.getType()).getElementType();
  // Every read is a whole, statically sized channel range of a row: in
  // bounds by construction (the verifier proves P <= D and the cache width).
  Value padding =
      arith::ConstantOp::create(nb, nloc, element, nb.getZeroAttr(element));
  return vector::TransferReadOp::create(nb, nloc, vectorOf(size, element),
                                        source, indices, padding,
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
  core.buildPerCall(b, loc, reader);
  if (!op.getCos()) {
    // theta of all P/2 pairs, once per call: the scheme's per-element form
    // on one vector (a constant for static schemes; for dynamic ones, code
    // on the call's runtime length).
    FrequencyAttrInterface freqs = op.getFreqsOrDefault();
    Value state = buildFrequencyStateOf(b, loc, op, core, reader, angle);
    // The table as one constant vector: the f64 thetas, or with
    // angle=turns (checked in the pattern: the scheme has phase steps)
    // their i64 phase steps.
    auto read = frequencyTableReader(angle, [&](OpBuilder &tb, Location tloc,
                                                DenseElementsAttr table, Value,
                                                int64_t lanes) {
      return arith::ConstantOp::create(
                 tb, tloc,
                 table.reshape(vectorOf(lanes, table.getElementType())))
          .getResult();
    });
    hoisted.theta = buildFrequencyAt(b, loc, freqs, angle, state,
                                     arith::ConstantIndexOp::create(b, loc, 0),
                                     numPairs, rotaryDim, read);
  }
  return hoisted;
}

std::pair<Value, Value> RopeVectorizer::cosSinOf(OpBuilder &nb, Location nloc,
                                                 ValueRange tokenIvs,
                                                 const Hoisted &hoisted) {
  return core.cosSin(nb, nloc, reader, tokenIvs,
                     arith::ConstantIndexOp::create(nb, nloc, 0), numPairs,
                     hoisted.theta);
}

RopeVectorizer::Neighbours RopeVectorizer::buildNeighbours(ApplyOp member) {
  Neighbours result;
  result.storage = member.getStorageElementType();
  if (Value weight = member.getNormWeight())
    result.weight = convertFloat(
        b, loc,
        readVector(b, loc, weight,
                   ValueRange{arith::ConstantIndexOp::create(b, loc, 0)},
                   headDim),
        computeType);
  if (Value scale = member.getQuantScale()) {
    if (cast<RankedTensorType>(scale.getType()).getRank() == 0)
      result.scale = tensor::ExtractOp::create(b, loc, scale, ValueRange{});
    else
      result.headScales = scale;
  }
  return result;
}

RopeVectorizer::RowNeighbours
RopeVectorizer::rowNeighbours(OpBuilder &nb, Location nloc,
                              const Neighbours &neighbours, Value headIndex) {
  RowNeighbours row{neighbours.weight, neighbours.scale, neighbours.storage,
                    Value()};
  if (neighbours.headScales)
    row.scale = tensor::ExtractOp::create(nb, nloc, neighbours.headScales,
                                          ValueRange{headIndex});
  return row;
}

Value RopeVectorizer::sumOfSquares(
    OpBuilder &nb, Location nloc,
    llvm::function_ref<Value(int64_t, int64_t)> load, int64_t chunk) {
  // Whole chunks added in pairs into one vector (sumPairwise: the row's
  // factor, and so its rotation, waits on log2 of the chunk count dependent
  // adds rather than one per chunk), a shorter last chunk reduced on its
  // own. The reduction may reassociate too (a shuffle tree rather than
  // chunk - 1 dependent adds): the order of a sum is not part of RMSNorm's
  // meaning, and the float64 reference bounds the difference. -0.0 starts
  // the reductions: x + -0.0 is x, so the add folds away.
  Value negativeZero = buildFloatConstant(nb, nloc, computeType, -0.0);
  auto reduce = [&](Value vector) -> Value {
    return vector::ReductionOp::create(nb, nloc, vector::CombiningKind::ADD,
                                       vector, negativeZero,
                                       arith::FastMathFlags::reassoc);
  };
  SmallVector<Value> wholes;
  Value tail;
  for (int64_t k = 0; k < headDim; k += chunk) {
    int64_t size = std::min(chunk, headDim - k);
    Value x = load(k, size);
    Value squares = arith::MulFOp::create(nb, nloc, x, x);
    if (size == chunk)
      wholes.push_back(squares);
    else
      tail = reduce(squares);
  }
  if (wholes.empty())
    return tail;
  Value sum = reduce(sumPairwise(nb, nloc, wholes));
  return tail ? arith::AddFOp::create(nb, nloc, sum, tail).getResult() : sum;
}

Value RopeVectorizer::rowNormFactor(OpBuilder &nb, Location nloc, Value source,
                                    ValueRange rowIvs) {
  auto load = [&](int64_t channel, int64_t size) {
    SmallVector<Value> indices(rowIvs);
    indices.push_back(arith::ConstantIndexOp::create(nb, nloc, channel));
    return convertFloat(nb, nloc, readVector(nb, nloc, source, indices, size),
                        computeType);
  };
  return buildRmsNormFactor(nb, nloc,
                            sumOfSquares(nb, nloc, load, chunkLanes()), headDim,
                            op.getNormEpsilonAttr().getValueAsDouble());
}

int64_t RopeVectorizer::normBlockRows() {
  // Rows read and stored in the compute type (f32 or f64 data kept as
  // such) stay row by row: LLVM keeps such a row's chunks in registers from
  // the sum to the rotation, and blocks, which read each row twice, were
  // slower. Rows that convert (bf16/f16 data, quantized stores) do several
  // more ops per lane, and their rotation waited on the row's chain: blocks
  // are faster there (docs/PERFORMANCE.md, "Numbers from code comments").
  bool converts = llvm::any_of(group, [&](ApplyOp m) {
    return m.getInputType().getElementType() != computeType ||
           m.getStorageElementType() != computeType;
  });
  int64_t chunk = chunkLanes();
  if (!converts || !llvm::isPowerOf2_64(chunk) || headDim % chunk != 0)
    return 0;
  // Four rows, not a whole vector's worth: eight f32 rows of D = 128 are 4
  // KiB, so a block's first pass read x at the low 12 address bits the
  // previous block had just stored to, and with x and out at the same
  // offset in a page (numpy's and torch's large arrays) those loads wait on
  // the stores (4K aliasing). Four measured best of 8, 4 and 2
  // (docs/PERFORMANCE.md, "Numbers from code comments").
  return std::min<int64_t>(chunk, 4);
}

Value RopeVectorizer::normFactors(OpBuilder &nb, Location nloc, Value source,
                                  ValueRange rowIvs, Value first,
                                  int64_t rows) {
  int64_t chunk = chunkLanes();
  // `a` and `b` each hold `count` rows' partial sums, row by row in
  // chunk / count lanes each: the result holds a's rows then b's, each in
  // half as many lanes (the sum of its two halves).
  auto combine = [&](Value a, Value b, int64_t count) -> Value {
    int64_t width = chunk / count;
    SmallVector<int64_t> low, high;
    for (int64_t side = 0; side < 2; ++side)
      for (int64_t row = 0; row < count; ++row)
        for (int64_t lane = 0; lane < width / 2; ++lane) {
          low.push_back(side * chunk + row * width + lane);
          high.push_back(side * chunk + row * width + width / 2 + lane);
        }
    return arith::AddFOp::create(
        nb, nloc, vector::ShuffleOp::create(nb, nloc, a, b, low),
        vector::ShuffleOp::create(nb, nloc, a, b, high));
  };
  // Rows enter one by one and equal counts merge at once (a binary
  // counter): at most log2(rows) + 1 vectors live.
  SmallVector<std::pair<Value, int64_t>> pending;
  for (int64_t r = 0; r < rows; ++r) {
    SmallVector<Value> indices(rowIvs);
    indices.push_back(arith::AddIOp::create(
        nb, nloc, first, arith::ConstantIndexOp::create(nb, nloc, r)));
    SmallVector<Value> squares;
    for (int64_t k = 0; k < headDim; k += chunk) {
      indices.push_back(arith::ConstantIndexOp::create(nb, nloc, k));
      Value x = convertFloat(
          nb, nloc, readVector(nb, nloc, source, indices, chunk), computeType);
      indices.pop_back();
      squares.push_back(arith::MulFOp::create(nb, nloc, x, x));
    }
    pending.push_back({sumPairwise(nb, nloc, squares), 1});
    while (pending.size() >= 2 &&
           pending.back().second == pending[pending.size() - 2].second) {
      auto [b, count] = pending.pop_back_val();
      Value a = pending.pop_back_val().first;
      pending.push_back({combine(a, b, count), 2 * count});
    }
  }
  assert(pending.size() == 1 && "a power-of-two number of rows");
  auto [sums, count] = pending.front();
  // Fewer rows than lanes: fold the rows' remaining lanes onto themselves
  // (lanes [0, rows) stay rows [0, rows), the others are copies).
  for (; count < chunk; count *= 2)
    sums = combine(sums, sums, count);
  return buildRmsNormFactor(nb, nloc, sums, headDim,
                            op.getNormEpsilonAttr().getValueAsDouble());
}

Value RopeVectorizer::sumPairwise(OpBuilder &nb, Location nloc,
                                  ArrayRef<Value> terms) {
  SmallVector<Value> level(terms);
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(arith::AddFOp::create(nb, nloc, level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

SmallVector<int64_t> RopeVectorizer::wordLaneOrder() {
  SmallVector<int64_t> order;
  int64_t chunk = chunkLanes();
  for (int64_t k = 0; k < numPairs; k += chunk) {
    int64_t size = std::min(chunk, numPairs - k);
    int64_t step = size % 2 ? 1 : 2;
    for (int64_t first = 0; first < step; ++first)
      for (int64_t lane = first; lane < size; lane += step)
        order.push_back(k + lane);
  }
  return order;
}

std::pair<Value, Value> RopeVectorizer::orderForWordLanes(OpBuilder &nb,
                                                          Location nloc,
                                                          Value cos,
                                                          Value sin) {
  SmallVector<int64_t> order = wordLaneOrder();
  if (llvm::equal(order, llvm::seq<int64_t>(0, numPairs)))
    return {cos, sin};
  auto shuffle = [&](Value v) -> Value {
    return vector::ShuffleOp::create(nb, nloc, v, v, order);
  };
  return {shuffle(cos), shuffle(sin)};
}

std::pair<Value, Value>
RopeVectorizer::splitWordLanes(OpBuilder &nb, Location nloc, Value words) {
  // arith.extf of each half, not convertFloat's integer widening:
  // rope-expand-bf16 rewrites the pair into word arithmetic (LLVM alone
  // splits a bf16 shuffle into one word extraction per lane).
  auto lanes = vector::DeinterleaveOp::create(nb, nloc, words);
  VectorType wide = lanes.getResultVectorType().clone(computeType);
  return {arith::ExtFOp::create(nb, nloc, wide, lanes.getRes1()),
          arith::ExtFOp::create(nb, nloc, wide, lanes.getRes2())};
}

Value RopeVectorizer::joinWordLanes(OpBuilder &nb, Location nloc, Value even,
                                    Value odd) {
  return vector::InterleaveOp::create(nb, nloc,
                                      convertFloat(nb, nloc, even, elementType),
                                      convertFloat(nb, nloc, odd, elementType));
}

Value RopeVectorizer::rotateRow(OpBuilder &nb, Location nloc, Value source,
                                Value dest, ValueRange rowIvs,
                                CosSinChunk cosSinChunk, int64_t chunk,
                                const RowNeighbours &neighbours) {
  bool inPlace = source == dest;
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(nb, nloc, value).getResult();
  };
  auto at = [&](int64_t channel) {
    SmallVector<Value> indices(rowIvs);
    indices.push_back(index(channel));
    return indices;
  };
  // In place, each chunk is read from the latest value of the row (the
  // chunks before it already written), so the writes stay in place.
  auto load = [&](int64_t channel, int64_t size) {
    return convertFloat(
        nb, nloc,
        readVector(nb, nloc, inPlace ? dest : source, at(channel), size),
        computeType);
  };
  // The stored bf16 lanes themselves (word lanes).
  auto loadWords = [&](int64_t channel, int64_t size) {
    return readVector(nb, nloc, inPlace ? dest : source, at(channel), size);
  };
  // QK-norm: the row's factor from a first pass over its D channels; each
  // chunk loaded for the rotation is then normalized with its weights.
  Value factor = neighbours.factor;
  if (neighbours.weight && !factor)
    factor = rowNormFactor(nb, nloc, inPlace ? dest : source, rowIvs);
  auto loadNormalized = [&](int64_t channel, int64_t size) {
    Value x = load(channel, size);
    if (!factor)
      return x;
    Value weight = neighbours.weight;
    if (channel != 0 || size != headDim)
      weight = vector::ExtractStridedSliceOp::create(
          nb, nloc, weight, ArrayRef<int64_t>{channel}, ArrayRef<int64_t>{size},
          ArrayRef<int64_t>{1});
    return applyRmsNorm(nb, nloc, x, factor, weight);
  };
  // Converted to the destination's type, or quantized with the row's scale.
  auto store = [&](Value y, int64_t channel) {
    dest = writeVector(
        nb, nloc,
        buildStoredValue(nb, nloc, y, neighbours.storage, neighbours.scale),
        dest, at(channel));
  };
  if (op.getLayout() == Layout::half) {
    // Stores in ascending address order: the first half's chunks as they
    // are rotated, the second half's after the last of them. Storing each
    // pair's two chunks together (k, then P/2 + k) alternates between the
    // halves, and on Intel (Sapphire Rapids) with rows not 64-byte aligned
    // (numpy's large arrays start 16 bytes into a page) every store then splits
    // a line left half-written by a store several stores back: much slower
    // than the same row stored in order. In place the first half is not written
    // either before every chunk of the row is read (the second half's loads
    // would see it).
    SmallVector<std::pair<int64_t, Value>> firstHalf, secondHalf;
    for (int64_t k = 0; k < numPairs; k += chunk) {
      int64_t size = std::min(chunk, numPairs - k);
      Value y1, y2;
      if (wordLanes && size % 2 == 0) {
        // The chunk's even pairs, then its odd ones (orderForWordLanes).
        auto [x1Even, x1Odd] = splitWordLanes(nb, nloc, loadWords(k, size));
        auto [x2Even, x2Odd] =
            splitWordLanes(nb, nloc, loadWords(numPairs + k, size));
        auto [cos, sin] = cosSinChunk(nb, nloc, k, size);
        auto part = [&](Value v, int64_t first) -> Value {
          return vector::ExtractStridedSliceOp::create(
              nb, nloc, v, ArrayRef<int64_t>{first},
              ArrayRef<int64_t>{size / 2}, ArrayRef<int64_t>{1});
        };
        auto [y1Even, y2Even] =
            rotatePair(nb, nloc, x1Even, x2Even, part(cos, 0), part(sin, 0));
        auto [y1Odd, y2Odd] = rotatePair(
            nb, nloc, x1Odd, x2Odd, part(cos, size / 2), part(sin, size / 2));
        y1 = joinWordLanes(nb, nloc, y1Even, y1Odd);
        y2 = joinWordLanes(nb, nloc, y2Even, y2Odd);
      } else {
        Value x1 = loadNormalized(k, size),
              x2 = loadNormalized(numPairs + k, size);
        auto [cos, sin] = cosSinChunk(nb, nloc, k, size);
        // (x1 + i x2)(c + i s), with the rounding of every lowering.
        std::tie(y1, y2) = rotatePair(nb, nloc, x1, x2, cos, sin);
      }
      if (inPlace)
        firstHalf.push_back({k, y1});
      else
        store(y1, k);
      secondHalf.push_back({numPairs + k, y2});
    }
    for (auto [channel, y] :
         llvm::concat<std::pair<int64_t, Value>>(firstHalf, secondHalf))
      store(y, channel);
  } else {
    // Interleaved pairs (2j, 2j + 1), with cos/sin spread over the lanes
    // as c = [c0, c0, c1, c1, ...] and s = [-s0, s0, -s1, s1, ...] (see
    // spreadForInterleavedLanes): y = x * c + swap(x) * s, where
    // swap exchanges the lanes of each pair. One in-register permute per
    // chunk instead of splitting and merging even and odd lanes. Chunks of an
    // even number of lanes: no pair straddles two.
    int64_t evenChunk = std::max<int64_t>(chunk - chunk % 2, 2);
    for (int64_t k = 0; k < rotaryDim; k += evenChunk) {
      int64_t size = std::min(evenChunk, rotaryDim - k);
      if (wordLanes) {
        // The pairs' first and second members are the chunk's even and
        // odd lanes; cos/sin one per pair (not spread).
        auto [first, second] = splitWordLanes(nb, nloc, loadWords(k, size));
        auto [cos, sin] = cosSinChunk(nb, nloc, k / 2, size / 2);
        auto [y1, y2] = rotatePair(nb, nloc, first, second, cos, sin);
        store(joinWordLanes(nb, nloc, y1, y2), k);
        continue;
      }
      Value x = loadNormalized(k, size);
      auto [cos, sin] = cosSinChunk(nb, nloc, k, size);
      store(rotateInterleavedLanes(nb, nloc, x, cos, sin), k);
    }
  }
  // Pass-through channels [P, D): normalized and/or quantized like the
  // rotated ones (in place too), else copied unless already in place.
  if (factor || neighbours.scale) {
    for (int64_t k = rotaryDim; k < headDim; k += chunk) {
      int64_t size = std::min(chunk, headDim - k);
      store(loadNormalized(k, size), k);
    }
  } else if (!inPlace) {
    for (int64_t k = rotaryDim; k < headDim; k += chunk) {
      int64_t size = std::min(chunk, headDim - k);
      dest = writeVector(nb, nloc, readVector(nb, nloc, source, at(k), size),
                         dest, at(k));
    }
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

SmallVector<Value> RopeVectorizer::build() {
  Hoisted hoisted = buildHoisted();
  neighbours = llvm::map_to_vector(
      group, [&](ApplyOp member) { return buildNeighbours(member); });
  return headsOuterToTokens() ? buildTiled(hoisted) : buildPerToken(hoisted);
}

SmallVector<Value> RopeVectorizer::buildPerToken(const Hoisted &hoisted) {
  SmallVector<OpFoldResult> tokenSizes =
      llvm::map_to_vector(tokenDims, [&](int64_t d) {
        return tensor::getMixedSize(b, loc, op.getInput(), d);
      });
  SmallVector<Value> inits = llvm::map_to_vector(
      group, [](ApplyOp m) -> Value { return m.getInit(); });
  auto forall = scf::ForallOp::create(b, loc, tokenSizes, inits, std::nullopt);
  OpBuilder nb = OpBuilder::atBlockBegin(forall.getBody());
  SmallVector<Value> tokenIvs(forall.getInductionVars());

  // Once per token for every member of the group.
  Value cos, sin;
  std::tie(cos, sin) = cosSinOf(nb, loc, tokenIvs, hoisted);
  if (op.getLayout() == Layout::interleaved && !wordLanes)
    std::tie(cos, sin) = spreadForInterleavedLanes(nb, loc, cos, sin);
  else if (op.getLayout() == Layout::half && wordLanes)
    std::tie(cos, sin) = orderForWordLanes(nb, loc, cos, sin);

  // The token's cos/sin are vectors in registers: chunks are slices.
  auto registerChunk = [&](OpBuilder &cb, Location cloc, int64_t lane,
                           int64_t size) -> std::pair<Value, Value> {
    auto slice = [&](Value v) -> Value {
      if (lane == 0 && cast<VectorType>(v.getType()).getNumElements() == size)
        return v;
      return vector::ExtractStridedSliceOp::create(
          cb, cloc, v, ArrayRef<int64_t>{lane}, ArrayRef<int64_t>{size},
          ArrayRef<int64_t>{1});
    };
    return {slice(cos), slice(sin)};
  };

  // The heads of each member in turn, each into its own shared output.
  struct Inserted {
    Value rotated, out;
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  SmallVector<Inserted> inserts;
  for (auto [memberRef, out, memberNeighbours] :
       llvm::zip_equal(group, forall.getRegionIterArgs(), neighbours)) {
    ApplyOp member = memberRef;
    const Neighbours &nbrs = memberNeighbours;
    Value input = member.getInput();
    Value slots = member.getSlots();
    // In place (input and destination are one tensor): rows are read from
    // the destination's token slice before being overwritten, so one-shot
    // bufferization keeps the update in place. (Never with slots: the
    // verifier refuses a cache that is the input.)
    bool inPlace = !slots && input == member.getInit();
    Inserted &insert = inserts.emplace_back();
    insert.out = out;
    // The token's rows of the input (unless in place), at `sb`.
    Value sourceSlice;
    auto extractSource = [&](OpBuilder &sb) {
      if (inPlace)
        return;
      SmallVector<OpFoldResult> inOffsets, inSizes, inStrides;
      tokenSliceParams(sb, loc, input, tokenIvs, inOffsets, inSizes, inStrides);
      sourceSlice = tensor::ExtractSliceOp::create(
          sb, loc, tokenSliceType(input, inSizes), input, inOffsets, inSizes,
          inStrides);
    };

    // One scf.for per head dim around the row rotation. With QK-norm the
    // innermost loop takes normBlockRows() rows at a time where it can: their
    // factors come from one reduction and one vector rsqrt (normFactors),
    // then the rows are rotated in turn, each with its lane; the rest of the
    // rows one by one, each computing its own factor. The block's rows stay
    // a loop: unrolled (static lanes, no trip through the stack for the
    // factor) they ran faster from L2 but slower from memory on Sapphire
    // Rapids (docs/PERFORMANCE.md, "Numbers from code comments").
    std::function<Value(OpBuilder &, unsigned, SmallVector<Value> &, Value)>
        loopNest = [&](OpBuilder &lb, unsigned depth,
                       SmallVector<Value> &rowIvs, Value dest) -> Value {
      auto rotate = [&](OpBuilder &rb, Value rows, Value factor) {
        // A per-head scale implies one head dim: the slice's dims are
        // [H, D] (the token dims are its dropped unit dims).
        RowNeighbours row = rowNeighbours(
            rb, loc, nbrs, nbrs.headScales ? rowIvs.front() : Value());
        row.factor = factor;
        return rotateRow(rb, loc, inPlace ? rows : sourceSlice, rows, rowIvs,
                         registerChunk, chunkLanes(), row);
      };
      if (depth == headDims.size())
        return rotate(lb, dest, Value());
      Value zero = arith::ConstantIndexOp::create(lb, loc, 0);
      Value one = arith::ConstantIndexOp::create(lb, loc, 1);
      Value upper = tensor::DimOp::create(lb, loc, dest, depth);
      auto rowLoop = [&](OpBuilder &fb, Value from, Value to, Value init) {
        return scf::ForOp::create(
                   fb, loc, from, to, one, ValueRange{init},
                   [&](OpBuilder &bb, Location, Value iv, ValueRange args) {
                     rowIvs.push_back(iv);
                     Value next = loopNest(bb, depth + 1, rowIvs, args[0]);
                     rowIvs.pop_back();
                     scf::YieldOp::create(bb, loc, next);
                   })
            .getResult(0);
      };
      int64_t block = normBlockRows();
      if (!nbrs.weight || depth + 1 != headDims.size() || block < 2)
        return rowLoop(lb, zero, upper, dest);
      Value blockValue = arith::ConstantIndexOp::create(lb, loc, block);
      Value whole = arith::SubIOp::create(
          lb, loc, upper, arith::RemUIOp::create(lb, loc, upper, blockValue));
      Value blocked =
          scf::ForOp::create(
              lb, loc, zero, whole, blockValue, ValueRange{dest},
              [&](OpBuilder &bb, Location, Value first, ValueRange args) {
                Value factors =
                    normFactors(bb, loc, inPlace ? args[0] : sourceSlice,
                                rowIvs, first, block);
                Value blockEnd =
                    arith::AddIOp::create(bb, loc, first, blockValue);
                Value rows =
                    scf::ForOp::create(
                        bb, loc, first, blockEnd, one, ValueRange{args[0]},
                        [&](OpBuilder &rb, Location, Value iv,
                            ValueRange rowArgs) {
                          Value lane =
                              arith::SubIOp::create(rb, loc, iv, first);
                          Value factor = vector::ExtractOp::create(
                              rb, loc, factors, ArrayRef<OpFoldResult>{lane});
                          rowIvs.push_back(iv);
                          Value next = rotate(rb, rowArgs[0], factor);
                          rowIvs.pop_back();
                          scf::YieldOp::create(rb, loc, next);
                        })
                        .getResult(0);
                scf::YieldOp::create(bb, loc, rows);
              })
              .getResult(0);
      return rowLoop(lb, whole, upper, blocked);
    };
    SmallVector<Value> rowIvs;

    if (!slots) {
      tokenSliceParams(nb, loc, out, tokenIvs, insert.offsets, insert.sizes,
                       insert.strides);
      Value destSlice = tensor::ExtractSliceOp::create(
          nb, loc, tokenSliceType(out, insert.sizes), out, insert.offsets,
          insert.sizes, insert.strides);
      extractSource(nb);
      insert.rotated = loopNest(nb, 0, rowIvs, destSlice);
      continue;
    }
    // KV-cache append: the token's rows go to its slot's rows of the cache
    // (buildCacheSlot), straight from the rotation (no temporary).
    insert.rotated =
        buildSlotWrite(nb, loc, member.getInit(), out, slots, tokenIvs,
                       tokenDims, insert.offsets, insert.sizes, insert.strides,
                       [&](OpBuilder &rb, Value destRows) {
                         extractSource(rb);
                         return loopNest(rb, 0, rowIvs, destRows);
                       });
  }

  nb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (Inserted &insert : inserts)
    tensor::ParallelInsertSliceOp::create(nb, loc, insert.rotated, insert.out,
                                          insert.offsets, insert.sizes,
                                          insert.strides);
  return SmallVector<Value>(forall.getResults());
}

bool RopeVectorizer::headsOuterToTokens() {
  // A KV-cache append (slots) scatters each token's rows to its own slot:
  // the per-token form, whatever the layout. (A tiled form for a [B, H, S,
  // D] prefill into a [B, H, max_len, D] cache, a tile of T consecutive
  // tokens to T slots, is future work.)
  if (llvm::any_of(group, [](ApplyOp m) { return bool(m.getSlots()); }))
    return false;
  return tokenRowsApart(op);
}

int64_t RopeVectorizer::tileTokens() {
  // At most kBlockBytes (128 KiB: 256 f32 rows of D = 128) per head block,
  // and as much for the [2, T, P/2] cos/sin table (256 f32 tokens of P =
  // 128), as a power of two within [8, 256] tokens: both stay in L2 (1 MiB
  // on AMD Zen 4, 2 MiB on Intel Sapphire Rapids). Long blocks because each
  // block's start costs what the hardware prefetchers do not hide, from the
  // last-level cache as from memory (docs/PERFORMANCE.md, "Numbers from code
  // comments"). No static sequence length needs a longer tile than itself;
  // a threaded loop shortens the tiles at run time (tileStep).
  constexpr int64_t kBlockBytes = 131072, kMinTokens = 8, kMaxTokens = 256;
  int64_t rowBytes =
      std::max<int64_t>(headDim * elementType.getIntOrFloatBitWidth() / 8, 1);
  int64_t tableRowBytes =
      2 * numPairs * computeType.getIntOrFloatBitWidth() / 8;
  int64_t fit =
      std::max<int64_t>(kBlockBytes / std::max(rowBytes, tableRowBytes), 1);
  int64_t tokens = std::clamp<int64_t>(llvm::bit_floor(uint64_t(fit)),
                                       kMinTokens, kMaxTokens);
  if (requestedTileTokens > 0)
    tokens = requestedTileTokens;
  int64_t seq = inputType.getDimSize(tokenDims.back());
  if (!ShapedType::isDynamic(seq))
    tokens = std::min(tokens, std::max<int64_t>(seq, 1));
  return tokens;
}

OpFoldResult RopeVectorizer::tileStep(int64_t tile,
                                      ArrayRef<OpFoldResult> tokenSizes) {
  if (threads == 1 || tile <= kMinThreadedTileTokens)
    return b.getIndexAttr(tile);
  // Every thread a tile where the tokens allow: per sequence, the tiles
  // the threads left over by the outer token dims (batch) ask for, each a
  // multiple of 8 tokens, within [kMinThreadedTileTokens, tile]. An
  // unknown count (0: the OpenMP runtime's choice) is taken as 16.
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value outer = index(1);
  for (OpFoldResult size : tokenSizes.drop_back())
    outer = arith::MulIOp::create(
        b, loc, outer, getValueOrCreateConstantIndexOp(b, loc, size));
  Value perSequence = arith::MaxUIOp::create(
      b, loc, index(1),
      arith::CeilDivUIOp::create(
          b, loc, index(threads ? threads : 16),
          arith::MaxUIOp::create(b, loc, outer, index(1))));
  Value length = arith::CeilDivUIOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, tokenSizes.back()),
      perSequence);
  Value eight = index(8);
  length = arith::MulIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, length, eight), eight);
  length = arith::MinUIOp::create(b, loc, length, index(tile));
  return arith::MaxUIOp::create(b, loc, length, index(kMinThreadedTileTokens))
      .getResult();
}

SmallVector<Value> RopeVectorizer::buildTiled(const Hoisted &hoisted) {
  int64_t seqDim = tokenDims.back();
  int64_t tile = tileTokens();
  bool interleaved = op.getLayout() == Layout::interleaved;

  // Token dims before the last one step by 1, the last one by at most
  // `tile` (tileStep).
  SmallVector<OpFoldResult> lbs(tokenDims.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> steps(tokenDims.size(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> ubs =
      llvm::map_to_vector(tokenDims, [&](int64_t d) {
        return tensor::getMixedSize(b, loc, op.getInput(), d);
      });
  steps.back() = tileStep(tile, ubs);
  SmallVector<Value> inits = llvm::map_to_vector(
      group, [](ApplyOp m) -> Value { return m.getInit(); });
  auto forall =
      scf::ForallOp::create(b, loc, lbs, ubs, steps, inits, std::nullopt);
  OpBuilder nb = OpBuilder::atBlockBegin(forall.getBody());
  SmallVector<Value> ivs(forall.getInductionVars());
  Value zero = arith::ConstantIndexOp::create(nb, loc, 0);
  Value one = arith::ConstantIndexOp::create(nb, loc, 1);
  Value first = ivs.back();
  Value seqSize = getValueOrCreateConstantIndexOp(nb, loc, ubs.back());
  Value count = arith::MinSIOp::create(
      nb, loc, getValueOrCreateConstantIndexOp(nb, loc, steps.back()),
      arith::SubIOp::create(nb, loc, seqSize, first));

  // cos/sin of the tile's tokens, computed once per (token, frequency) into
  // a [2, tile, P/2] table: cos at [0, j], sin at [1, j], one per pair in
  // both layouts (interleaved rows spread them over their lanes chunk by
  // chunk: a table half as large, so interleaved tiles as long as half ones,
  // which measured faster: docs/PERFORMANCE.md, "Numbers from code
  // comments"). A tensor, so one-shot
  // bufferization allocates it and deallocation frees it after the tile: a
  // memref.alloca here would grow the stack once per tile, as the sequential
  // lowering of the loop (scf.for -> cf) does not end its allocation scope
  // per iteration, and the stacksave/restore that would are ops of unknown
  // effects to ownership-based deallocation.
  int64_t width = numPairs;
  Value table = tensor::EmptyOp::create(
      nb, loc, ArrayRef<int64_t>{2, tile, width}, computeType);
  Value sinRow = arith::ConstantIndexOp::create(nb, loc, 1);
  // A named loop, then its result: clang-format 14 and 22 disagree on how to
  // break `table = scf::ForOp::create(...).getResult(0)`.
  auto tableLoop = scf::ForOp::create(
      nb, loc, zero, count, one, ValueRange{table},
      [&](OpBuilder &fb, Location, Value j, ValueRange args) {
        SmallVector<Value> tokenIvs(ArrayRef<Value>(ivs).drop_back());
        tokenIvs.push_back(arith::AddIOp::create(fb, loc, first, j));
        auto [c, s] = cosSinOf(fb, loc, tokenIvs, hoisted);
        if (wordLanes && !interleaved)
          std::tie(c, s) = orderForWordLanes(fb, loc, c, s);
        Value next =
            writeVector(fb, loc, c, args.front(), ValueRange{zero, j, zero});
        next = writeVector(fb, loc, s, next, ValueRange{sinRow, j, zero});
        scf::YieldOp::create(fb, loc, next);
      });
  table = tableLoop.getResult(0);

  // The tile: full rank (unit sizes on the other token dims, `count` on the
  // last), so the row loops know every dim's role from its position.
  auto tileParams = [&](Value tensor, SmallVectorImpl<OpFoldResult> &offsets,
                        SmallVectorImpl<OpFoldResult> &sizes,
                        SmallVectorImpl<OpFoldResult> &strides) {
    offsets.assign(rank, nb.getIndexAttr(0));
    sizes = tensor::getMixedSizes(nb, loc, tensor);
    strides.assign(rank, nb.getIndexAttr(1));
    for (auto [d, iv] : llvm::zip_equal(tokenDims, ivs)) {
      offsets[d] = iv;
      sizes[d] = nb.getIndexAttr(1);
    }
    sizes[seqDim] = count;
  };
  // The member being rotated (each in turn, all from the one table).
  bool inPlace = false;
  Value sourceTile;
  const Neighbours *memberNeighbours = nullptr;
  int64_t jam = 1;

  // The dims in order: head dims loop, the last token dim loops over the
  // tile's tokens, the other token dims are index 0. Head dims before the
  // last token dim are outer, so each head's rows of the tile are read and
  // written as one contiguous block. The innermost of them is unrolled and
  // jammed by `tileHeads` (a remainder loop takes the heads left over):
  // that many blocks stream at once, which keeps more lines in flight as
  // each block starts. The best count is the machine's and the tile's (with
  // 32-token tiles: two on AMD EPYC, three on Intel Sapphire Rapids from
  // memory; with 256-token tiles four on AMD EPYC, from the last-level
  // cache and from memory: docs/PERFORMANCE.md, "Numbers from code
  // comments"). The pass default is two; rope-to-llvm-cpu passes four. Rows
  // are rotated in chunks (chunkLanes), in ascending address order
  // (rotateRow).
  int64_t jamDim = -1;
  for (int64_t d : headDims)
    if (d < seqDim)
      jamDim = d;
  int64_t chunk = chunkLanes();
  std::function<Value(OpBuilder &, int64_t, SmallVector<Value> &, int64_t,
                      Value, Value)>
      loopNest = [&](OpBuilder &lb, int64_t d, SmallVector<Value> &rowIvs,
                     int64_t copies, Value dest, Value token) -> Value {
    if (d == rank - 1) {
      // One row per jammed copy: index rowIvs[jamDim] + u.
      for (int64_t u = 0; u < copies; ++u) {
        SmallVector<Value> ivs(rowIvs);
        if (u)
          ivs[jamDim] = arith::AddIOp::create(
              lb, loc, ivs[jamDim], arith::ConstantIndexOp::create(lb, loc, u));
        auto tableChunk = [&](OpBuilder &cb, Location cloc, int64_t lane,
                              int64_t size) -> std::pair<Value, Value> {
          // The table holds one cos/sin per pair (interleaved too: half the
          // size, so as long a tile as for half pairs); spread them over the
          // chunk's lanes here (a shuffle and a negation, exact).
          // (Word lanes ask for pairs, in the table's order.)
          bool spread = interleaved && !wordLanes;
          int64_t pairLane = spread ? lane / 2 : lane;
          int64_t pairs = spread ? size / 2 : size;
          auto read = [&](int64_t which) {
            return readVector(
                cb, cloc, table,
                ValueRange{arith::ConstantIndexOp::create(cb, cloc, which),
                           token,
                           arith::ConstantIndexOp::create(cb, cloc, pairLane)},
                pairs);
          };
          if (spread)
            return spreadForInterleavedLanes(cb, cloc, read(0), read(1));
          return {read(0), read(1)};
        };
        std::optional<int64_t> headDimIndex = op.getSingleHeadDim();
        RowNeighbours row = rowNeighbours(
            lb, loc, *memberNeighbours,
            memberNeighbours->headScales ? ivs[*headDimIndex] : Value());
        dest = rotateRow(lb, loc, inPlace ? dest : sourceTile, dest, ivs,
                         tableChunk, chunk, row);
      }
      return dest;
    }
    Value lower = arith::ConstantIndexOp::create(lb, loc, 0);
    if (d != seqDim && llvm::is_contained(tokenDims, d)) {
      rowIvs.push_back(lower);
      Value next = loopNest(lb, d + 1, rowIvs, copies, dest, token);
      rowIvs.pop_back();
      return next;
    }
    Value upper = d == seqDim ? count : tensor::DimOp::create(lb, loc, dest, d);
    auto buildLoop = [&](Value from, Value to, int64_t step, int64_t loopCopies,
                         Value init) {
      return scf::ForOp::create(
                 lb, loc, from, to,
                 arith::ConstantIndexOp::create(lb, loc, step),
                 ValueRange{init},
                 [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
                   rowIvs.push_back(iv);
                   Value next =
                       loopNest(fb, d + 1, rowIvs, loopCopies, args.front(),
                                d == seqDim ? iv : token);
                   rowIvs.pop_back();
                   scf::YieldOp::create(fb, loc, next);
                 })
          .getResult(0);
    };
    if (d != jamDim || jam == 1)
      return buildLoop(lower, upper, 1, copies, dest);
    // [0, H - H % jam) by `jam` heads at a time, then the rest one by one.
    Value jamValue = arith::ConstantIndexOp::create(lb, loc, jam);
    Value split = arith::SubIOp::create(
        lb, loc, upper, arith::RemUIOp::create(lb, loc, upper, jamValue));
    Value jammed = buildLoop(lower, split, jam, jam, dest);
    return buildLoop(split, upper, 1, 1, jammed);
  };
  struct Inserted {
    Value rotated, out;
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  SmallVector<Inserted> inserts;
  for (auto [memberRef, out, nbrs] :
       llvm::zip_equal(group, forall.getRegionIterArgs(), neighbours)) {
    ApplyOp member = memberRef;
    memberNeighbours = &nbrs;
    Inserted &insert = inserts.emplace_back();
    insert.out = out;
    tileParams(out, insert.offsets, insert.sizes, insert.strides);
    Value destTile = tensor::ExtractSliceOp::create(
        nb, loc, out, insert.offsets, insert.sizes, insert.strides);
    inPlace = member.getInput() == member.getInit();
    sourceTile = Value();
    if (!inPlace) {
      SmallVector<OpFoldResult> inOffsets, inSizes, inStrides;
      tileParams(member.getInput(), inOffsets, inSizes, inStrides);
      sourceTile = tensor::ExtractSliceOp::create(
          nb, loc, member.getInput(), inOffsets, inSizes, inStrides);
    }
    jam = member.getInputType().getDimSize(jamDim) == 1 ? 1 : tileHeads;
    SmallVector<Value> rowIvs;
    insert.rotated = loopNest(nb, 0, rowIvs, 1, destTile, Value());
  }

  nb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (Inserted &insert : inserts)
    tensor::ParallelInsertSliceOp::create(nb, loc, insert.rotated, insert.out,
                                          insert.offsets, insert.sizes,
                                          insert.strides);
  return SmallVector<Value>(forall.getResults());
}

/// Whether `value` is defined before `op` (in its block or in a block
/// enclosing it), so that code at `op` may use it.
static bool isDefinedBefore(Value value, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->findAncestorOpInBlock(*op) != nullptr;
  Operation *def = value.getDefiningOp();
  Operation *ancestor = def->getBlock()->findAncestorOpInBlock(*op);
  return ancestor && def->isBeforeInBlock(ancestor);
}

/// Whether `a` and `b` compute the same cos/sin for the same tokens, so one
/// token loop may rotate both with one cos/sin per token: the same
/// attributes (layout, rotary dim, token dims, frequencies, M-RoPE,
/// magnitude, inverse), the same positions, offset, length and cache
/// values, inputs of the same rank, element type and head dim D whose token
/// dims have equal sizes (static, or compared at run time by the caller:
/// see VectorizeRopeApply). Only the head dims' sizes may differ (GQA: Hq
/// query heads, Hkv key heads), and the fused neighbours, which RopeVectorizer
/// applies member by member: each its own norm weight (with the same
/// norm_epsilon, so QK-norm on both or on neither), its own quant scale (or
/// none: a bf16 Q beside an fp8 K) and destination type.
static bool areCosSinSiblings(ApplyOp a, ApplyOp b) {
  // The attributes besides operandSegmentSizes, which differ with the
  // presence of a quant scale; the operands that must match are compared.
  auto attributes = [](ApplyOp op) {
    NamedAttrList list(op->getAttrDictionary());
    list.erase(op.getOperandSegmentSizesAttrName());
    return list.getDictionary(op.getContext());
  };
  if (attributes(a) != attributes(b) || a.getPositions() != b.getPositions() ||
      a.getOffset() != b.getOffset() || a.getLength() != b.getLength() ||
      a.getCos() != b.getCos() || a.getSin() != b.getSin())
    return false;
  RankedTensorType at = a.getInputType(), bt = b.getInputType();
  return at.getRank() == bt.getRank() &&
         at.getElementType() == bt.getElementType() &&
         at.getShape().back() == bt.getShape().back();
}

/// Whether the token dims of every member have statically equal sizes.
static bool tokenSizesStaticallyEqual(ArrayRef<ApplyOp> group) {
  ApplyOp front = group.front();
  RankedTensorType first = front.getInputType();
  for (int64_t d : front.getTokenDimsOrDefault())
    for (ApplyOp member : group.drop_front()) {
      int64_t size = member.getInputType().getDimSize(d);
      if (ShapedType::isDynamic(size) || size != first.getDimSize(d))
        return false;
    }
  return true;
}

namespace {
/// Lowers a `rope.apply` together with its later siblings in the same block
/// (areCosSinSiblings, every operand defined before the first) as one token
/// loop (horizontal fusion: cos/sin once per token for Q and K). Where the
/// token sizes are not statically equal, an `scf.if` compares them at run
/// time and rotates the members one by one when they differ.
struct VectorizeRopeApply : OpRewritePattern<ApplyOp> {
  VectorizeRopeApply(MLIRContext *context, const RopeToVectorOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    // An empty input leaves the destination as it is (EmptyGuard.h).
    if (hasStaticZeroDim(op.getInput())) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    if (failed(angleMethodFor(op, options.angle)))
      return failure();
    rewriter.setInsertionPoint(op);
    SmallVector<ApplyOp> group{op};
    for (Operation &next : llvm::make_range(std::next(op->getIterator()),
                                            op->getBlock()->end())) {
      auto sibling = dyn_cast<ApplyOp>(&next);
      // A statically empty sibling folds on its own.
      if (sibling && hasStaticZeroDim(sibling.getInput()))
        continue;
      // A cache append (slots) is lowered per token: a member without slots
      // beside one with them (Q beside K appended to its cache, the decode
      // step) joins its group only where its own form is per token too, not
      // to be dragged out of the tiled form.
      if (sibling && bool(sibling.getSlots()) != bool(op.getSlots()) &&
          tokenRowsApart(op))
        continue;
      if (sibling && areCosSinSiblings(op, sibling) &&
          llvm::all_of(sibling->getOperands(),
                       [&](Value v) { return isDefinedBefore(v, op); }))
        group.push_back(sibling);
    }
    // The group's loop runs unless every member is empty: one scf.if
    // around it where each member has a dynamic head dim (a member whose
    // head dims are static and non-zero has work for every token).
    Location loc = op.getLoc();
    Value anyWork;
    auto headsStatic = [](ApplyOp member) {
      RankedTensorType type = member.getInputType();
      SmallVector<int64_t> tokenDims = member.getTokenDimsOrDefault();
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        if (type.isDynamicDim(d) && !llvm::is_contained(tokenDims, d))
          return false;
      return true;
    };
    if (llvm::none_of(group, headsStatic)) {
      for (ApplyOp member : group) {
        Value nonEmpty = buildHeadsNonEmptyCondition(
            rewriter, loc, member.getInput(), member.getTokenDimsOrDefault());
        anyWork = anyWork
                      ? arith::OrIOp::create(rewriter, loc, anyWork, nonEmpty)
                            .getResult()
                      : nonEmpty;
      }
    }
    SmallVector<Value> inits = llvm::map_to_vector(
        group, [](ApplyOp m) -> Value { return m.getInit(); });
    SmallVector<Value> results =
        buildUnlessEmpty(rewriter, loc, anyWork, inits,
                         [&] { return buildGroup(rewriter, group); });
    for (auto [member, result] : llvm::zip_equal(group, results))
      rewriter.replaceOp(member, result);
    return success();
  }

private:
  /// The group's token loop (or, where the members' token sizes may differ,
  /// a run-time choice between it and one loop per member).
  SmallVector<Value> buildGroup(PatternRewriter &rewriter,
                                ArrayRef<ApplyOp> group) const {
    ApplyOp op = group.front();
    SmallVector<Value> results;
    if (group.size() == 1 || tokenSizesStaticallyEqual(group)) {
      results = RopeVectorizer(rewriter, group, options).build();
    } else {
      Location loc = op.getLoc();
      Value equal;
      for (int64_t d : op.getTokenDimsOrDefault()) {
        Value size = tensor::DimOp::create(rewriter, loc, op.getInput(), d);
        for (ApplyOp member : ArrayRef<ApplyOp>(group).drop_front()) {
          Value same = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::eq, size,
              tensor::DimOp::create(rewriter, loc, member.getInput(), d));
          equal = equal ? arith::AndIOp::create(rewriter, loc, equal, same)
                              .getResult()
                        : same;
        }
      }
      SmallVector<Type> types = llvm::map_to_vector(
          group, [](ApplyOp m) -> Type { return m.getType(); });
      auto branch = scf::IfOp::create(rewriter, loc, types, equal,
                                      /*withElseRegion=*/true);
      rewriter.setInsertionPointToStart(branch.thenBlock());
      scf::YieldOp::create(rewriter, loc,
                           RopeVectorizer(rewriter, group, options).build());
      rewriter.setInsertionPointToStart(branch.elseBlock());
      SmallVector<Value> alone;
      for (ApplyOp member : group)
        alone.push_back(
            RopeVectorizer(rewriter, member, options).build().front());
      scf::YieldOp::create(rewriter, loc, alone);
      results.assign(branch.getResults().begin(), branch.getResults().end());
      rewriter.setInsertionPointAfter(branch);
    }
    return results;
  }

  RopeToVectorOptions options;
};

/// `rope.cache_write` (V beside a rotated K): one forall iteration per
/// token, its rows copied to its slot's rows of the cache (buildSlotWrite)
/// by cache lines, each chunk through buildStoredValue with the row's scale
/// when the cache is quantized.
struct VectorizeCacheWrite : OpRewritePattern<CacheWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CacheWriteOp op,
                                PatternRewriter &rewriter) const override {
    // An empty input leaves the cache as it is (EmptyGuard.h).
    if (hasStaticZeroDim(op.getInput())) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    Value nonEmpty = buildHeadsNonEmptyCondition(
        rewriter, op.getLoc(), op.getInput(), op.getTokenDimsOrDefault());
    rewriter.replaceOp(
        op,
        buildUnlessEmpty(rewriter, op.getLoc(), nonEmpty, op.getInit(), [&] {
          return SmallVector<Value>{build(rewriter, op)};
        }));
    return success();
  }

private:
  /// The append's token loop.
  Value build(PatternRewriter &rewriter, CacheWriteOp op) const {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType inputType = op.getInputType();
    int64_t rank = inputType.getRank();
    int64_t headDim = inputType.getShape().back();
    Type element = inputType.getElementType();
    Type storage = op.getStorageElementType();
    SmallVector<int64_t> tokenDims = op.getTokenDimsOrDefault();
    int64_t rowRank = rank - static_cast<int64_t>(tokenDims.size());
    // The per-tensor scale once per call; a per-head one per row.
    Value scale, headScales;
    if (Value quantScale = op.getQuantScale()) {
      if (cast<RankedTensorType>(quantScale.getType()).getRank() == 0)
        scale =
            tensor::ExtractOp::create(rewriter, loc, quantScale, ValueRange{});
      else
        headScales = quantScale;
    }
    // Quantized chunks compute in f32 (buildStoredValue): one cache line of
    // the wider of the two types per chunk.
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    if (op.getQuantScale())
      bytes = std::max<int64_t>(bytes, 4);
    int64_t chunk = std::max<int64_t>(64 / bytes, 1);

    SmallVector<OpFoldResult> tokenSizes =
        llvm::map_to_vector(tokenDims, [&](int64_t d) {
          return tensor::getMixedSize(rewriter, loc, input, d);
        });
    auto forall = scf::ForallOp::create(rewriter, loc, tokenSizes,
                                        ValueRange{op.getInit()}, std::nullopt);
    OpBuilder nb = OpBuilder::atBlockBegin(forall.getBody());
    SmallVector<Value> tokenIvs(forall.getInductionVars());
    Value out = forall.getRegionIterArgs().front();

    // The token's rows of the input, rank-reduced as the cache's (the
    // canonical reduction: the first unit dims go).
    SmallVector<OpFoldResult> inOffsets(rank, nb.getIndexAttr(0));
    SmallVector<OpFoldResult> inSizes = tensor::getMixedSizes(nb, loc, input);
    SmallVector<OpFoldResult> inStrides(rank, nb.getIndexAttr(1));
    for (auto [d, iv] : llvm::zip_equal(tokenDims, tokenIvs)) {
      inOffsets[d] = iv;
      inSizes[d] = nb.getIndexAttr(1);
    }
    auto [staticSizes, dynamicSizes] = decomposeMixedValues(inSizes);
    (void)dynamicSizes;
    Value source = tensor::ExtractSliceOp::create(
        nb, loc,
        tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
            rowRank, inputType, staticSizes),
        input, inOffsets, inSizes, inStrides);

    auto index = [&](OpBuilder &ib, int64_t value) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, value);
    };
    std::function<Value(OpBuilder &, int64_t, SmallVector<Value> &, Value)>
        loopNest = [&](OpBuilder &lb, int64_t depth, SmallVector<Value> &rowIvs,
                       Value dest) -> Value {
      if (depth == rowRank - 1) {
        // A per-head scale implies one head dim: the rows' dims are [H, D].
        Value rowScale = scale;
        if (headScales)
          rowScale = tensor::ExtractOp::create(lb, loc, headScales,
                                               ValueRange{rowIvs.front()});
        Type f32 = lb.getF32Type();
        for (int64_t k = 0; k < headDim; k += chunk) {
          int64_t size = std::min(chunk, headDim - k);
          SmallVector<Value> at(rowIvs);
          at.push_back(index(lb, k));
          Value x = vector::TransferReadOp::create(
              lb, loc, VectorType::get({size}, element), source, at,
              arith::ConstantOp::create(lb, loc, element,
                                        lb.getZeroAttr(element)),
              ArrayRef<bool>{true});
          if (rowScale)
            x = buildStoredValue(lb, loc, convertFloat(lb, loc, x, f32),
                                 storage, rowScale);
          dest = vector::TransferWriteOp::create(lb, loc, x, dest, at,
                                                 ArrayRef<bool>{true})
                     .getResult();
        }
        return dest;
      }
      Value upper = tensor::DimOp::create(lb, loc, dest, depth);
      auto loop = scf::ForOp::create(
          lb, loc, index(lb, 0), upper, index(lb, 1), ValueRange{dest},
          [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
            rowIvs.push_back(iv);
            Value next = loopNest(fb, depth + 1, rowIvs, args.front());
            rowIvs.pop_back();
            scf::YieldOp::create(fb, loc, next);
          });
      return loop.getResult(0);
    };

    SmallVector<OpFoldResult> offsets, sizes, strides;
    SmallVector<Value> rowIvs;
    Value written = buildSlotWrite(nb, loc, op.getInit(), out, op.getSlots(),
                                   tokenIvs, tokenDims, offsets, sizes, strides,
                                   [&](OpBuilder &rb, Value destRows) {
                                     return loopNest(rb, 0, rowIvs, destRows);
                                   });
    nb.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(nb, loc, written, out, offsets, sizes,
                                          strides);
    return forall.getResult(0);
  }
};

struct ConvertRopeToVectorPass
    : rope::impl::ConvertRopeToVectorPassBase<ConvertRopeToVectorPass> {
  using Base::Base;

  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalOp<ApplyOp, CacheWriteOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // An option out of its range fails the pass, naming it and its range.
    auto outOfRange = [&](bool bad, StringRef range, int64_t value) {
      if (bad)
        getOperation()->emitError()
            << "convert-rope-to-vector: " << range << ", got " << value;
      return bad;
    };
    // Each tile's table is [2, tile-tokens, P/2] floats on the heap: 4096
    // tokens are already 8 MiB for f64 rows of D = 256.
    if (outOfRange(vectorBytes < 0,
                   "vector-bytes must be >= 0 (0: one cache line of the "
                   "compute type)",
                   vectorBytes) ||
        outOfRange(tileHeads < 1, "tile-heads must be >= 1", tileHeads) ||
        outOfRange(threads < 0,
                   "num-threads must be >= 0 (0: the OpenMP runtime's "
                   "choice)",
                   threads) ||
        outOfRange(tileTokens < 0 || tileTokens > 4096,
                   "tile-tokens must be in [0, 4096] (0: automatic)",
                   tileTokens))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateRopeToVectorConversionPatterns(
        patterns, RopeToVectorOptions{vectorBytes, tileHeads, tileTokens,
                                      threads, angle});
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToVectorConversionPatterns(
    RewritePatternSet &patterns, const RopeToVectorOptions &options) {
  patterns.add<VectorizeRopeApply>(patterns.getContext(), options);
  patterns.add<VectorizeCacheWrite>(patterns.getContext());
}
