//===- RaiseCacheAppend.cpp - A rotation inserted into a KV cache ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The KV-cache append as frontends write it: the rotated keys inserted into
// the cache at the current position,
//
//   %k_rot = rope.apply ins(%k : [B, S, H, D]) ... outs(%e)
//   %kc'   = tensor.insert_slice %k_rot into %kc[0, %p, 0, 0] [B, S, H, D]
//                                               [1, 1, 1, 1]
//
// (JAX's `lax.dynamic_update_slice(cache, k_rot, (0, p, 0, 0))` after
// stablehlo -> linalg, whose offsets are already clamped into the cache;
// a slicing assignment `cache[:, :, p:p+S] = k_rot` through torch-mlir)
// becomes one `rope.apply` with `slots` writing straight into the cache:
//
//   %s   = linalg.generic outs(tensor<B x S x i64>)    // the tokens' slots
//            { sum_i (offset_i + index_i) * stride_i }  // row-major over the
//                                                       // cache's token dims
//   %kc' = rope.apply ins(%k) ... slots(%s) outs(%kc)
//
// The offsets are the insert's own values, as they are. Folded only when it
// computes the same thing:
//   - the source is a rope.apply result (without slots) whose only use is
//     this insert (otherwise the rotated tensor is needed anyway);
//   - unit strides; a rank-reducing insert only of a rotation whose unit
//     dims were collapsed away (linalg-fold-unit-extent-dims): the rotation
//     is then rebuilt on the insert's unreduced view of its input, its
//     token dims the dims the insert appends along;
//   - every dim that is not one of the op's token dims (heads, channels) is
//     inserted whole: offset 0 and the cache's full size (a partial head or
//     channel range is refused);
//   - the insert's sizes are the rotated tensor's shape (insert_slice's
//     semantics), and its offsets are in bounds (insert_slice's semantics:
//     an out-of-bounds insert is undefined), so every slot is valid.
// A plain (non-rope) value inserted into a cache is left alone.
//
//===----------------------------------------------------------------------===//

#include "RaiseCacheAppend.h"
#include "PayloadAnalysis.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Verifier.h"
#include "rope/Dialect/Rope/Utils/GuardedValueBounds.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rope;

namespace {

/// True when `size` is provably dim `d` of `dest` (static, the same
/// tensor.dim, or equal by value bounds).
bool isFullSize(OpFoldResult size, Value dest, int64_t d) {
  auto type = cast<RankedTensorType>(dest.getType());
  std::optional<int64_t> constant = getConstantIntValue(size);
  if (!type.isDynamicDim(d))
    return constant && *constant == type.getDimSize(d);
  if (auto value = dyn_cast<Value>(size))
    if (auto dim = value.getDefiningOp<tensor::DimOp>())
      if (dim.getSource() == dest && dim.getConstantIndex() == d)
        return true;
  return provablyEqual(ValueBoundsConstraintSet::Variable(size),
                       ValueBoundsConstraintSet::Variable(dest, d));
}

/// `value` reshaped to `type`, the two differing only in unit dims: its
/// unit dims collapsed away, then the others expanded into `type`.
Value reshapeUnitDims(RewriterBase &rewriter, Location loc, Value value,
                      RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  auto flat = RankedTensorType::get(raise::nonUnitSizes(from.getShape()),
                                    from.getElementType());
  if (flat != from) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(from, flat);
    if (!groups)
      return {};
    value =
        tensor::CollapseShapeOp::create(rewriter, loc, flat, value, *groups);
  }
  if (flat == type)
    return value;
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(flat, type);
  if (!groups)
    return {};
  return tensor::ExpandShapeOp::create(rewriter, loc, type, value, *groups);
}

LogicalResult raiseCacheAppend(tensor::InsertSliceOp insert,
                               RewriterBase &rewriter, std::string &why) {
  // The rotation, or (after linalg-fold-unit-extent-dims) a collapse of its
  // unit dims that a rank-reducing insert puts back.
  Value inserted = insert.getSource();
  auto view = inserted.getDefiningOp<tensor::CollapseShapeOp>();
  if (view && view.getSrc().getDefiningOp<ApplyOp>() &&
      raise::nonUnitSizes(view.getSrcType().getShape()) ==
          raise::nonUnitSizes(view.getResultType().getShape()))
    inserted = view.getSrc();
  else
    view = {};
  auto rot = inserted.getDefiningOp<ApplyOp>();
  if (!rot)
    return why = "the inserted value is not a rope.apply result", failure();
  if (rot.getSlots())
    return why = "the rope.apply already appends to a cache", failure();
  if (!rot.getResult().hasOneUse() || (view && !view.getResult().hasOneUse()))
    return why = "the rotated tensor has other uses", failure();
  Value dest = insert.getDest();
  auto destType = cast<RankedTensorType>(dest.getType());
  auto sourceType = cast<RankedTensorType>(insert.getSource().getType());
  int64_t rank = destType.getRank();
  if (!llvm::all_of(insert.getMixedStrides(),
                    [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
    return why = "non-unit strides", failure();
  SmallVector<int64_t> tokenDims = rot.getTokenDimsOrDefault();
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  // The rotation's input, in the insert's unreduced view of the rotated
  // tensor when that differs from the rotation's own shape in unit dims.
  Value input = rot.getInput();
  DenseI64ArrayAttr tokenDimsAttr = rot.getTokenDimsAttr();
  RankedTensorType rotType = rot.getInputType();
  if (sourceType.getRank() != rank || view) {
    if (rot.getMropeAttr())
      return why = "a rank-reducing insert of an M-RoPE rotation", failure();
    SmallVector<int64_t> full(insert.getStaticSizes());
    if (ShapedType::isDynamicShape(full) || !rotType.hasStaticShape() ||
        raise::nonUnitSizes(full) != raise::nonUnitSizes(rotType.getShape()) ||
        full.back() != rotType.getShape().back() || full.back() == 1)
      return why = "rank-reducing insert", failure();
    // The token dims: those the insert appends along (not inserted whole).
    // They must be where the rotation's token dims land: the insert keeps
    // the rotated tensor's order, so its dims of size > 1 are the view's in
    // order, and a token dim of size 1 takes the next appended unit dim.
    SmallVector<int64_t> appended;
    for (int64_t d = 0; d < rank; ++d)
      if (!isConstantIntValue(offsets[d], 0) || !isFullSize(sizes[d], dest, d))
        appended.push_back(d);
    SmallVector<int64_t> fullNonUnit;
    for (int64_t d = 0; d < rank; ++d)
      if (full[d] != 1)
        fullNonUnit.push_back(d);
    SmallVector<int64_t> landed;
    int64_t nonUnitSeen = 0;
    for (int64_t d = 0; d < rotType.getRank(); ++d) {
      bool unit = rotType.getDimSize(d) == 1;
      if (llvm::is_contained(tokenDims, d)) {
        if (!unit) {
          landed.push_back(fullNonUnit[nonUnitSeen]);
        } else {
          auto next = llvm::find_if(appended, [&](int64_t a) {
            return full[a] == 1 && !llvm::is_contained(landed, a) &&
                   (landed.empty() || a > landed.back());
          });
          if (next == appended.end())
            return why = "the dims the insert appends along are not the "
                         "rotation's token dims",
                   failure();
          landed.push_back(*next);
        }
      }
      nonUnitSeen += unit ? 0 : 1;
    }
    if (landed != appended)
      return why = "the dims the insert appends along are not the "
                   "rotation's token dims",
             failure();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(insert);
    input =
        reshapeUnitDims(rewriter, insert.getLoc(), input,
                        RankedTensorType::get(full, rotType.getElementType()));
    if (!input)
      return why = "rank-reducing insert", failure();
    tokenDims = appended;
    tokenDimsAttr = rewriter.getDenseI64ArrayAttr(appended);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(tokenDims, d))
      continue;
    if (!isConstantIntValue(offsets[d], 0) || !isFullSize(sizes[d], dest, d))
      return why = "dim " + std::to_string(d) +
                   " (not a token dim) is not inserted whole",
             failure();
  }

  // The row-major slot strides below multiply the cache's static token dim
  // sizes: a type can claim sizes whose product does not fit an index.
  int64_t slotsPerRow = 1;
  for (int64_t d : ArrayRef<int64_t>(tokenDims).drop_front())
    if (d < 0 || d >= rank ||
        (!destType.isDynamicDim(d) &&
         llvm::MulOverflow(slotsPerRow, destType.getDimSize(d), slotsPerRow)))
      return why = "the cache's token dims have more slots than an index "
                   "counts",
             failure();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(insert);
  Location loc = insert.getLoc();
  // Row-major strides of the cache's token dims (static where the sizes
  // are), and the insert's offsets on them, as they are.
  int64_t numTokenDims = tokenDims.size();
  SmallVector<OpFoldResult> strides(numTokenDims);
  OpFoldResult stride = rewriter.getIndexAttr(1);
  for (int64_t i = numTokenDims - 1; i >= 0; --i) {
    strides[i] = stride;
    if (i == 0)
      break;
    OpFoldResult size = tensor::getMixedSize(rewriter, loc, dest, tokenDims[i]);
    std::optional<int64_t> a = getConstantIntValue(stride),
                           b = getConstantIntValue(size);
    if (a && b)
      stride = rewriter.getIndexAttr(*a * *b);
    else
      stride = arith::MulIOp::create(
                   rewriter, loc,
                   getValueOrCreateConstantIndexOp(rewriter, loc, stride),
                   getValueOrCreateConstantIndexOp(rewriter, loc, size))
                   .getResult();
  }
  SmallVector<OpFoldResult> tokenOffsets, tokenSizes;
  for (int64_t d : tokenDims) {
    tokenOffsets.push_back(offsets[d]);
    tokenSizes.push_back(sizes[d]);
  }
  // Materialized outside the generic (its body reads them).
  SmallVector<Value> offsetValues, strideValues;
  for (int64_t i = 0; i < numTokenDims; ++i) {
    offsetValues.push_back(
        isConstantIntValue(tokenOffsets[i], 0)
            ? Value()
            : getValueOrCreateConstantIndexOp(rewriter, loc, tokenOffsets[i]));
    strideValues.push_back(
        isConstantIntValue(strides[i], 1)
            ? Value()
            : getValueOrCreateConstantIndexOp(rewriter, loc, strides[i]));
  }
  Type i64 = rewriter.getI64Type();
  Value empty = tensor::EmptyOp::create(rewriter, loc, tokenSizes, i64);
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(numTokenDims, rewriter.getContext());
  Value slots =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{empty.getType()}, ValueRange{},
          ValueRange{empty}, ArrayRef<AffineMap>{identity},
          SmallVector<utils::IteratorType>(numTokenDims,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location nloc, ValueRange) {
            Value slot;
            for (int64_t i = 0; i < numTokenDims; ++i) {
              Value row = linalg::IndexOp::create(b, nloc, i);
              if (offsetValues[i])
                row = arith::AddIOp::create(b, nloc, offsetValues[i], row);
              if (strideValues[i])
                row = arith::MulIOp::create(b, nloc, row, strideValues[i]);
              slot = slot ? arith::AddIOp::create(b, nloc, slot, row) : row;
            }
            Value slot64 = arith::IndexCastOp::create(b, nloc, i64, slot);
            linalg::YieldOp::create(b, nloc, slot64);
          })
          .getResult(0);
  auto raised = ApplyOp::create(
      rewriter, rot.getLoc(), Type(destType), input, rot.getPositions(),
      rot.getOffset(), rot.getLength(), rot.getCos(), rot.getSin(),
      rot.getNormWeight(), rot.getQuantScale(), slots, dest,
      rot.getLayoutAttr(), rot.getRotaryDimAttr(), tokenDimsAttr,
      rot.getFreqsAttr(), rot.getMropeAttr(), rot.getMagnitudeAttr(),
      rot.getInverseAttr(), rot.getNormEpsilonAttr());
  if (failed(mlir::verify(raised, /*verifyRecursively=*/false))) {
    rewriter.eraseOp(raised);
    rewriter.eraseOp(slots.getDefiningOp());
    rewriter.eraseOp(empty.getDefiningOp());
    return why = "the appending rope.apply does not verify", failure();
  }
  rewriter.replaceOp(insert, raised.getResult());
  Value init = rot.getInit();
  if (view)
    rewriter.eraseOp(view);
  rewriter.eraseOp(rot);
  if (Operation *def = init.getDefiningOp();
      def && isa<tensor::EmptyOp>(def) && def->use_empty())
    rewriter.eraseOp(def);
  return success();
}

struct RaiseCacheAppendPattern : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    if (succeeded(raiseCacheAppend(op, rewriter, why)))
      return success();
    return rewriter.notifyMatchFailure(op, why);
  }
};

} // namespace

void mlir::rope::populateRopeRaiseCacheAppendPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseCacheAppendPattern>(patterns.getContext());
}

void mlir::rope::raiseCacheAppends(Operation *root) {
  SmallVector<tensor::InsertSliceOp> inserts;
  root->walk([&](tensor::InsertSliceOp op) { inserts.push_back(op); });
  IRRewriter rewriter(root->getContext());
  for (tensor::InsertSliceOp op : inserts) {
    std::string why;
    (void)raiseCacheAppend(op, rewriter, why);
  }
}
