//===- FuseIntoAttention.cpp - Fuse rope.apply into Q·Kᵀ tiles ------------===//
//
// Part of the rope-mlir project.
//
// Attention scores are a contraction of the rotated queries with the rotated
// keys. Rotating Q and K whole writes both to memory and reads them back;
// tiling the contraction and fusing the rotations into its loops rotates a
// tile right before it is used. The loop order matters: the query dim is
// tiled outside the key dim, so a query tile is rotated once and reused by
// every key tile, and each key tile is rotated inside the key loop (once per
// query tile: free in decode, where there is one query tile; a recomputation
// in prefill, hence the choice). Everything is upstream machinery: tiling
// through TilingInterface (scf::tileUsingSCF) and producer fusion through
// rope.apply's generateResultTileValue (scf::tileAndFuseProducerOfSlice).
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/FuseIntoAttention.h"
#include "rope/Transforms/Passes.h"
#include "rope/Transforms/RaiseSoftmax.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "rope-fuse-into-attention"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFUSEINTOATTENTIONPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Says why `op` is left alone: under -debug-only (LLVM builds with
/// assertions), and as a remark when asked (Debian's LLVM has no
/// -debug-only).
LogicalResult skip(Operation *op, const Twine &reason, bool remark) {
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not fusing " << op->getName()
                          << " at " << op->getLoc() << ": " << reason << "\n");
  if (remark)
    op->emitRemark("not fused into attention: ") << reason;
  return failure();
}

/// The loop dim of `map`'s result `index`, if it is a plain dim.
std::optional<unsigned> loopDimOf(AffineMap map, unsigned index) {
  if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(index)))
    return dim.getPosition();
  return std::nullopt;
}

/// The rotation producing `operand` if it can be fused: a rope.apply whose
/// channel dim is the contraction's reduction dim, and whose only user is
/// the contraction (another user would keep the whole rotation alive, and
/// fusing would only add work).
ApplyOp fusableRope(linalg::LinalgOp op, OpOperand *operand, unsigned kDim,
                    StringRef side, bool remarks) {
  auto rope = operand->get().getDefiningOp<ApplyOp>();
  if (!rope)
    return {};
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (loopDimOf(map, map.getNumResults() - 1) != kDim) {
    (void)skip(op, side + " rotation: its channel dim is not the reduction",
               remarks);
    return {};
  }
  if (!rope->hasOneUse()) {
    (void)skip(op,
               side + " rotation has other users; fusing would "
                      "recompute it next to the whole one",
               remarks);
    return {};
  }
  return rope;
}

/// The contraction dim (in `dims`) that the rotation's sequence dim maps to
/// through `map`; otherwise the last of `dims`.
std::optional<unsigned> sequenceDim(ApplyOp rope, AffineMap map,
                                    ArrayRef<unsigned> dims) {
  if (!rope)
    return dims.back();
  std::optional<unsigned> dim =
      loopDimOf(map, rope.getTokenDimsOrDefault().back());
  if (dim && llvm::is_contained(dims, *dim))
    return dim;
  return std::nullopt;
}

/// The tile size for `size` (a static extent, or dynamic): 0 means whole.
/// A tile no smaller than a static extent is the extent (static tiles).
int64_t clampTile(int64_t tile, int64_t size) {
  if (ShapedType::isDynamic(size))
    return tile;
  if (tile == 0 || tile >= size)
    return size;
  return tile;
}

/// Fuses `rope` into the slice of it that `tiled`'s input `input` reads,
/// inside `within` (scf::tileAndFuseProducerOfSlice); the tile rotation, or
/// null.
ApplyOp fuseRopeTile(RewriterBase &rewriter, Operation *tiled, unsigned input,
                     ApplyOp rope,
                     MutableArrayRef<LoopLikeOpInterface> within) {
  auto slice = tiled->getOperand(input).getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource().getDefiningOp() != rope)
    return {};
  std::optional<scf::SCFFuseProducerOfSliceResult> fused =
      scf::tileAndFuseProducerOfSlice(rewriter, slice, within);
  if (!fused)
    return {};
  // The candidate slice is left dead; with it gone, so is the whole
  // rotation.
  if (slice->use_empty())
    rewriter.eraseOp(slice);
  if (rope->use_empty())
    rewriter.eraseOp(rope);
  auto tile = fused->tiledAndFusedProducer.getDefiningOp<ApplyOp>();
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

/// Moves what `loop` does not change out of it (upstream's
/// moveLoopInvariantCode, but through `rewriter`, so that a pattern driver
/// sees the moves).
void hoistLoopInvariants(RewriterBase &rewriter, LoopLikeOpInterface loop) {
  moveLoopInvariantCode(
      loop.getLoopRegions(),
      [&](Value value, Region *) { return loop.isDefinedOutsideOfLoop(value); },
      [&](Operation *op, Region *) {
        return isMemoryEffectFree(op) && isSpeculatable(op);
      },
      [&](Operation *op, Region *) { rewriter.moveOpBefore(op, loop); });
}

/// Tiles `op` into loops of `type` (sizes and loop order given) and
/// replaces it by the tiled loop nest's results.
FailureOr<scf::SCFTilingResult>
tileWithLoops(RewriterBase &rewriter, linalg::LinalgOp op,
              ArrayRef<OpFoldResult> tileSizes, ArrayRef<int64_t> interchange,
              scf::SCFTilingOptions::LoopType type) {
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(tileSizes).setInterchange(interchange).setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), tiling);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// The loops over query tiles (and batch dims): one scf.forall (OpenMP
/// threads in the CPU pipeline) or a nest of scf.for.
scf::SCFTilingOptions::LoopType
queryLoopType(const RopeAttentionFusionOptions &options) {
  return options.parallelLoops ? scf::SCFTilingOptions::LoopType::ForallOp
                               : scf::SCFTilingOptions::LoopType::ForOp;
}

/// Makes each input of `op` that is a slice of a slice one slice of the
/// first one's source, so that producer fusion finds the producer.
void mergeInputSlices(RewriterBase &rewriter, linalg::LinalgOp op) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto inner = input->get().getDefiningOp<tensor::ExtractSliceOp>();
    auto outer = inner
                     ? inner.getSource().getDefiningOp<tensor::ExtractSliceOp>()
                     : tensor::ExtractSliceOp();
    if (!outer)
      continue;
    rewriter.setInsertionPoint(inner);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (failed(affine::mergeOffsetsSizesAndStrides(
            rewriter, inner.getLoc(), outer, inner, outer.getDroppedDims(),
            offsets, sizes, strides)))
      continue;
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        inner, inner.getType(), outer.getSource(), offsets, sizes, strides);
    if (outer->use_empty())
      rewriter.eraseOp(outer);
  }
}

} // namespace

FailureOr<RopeAttentionContraction>
mlir::rope::matchRopeAttention(linalg::LinalgOp op, bool remarks) {
  if (llvm::none_of(op.getDpsInputs(),
                    [](Value v) { return v.getDefiningOp<ApplyOp>(); }))
    return skip(op, "no input is produced by rope.apply", false);
  if (!op.hasPureTensorSemantics())
    return skip(op, "not on tensors", remarks);
  if (!linalg::isaContractionOpInterface(op))
    return skip(op,
                "not a contraction (two inputs, projected-permutation "
                "maps, a multiply-add body)",
                remarks);
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return skip(op, "contraction dims cannot be inferred", remarks);
  if (dims->k.size() != 1)
    return skip(op, "needs exactly one reduction dim (the channels)", remarks);
  if (dims->m.empty() || dims->n.empty())
    return skip(op, "needs query (m) and key (n) dims", remarks);

  RopeAttentionContraction match;
  match.contraction = op;
  match.remarks = remarks;
  unsigned kDim = dims->k.front();
  OpOperand *q = op.getDpsInputOperand(0), *k = op.getDpsInputOperand(1);
  bool qIsRope = q->get().getDefiningOp<ApplyOp>() != nullptr;
  bool kIsRope = k->get().getDefiningOp<ApplyOp>() != nullptr;
  if (!qIsRope && !kIsRope)
    return skip(op, "no operand is produced by rope.apply", remarks);
  match.query = fusableRope(op, q, kDim, "query", remarks);
  match.key = fusableRope(op, k, kDim, "key", remarks);
  if (!match.query && !match.key)
    return failure();

  std::optional<unsigned> queryDim =
      sequenceDim(match.query, op.getMatchingIndexingMap(q), dims->m);
  std::optional<unsigned> keyDim =
      sequenceDim(match.key, op.getMatchingIndexingMap(k), dims->n);
  if (!queryDim)
    return skip(op,
                "the query rotation's sequence dim is not a query (m) "
                "dim of the contraction",
                remarks);
  if (!keyDim)
    return skip(op,
                "the key rotation's sequence dim is not a key (n) dim "
                "of the contraction",
                remarks);
  match.queryDim = *queryDim;
  match.keyDim = *keyDim;
  match.batchDims.assign(dims->batch.begin(), dims->batch.end());
  return match;
}

FailureOr<RopeAttentionFusionResult>
mlir::rope::fuseRopeIntoAttention(RewriterBase &rewriter,
                                  const RopeAttentionContraction &match,
                                  const RopeAttentionFusionOptions &options) {
  linalg::LinalgOp op = match.contraction;
  if (!(match.query && options.fuseQuery) && !(match.key && options.fuseKey))
    return skip(op, "nothing to fuse with these options", match.remarks);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = ranges.size();

  // Loops: batch dims by 1, then the query dim, then the key dim; every
  // other dim (the channels, a GQA group) whole.
  SmallVector<OpFoldResult> tileSizes(numLoops, rewriter.getIndexAttr(0));
  SmallVector<int64_t> interchange;
  // A batch dim is a token dim if a rotation to fuse says so; the others
  // (heads) share the token's cos/sin inside one rope.apply tile.
  auto isTokenDim = [&](unsigned loopDim) {
    for (auto [input, rope, fused] :
         {std::tuple(0u, match.query, options.fuseQuery),
          std::tuple(1u, match.key, options.fuseKey)}) {
      if (!rope || !fused)
        continue;
      AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
      for (int64_t t : rope.getTokenDimsOrDefault())
        if (loopDimOf(map, t) == loopDim)
          return true;
    }
    return false;
  };
  for (unsigned d : match.batchDims) {
    if (!options.tileHeads && !isTokenDim(d))
      continue;
    tileSizes[d] = rewriter.getIndexAttr(1);
    interchange.push_back(d);
  }
  tileSizes[match.queryDim] = rewriter.getIndexAttr(
      clampTile(options.queryTileSize, ranges[match.queryDim]));
  OpFoldResult keyTile = rewriter.getIndexAttr(
      clampTile(options.keyTileSize, ranges[match.keyDim]));
  interchange.push_back(match.queryDim);
  for (unsigned d = 0; d < numLoops; ++d)
    if (!llvm::is_contained(interchange, d))
      interchange.push_back(d);
  // Every loop must exist for the loop structure below (the query loop, the
  // key loop).
  if (isConstantIntValue(tileSizes[match.queryDim], 0) ||
      isConstantIntValue(keyTile, 0))
    return skip(op, "a dynamic query or key dim needs a nonzero tile size",
                match.remarks);

  // Two tilings: the query-tile loops (which may be parallel), then a key
  // loop inside (one scf.forall cannot leave Q's rotation outside it).
  FailureOr<scf::SCFTilingResult> tiled = tileWithLoops(
      rewriter, op, tileSizes, interchange, queryLoopType(options));
  if (failed(tiled))
    return skip(op, "tiling failed", match.remarks);
  RopeAttentionFusionResult result;
  result.loops = tiled->loops;
  result.tiledContraction = tiled->tiledOps.back();
  size_t numQueryLoops = result.loops.size();
  SmallVector<OpFoldResult> keyTileSizes(numLoops, rewriter.getIndexAttr(0));
  keyTileSizes[match.keyDim] = keyTile;
  // Decode: when the query-tile loops run once (static extents within
  // their tiles) the key tiles are the only parallelism there is, and
  // independent for scores: make the key loop the scf.forall.
  bool singleQueryTile = llvm::all_of(interchange, [&](int64_t d) {
    std::optional<int64_t> tile = getConstantIntValue(tileSizes[d]);
    return !tile || *tile == 0 ||
           (!ShapedType::isDynamic(ranges[d]) && ranges[d] <= *tile);
  });
  tiled =
      tileWithLoops(rewriter, cast<linalg::LinalgOp>(result.tiledContraction),
                    keyTileSizes, {},
                    singleQueryTile ? queryLoopType(options)
                                    : scf::SCFTilingOptions::LoopType::ForOp);
  // The key tiling is not expected to fail (the op was just tiled); if it
  // does, the rotations go into the query-tile loops only.
  if (succeeded(tiled)) {
    result.loops.append(tiled->loops);
    result.tiledContraction = tiled->tiledOps.back();
    // K's key tile is a slice of its query-tile slice.
    mergeInputSlices(rewriter, cast<linalg::LinalgOp>(result.tiledContraction));
    // Whatever the key loop does not change goes to the query loop.
    hoistLoopInvariants(rewriter, result.loops.back());
  }
  MutableArrayRef<LoopLikeOpInterface> loops(result.loops);

  auto fuse = [&](unsigned input, ApplyOp rope,
                  MutableArrayRef<LoopLikeOpInterface> within) -> ApplyOp {
    return fuseRopeTile(rewriter, result.tiledContraction, input, rope, within);
  };
  if (match.query && options.fuseQuery) {
    result.query = fuse(0, match.query, loops.take_front(numQueryLoops));
    if (!result.query)
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": query rotation not fused\n");
  }
  if (match.key && options.fuseKey) {
    result.key = fuse(1, match.key, loops);
    if (!result.key)
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": key rotation not fused\n");
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Whole attention: online softmax over the key tiles
//===----------------------------------------------------------------------===//

namespace {

/// Whether `op` accumulates into zeros (a linalg.fill of 0).
bool accumulatesIntoZero(linalg::LinalgOp op) {
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The index of the input of `op` that is `scores`, if `op` is elementwise
/// on it: all-parallel, one result, identity maps for `scores` and the
/// result, and a payload that does not read its destination (which is then
/// free to replace by a tile-sized empty tensor).
std::optional<unsigned> elementwiseOn(linalg::LinalgOp op, Value scores) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity() ||
      op.payloadUsesValueFromOperand(init))
    return std::nullopt;
  std::optional<unsigned> found;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (input->get() != scores)
      continue;
    if (found || !op.getMatchingIndexingMap(input).isIdentity())
      return std::nullopt;
    found = input->getOperandNumber();
  }
  return found;
}

/// The input of `op` (other than the scores, operand `scoresOperand`) that
/// its payload adds last: `yield arith.addf(x, mask)` with `mask` the block
/// argument of that input, indexed by a permutation of some of the loop
/// dims. A −inf there makes the result −inf whatever x is (unless x is +inf
/// or NaN), which lets a key tile that is masked everywhere be skipped.
std::optional<unsigned> additiveMask(linalg::LinalgOp op,
                                     unsigned scoresOperand) {
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  for (Value term : {add.getLhs(), add.getRhs()}) {
    auto arg = dyn_cast<BlockArgument>(term);
    if (!arg || arg.getOwner() != op.getBlock())
      continue;
    OpOperand *operand = op.getMatchingOpOperand(arg);
    if (op.isDpsInput(operand) &&
        operand->getOperandNumber() != scoresOperand &&
        op.getMatchingIndexingMap(operand).isProjectedPermutation(
            /*allowZeroInResults=*/false))
      return operand->getOperandNumber();
  }
  return std::nullopt;
}

/// The map of a rank-`rank` tensor onto itself without dim `drop`.
AffineMap dropDim(MLIRContext *ctx, unsigned rank, unsigned drop) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx).dropResult(drop);
}

Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             FloatType type, const APFloat &value) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type);
  Value scalar = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// A one-result linalg.generic writing into `out`.
Value generic(OpBuilder &b, Location loc, ValueRange ins, Value out,
              ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, ins, ValueRange{out}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args));
      });
  return op.getResult(0);
}

/// A running max of −inf (every key so far masked) used as the shift would
/// make exp(−inf − (−inf)) a NaN; shifting by 0 instead gives exp(−inf) = 0.
Value finiteShift(OpBuilder &b, Location loc, Value max) {
  auto type = cast<FloatType>(max.getType());
  Value negInf = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(type, APFloat::getInf(type.getFloatSemantics(), true)));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value masked =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, negInf);
  return arith::SelectOp::create(b, loc, masked, zero, max);
}

/// Moves `op`, and the pure ops inside `loop` it depends on, before `loop`
/// when none of them depends on a value `loop` defines; false otherwise.
/// Unlike moveLoopInvariantCode this also hoists out of nested regions (the
/// scf.if around a key tile).
bool hoistOutOf(RewriterBase &rewriter, Operation *op, Operation *loop) {
  if (!op || !loop->isAncestor(op))
    return true;
  if (!isPure(op) || op->getNumRegions() != 0)
    return false;
  for (Value operand : op->getOperands()) {
    if (auto arg = dyn_cast<BlockArgument>(operand)) {
      if (loop->isAncestor(arg.getOwner()->getParentOp()))
        return false;
      continue;
    }
    if (!hoistOutOf(rewriter, operand.getDefiningOp(), loop))
      return false;
  }
  rewriter.moveOpBefore(op, loop);
  return true;
}

/// Erases the ops of `roots` (null entries allowed) that are dead, then the
/// producers of their operands that die with them. An op is looked at only
/// while it exists: one root may produce another's operand, one producer may
/// feed several operands, and a root may repeat.
void eraseDead(RewriterBase &rewriter, ArrayRef<Operation *> roots) {
  llvm::SetVector<Operation *> worklist;
  for (Operation *root : roots)
    if (root)
      worklist.insert(root);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.insert(producer);
    // Erasing `op` erases what it nests.
    if (op->getNumRegions() != 0)
      op->walk([&](Operation *nested) { worklist.remove(nested); });
    rewriter.eraseOp(op);
  }
}

} // namespace

FailureOr<RopeWholeAttention>
mlir::rope::matchRopeWholeAttention(const RopeAttentionContraction &scores) {
  linalg::LinalgOp op = scores.contraction;
  MLIRContext *ctx = op->getContext();
  RopeWholeAttention match;
  match.scores = scores;
  AffineMap scoresMap = op.getIndexingMapMatchingResult(op->getResult(0));
  std::optional<unsigned> keyPos =
      scoresMap.getResultPosition(getAffineDimExpr(scores.keyDim, ctx));
  if (!keyPos)
    return skip(op, "whole attention: the key dim is not a scores dim", false);
  match.scoresKeyPos = *keyPos;

  // Until a softmax is found this may just be scores: say why only under
  // -debug-only.
  Value value = op->getResult(0);
  for (;;) {
    if (!value.hasOneUse())
      return skip(op,
                  "whole attention: scores (or an epilogue) have other "
                  "users or none",
                  false);
    Operation *user = *value.getUsers().begin();
    if ((match.softmax = dyn_cast<linalg::SoftmaxOp>(user)))
      break;
    auto elementwise = dyn_cast<linalg::LinalgOp>(user);
    std::optional<unsigned> operand =
        elementwise ? elementwiseOn(elementwise, value) : std::nullopt;
    if (!operand)
      return skip(op,
                  "whole attention: the scores do not reach "
                  "linalg.softmax through elementwise ops",
                  false);
    match.epilogue.push_back(elementwise);
    match.epilogueOperands.push_back(*operand);
    value = elementwise->getResult(0);
  }
  bool remarks = scores.remarks;
  linalg::SoftmaxOp softmax = match.softmax;
  if (softmax.getInput() != value || !softmax.hasPureTensorSemantics())
    return skip(softmax,
                "whole attention: softmax on tensors of the scores "
                "needed",
                remarks);
  if (softmax.getDimension() != *keyPos)
    return skip(softmax, "whole attention: softmax is not over the key dim",
                remarks);
  if (!accumulatesIntoZero(op))
    return skip(softmax,
                "whole attention: Q·Kᵀ does not accumulate into "
                "zeros",
                remarks);
  Value probs = softmax->getResult(0);
  if (!probs.hasOneUse())
    return skip(softmax, "whole attention: softmax has other users", remarks);
  auto values = dyn_cast<linalg::LinalgOp>(*probs.getUsers().begin());
  if (!values || !values.hasPureTensorSemantics() ||
      !linalg::isaContractionOpInterface(values) ||
      values.getDpsInputOperand(0)->get() != probs)
    return skip(softmax,
                "whole attention: softmax does not feed input 0 of "
                "a contraction (P·V)",
                remarks);
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(values);
  AffineMap probsMap =
      values.getMatchingIndexingMap(values.getDpsInputOperand(0));
  AffineMap outMap = values.getMatchingIndexingMap(values.getDpsInitOperand(0));
  if (failed(dims) || dims->k.size() != 1 ||
      loopDimOf(probsMap, *keyPos) != dims->k.front())
    return skip(values, "whole attention: P·V does not contract the key dim",
                remarks);
  std::optional<unsigned> queryDim = loopDimOf(
      probsMap,
      scoresMap.getResultPosition(getAffineDimExpr(scores.queryDim, ctx))
          .value_or(0));
  for (unsigned r = 0; r < probsMap.getNumResults(); ++r) {
    std::optional<unsigned> dim = loopDimOf(probsMap, r);
    if (!dim || (r != *keyPos &&
                 !outMap.getResultPosition(getAffineDimExpr(*dim, ctx))))
      return skip(values,
                  "whole attention: P·V's map of P is not a "
                  "permutation onto its result",
                  remarks);
  }
  if (!queryDim || !llvm::is_contained(dims->m, *queryDim))
    return skip(values,
                "whole attention: P·V's query dim is not the scores' "
                "query dim",
                remarks);
  if (!accumulatesIntoZero(values))
    return skip(values, "whole attention: P·V does not accumulate into zeros",
                remarks);
  if (!isa<FloatType>(getElementTypeOrSelf(probs.getType())))
    return skip(values, "whole attention: not floating point", remarks);
  if (!match.epilogue.empty())
    match.maskOperand =
        additiveMask(match.epilogue.back(), match.epilogueOperands.back());
  match.values = values;
  match.valuesBatchDims.assign(dims->batch.begin(), dims->batch.end());
  match.valuesQueryDim = *queryDim;
  match.valuesKeyDim = dims->k.front();
  return match;
}

FailureOr<RopeAttentionFusionResult> mlir::rope::fuseRopeIntoWholeAttention(
    RewriterBase &rewriter, const RopeWholeAttention &match,
    const RopeAttentionFusionOptions &options) {
  linalg::LinalgOp values = match.values;
  linalg::LinalgOp scores = match.scores.contraction;
  MLIRContext *ctx = values->getContext();
  Location loc = values.getLoc();
  unsigned keyPos = match.scoresKeyPos;
  int64_t keys =
      cast<ShapedType>(scores->getResult(0).getType()).getDimSize(keyPos);
  int64_t keyTile = clampTile(options.keyTileSize, keys);
  SmallVector<int64_t> ranges = values.getStaticLoopRanges();
  int64_t queryTile =
      clampTile(options.queryTileSize, ranges[match.valuesQueryDim]);
  if (keyTile == 0 || queryTile == 0)
    return skip(values,
                "whole attention: a dynamic query or key dim needs "
                "a nonzero tile size",
                match.scores.remarks);

  // The query-tile loops: P·V tiled over its batch dims by 1 and its query
  // dim; the channels of V and a GQA group stay whole.
  unsigned numLoops = ranges.size();
  SmallVector<OpFoldResult> tileSizes(numLoops, rewriter.getIndexAttr(0));
  SmallVector<int64_t> interchange;
  for (unsigned d : match.valuesBatchDims) {
    tileSizes[d] = rewriter.getIndexAttr(1);
    interchange.push_back(d);
  }
  tileSizes[match.valuesQueryDim] = rewriter.getIndexAttr(queryTile);
  interchange.push_back(match.valuesQueryDim);
  for (unsigned d = 0; d < numLoops; ++d)
    if (!llvm::is_contained(interchange, d))
      interchange.push_back(d);
  FailureOr<scf::SCFTilingResult> tiled = tileWithLoops(
      rewriter, values, tileSizes, interchange, queryLoopType(options));
  if (failed(tiled))
    return skip(values, "whole attention: tiling P·V failed",
                match.scores.remarks);
  auto valuesTile = cast<linalg::LinalgOp>(tiled->tiledOps.back());

  // The query tile of the probabilities, in the scores' index space (the
  // epilogue and the softmax map it identically).
  Value probsTile = valuesTile.getDpsInputOperand(0)->get();
  SmallVector<OpFoldResult> offsets, sizes;
  Operation *probsSlice = probsTile.getDefiningOp<tensor::ExtractSliceOp>();
  if (probsSlice) {
    auto slice = cast<tensor::ExtractSliceOp>(probsSlice);
    offsets = slice.getMixedOffsets();
    sizes = slice.getMixedSizes();
  } else {
    rewriter.setInsertionPoint(valuesTile);
    offsets.assign(cast<ShapedType>(probsTile.getType()).getRank(),
                   rewriter.getIndexAttr(0));
    sizes = tensor::getMixedSizes(rewriter, loc, probsTile);
  }
  unsigned rank = sizes.size();
  auto type = cast<FloatType>(getElementTypeOrSelf(probsTile.getType()));
  APFloat zero = APFloat::getZero(type.getFloatSemantics());
  APFloat negInf = APFloat::getInf(type.getFloatSemantics(), true);
  SmallVector<OpFoldResult> rowSizes(sizes);
  rowSizes.erase(rowSizes.begin() + keyPos);
  OpFoldResult keyExtent = sizes[keyPos];

  // Where a row (a scores index without the key) is in the output: through
  // P·V's maps of P and of its result.
  AffineMap probsMap =
      valuesTile.getMatchingIndexingMap(valuesTile.getDpsInputOperand(0));
  AffineMap outMap =
      valuesTile.getMatchingIndexingMap(valuesTile.getDpsInitOperand(0));
  unsigned outRank = outMap.getNumResults();
  SmallVector<AffineExpr> rowInOut;
  for (unsigned r = 0; r < rank; ++r)
    if (r != keyPos)
      rowInOut.push_back(getAffineDimExpr(
          *outMap.getResultPosition(probsMap.getResult(r)), ctx));
  AffineMap rowMap = AffineMap::get(outRank, 0, rowInOut, ctx);
  AffineMap outId = AffineMap::getMultiDimIdentityMap(outRank, ctx);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  AffineMap row = dropDim(ctx, rank, keyPos);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> rowReduction(parallel);
  rowReduction[keyPos] = utils::IteratorType::reduction;
  SmallVector<utils::IteratorType> rowParallel(rank - 1,
                                               utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> outParallel(outRank,
                                               utils::IteratorType::parallel);

  // P·V's iteration domain on the query tile, from P's tile and the other
  // operands' shapes (not from the whole-size probabilities).
  rewriter.setInsertionPoint(valuesTile);
  SmallVector<OpFoldResult> domainSizes(numLoops);
  for (OpOperand &operand : valuesTile->getOpOperands()) {
    AffineMap map = valuesTile.getMatchingIndexingMap(&operand);
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      std::optional<unsigned> dim = loopDimOf(map, r);
      if (!dim || domainSizes[*dim])
        continue;
      domainSizes[*dim] =
          operand.getOperandNumber() == 0
              ? sizes[r]
              : tensor::getMixedSize(rewriter, loc, operand.get(), r);
    }
  }

  Value init = valuesTile.getDpsInitOperand(0)->get();
  Value max0 = filled(rewriter, loc, rowSizes, type, negInf);
  Value sum0 = filled(rewriter, loc, rowSizes, type, zero);
  Value acc0 =
      castTo(rewriter, loc,
             filled(rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
                    type, zero),
             init.getType());
  Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value ub = getValueOrCreateConstantIndexOp(rewriter, loc, keyExtent);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, keyTile);
  Operation *scoresTile = nullptr;
  SmallVector<Operation *> deadSlices;
  bool failedTiling = false;
  // One key tile: the scores, the epilogue, the online-softmax update and
  // P·V; yields the new (max, sum, acc).
  auto buildKeyTile = [&](OpBuilder &b, Location loc, Value key,
                          OpFoldResult size, ArrayRef<OpFoldResult> tileOffsets,
                          ArrayRef<OpFoldResult> tileSizes, ValueRange args) {
    Value max = args[0], sum = args[1], acc = args[2];
    // The scores tile, accumulating into a tile of zeros (not a slice
    // of the whole-size accumulator), then the epilogue on it.
    FailureOr<TilingResult> qk =
        cast<TilingInterface>(scores.getOperation())
            .generateResultTileValue(b, 0, tileOffsets, tileSizes);
    if (failed(qk)) {
      failedTiling = true;
      scf::YieldOp::create(b, loc, args);
      return;
    }
    scoresTile = qk->tiledOps.front();
    OpOperand &qkInit =
        *cast<linalg::LinalgOp>(scoresTile).getDpsInitOperand(0);
    deadSlices.push_back(qkInit.get().getDefiningOp());
    b.setInsertionPoint(scoresTile);
    qkInit.set(castTo(b, loc, filled(b, loc, tileSizes, type, zero),
                      qkInit.get().getType()));
    b.setInsertionPointAfter(scoresTile);
    Value s = qk->tiledValues.front();
    for (auto [epilogue, index] :
         llvm::zip(match.epilogue, match.epilogueOperands)) {
      linalg::LinalgOp epilogueOp = epilogue;
      FailureOr<TilingResult> tile =
          cast<TilingInterface>(epilogueOp.getOperation())
              .generateResultTileValue(b, 0, tileOffsets, tileSizes);
      if (failed(tile)) {
        failedTiling = true;
        break;
      }
      Operation *tileOp = tile->tiledOps.front();
      OpOperand &input = tileOp->getOpOperand(index);
      OpOperand &out = *cast<linalg::LinalgOp>(tileOp).getDpsInitOperand(0);
      deadSlices.push_back(input.get().getDefiningOp());
      deadSlices.push_back(out.get().getDefiningOp());
      b.setInsertionPoint(tileOp);
      input.set(castTo(b, loc, s, input.get().getType()));
      out.set(castTo(b, loc, tensor::EmptyOp::create(b, loc, tileSizes, type),
                     out.get().getType()));
      b.setInsertionPointAfter(tileOp);
      s = tile->tiledValues.front();
    }
    if (failedTiling) {
      scf::YieldOp::create(b, loc, args);
      return;
    }

    // Online softmax. The running max is read (for P and the rescale)
    // before it is updated in place, so that it stays in its buffer.
    auto maximum = [](OpBuilder &b, Location loc, ValueRange a) -> Value {
      return arith::MaximumFOp::create(b, loc, a[0], a[1]);
    };
    Value tileMax = generic(b, loc, s, filled(b, loc, rowSizes, type, negInf),
                            {id, row}, rowReduction, maximum);
    Value probs = generic(
        b, loc, {s, tileMax, max},
        tensor::EmptyOp::create(b, loc, tileSizes, type), {id, row, row, id},
        parallel, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value shift = finiteShift(b, loc, maximum(b, loc, a.slice(1, 2)));
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, a[0], shift));
        });
    Value rescale = generic(
        b, loc, {max, tileMax}, tensor::EmptyOp::create(b, loc, rowSizes, type),
        {rowId, rowId, rowId}, rowParallel,
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value shift = finiteShift(b, loc, maximum(b, loc, a.take_front(2)));
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, a[0], shift));
        });
    Value newMax =
        generic(b, loc, tileMax, max, {rowId, rowId}, rowParallel, maximum);
    auto multiply = [](OpBuilder &b, Location loc, ValueRange a) -> Value {
      return arith::MulFOp::create(b, loc, a[0], a[1]);
    };
    Value newSum =
        generic(b, loc, rescale, sum, {rowId, rowId}, rowParallel, multiply);
    newSum = generic(b, loc, probs, newSum, {id, row}, rowReduction,
                     [](OpBuilder &b, Location loc, ValueRange a) {
                       return arith::AddFOp::create(b, loc, a[0], a[1]);
                     });
    Value scaledAcc =
        generic(b, loc, rescale, acc, {rowMap, outId}, outParallel, multiply);

    // P·V on the key tile, accumulating into the rescaled output.
    SmallVector<OpFoldResult> domainOffsets(numLoops, b.getIndexAttr(0));
    SmallVector<OpFoldResult> keyDomain(domainSizes);
    domainOffsets[match.valuesKeyDim] = key;
    keyDomain[match.valuesKeyDim] = size;
    FailureOr<TilingResult> pv =
        cast<TilingInterface>(valuesTile.getOperation())
            .getTiledImplementation(b, domainOffsets, keyDomain);
    if (failed(pv)) {
      failedTiling = true;
      scf::YieldOp::create(b, loc, args);
      return;
    }
    auto pvTile = cast<linalg::LinalgOp>(pv->tiledOps.front());
    OpOperand &p = *pvTile.getDpsInputOperand(0);
    OpOperand &out = *pvTile.getDpsInitOperand(0);
    deadSlices.push_back(p.get().getDefiningOp());
    deadSlices.push_back(out.get().getDefiningOp());
    b.setInsertionPoint(pvTile);
    p.set(castTo(b, loc, probs, p.get().getType()));
    out.set(castTo(b, loc, scaledAcc, out.get().getType()));
    b.setInsertionPointAfter(pvTile);
    Value newAcc = castTo(b, loc, pv->tiledValues.front(), acc.getType());
    scf::YieldOp::create(b, loc, ValueRange{newMax, newSum, newAcc});
  };
  // Whether the mask's slice for a key tile has an entry other than −inf
  // (NaN counts, so that it propagates): its max, rows first so that the
  // row reductions vectorize.
  auto hasUnmaskedEntry = [&](OpBuilder &b, Location loc,
                              ArrayRef<OpFoldResult> tileOffsets,
                              ArrayRef<OpFoldResult> tileSizes) -> Value {
    linalg::LinalgOp maskOp = match.epilogue.back();
    OpOperand &maskOperand = maskOp->getOpOperand(*match.maskOperand);
    AffineMap maskMap = maskOp.getMatchingIndexingMap(&maskOperand);
    SmallVector<OpFoldResult> maskOffsets, maskSizes;
    for (unsigned r = 0; r < maskMap.getNumResults(); ++r) {
      unsigned dim = maskMap.getDimPosition(r);
      maskOffsets.push_back(tileOffsets[dim]);
      maskSizes.push_back(tileSizes[dim]);
    }
    SmallVector<OpFoldResult> strides(maskOffsets.size(), b.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, maskOperand.get(), maskOffsets, maskSizes, strides);
    auto maximum = [](OpBuilder &b, Location loc, ValueRange a) -> Value {
      return arith::MaximumFOp::create(b, loc, a[0], a[1]);
    };
    // Reduce the innermost dim, then the rest, down to a 0-d tensor.
    while (true) {
      auto type = cast<RankedTensorType>(slice.getType());
      unsigned rank = type.getRank();
      if (rank == 0)
        break;
      SmallVector<OpFoldResult> kept = tensor::getMixedSizes(b, loc, slice);
      kept.pop_back();
      SmallVector<utils::IteratorType> iterators(rank,
                                                 utils::IteratorType::parallel);
      iterators.back() = utils::IteratorType::reduction;
      slice = generic(
          b, loc, slice,
          filled(b, loc, kept, cast<FloatType>(type.getElementType()), negInf),
          {AffineMap::getMultiDimIdentityMap(rank, ctx),
           dropDim(ctx, rank, rank - 1)},
          iterators, maximum);
    }
    Value max = tensor::ExtractOp::create(b, loc, slice, ValueRange{});
    Value negInfValue = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(max.getType(), negInf));
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, max,
                                 negInfValue);
  };
  auto keyLoop = scf::ForOp::create(
      rewriter, loc, lb, ub, step, ValueRange{max0, sum0, acc0},
      [&](OpBuilder &b, Location loc, Value key, ValueRange args) {
        OpFoldResult size = b.getIndexAttr(keyTile);
        if (ShapedType::isDynamic(keys) || keys % keyTile) {
          AffineExpr d0 = getAffineDimExpr(0, ctx);
          AffineExpr s0 = getAffineSymbolExpr(0, ctx);
          size = affine::makeComposedFoldedAffineMin(
              b, loc,
              AffineMap::get(
                  1, 1, {getAffineConstantExpr(keyTile, ctx), s0 - d0}, ctx),
              {key, keyExtent});
        }
        SmallVector<OpFoldResult> tileOffsets(offsets), tileSizes(sizes);
        tileOffsets[keyPos] = key;
        tileSizes[keyPos] = size;
        if (match.maskOperand) {
          // A key tile masked everywhere adds exp(−inf) = 0 to every row and
          // leaves the running max, so the iter_args pass through unchanged:
          // skip it (a causal mask's upper triangle).
          Value unmasked = hasUnmaskedEntry(b, loc, tileOffsets, tileSizes);
          auto skipIf = scf::IfOp::create(
              b, loc, unmasked,
              [&](OpBuilder &b, Location loc) {
                buildKeyTile(b, loc, key, size, tileOffsets, tileSizes, args);
              },
              [&](OpBuilder &b, Location loc) {
                scf::YieldOp::create(b, loc, args);
              });
          scf::YieldOp::create(b, loc, skipIf.getResults());
          return;
        }
        buildKeyTile(b, loc, key, size, tileOffsets, tileSizes, args);
      });
  eraseDead(rewriter, deadSlices);
  if (failedTiling) {
    // Not expected (the ops were matched as tileable); the loop yields its
    // inputs and is dropped, leaving the query-tiled form.
    rewriter.eraseOp(keyLoop);
    return skip(values, "whole attention: tiling a key tile failed",
                match.scores.remarks);
  }

  // O / l, in place of the query tile's P·V.
  rewriter.setInsertionPoint(valuesTile);
  Value out = generic(rewriter, loc, keyLoop.getResult(1), keyLoop.getResult(2),
                      {rowMap, outId}, outParallel,
                      [](OpBuilder &b, Location loc, ValueRange a) {
                        return arith::DivFOp::create(b, loc, a[1], a[0]);
                      });
  rewriter.replaceOp(valuesTile, out);
  // The softmax may die with the slice of it.
  eraseDead(rewriter, {probsSlice, match.softmax});

  // Hoist what the key loop does not change (Q's slice, also out of the
  // masked-tile scf.if), then rotate Q per query tile and K per key tile.
  hoistOutOf(rewriter, scoresTile->getOperand(0).getDefiningOp(), keyLoop);
  hoistLoopInvariants(rewriter, keyLoop);
  RopeAttentionFusionResult result;
  result.loops = tiled->loops;
  result.loops.push_back(keyLoop);
  result.tiledContraction = scoresTile;
  const RopeAttentionContraction &qk = match.scores;
  if (qk.query && options.fuseQuery)
    result.query = fuseRopeTile(rewriter, scoresTile, 0, qk.query,
                                MutableArrayRef(result.loops).drop_back());
  if (qk.key && options.fuseKey)
    result.key = fuseRopeTile(rewriter, scoresTile, 1, qk.key, result.loops);
  return result;
}

namespace {
/// Rewrites one Q·Kᵀ contraction fed by rope.apply as the control function
/// says: whole attention where it matches, else the scores.
///
/// The tiled contraction is again a contraction fed by rope.apply (the tile
/// rotations), so it would match again, and again. Nothing in the IR tells
/// a tile made here from a contraction someone wrote inside a loop (chunked
/// attention is legitimately tiled further), and partial tiles have dynamic
/// extents, so "already fits one tile" cannot say it either: the tile is
/// marked with a discardable attribute instead, which the pattern skips.
struct FuseRopeIntoAttentionPattern
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  FuseRopeIntoAttentionPattern(MLIRContext *ctx,
                               RopeAttentionFusionControlFn control,
                               bool remarks)
      : OpInterfaceRewritePattern(ctx), control(std::move(control)),
        remarks(remarks) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kRopeAttentionTileAttrName))
      return rewriter.notifyMatchFailure(op, "a tile of a fused contraction");
    FailureOr<RopeAttentionContraction> match = matchRopeAttention(op, remarks);
    if (failed(match))
      return failure();
    std::optional<RopeAttentionFusionOptions> options = control(*match);
    if (!options)
      return skip(op, "declined by the control function", remarks);
    FailureOr<RopeAttentionFusionResult> result = failure();
    if (options->wholeAttention) {
      FailureOr<RopeWholeAttention> whole = matchRopeWholeAttention(*match);
      if (succeeded(whole))
        result = fuseRopeIntoWholeAttention(rewriter, *whole, *options);
    }
    if (failed(result))
      result = fuseRopeIntoAttention(rewriter, *match, *options);
    if (failed(result))
      return failure();
    rewriter.modifyOpInPlace(result->tiledContraction, [&] {
      result->tiledContraction->setAttr(kRopeAttentionTileAttrName,
                                        rewriter.getUnitAttr());
    });
    return success();
  }

private:
  RopeAttentionFusionControlFn control;
  bool remarks;
};
} // namespace

void mlir::rope::populateRopeFuseIntoAttentionPatterns(
    RewritePatternSet &patterns, RopeAttentionFusionControlFn control,
    bool remarks) {
  patterns.add<FuseRopeIntoAttentionPattern>(patterns.getContext(),
                                             std::move(control), remarks);
}

void mlir::rope::removeRopeAttentionTileMarkers(Operation *root) {
  root->walk([](Operation *op) { op->removeAttr(kRopeAttentionTileAttrName); });
}

void mlir::rope::fuseRopeIntoAttention(
    Operation *root, const RopeAttentionFusionControlFn &control,
    bool remarks) {
  RewritePatternSet patterns(root->getContext());
  populateRopeFuseIntoAttentionPatterns(patterns, control, remarks);
  SmallVector<Operation *> contractions;
  root->walk([&](linalg::LinalgOp op) {
    if (llvm::any_of(op.getDpsInputs(),
                     [](Value v) { return v.getDefiningOp<ApplyOp>(); }))
      contractions.push_back(op);
  });
  // Each contraction once, as a walk would: the tiles are never candidates
  // (ExistingOps), a remark is said once, and the rest of the IR is not
  // folded; the markers are then not needed.
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  (void)applyOpPatternsGreedily(contractions, std::move(patterns), config);
  removeRopeAttentionTileMarkers(root);
}

namespace {
struct RopeFuseIntoAttentionPass
    : rope::impl::RopeFuseIntoAttentionPassBase<RopeFuseIntoAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (fuseKey != "auto" && fuseKey != "always" && fuseKey != "never") {
      emitError(getOperation()->getLoc())
          << "fuse-key must be always, never or auto, got '" << fuseKey << "'";
      return signalPassFailure();
    }
    if (queryTileSize < 0 || keyTileSize < 0) {
      emitError(getOperation()->getLoc()) << "tile sizes must be >= 0";
      return signalPassFailure();
    }
    // A softmax written out in linalg ops is fused as linalg.softmax.
    if (wholeAttention)
      raiseSoftmax(getOperation(), remarks);
    fuseRopeIntoAttention(
        getOperation(),
        [&](const RopeAttentionContraction &match)
            -> std::optional<RopeAttentionFusionOptions> {
          RopeAttentionFusionOptions options;
          options.queryTileSize = queryTileSize;
          options.keyTileSize = keyTileSize;
          options.fuseKey = fuseKey == "always";
          options.tileHeads = tileHeads;
          options.wholeAttention = wholeAttention;
          options.parallelLoops = parallelLoops;
          if (fuseKey == "auto") {
            // One query tile rotates every key once: fusing K only saves
            // the rotated keys' round trip through memory.
            linalg::LinalgOp op = match.contraction;
            int64_t queries = op.getStaticLoopRanges()[match.queryDim];
            options.fuseKey = !ShapedType::isDynamic(queries) &&
                              (queryTileSize == 0 || queries <= queryTileSize);
          }
          return options;
        },
        remarks);
  }
};
} // namespace
