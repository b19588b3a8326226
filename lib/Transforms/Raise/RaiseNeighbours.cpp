//===- RaiseNeighbours.cpp - QK-norm and quantization into rope.apply -----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Folds the neighbours of a raised rotation into `rope.apply` (SEMANTICS.md §7
// applied to them: fold only what the IR proves):
//
// QK-norm before (`norm(%w)`, `norm_epsilon`): the op's input, read element
// by element through elementwise linalg ops (named or generic, any split of
// the steps over ops, permuted by transposes), must be
//
//     w[c] * (x[.., c] * rsqrt(sum_c'(x[.., c']^2) / D + eps))
//
// with the sum a reduction over exactly the head dim of the same x, from 0,
// in the compute type (f32 for f16/bf16/f32 x: `x.float()`, an `extf`; f64
// for f64), `x^2` as `x * x`, `fpowi(x, 2)` or `powf(x, 2.0)`, the mean as a
// division by D (torch's `mean`) or a multiplication by 1/D only where that
// is the same number (D a power of two: 1/D is exact and so is the product;
// otherwise sum * f32(1/D) rounds differently from sum / D and nothing is
// folded), eps a constant added to the mean (the value the IR holds, after
// its own truncf), and w a [D] tensor read by the channel only, possibly
// extended, or `c + w` (Gemma's `1 + w`: a small [D] tensor is computed in
// the add's type, which is what the frontend multiplies by). The products
// commute (w * (x * r) = (x * r) * w). Float casts *after* the normalization
// (HF Qwen3 rounds `x * r` to bf16 and multiplies by the bf16 weight in
// bf16, then rotates in bf16) are looked through: the op computes the norm
// and the rotation in f32 and rounds once, the policy rope-raise already
// follows for the rotation (docs/DESIGN.md "Numerics": the intermediate
// roundings to a narrower type are what raising removes). x itself must have
// the op's input element type (its own rounding is the data, not an
// intermediate).
//
// Quantized output after (`quant_scale(%s)`): the op's result, its only
// user chain (every intermediate with one user), element by element:
//   fp8: truncf(clamp(y * s, -L, L)) to f8E4M3FN (L = 448) / f8E5M2
//        (L = 57344), the truncf rounding to nearest even (no rounding
//        attribute, or to_nearest_even);
//   i8:  fptosi(clamp(roundeven(y * s), -128, 127)) (the clamp and the
//        rounding in either order: the bounds are integers), `math.roundeven`
//        only (`math.round` rounds ties away from zero);
// with y * s in f32 (y extended: `y.float()`; casts between the rotation and
// the product are looked through as above), s a constant, a rank-0 f32
// tensor, or an f32 tensor read by the op's one head dim only (per head;
// size-1 dims collapsed away). `y / c` becomes the scale 1/c only for a
// constant power of two c (then y / c == y * (1/c) exactly); a division by
// any other constant or by a tensor is not folded (one rounding apart).
// The clamp is `minimumf`/`maximumf` (NaN propagates) or `select(cmpf)`
// that keeps NaN (an ordered predicate choosing the bound, or an unordered
// one choosing the value). torch-mlir's clamp, `select(cmpf ult, lo, v)`,
// sends NaN to the lower bound while the op keeps NaN (fp8) or writes 0
// (i8), so it is not folded. `minnumf`/`maxnumf` likewise. Either is folded
// when the frontend states `fastmath<nnan>` on the comparison (or on the
// minnumf/maxnumf): NaN is then poison and any result refines it. For i8 a
// NaN reaching fptosi is poison in the IR; the op's 0 refines it.
//
// Reaching the fold from a frontend: written out one step per op (as
// torch-mlir emits it), the norm's products are elementwise, and the
// rotation raise would read through them and see x, w and the rsqrt as
// three data tensors. So `isolateNorms`, before the rotation raise, gathers
// each norm the matcher accepts (its result, or a transpose of it: HF's
// `q_norm(...).transpose(1, 2)`) into one linalg.generic holding the same
// scalar ops in the same order and types; the rotation raise reads that as
// one tensor (it does not look through rsqrt), and `raiseNeighbours` then
// folds it, or restores the original result when no rope.apply consumed it.
//
//===----------------------------------------------------------------------===//

#include "RaiseNeighbours.h"
#include "PayloadAnalysis.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>
#include <set>

#include <cmath>

using namespace mlir;
using namespace mlir::rope;

namespace {

//===----------------------------------------------------------------------===//
// Element-wise reading
//===----------------------------------------------------------------------===//

/// One element of the computation, seen from an element of a root tensor of
/// rank R: a tensor read at `map` (R dims -> its indices), a scalar of the
/// payload of `owner` whose loops are `map` of the root's dims, or a scalar
/// from outside every payload (`owner` null, `map` null).
struct Elem {
  Elem(Value value, AffineMap map = {}, Operation *owner = nullptr,
       Value tensor = {}, AffineMap tensorMap = {})
      : value(value), map(map), owner(owner), tensor(tensor),
        tensorMap(tensorMap) {}

  Value value;
  AffineMap map;
  Operation *owner;
  /// The tensor this element is an element of, when it is one (the last
  /// tensor whose producer was entered, at `tensorMap`).
  Value tensor;
  AffineMap tensorMap;

  bool isTensor() const {
    return !owner && isa<RankedTensorType>(value.getType());
  }
  Operation *def() const { return value.getDefiningOp(); }
  bool operator==(const Elem &o) const {
    return value == o.value && map == o.map && owner == o.owner;
  }
};

/// Follows elements through elementwise linalg ops.
class Reader {
public:
  Elem root(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    return resolve(
        {tensor,
         AffineMap::getMultiDimIdentityMap(type.getRank(), tensor.getContext()),
         nullptr});
  }

  /// Looks through producers until the element is a scalar op of a payload,
  /// a tensor that is not produced by an all-parallel linalg op with a
  /// permutation output map, a block argument of an init, or a captured
  /// scalar.
  Elem resolve(Elem e) {
    for (int steps = 0; steps < 64; ++steps) {
      if (!e.owner) {
        if (!isa<RankedTensorType>(e.value.getType()))
          return {e.value, AffineMap(), nullptr};
        if (std::optional<Elem> source = throughUnitReshape(e)) {
          e = *source;
          continue;
        }
        auto op = e.value.getDefiningOp<linalg::LinalgOp>();
        if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
            !op.isAllParallelLoops())
          return e;
        AffineMap out =
            op.getIndexingMapMatchingResult(cast<OpResult>(e.value));
        if (!out.isPermutation())
          return e;
        Value yielded = op.getBlock()->getTerminator()->getOperand(0);
        e = {yielded, inversePermutation(out).compose(e.map), op, e.value,
             e.map};
        continue;
      }
      auto linalgOp = cast<linalg::LinalgOp>(e.owner);
      if (auto arg = dyn_cast<BlockArgument>(e.value)) {
        if (arg.getOwner() != linalgOp.getBlock())
          return {e.value, AffineMap(), nullptr};
        OpOperand *operand = linalgOp.getMatchingOpOperand(arg);
        if (!linalgOp.isDpsInput(operand))
          return e;
        AffineMap map = linalgOp.getMatchingIndexingMap(operand).compose(e.map);
        e = {operand->get(), map, nullptr, operand->get(), map};
        continue;
      }
      if (!e.owner->isProperAncestor(e.value.getDefiningOp()))
        return {e.value, AffineMap(), nullptr};
      return e;
    }
    return e;
  }

  /// The source element of a tensor element read through a reshape that
  /// only adds or drops dims of size 1 (linalg-fold-unit-extent-dims puts
  /// them between the ops of a norm): each group of the reshape has at most
  /// one dim of another size, the one the source (or result) index is.
  static std::optional<Elem> throughUnitReshape(const Elem &e) {
    Operation *def = e.value.getDefiningOp();
    if (std::optional<Elem> source = throughWholeSlice(e))
      return source;
    Value source;
    SmallVector<ReassociationIndices> groups;
    bool expanding;
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
      source = expand.getSrc();
      groups = expand.getReassociationIndices();
      expanding = true;
    } else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
      source = collapse.getSrc();
      groups = collapse.getReassociationIndices();
      expanding = false;
    } else {
      return std::nullopt;
    }
    // The wide side (more dims) of the reshape, whose groups hold units.
    auto wide = cast<RankedTensorType>(expanding ? e.value.getType()
                                                 : source.getType());
    MLIRContext *ctx = e.value.getContext();
    SmallVector<AffineExpr> exprs;
    for (auto [g, group] : llvm::enumerate(groups)) {
      SmallVector<int64_t> nonUnit;
      for (int64_t d : group)
        if (wide.getDimSize(d) != 1)
          nonUnit.push_back(d);
      if (expanding && nonUnit.size() > 1) {
        // Source dim g split into several (a head dim into KV groups, where
        // a rotation fused into Q·Kᵀ is raised on the grouped view): the
        // row-major linear index of the group's static dims.
        AffineExpr linear = getAffineConstantExpr(0, ctx);
        int64_t stride = 1;
        for (int64_t d : llvm::reverse(nonUnit)) {
          int64_t size = wide.getDimSize(d);
          if (ShapedType::isDynamic(size))
            return std::nullopt;
          linear = linear + e.map.getResult(d) * stride;
          stride *= size;
        }
        exprs.push_back(linear);
        continue;
      }
      if (nonUnit.size() > 1)
        return std::nullopt;
      if (expanding) {
        // Source dim g: the group's one non-unit dim, or index 0.
        exprs.push_back(nonUnit.empty() ? getAffineConstantExpr(0, ctx)
                                        : e.map.getResult(nonUnit.front()));
        continue;
      }
      // Result dim g is the source dims of its group: index 0 on the
      // units, result index g on the other.
      for (int64_t d : group)
        exprs.push_back(!nonUnit.empty() && d == nonUnit.front()
                            ? e.map.getResult(g)
                            : getAffineConstantExpr(0, ctx));
    }
    AffineMap map = AffineMap::get(e.map.getNumDims(), 0, exprs, ctx);
    return Elem{source, map, nullptr, source, map};
  }

  /// The source element of a tensor element read through a slice that
  /// covers its whole tensor and only drops or adds dims of size 1: an
  /// extract_slice of all of its source, or an insert_slice over all of its
  /// destination (linalg-fold-unit-extent-dims{use-rank-reducing-slices}
  /// spells its unit reshapes so). The other slices are not followed.
  static std::optional<Elem> throughWholeSlice(const Elem &e) {
    Operation *def = e.value.getDefiningOp();
    auto extract = dyn_cast_or_null<tensor::ExtractSliceOp>(def);
    auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def);
    if (!(extract && raise::isWholeUnitView(extract)) &&
        !(insert && raise::isWholeUnitView(insert)))
      return std::nullopt;
    auto whole = cast<RankedTensorType>(extract ? extract.getSourceType()
                                                : insert.getDestType());
    llvm::SmallBitVector dropped =
        extract ? extract.getDroppedDims() : insert.getDroppedDims();
    MLIRContext *ctx = e.value.getContext();
    SmallVector<AffineExpr> exprs;
    if (extract) {
      // Source dim k: index 0 where dropped, else the next result index.
      unsigned next = 0;
      for (int64_t k = 0; k < whole.getRank(); ++k)
        exprs.push_back(dropped.test(k) ? getAffineConstantExpr(0, ctx)
                                        : e.map.getResult(next++));
      Value source = extract.getSource();
      AffineMap map = AffineMap::get(e.map.getNumDims(), 0, exprs, ctx);
      return Elem{source, map, nullptr, source, map};
    }
    // Source dim j: the j-th destination dim that is not dropped.
    for (int64_t k = 0; k < whole.getRank(); ++k)
      if (!dropped.test(k))
        exprs.push_back(e.map.getResult(k));
    Value source = insert.getSource();
    AffineMap map = AffineMap::get(e.map.getNumDims(), 0, exprs, ctx);
    return Elem{source, map, nullptr, source, map};
  }

  /// The tensor `e` is an element of and its map, if any.
  static std::pair<Value, AffineMap> tensorOf(const Elem &e) {
    if (e.isTensor())
      return {e.value, e.map};
    return {e.tensor, e.tensorMap};
  }

  /// Operand `i` of the scalar op defining `e`.
  Elem operand(const Elem &e, unsigned i) {
    return resolve({e.def()->getOperand(i), e.map, e.owner});
  }

  /// Looks through float casts between float types of at least 16 bits
  /// (intermediate roundings; see the file comment).
  Elem throughCasts(Elem e) {
    while (Operation *def = e.def()) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(def) ||
          !isWideFloat(def->getOperand(0).getType()) ||
          !isWideFloat(def->getResult(0).getType()))
        break;
      e = operand(e, 0);
    }
    return e;
  }

  /// Looks through exact float extensions.
  Elem throughExtensions(Elem e) {
    while (isa_and_present<arith::ExtFOp>(e.def()))
      e = operand(e, 0);
    return e;
  }

  static bool isWideFloat(Type type) {
    auto f = dyn_cast<FloatType>(type);
    return f && f.getWidth() >= 16;
  }
};

/// A constant element: a scalar constant, or a splat constant tensor.
std::optional<double> constantOf(const Elem &e) {
  return raise::getScalarConstant(e.value);
}

Type elementTypeOf(Value v) { return getElementTypeOrSelf(v.getType()); }

/// A power of two whose reciprocal is a normal f32.
bool isExactReciprocal(double c) {
  int exponent = 0;
  double mantissa = std::frexp(std::fabs(c), &exponent);
  return c != 0.0 && std::isfinite(c) && mantissa == 0.5 &&
         std::fabs(1.0 / c) >= std::ldexp(1.0, -126) &&
         std::fabs(1.0 / c) < std::ldexp(1.0, 127);
}

/// Whether `map` (root dims -> a tensor's indices) reads the tensor by root
/// dim `dim` only: that dim once, every other index a constant 0.
bool readsOnlyDim(AffineMap map, int64_t dim) {
  int found = 0;
  for (AffineExpr expr : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(expr)) {
      if (static_cast<int64_t>(d.getPosition()) != dim)
        return false;
      ++found;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(expr);
    if (!c || c.getValue() != 0)
      return false;
  }
  return found == 1;
}

/// Erases the producers of `values` that are dead now, and theirs; no
/// rope.apply but `replaced` (another may still be on a caller's list).
void eraseDeadProducers(
    RewriterBase &rewriter, ArrayRef<Value> values,
    Operation *replaced = nullptr,
    const llvm::SmallPtrSetImpl<Operation *> *kept = nullptr) {
  SmallVector<Operation *> worklist;
  for (Value v : values)
    if (Operation *def = v.getDefiningOp())
      worklist.push_back(def);
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op) ||
        (isa<ApplyOp>(op) && op != replaced) || (kept && kept->contains(op)))
      continue;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !op->isAncestor(def))
          worklist.push_back(def);
    });
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}

/// A copy of `op` with another input, norm, scale and destination.
ApplyOp rebuild(RewriterBase &rewriter, ApplyOp op, Value input, Value weight,
                FloatAttr epsilon, Value scale, Value init) {
  return ApplyOp::create(
      rewriter, op.getLoc(), init.getType(), input, op.getPositions(),
      op.getOffset(), op.getLength(), op.getCos(), op.getSin(), weight, scale,
      op.getSlots(), init, op.getLayoutAttr(), op.getRotaryDimAttr(),
      op.getTokenDimsAttr(), op.getFreqsAttr(), op.getMropeAttr(),
      op.getMagnitudeAttr(), op.getInverseAttr(), epsilon);
}

//===----------------------------------------------------------------------===//
// QK-norm
//===----------------------------------------------------------------------===//

struct NormMatch {
  /// x, read at a permutation of the root's dims.
  Elem x{Value{}};
  /// The weight: a [D] tensor, or `constant + w` to compute.
  Value weight;
  std::optional<double> weightShift;
  Type weightShiftType;
  double epsilon = 0.0;
};

class NormMatcher {
public:
  /// Matches the norm producing `value`, a tensor whose last dim is the
  /// channels (its element type gives the compute type).
  explicit NormMatcher(Value value) : value(value) {
    auto type = cast<RankedTensorType>(value.getType());
    rank = type.getRank();
    d = type.getShape().back();
    ctx = value.getContext();
    compute = isa<Float64Type>(type.getElementType())
                  ? Type(Float64Type::get(ctx))
                  : Type(Float32Type::get(ctx));
  }

  FailureOr<NormMatch> match() {
    if (rank < 1 || ShapedType::isDynamic(d))
      return failure();
    Elem top = reader.throughCasts(reader.root(value));
    auto mul = dyn_cast_or_null<arith::MulFOp>(top.def());
    if (!mul)
      return failure();
    for (unsigned side : {0u, 1u}) {
      NormMatch m;
      Elem normalized = reader.throughCasts(reader.operand(top, side));
      if (failed(matchNormalized(normalized, m)) ||
          failed(matchWeight(reader.operand(top, 1 - side), m)))
        continue;
      return m;
    }
    return failure();
  }

  Reader reader;

private:
  /// x * rsqrt(mean + eps), either order.
  LogicalResult matchNormalized(const Elem &e, NormMatch &m) {
    auto mul = dyn_cast_or_null<arith::MulFOp>(e.def());
    if (!mul || mul.getType() != compute)
      return failure();
    for (unsigned side : {0u, 1u}) {
      Elem x = reader.operand(e, side);
      Elem factor = reader.operand(e, 1 - side);
      if (succeeded(matchFactor(factor, x, m)))
        return success();
    }
    return failure();
  }

  /// rsqrt(sum / D + eps) of the row of `x`.
  LogicalResult matchFactor(const Elem &e, const Elem &x, NormMatch &m) {
    auto rsqrt = dyn_cast_or_null<math::RsqrtOp>(e.def());
    if (!rsqrt || rsqrt.getType() != compute)
      return failure();
    Elem shifted = reader.operand(e, 0);
    auto add = dyn_cast_or_null<arith::AddFOp>(shifted.def());
    if (!add)
      return failure();
    for (unsigned side : {0u, 1u}) {
      std::optional<double> eps = constantOf(reader.operand(shifted, 1 - side));
      if (!eps || !(*eps >= 0.0) || !std::isfinite(*eps))
        continue;
      Elem mean = reader.operand(shifted, side);
      if (failed(matchMean(mean, x)))
        continue;
      m.epsilon = *eps;
      m.x = reader.throughExtensions(x);
      return success();
    }
    return failure();
  }

  /// sum / D, or sum * (1/D) when that is the same number.
  LogicalResult matchMean(const Elem &e, const Elem &x) {
    Operation *def = e.def();
    if (!def || elementTypeOf(def->getResult(0)) != compute)
      return failure();
    if (isa<arith::DivFOp>(def)) {
      std::optional<double> c = constantOf(reader.operand(e, 1));
      if (!c || *c != static_cast<double>(d))
        return failure();
      return matchSumOfSquares(reader.operand(e, 0), x);
    }
    if (isa<arith::MulFOp>(def)) {
      for (unsigned side : {0u, 1u}) {
        std::optional<double> c = constantOf(reader.operand(e, 1 - side));
        if (c && isExactReciprocal(static_cast<double>(d)) &&
            *c == 1.0 / static_cast<double>(d) &&
            succeeded(matchSumOfSquares(reader.operand(e, side), x)))
          return success();
      }
    }
    return failure();
  }

  /// A reduction from 0 over exactly the head dim of x * x (of the row the
  /// root element is in).
  LogicalResult matchSumOfSquares(const Elem &e, const Elem &x) {
    if (!e.isTensor())
      return failure();
    auto red = e.value.getDefiningOp<linalg::LinalgOp>();
    if (!red || !red.hasPureTensorSemantics() || red.getNumDpsInits() != 1 ||
        red.getNumDpsInputs() != 1 || red.getNumReductionLoops() != 1)
      return failure();
    // The root dim of every loop: the parallel ones from how the sum is
    // read, the reduction the channel dim.
    unsigned numLoops = red.getNumLoops();
    SmallVector<AffineExpr> loops(numLoops);
    AffineMap out = red.getIndexingMapMatchingResult(cast<OpResult>(e.value));
    for (auto [k, expr] : llvm::enumerate(out.getResults())) {
      AffineExpr read = e.map.getResult(k);
      if (read.isFunctionOfDim(rank - 1))
        return failure();
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        if (loops[dim.getPosition()])
          return failure();
        loops[dim.getPosition()] = read;
        continue;
      }
      auto c = dyn_cast<AffineConstantExpr>(expr);
      auto readC = dyn_cast<AffineConstantExpr>(read);
      if (!c || !readC || c.getValue() != readC.getValue())
        return failure();
    }
    SmallVector<unsigned> reductionDims;
    red.getReductionDims(reductionDims);
    unsigned r = reductionDims.front();
    if (loops[r] || red.getStaticLoopRanges()[r] != d)
      return failure();
    loops[r] = getAffineDimExpr(rank - 1, ctx);
    for (AffineExpr expr : loops)
      if (!expr)
        return failure();
    AffineMap loopsOfRoot = AffineMap::get(rank, 0, loops, ctx);

    // From zero: a fill, or the generic a fill generalizes to; or a slice
    // of one (every element of a fill is its scalar; the rank-reducing
    // slice of linalg-fold-unit-extent-dims{use-rank-reducing-slices}).
    Value init = red.getDpsInitOperand(0)->get();
    while (auto slice = init.getDefiningOp<tensor::ExtractSliceOp>())
      init = slice.getSource();
    if (auto fill = init.getDefiningOp<linalg::FillOp>())
      init = fill.getInputs()[0];
    else if (auto generic = init.getDefiningOp<linalg::GenericOp>();
             generic && generic.getNumResults() == 1) {
      // A generalized fill yields its scalar input (or a value defined
      // outside its body).
      Value yielded = generic.getBody()->getTerminator()->getOperand(0);
      auto arg = dyn_cast<BlockArgument>(yielded);
      if (arg && arg.getOwner() == generic.getBody() &&
          generic.isDpsInput(generic.getMatchingOpOperand(arg)) &&
          !isa<ShapedType>(arg.getType()))
        init = generic.getMatchingOpOperand(arg)->get();
      else if (!arg && yielded.getParentRegion() != &generic.getRegion())
        init = yielded;
    }
    std::optional<double> zero = raise::getScalarConstant(init);
    if (!zero || *zero != 0.0)
      return failure();

    // The payload: acc + square (either order).
    Block *body = red.getBlock();
    Value yielded = body->getTerminator()->getOperand(0);
    auto add = yielded.getDefiningOp<arith::AddFOp>();
    if (!add || add.getType() != compute)
      return failure();
    BlockArgument acc = red.getRegionOutputArgs()[0];
    Value term;
    if (add.getLhs() == acc)
      term = add.getRhs();
    else if (add.getRhs() == acc)
      term = add.getLhs();
    else
      return failure();
    Elem square = reader.resolve({term, loopsOfRoot, red});
    std::optional<Elem> base = squareBase(square);
    if (!base)
      return failure();
    return success(sameElement(reader.throughExtensions(*base),
                               reader.throughExtensions(x)));
  }

  /// Whether `a` and `b` are one element: the same, or the same element of
  /// two identical reshapes of one tensor (linalg-fold-unit-extent-dims
  /// makes one per consumer, and the sum of squares and the product then
  /// read x through different ones).
  static bool sameElement(const Elem &a, const Elem &b) {
    if (a == b)
      return true;
    if (!a.isTensor() || !b.isTensor() || a.map != b.map)
      return false;
    Operation *defA = a.def(), *defB = b.def();
    return isa_and_present<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
               defA) &&
           defB &&
           OperationEquivalence::isEquivalentTo(
               defA, defB, OperationEquivalence::IgnoreLocations);
  }

  /// a for `a * a`, `fpowi(a, 2)`, `powf(a, 2.0)` in the compute type.
  std::optional<Elem> squareBase(const Elem &e) {
    Operation *def = e.def();
    if (!def || def->getNumResults() != 1 ||
        def->getResult(0).getType() != compute)
      return std::nullopt;
    if (isa<arith::MulFOp>(def)) {
      Elem a = reader.operand(e, 0), b = reader.operand(e, 1);
      if (a == b)
        return a;
      return std::nullopt;
    }
    if (isa<math::FPowIOp>(def)) {
      APInt power;
      if (matchPattern(def->getOperand(1), m_ConstantInt(&power)) && power == 2)
        return reader.operand(e, 0);
      return std::nullopt;
    }
    if (isa<math::PowFOp>(def)) {
      std::optional<double> power =
          raise::getScalarConstant(def->getOperand(1));
      if (power && *power == 2.0)
        return reader.operand(e, 0);
    }
    return std::nullopt;
  }

  /// w[c] read by the channel only, possibly extended; or constant + that.
  LogicalResult matchWeight(const Elem &e, NormMatch &m) {
    // A [D] tensor read by the channel: the element's own tensor (e.g. the
    // frontend's computed 1 + w), or one it extends.
    auto tensorOfChannel = [&](const Elem &w) -> Value {
      for (const Elem &t : {w, reader.throughExtensions(w)}) {
        auto [tensor, map] = Reader::tensorOf(t);
        if (!tensor || !readsOnlyDim(map, rank - 1) ||
            cast<RankedTensorType>(tensor.getType()).getNumElements() != d)
          continue;
        return tensor;
      }
      return {};
    };
    if (Value w = tensorOfChannel(e)) {
      m.weight = w;
      return success();
    }
    auto add = dyn_cast_or_null<arith::AddFOp>(e.def());
    if (!add)
      return failure();
    for (unsigned side : {0u, 1u}) {
      std::optional<double> c = constantOf(reader.operand(e, 1 - side));
      Value w = tensorOfChannel(reader.operand(e, side));
      if (!c || !w)
        continue;
      m.weight = w;
      m.weightShift = *c;
      m.weightShiftType = add.getType();
      return success();
    }
    return failure();
  }

  Value value;
  MLIRContext *ctx;
  int64_t rank, d;
  Type compute;
};

/// The [D] tensor `w` reshaped to rank 1 in its own type, or `c + w` in
/// `shiftType` (the frontend's `1 + w`).
Value materializeWeight(RewriterBase &rewriter, Location loc,
                        const NormMatch &m, int64_t d) {
  auto type = cast<RankedTensorType>(m.weight.getType());
  Value w = m.weight;
  if (type.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    w = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({d}, type.getElementType()), w,
        ArrayRef<ReassociationIndices>{all});
  }
  if (!m.weightShift)
    return w;
  Type shiftType = m.weightShiftType;
  Value init = tensor::EmptyOp::create(rewriter, loc, {d}, shiftType);
  AffineMap id = rewriter.getMultiDimIdentityMap(1);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, init.getType(), ValueRange{w}, ValueRange{init},
      ArrayRef<AffineMap>{id, id},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value v = args[0];
        if (v.getType() != shiftType)
          v = arith::ExtFOp::create(b, l, shiftType, v);
        Value c = arith::ConstantOp::create(
            b, l, b.getFloatAttr(shiftType, *m.weightShift));
        linalg::YieldOp::create(b, l,
                                arith::AddFOp::create(b, l, c, v).getResult());
      });
  return generic.getResult(0);
}

/// `expr` as a sum of root dims times constants, `{coefficient, dim}`, when
/// it is one (however the simplifier nested it); else nullopt.
std::optional<SmallVector<std::pair<int64_t, unsigned>>>
linearTerms(AffineExpr expr) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return SmallVector<std::pair<int64_t, unsigned>>{{1, dim.getPosition()}};
  auto bin = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!bin)
    return std::nullopt;
  if (bin.getKind() == AffineExprKind::Add) {
    auto lhs = linearTerms(bin.getLHS()), rhs = linearTerms(bin.getRHS());
    if (!lhs || !rhs)
      return std::nullopt;
    lhs->append(rhs->begin(), rhs->end());
    return lhs;
  }
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  if (bin.getKind() != AffineExprKind::Mul || !c)
    return std::nullopt;
  auto terms = linearTerms(bin.getLHS());
  if (!terms)
    return std::nullopt;
  for (auto &term : *terms)
    term.first *= c.getValue();
  return terms;
}

/// The root dims of `expr`, major first, when it is the row-major linear
/// index `d_1 * (n_2 ... n_k) + ... + d_k` of several of them (`n_i` their
/// static sizes) spanning `[0, size)` once each: a dim that an expand_shape
/// split, read through by the Reader. Else nullopt.
std::optional<SmallVector<unsigned>>
mixedRadixDims(AffineExpr expr, RankedTensorType root, int64_t size) {
  auto terms = linearTerms(expr);
  if (!terms || terms->size() < 2)
    return std::nullopt;
  llvm::sort(*terms);
  int64_t stride = 1;
  SmallVector<unsigned> dims;
  for (auto [coefficient, d] : *terms) {
    int64_t n = d < root.getRank() ? root.getDimSize(d) : ShapedType::kDynamic;
    if (coefficient != stride || ShapedType::isDynamic(n) || n < 1)
      return std::nullopt;
    stride *= n;
    dims.push_back(d);
  }
  if (stride != size)
    return std::nullopt;
  std::reverse(dims.begin(), dims.end());
  return dims;
}

/// Whether `map` (the root's dims -> x's indices) reads x whole, once per
/// element: each root dim once, and index 0 of x's size-1 dims the root
/// lacks (a rotation raised through a view that dropped a unit dim of x).
/// A root dim of size 1 may go unread (the token dim a decode step's
/// rotation is raised with after linalg-fold-unit-extent-dims dropped it).
bool readsWhole(AffineMap map, Value x, RankedTensorType root) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<bool> seen(map.getNumDims(), false);
  for (auto [i, size] : llvm::enumerate(root.getShape()))
    if (size == 1 && !map.isFunctionOfDim(i))
      seen[i] = true;
  for (auto [k, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (seen[dim.getPosition()])
        return false;
      seen[dim.getPosition()] = true;
      continue;
    }
    if (std::optional<SmallVector<unsigned>> dims =
            mixedRadixDims(expr, root, type.getDimSize(k))) {
      for (unsigned d : *dims) {
        if (seen[d])
          return false;
        seen[d] = true;
      }
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0 || type.getDimSize(k) != 1)
      return false;
  }
  return llvm::all_of(seen, [](bool s) { return s; });
}

/// x with each dim that `map` reads as the linear index of several root
/// dims (readsWhole's mixed radix) expanded into those dims, and the map
/// that reads the expanded x by plain dims.
std::pair<Value, AffineMap> splitLinearDims(RewriterBase &rewriter,
                                            Location loc, ApplyOp op, Value x,
                                            AffineMap map) {
  auto type = cast<RankedTensorType>(x.getType());
  RankedTensorType root = op.getInputType();
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> exprs;
  bool split = false;
  for (auto [k, expr] : llvm::enumerate(map.getResults())) {
    ReassociationIndices group;
    std::optional<SmallVector<unsigned>> dims =
        mixedRadixDims(expr, root, type.getDimSize(k));
    if (!dims) {
      group.push_back(shape.size());
      shape.push_back(type.getDimSize(k));
      exprs.push_back(expr);
    } else {
      split = true;
      for (unsigned d : *dims) {
        group.push_back(shape.size());
        shape.push_back(root.getDimSize(d));
        exprs.push_back(rewriter.getAffineDimExpr(d));
      }
    }
    groups.push_back(group);
  }
  if (!split)
    return {x, map};
  auto expandedType = RankedTensorType::get(shape, type.getElementType());
  Value expanded =
      tensor::ExpandShapeOp::create(rewriter, loc, expandedType, x, groups);
  return {expanded,
          AffineMap::get(map.getNumDims(), 0, exprs, rewriter.getContext())};
}

/// x read at the root's coordinates: x itself, a transpose of it, or (x
/// with unit dims the root lacks) a copy that drops them; a dim read as the
/// linear index of several root dims is expanded into them first.
Value materializeInput(RewriterBase &rewriter, ApplyOp op, Value x,
                       AffineMap map) {
  std::tie(x, map) = splitLinearDims(rewriter, op.getLoc(), op, x, map);
  if (map.isIdentity())
    return x;
  if (!map.isPermutation()) {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         op.getInputType().getElementType());
    int64_t rank = map.getNumDims();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               rewriter, loc, TypeRange{init.getType()}, ValueRange{x},
               ValueRange{init},
               ArrayRef<AffineMap>{map, rewriter.getMultiDimIdentityMap(rank)},
               iterators,
               [](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(b, l, args[0]);
               })
        .getResult(0);
  }
  // Root dim i is x's dim perm[i].
  SmallVector<int64_t> perm(map.getNumDims(), -1);
  for (auto [k, expr] : llvm::enumerate(map.getResults()))
    perm[cast<AffineDimExpr>(expr).getPosition()] = k;
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, op.getInput());
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       op.getInputType().getElementType());
  return linalg::TransposeOp::create(rewriter, loc, x, init, perm)
      .getResult()[0];
}

LogicalResult
foldNorm(ApplyOp op, RewriterBase &rewriter, ApplyOp *folded = nullptr,
         const llvm::SmallPtrSetImpl<Operation *> *kept = nullptr) {
  if (op.getNormWeight() || !op.getInput().hasOneUse())
    return failure();
  NormMatcher matcher(op.getInput());
  FailureOr<NormMatch> m = matcher.match();
  if (failed(m))
    return failure();
  // x: a tensor of the op's input element type read whole at a
  // permutation of the root's dims (and index 0 of unit dims it adds); or
  // a value of that type in the payload of an elementwise op whose result
  // widens it (linalg-fuse-elementwise-ops fuses the projection's rounding
  // to bf16 with the norm's extension back to f32), computed by a copy of
  // that op yielding it.
  auto [x, xMap] = Reader::tensorOf(m->x);
  Type element = op.getInputType().getElementType();
  auto widening = dyn_cast_or_null<linalg::GenericOp>(m->x.owner);
  if (x && getElementTypeOrSelf(x.getType()) == element)
    widening = {};
  if (widening) {
    if (m->x.value.getType() != element || widening->getNumResults() != 1 ||
        !widening.isAllParallelLoops() || !widening.hasPureTensorSemantics() ||
        !widening.getRegionOutputArgs()[0].use_empty() ||
        m->x.value.getParentBlock() != widening.getBody())
      return failure();
    // x is read at the widening op's loops: its result's indices.
    AffineMap out = widening.getIndexingMapMatchingResult(
        cast<OpResult>(widening->getResult(0)));
    if (!out.isPermutation())
      return failure();
    x = widening->getResult(0);
    xMap = out.compose(m->x.map);
  }
  if (!x || !readsWhole(xMap, x, op.getInputType()) ||
      (!widening && getElementTypeOrSelf(x.getType()) != element))
    return failure();

  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  if (widening)
    x = raise::copyYielding(rewriter, widening, m->x.value);
  Value input = materializeInput(rewriter, op, x, xMap);
  Value weight = materializeWeight(rewriter, loc, *m, op.getHeadDim());
  ApplyOp raised =
      rebuild(rewriter, op, input, weight, rewriter.getF64FloatAttr(m->epsilon),
              op.getQuantScale(), op.getInit());
  if (failed(mlir::verify(raised, /*verifyRecursively=*/false))) {
    rewriter.eraseOp(raised);
    return failure();
  }
  Value oldInput = op.getInput();
  rewriter.replaceOp(op, raised.getResult());
  eraseDeadProducers(rewriter, {oldInput}, nullptr, kept);
  if (folded)
    *folded = raised;
  return success();
}

//===----------------------------------------------------------------------===//
// One generic per norm, for the rotation raise
//===----------------------------------------------------------------------===//

/// Clones the element computation of a tensor (through the elementwise ops
/// the Reader follows) into one linalg.generic: the same scalar ops in the
/// same order and types, reading the tensors it stops at (those it cannot
/// enter, and `stops`) at their maps.
class Gatherer {
public:
  Gatherer(Reader &reader, SmallVector<Value, 2> stops)
      : reader(reader), stops(std::move(stops)) {}

  FailureOr<Value> build(RewriterBase &rewriter, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    Elem top = reader.root(value);
    if (top.isTensor() || failed(collect(top)))
      return failure();
    Location loc = value.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, value);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (const Elem &leaf : leaves) {
      auto [tensor, map] = leafTensor(leaf);
      inputs.push_back(tensor);
      maps.push_back(map);
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    bool ok = true;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, inputs, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location, ValueRange args) {
          std::map<Key, Value> cloned;
          for (auto [i, leaf] : llvm::enumerate(leaves))
            cloned[key(leaf)] = args[i];
          Value result = emit(b, top, cloned);
          ok = static_cast<bool>(result);
          linalg::YieldOp::create(b, loc, result ? result : args.back());
        });
    if (!ok) {
      rewriter.eraseOp(generic);
      return failure();
    }
    return generic.getResult(0);
  }

private:
  using Key = std::tuple<const void *, const void *, Operation *>;
  static Key key(const Elem &e) {
    return {e.value.getAsOpaquePointer(), e.map.getAsOpaquePointer(), e.owner};
  }

  bool isLeaf(const Elem &e) const {
    return e.isTensor() || (e.tensor && llvm::is_contained(stops, e.tensor));
  }
  std::pair<Value, AffineMap> leafTensor(const Elem &e) const {
    return Reader::tensorOf(e);
  }

  LogicalResult collect(const Elem &e) {
    if (!seen.insert(key(e)).second)
      return success();
    if (isLeaf(e)) {
      leaves.push_back(e);
      return success();
    }
    if (!e.owner)
      return success(); // a scalar from outside: used as is
    Operation *def = e.def();
    if (!def || def->getNumRegions() != 0 || def->getNumResults() != 1)
      return failure(); // an init's block argument, or a region
    for (unsigned i = 0, n = def->getNumOperands(); i < n; ++i)
      if (failed(collect(reader.operand(e, i))))
        return failure();
    return success();
  }

  Value emit(OpBuilder &b, const Elem &e, std::map<Key, Value> &cloned) {
    auto it = cloned.find(key(e));
    if (it != cloned.end())
      return it->second;
    if (!e.owner)
      return e.value;
    Operation *def = e.def();
    IRMapping mapping;
    for (unsigned i = 0, n = def->getNumOperands(); i < n; ++i) {
      Value operand = emit(b, reader.operand(e, i), cloned);
      if (!operand)
        return {};
      mapping.map(def->getOperand(i), operand);
    }
    Value result = b.clone(*def, mapping)->getResult(0);
    cloned[key(e)] = result;
    return result;
  }

  Reader &reader;
  SmallVector<Value, 2> stops;
  std::set<Key> seen;
  SmallVector<Elem> leaves;
};

/// Each matched norm over the last dim (its result V, or a transpose of it)
/// gathered into one generic F that the uses of V now read. The rotation
/// raise does not look through F's rsqrt, so it raises a rotation of F;
/// RaiseNeighbours then folds F into the op, or puts V back.
SmallVector<std::pair<Value, Value>> isolateNormsImpl(Operation *root) {
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op->getNumResults() == 1 &&
        op.isAllParallelLoops())
      candidates.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  SmallVector<std::pair<Value, Value>> isolated;
  for (linalg::LinalgOp op : llvm::reverse(candidates)) {
    Value v = op->getResult(0);
    if (llvm::all_of(v.getUsers(),
                     [](Operation *user) { return isOpTriviallyDead(user); }))
      continue;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() < 2 || !isa<FloatType>(type.getElementType()))
      continue;
    NormMatcher matcher(v);
    FailureOr<NormMatch> m = matcher.match();
    if (failed(m))
      continue;
    // x and the weight stay tensors the generic reads (the fold uses them):
    // x's, or the op whose payload computes x (a rounding fused with the
    // norm's extension).
    Value xTensor = Reader::tensorOf(m->x).first;
    if (!xTensor && m->x.owner && m->x.owner->getNumResults() == 1)
      xTensor = m->x.owner->getResult(0);
    Gatherer gatherer(matcher.reader, {xTensor, m->weight});
    rewriter.setInsertionPoint(op);
    FailureOr<Value> fused = gatherer.build(rewriter, v);
    if (failed(fused))
      continue;
    rewriter.replaceAllUsesWith(v, *fused);
    isolated.push_back({v, *fused});
  }
  return isolated;
}

//===----------------------------------------------------------------------===//
// Quantized output
//===----------------------------------------------------------------------===//

enum class Side { Lower, Upper };

/// One side of a clamp: `bound` the constant, `inner` the clamped value.
struct ClampStep {
  Side side;
  double bound;
  Elem inner;
};

/// The predicate with its operands swapped (a < b iff b > a).
arith::CmpFPredicate swapped(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OLT:
    return P::OGT;
  case P::OLE:
    return P::OGE;
  case P::OGT:
    return P::OLT;
  case P::OGE:
    return P::OLE;
  case P::ULT:
    return P::UGT;
  case P::ULE:
    return P::UGE;
  case P::UGT:
    return P::ULT;
  case P::UGE:
    return P::ULE;
  default:
    return p;
  }
}

/// A clamp step that keeps NaN: maximumf(v, lo), minimumf(v, hi), or
/// select(cmpf(v, c), c, v) with an ordered predicate true beyond the bound,
/// or select(cmpf(v, c), v, c) with an unordered one true within it.
std::optional<ClampStep> matchClampStep(Reader &reader, const Elem &e) {
  Operation *def = e.def();
  // With `nnan` the IR has no NaN to keep (a NaN operand is poison), so
  // clamps that would send NaN to a bound are clamps too.
  auto noNaN = [](Operation *op) {
    auto fmf = dyn_cast<arith::ArithFastMathInterface>(op);
    return fmf &&
           arith::bitEnumContainsAll(fmf.getFastMathFlagsAttr().getValue(),
                                     arith::FastMathFlags::nnan);
  };
  if (isa_and_present<arith::MaximumFOp, arith::MinimumFOp>(def) ||
      (isa_and_present<arith::MaxNumFOp, arith::MinNumFOp>(def) &&
       noNaN(def))) {
    Side side = isa<arith::MaximumFOp, arith::MaxNumFOp>(def) ? Side::Lower
                                                              : Side::Upper;
    for (unsigned i : {0u, 1u})
      if (std::optional<double> c = constantOf(reader.operand(e, 1 - i)))
        return ClampStep{side, *c, reader.operand(e, i)};
    return std::nullopt;
  }
  auto select = dyn_cast_or_null<arith::SelectOp>(def);
  if (!select)
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp->getBlock() != select->getBlock())
    return std::nullopt;
  Elem t = reader.operand(e, 1), f = reader.operand(e, 2);
  std::optional<double> ct = constantOf(t), cf = constantOf(f);
  if (ct.has_value() == cf.has_value())
    return std::nullopt;
  bool boundIfTrue = ct.has_value();
  double bound = boundIfTrue ? *ct : *cf;
  Elem v = boundIfTrue ? f : t;
  // The comparison as v ? c.
  Elem lhs = reader.resolve({cmp.getLhs(), e.map, e.owner});
  Elem rhs = reader.resolve({cmp.getRhs(), e.map, e.owner});
  arith::CmpFPredicate p = cmp.getPredicate();
  std::optional<double> cr = constantOf(rhs), cl = constantOf(lhs);
  if (lhs == v && cr && *cr == bound) {
    // v ? c as is.
  } else if (rhs == v && cl && *cl == bound) {
    p = swapped(p);
  } else {
    return std::nullopt;
  }
  using P = arith::CmpFPredicate;
  bool less = p == P::OLT || p == P::OLE || p == P::ULT || p == P::ULE;
  bool greater = p == P::OGT || p == P::OGE || p == P::UGT || p == P::UGE;
  bool ordered = p == P::OLT || p == P::OLE || p == P::OGT || p == P::OGE;
  if (!less && !greater)
    return std::nullopt;
  // NaN must select v: the condition false for NaN when true chooses the
  // bound, true for NaN when true chooses v.
  if (boundIfTrue != ordered && !noNaN(cmp))
    return std::nullopt;
  // True beyond the bound (bound chosen): v < lo, or v > hi; true within
  // it (v chosen): v >= lo, or v <= hi.
  Side side = (less == boundIfTrue) ? Side::Lower : Side::Upper;
  return ClampStep{side, bound, v};
}

/// clamp(v, lo, hi) in either order; returns v.
std::optional<Elem> matchClamp(Reader &reader, const Elem &e, double lo,
                               double hi) {
  std::optional<ClampStep> outer = matchClampStep(reader, e);
  if (!outer)
    return std::nullopt;
  std::optional<ClampStep> inner = matchClampStep(reader, outer->inner);
  if (!inner || inner->side == outer->side)
    return std::nullopt;
  for (const ClampStep &s : {*outer, *inner})
    if (s.bound != (s.side == Side::Lower ? lo : hi))
      return std::nullopt;
  return inner->inner;
}

struct QuantMatch {
  Value result;
  std::optional<double> scaleConstant;
  Value scaleTensor;
  bool perTensor = false;
};

class QuantMatcher {
public:
  explicit QuantMatcher(ApplyOp op) : op(op) {}

  FailureOr<QuantMatch> match() {
    // With slots the result is a whole cache, not the rotated rows.
    if (op.getQuantScale() || op.getSlots() ||
        isa<Float64Type>(op.getStorageElementType()))
      return failure();
    // The only user chain from y to a value of a quantized type.
    Value y = op.getResult();
    Value current = y;
    Value result;
    for (int steps = 0; steps < 8 && !result; ++steps) {
      if (!current.hasOneUse())
        return failure();
      auto user = dyn_cast<linalg::LinalgOp>(*current.getUsers().begin());
      if (!user || user->getNumResults() != 1)
        return failure();
      current = user->getResult(0);
      if (current.getType() != y.getType() &&
          cast<RankedTensorType>(current.getType()).getShape() !=
              op.getInputType().getShape())
        return failure();
      Type element = elementTypeOf(current);
      if (isa<Float8E4M3FNType, Float8E5M2Type>(element) ||
          element.isSignlessInteger(8))
        result = current;
    }
    if (!result)
      return failure();
    QuantMatch m;
    m.result = result;
    Type storage = elementTypeOf(result);
    Elem top = reader.root(result);
    Elem product(Value{});
    if (auto f8 = dyn_cast<FloatType>(storage)) {
      auto trunc = dyn_cast_or_null<arith::TruncFOp>(top.def());
      if (!trunc ||
          (trunc.getRoundingmodeAttr() &&
           trunc.getRoundingmode() != arith::RoundingMode::to_nearest_even))
        return failure();
      double limit =
          APFloat::getLargest(f8.getFloatSemantics()).convertToDouble();
      std::optional<Elem> v = matchClamp(
          reader, reader.throughCasts(reader.operand(top, 0)), -limit, limit);
      if (!v)
        return failure();
      product = reader.throughCasts(*v);
    } else {
      if (!isa_and_present<arith::FPToSIOp>(top.def()))
        return failure();
      Elem v = reader.throughCasts(reader.operand(top, 0));
      if (isa_and_present<math::RoundEvenOp>(v.def())) {
        std::optional<Elem> u = matchClamp(
            reader, reader.throughCasts(reader.operand(v, 0)), -128.0, 127.0);
        if (!u)
          return failure();
        product = reader.throughCasts(*u);
      } else {
        std::optional<Elem> u = matchClamp(reader, v, -128.0, 127.0);
        if (!u)
          return failure();
        Elem rounded = reader.throughCasts(*u);
        if (!isa_and_present<math::RoundEvenOp>(rounded.def()))
          return failure();
        product = reader.throughCasts(reader.operand(rounded, 0));
      }
    }
    if (failed(matchProduct(product, m)))
      return failure();
    return m;
  }

private:
  /// y * s (either order) or y / c, c a power of two, in f32.
  LogicalResult matchProduct(const Elem &e, QuantMatch &m) {
    Operation *def = e.def();
    if (!isa_and_present<arith::MulFOp, arith::DivFOp>(def) ||
        !def->getResult(0).getType().isF32())
      return failure();
    Elem root = reader.root(op.getResult());
    auto isY = [&](const Elem &v) {
      Elem t = reader.throughCasts(v);
      return t.isTensor() && t.value == op.getResult() && t.map == root.map;
    };
    if (isa<arith::DivFOp>(def)) {
      std::optional<double> c = constantOf(reader.operand(e, 1));
      if (!isY(reader.operand(e, 0)) || !c || !isExactReciprocal(*c))
        return failure();
      m.scaleConstant = 1.0 / *c;
      return success();
    }
    for (unsigned side : {0u, 1u}) {
      if (!isY(reader.operand(e, side)))
        continue;
      Elem s = reader.operand(e, 1 - side);
      if (std::optional<double> c = constantOf(s)) {
        m.scaleConstant = *c;
        return success();
      }
      if (succeeded(matchScaleTensor(s, m)))
        return success();
    }
    return failure();
  }

  /// An f32 tensor read by nothing (per tensor) or by the op's one head dim
  /// only (per head), size-1 dims aside.
  LogicalResult matchScaleTensor(const Elem &s, QuantMatch &m) {
    if (!s.isTensor())
      return failure();
    auto type = cast<RankedTensorType>(s.value.getType());
    if (!type.getElementType().isF32() || !type.hasStaticShape())
      return failure();
    bool perTensor = llvm::all_of(s.map.getResults(), [](AffineExpr e) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      return c && c.getValue() == 0;
    });
    std::optional<int64_t> head = op.getSingleHeadDim();
    if (perTensor) {
      // One element (size-1 dims collapse away).
      if (type.getNumElements() != 1)
        return failure();
    } else if (!head || !readsOnlyDim(s.map, *head) ||
               type.getNumElements() != op.getInputType().getDimSize(*head)) {
      return failure();
    }
    m.scaleTensor = s.value;
    m.perTensor = perTensor;
    return success();
  }

  ApplyOp op;
  Reader reader;
};

LogicalResult foldQuant(ApplyOp op, RewriterBase &rewriter) {
  QuantMatcher matcher(op);
  FailureOr<QuantMatch> m = matcher.match();
  if (failed(m))
    return failure();
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value scale;
  if (m->scaleConstant) {
    float f = static_cast<float>(*m->scaleConstant);
    if (static_cast<double>(f) != *m->scaleConstant)
      return failure();
    scale = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                               rewriter.getF32FloatAttr(f)));
  } else {
    scale = m->scaleTensor;
    auto type = cast<RankedTensorType>(scale.getType());
    if (m->perTensor && type.getRank() != 0) {
      scale = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({}, rewriter.getF32Type()),
          scale, ArrayRef<ReassociationIndices>{});
    } else if (!m->perTensor && type.getRank() != 1) {
      ReassociationIndices all;
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.push_back(i);
      scale = tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({type.getNumElements()}, rewriter.getF32Type()),
          scale, ArrayRef<ReassociationIndices>{all});
    }
  }
  auto resultType = cast<RankedTensorType>(m->result.getType());
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, op.getInput());
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       resultType.getElementType());
  ApplyOp raised = rebuild(rewriter, op, op.getInput(), op.getNormWeight(),
                           op.getNormEpsilonAttr(), scale, init);
  if (raised.getType() != resultType ||
      failed(mlir::verify(raised, /*verifyRecursively=*/false))) {
    rewriter.eraseOp(raised);
    return failure();
  }
  Value result = m->result;
  rewriter.replaceAllUsesWith(result, raised.getResult());
  eraseDeadProducers(rewriter, {result}, op);
  return success();
}

struct FoldRmsNormIntoApply : OpRewritePattern<ApplyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    return foldNorm(op, rewriter);
  }
};

struct FoldQuantizationIntoApply : OpRewritePattern<ApplyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    return foldQuant(op, rewriter);
  }
};

} // namespace

void mlir::rope::populateRopeRaiseNeighbourPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldRmsNormIntoApply, FoldQuantizationIntoApply>(
      patterns.getContext());
}

SmallVector<std::pair<Value, Value>> mlir::rope::isolateNorms(Operation *root) {
  return isolateNormsImpl(root);
}

void mlir::rope::raiseNeighbours(Operation *root,
                                 ArrayRef<std::pair<Value, Value>> isolated) {
  // A gathered norm F is consumed when the rope.apply ops that read it (as
  // their input, or through a copy or transpose of it) all fold it;
  // otherwise the original V is put back. The folds leave every F and V in
  // place (erasing one would leave a dangling pair), so a consumed F is the
  // one left without uses.
  llvm::SmallPtrSet<Operation *, 8> gathered;
  for (auto [original, fused] : isolated)
    for (Value value : {original, fused})
      if (Operation *def = value.getDefiningOp())
        gathered.insert(def);
  SmallVector<ApplyOp> ops;
  root->walk([&](ApplyOp op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  for (ApplyOp op : ops) {
    ApplyOp folded;
    if (succeeded(foldNorm(op, rewriter, &folded, &gathered)))
      op = folded;
    (void)foldQuant(op, rewriter);
  }
  // Erased in one sweep: the producers of one pair may be another's.
  SmallVector<Value> dead;
  for (auto [original, fused] : isolated) {
    if (!fused.use_empty())
      rewriter.replaceAllUsesWith(fused, original);
    dead.push_back(fused);
    dead.push_back(original);
  }
  eraseDeadProducers(rewriter, dead);
}
