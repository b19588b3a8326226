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
// Both folds read the IR with the expression reader the attention and
// softmax raises read it with (Expressions.h; RaiseAttention.cpp's file
// comment explains atoms and expressions): the root tensor (the op's input,
// or the quantized result) is read over one atom per dim, and every value is
// an expression over those atoms, through payloads (named or generic, any
// split of the steps over ops), transposes, broadcasts and views (reshapes,
// whole unit slices, casts). "The same x" and "a sum over the head dim" are
// then checked by meaning, not by spelling: the sum's one reduced atom
// (reductions of one iteration aside) is renamed to the channel atom and its
// summand compared with x, as SoftmaxReader checks a row sum. A dynamic
// dim is read as one atom of unknown size (the reader's `dynamicDims`),
// which views do not split; the channels must be static.
//
// QK-norm before (`norm(%w)`, `norm_epsilon`): the op's input, read element
// by element, must be
//
//     w[c] * (x[.., c] * rsqrt(sum_c'(x[.., c']^2) / D + eps))
//
// with the sum a reduction over exactly the head dim of the same x, from 0,
// read by the row only (a sum also read by the channel could sum x at the
// channel, which the renaming would not tell from x at the summed dim),
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
#include "Expressions.h"
#include "PayloadAnalysis.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>

#include <cmath>

using namespace mlir;
using namespace mlir::rope;

namespace {

using raise::AtomList;
using raise::computeOf;
using raise::Expressions;
using raise::Layout;
using raise::Node;
using raise::Renaming;

//===----------------------------------------------------------------------===//
// Reading elements
//===----------------------------------------------------------------------===//

/// A tensor read by the expression reader (Expressions.h), one atom per dim
/// (the root's atoms). A dynamic dim is one atom of unknown size: the folds
/// are elementwise over the token dims, whatever their extent.
struct Reading {
  explicit Reading(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return;
    ex.dynamicDims = true;
    for (int64_t size : type.getShape())
      layout.push_back({ex.atoms.make(size)});
    root = ex.tensor(value, layout);
  }

  Expressions ex;
  Layout layout;
  /// Null when the tensor is not read.
  Node *root = nullptr;
};

bool isWideFloat(Type type) {
  auto f = dyn_cast<FloatType>(type);
  return f && f.getWidth() >= 16;
}

/// `node` through float casts between float types of at least 16 bits
/// (intermediate roundings; see the file comment).
Node *throughCasts(Expressions &ex, Node *node) {
  for (int i = 0; i < raise::kMaxDepth; ++i) {
    Node *cast = computeOf<arith::ExtFOp>(ex, node, 1);
    if (!cast)
      cast = computeOf<arith::TruncFOp>(ex, node, 1);
    if (!cast || !isWideFloat(cast->op->getOperand(0).getType()) ||
        !isWideFloat(cast->op->getResult(0).getType()))
      break;
    node = cast->operands[0];
  }
  return node;
}

/// `node` through exact float extensions, looked through views.
Node *throughExtensions(Expressions &ex, Node *node) {
  for (int i = 0; i < raise::kMaxDepth; ++i) {
    node = ex.look(node);
    Node *ext = computeOf<arith::ExtFOp>(ex, node, 1);
    if (!ext)
      break;
    node = ext->operands[0];
  }
  return node;
}

/// A float constant: a scalar constant (its casts folded), or a tensor all
/// of whose elements are one (a splat, a fill, through views and payloads).
/// Tensors are probed by value, not by layout: probing an operand for a
/// constant must not refine the atoms of what it reads when it is not one.
std::optional<double> constantOf(Node *node) {
  switch (node->kind) {
  case Node::Constant:
    if (auto attr = dyn_cast<FloatAttr>(node->constant))
      return attr.getValueAsDouble();
    return std::nullopt;
  case Node::Tensor:
    if (isa<RankedTensorType>(node->value.getType())) {
      if (std::optional<APFloat> splat =
              raise::getSplatFloat(node->value, raise::kMaxDepth))
        return raise::toDouble(*splat);
      return std::nullopt;
    }
    return raise::getScalarConstant(node->value);
  case Node::Compute:
    // Casts of a constant the reader keeps as ops (more than one).
    return raise::getScalarConstant(node->op->getResult(0));
  default:
    return std::nullopt;
  }
}

/// A power of two whose reciprocal is a normal f32.
bool isExactReciprocal(double c) {
  int exponent = 0;
  double mantissa = std::frexp(std::fabs(c), &exponent);
  return c != 0.0 && std::isfinite(c) && mantissa == 0.5 &&
         std::fabs(1.0 / c) >= std::ldexp(1.0, -126) &&
         std::fabs(1.0 / c) < std::ldexp(1.0, 127);
}

/// Whether `layout` reads its tensor by the atom `atom` only: the atom's
/// elements, row-major, every other index a unit.
bool readsOnly(Expressions &ex, const Layout &layout, unsigned atom) {
  AtomList read;
  for (const AtomList &dim : layout)
    read.append(ex.atoms.significant(dim));
  AtomList expected = ex.atoms.significant({atom});
  return !expected.empty() && read == expected;
}

/// The map from the root's dims to the indices of a tensor read at
/// `layout`: each index the row-major combination of the root atoms it
/// reads (an atom a view refined is a floordiv/mod of its root dim); null
/// when it reads an atom that is not the root's.
AffineMap mapFromRoot(Expressions &ex, const Layout &root, const Layout &layout,
                      MLIRContext *ctx) {
  DenseMap<unsigned, AffineExpr> exprOf;
  for (auto [i, dim] : llvm::enumerate(root)) {
    // A unit root dim's atom is read by that dim (index 0 all the same, but
    // a transpose rather than a copy once x is materialized).
    if (AtomList units = ex.atoms.leaves(dim);
        units.size() == 1 && ex.atoms.size(units.front()) == 1)
      exprOf[units.front()] = getAffineDimExpr(i, ctx);
    AtomList leaves = ex.atoms.significant(dim);
    int64_t stride = 1;
    for (unsigned leaf : llvm::reverse(leaves)) {
      AffineExpr d = getAffineDimExpr(i, ctx);
      int64_t size = ex.atoms.size(leaf);
      if (leaves.size() == 1)
        exprOf[leaf] = d;
      else if (stride == 1)
        exprOf[leaf] = d % size;
      else
        exprOf[leaf] = d.floorDiv(stride) % size;
      stride *= size;
    }
  }
  SmallVector<AffineExpr> exprs;
  for (const AtomList &dim : layout) {
    if (AtomList units = ex.atoms.leaves(dim);
        units.size() == 1 && ex.atoms.size(units.front()) == 1) {
      auto it = exprOf.find(units.front());
      exprs.push_back(it != exprOf.end() ? it->second
                                         : getAffineConstantExpr(0, ctx));
      continue;
    }
    AffineExpr expr = getAffineConstantExpr(0, ctx);
    int64_t stride = 1;
    // A named list: llvm::reverse of a temporary would outlive it.
    AtomList significant = ex.atoms.significant(dim);
    for (unsigned leaf : llvm::reverse(significant)) {
      auto it = exprOf.find(leaf);
      if (it == exprOf.end())
        return {};
      expr = it->second * stride + expr;
      stride *= ex.atoms.size(leaf);
    }
    exprs.push_back(expr);
  }
  return AffineMap::get(root.size(), 0, exprs, ctx);
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
  /// x: a tensor read at a layout of the root's atoms, or a value of the
  /// payload of the generic that widens it (`x->in`).
  Node *x = nullptr;
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
  explicit NormMatcher(Value value) : reading(value) {
    auto type = cast<RankedTensorType>(value.getType());
    MLIRContext *ctx = value.getContext();
    compute = isa<Float64Type>(type.getElementType())
                  ? Type(Float64Type::get(ctx))
                  : Type(Float32Type::get(ctx));
  }

  FailureOr<NormMatch> match() {
    if (!reading.root || reading.layout.empty())
      return failure();
    channel = reading.layout.back().front();
    d = ex().atoms.size(channel);
    if (ShapedType::isDynamic(d) || d < 1)
      return failure();
    Node *top = throughCasts(ex(), reading.root);
    Node *mul = computeOf<arith::MulFOp>(ex(), top, 2);
    if (!mul)
      return failure();
    for (unsigned side : {0u, 1u}) {
      NormMatch m;
      Node *normalized = throughCasts(ex(), mul->operands[side]);
      if (failed(matchNormalized(normalized, m)) ||
          failed(matchWeight(mul->operands[1 - side], m)))
        continue;
      return m;
    }
    return failure();
  }

  /// The root read at one atom per dim; the Gatherer reads on with it.
  Reading reading;

private:
  Expressions &ex() { return reading.ex; }

  Type typeOf(Node *node) { return node->op->getResult(0).getType(); }

  /// x * rsqrt(mean + eps), either order.
  LogicalResult matchNormalized(Node *node, NormMatch &m) {
    Node *mul = computeOf<arith::MulFOp>(ex(), node, 2);
    if (!mul || typeOf(mul) != compute)
      return failure();
    for (unsigned side : {0u, 1u})
      if (succeeded(
              matchFactor(mul->operands[1 - side], mul->operands[side], m)))
        return success();
    return failure();
  }

  /// rsqrt(sum / D + eps) of the row of `x`.
  LogicalResult matchFactor(Node *node, Node *x, NormMatch &m) {
    Node *rsqrt = computeOf<math::RsqrtOp>(ex(), node, 1);
    if (!rsqrt || typeOf(rsqrt) != compute)
      return failure();
    Node *add = computeOf<arith::AddFOp>(ex(), rsqrt->operands[0], 2);
    if (!add)
      return failure();
    for (unsigned side : {0u, 1u}) {
      std::optional<double> eps = constantOf(add->operands[1 - side]);
      if (!eps || !(*eps >= 0.0) || !std::isfinite(*eps))
        continue;
      if (failed(matchMean(add->operands[side], x)))
        continue;
      m.epsilon = *eps;
      m.x = throughExtensions(ex(), x);
      return success();
    }
    return failure();
  }

  /// sum / D, or sum * (1/D) when that is the same number.
  LogicalResult matchMean(Node *node, Node *x) {
    Node *mean = ex().open(node);
    if (mean->kind != Node::Compute || mean->operands.size() != 2 ||
        typeOf(mean) != compute)
      return failure();
    if (isa<arith::DivFOp>(mean->op)) {
      std::optional<double> c = constantOf(mean->operands[1]);
      if (!c || *c != static_cast<double>(d))
        return failure();
      return matchSumOfSquares(mean->operands[0], x);
    }
    if (isa<arith::MulFOp>(mean->op)) {
      for (unsigned side : {0u, 1u}) {
        std::optional<double> c = constantOf(mean->operands[1 - side]);
        if (c && isExactReciprocal(static_cast<double>(d)) &&
            *c == 1.0 / static_cast<double>(d) &&
            succeeded(matchSumOfSquares(mean->operands[side], x)))
          return success();
      }
    }
    return failure();
  }

  /// A reduction from 0 over exactly the channel atom of x * x, by meaning:
  /// the sum's one reduced atom (units aside) renamed to the channel, its
  /// summand is the square of x (of the row the root element is in).
  LogicalResult matchSumOfSquares(Node *node, Node *x) {
    Node *sum = ex().open(node);
    if (sum->kind != Node::Reduce || !isa<arith::AddFOp>(sum->op) ||
        typeOf(sum) != compute)
      return failure();
    std::optional<unsigned> reduced = raise::reducedAtom(ex(), sum->atoms);
    if (!reduced || ex().atoms.size(*reduced) != d)
      return failure();
    // The sum is read by the row only: were it read by the channel too, its
    // summand could read x at the channel, and renaming the reduced atom to
    // the channel would take x[c] summed D times for the row's squares. A
    // channel atom a view refined is not compared (the renaming maps one
    // atom to one).
    AtomList channelLeaves = ex().atoms.leaves({channel});
    if (channelLeaves != AtomList{channel})
      return failure();
    for (const AtomList &dim : sum->operands[0]->layout)
      if (llvm::is_contained(ex().atoms.leaves(dim), channel))
        return failure();
    // From zero: a fill, a generic fill, a slice of one, a splat.
    if (!raise::isZero(ex(), sum->operands[0]))
      return failure();
    Node *base = squareBase(sum->operands[1]);
    if (!base)
      return failure();
    Renaming renaming;
    renaming[*reduced] = channel;
    return success(ex().same(throughExtensions(ex(), base),
                             throughExtensions(ex(), x), renaming));
  }

  /// a for `a * a`, `fpowi(a, 2)`, `powf(a, 2.0)` in the compute type.
  Node *squareBase(Node *node) {
    Node *square = ex().open(node);
    if (square->kind != Node::Compute || square->operands.size() != 2 ||
        typeOf(square) != compute)
      return nullptr;
    if (isa<arith::MulFOp>(square->op)) {
      if (ex().same(square->operands[0], square->operands[1], Renaming()))
        return square->operands[0];
      return nullptr;
    }
    if (isa<math::FPowIOp>(square->op)) {
      std::optional<APInt> power =
          raise::intConstant(ex(), square->operands[1]);
      if (power && power->getBitWidth() >= 2 && *power == 2)
        return square->operands[0];
      return nullptr;
    }
    if (isa<math::PowFOp>(square->op)) {
      std::optional<double> power = constantOf(square->operands[1]);
      if (power && *power == 2.0)
        return square->operands[0];
    }
    return nullptr;
  }

  /// A [D] tensor read by the channel only: the node's own tensor (e.g. the
  /// frontend's computed 1 + w, read through views), or one it extends.
  Value tensorOfChannel(Node *node) {
    for (Node *t : {ex().look(node), throughExtensions(ex(), node)}) {
      if (t->kind != Node::Tensor)
        continue;
      auto type = dyn_cast<RankedTensorType>(t->value.getType());
      if (!type || type.getNumElements() != d ||
          !readsOnly(ex(), t->layout, channel))
        continue;
      return t->value;
    }
    return {};
  }

  /// w[c] read by the channel only, possibly extended; or constant + that.
  LogicalResult matchWeight(Node *node, NormMatch &m) {
    if (Value w = tensorOfChannel(node)) {
      m.weight = w;
      return success();
    }
    Node *add = computeOf<arith::AddFOp>(ex(), node, 2);
    if (!add)
      return failure();
    for (unsigned side : {0u, 1u}) {
      std::optional<double> c = constantOf(add->operands[1 - side]);
      if (!c)
        continue;
      Value w = tensorOfChannel(add->operands[side]);
      if (!w)
        continue;
      m.weight = w;
      m.weightShift = *c;
      m.weightShiftType = typeOf(add);
      return success();
    }
    return failure();
  }

  Type compute;
  unsigned channel = 0;
  int64_t d = 0;
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

/// How x, read at `layout`, is the root: x with each dim that reads several
/// root atoms expanded into one dim per atom (`groups`, `shape`; a dim a
/// view flattened, e.g. a head dim split into KV groups), and the map from
/// the root's dims to the expanded x's indices.
struct WholeRead {
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  AffineMap map;
  bool split = false;
};

/// x read whole, once per element: each significant root atom read once,
/// by an atom of its own (a root dim is one atom, not one a view refined),
/// and index 0 of x's unit dims. A root dim of size 1 may go unread (the
/// token dim a decode step's rotation is raised with after
/// linalg-fold-unit-extent-dims dropped it).
std::optional<WholeRead> readsWhole(Expressions &ex, const Layout &root,
                                    const Layout &layout, RankedTensorType type,
                                    MLIRContext *ctx) {
  if (layout.size() != static_cast<size_t>(type.getRank()))
    return std::nullopt;
  // The root dim of each root atom; a unit root dim's atom too, so that x
  // reading it is read by that dim (a transpose, not a copy).
  DenseMap<unsigned, unsigned> dimOf, unitDimOf;
  for (auto [i, dim] : llvm::enumerate(root)) {
    AtomList leaves = ex.atoms.significant(dim);
    if (leaves.size() > 1)
      return std::nullopt;
    if (leaves.size() == 1)
      dimOf[leaves.front()] = i;
    else if (AtomList units = ex.atoms.leaves(dim); units.size() == 1)
      unitDimOf[units.front()] = i;
  }
  llvm::SmallDenseSet<unsigned> unitsRead;
  WholeRead read;
  SmallVector<AffineExpr> exprs;
  llvm::SmallDenseSet<unsigned> seen;
  for (auto [k, dim] : llvm::enumerate(layout)) {
    AtomList leaves = ex.atoms.significant(dim);
    ReassociationIndices group;
    // The dim's extent is what the atoms read: their product, or one atom
    // of unknown size for a dynamic dim.
    if (type.isDynamicDim(k)
            ? leaves.size() != 1 ||
                  !ShapedType::isDynamic(ex.atoms.size(leaves.front()))
            : ex.atoms.product(dim) != type.getDimSize(k))
      return std::nullopt;
    if (leaves.empty()) {
      if (type.getDimSize(k) != 1)
        return std::nullopt;
      group.push_back(read.shape.size());
      read.shape.push_back(1);
      AtomList units = ex.atoms.leaves(dim);
      auto unit =
          units.size() == 1 ? unitDimOf.find(units.front()) : unitDimOf.end();
      if (unit != unitDimOf.end() && unitsRead.insert(unit->second).second)
        exprs.push_back(getAffineDimExpr(unit->second, ctx));
      else
        exprs.push_back(getAffineConstantExpr(0, ctx));
    }
    for (unsigned leaf : leaves) {
      auto it = dimOf.find(leaf);
      if (it == dimOf.end() || !seen.insert(leaf).second)
        return std::nullopt;
      group.push_back(read.shape.size());
      read.shape.push_back(ex.atoms.size(leaf));
      exprs.push_back(getAffineDimExpr(it->second, ctx));
    }
    read.split |= leaves.size() > 1;
    read.groups.push_back(group);
  }
  if (seen.size() != dimOf.size())
    return std::nullopt;
  read.map = AffineMap::get(root.size(), 0, exprs, ctx);
  return read;
}

/// x at the root's coordinates: x itself, a transpose of it, or (x with
/// unit dims the root lacks) a copy that drops them; a dim that reads
/// several root atoms is expanded into them first.
Value materializeInput(RewriterBase &rewriter, ApplyOp op, Value x,
                       const WholeRead &read) {
  Location loc = op.getLoc();
  AffineMap map = read.map;
  if (read.split) {
    auto type = cast<RankedTensorType>(x.getType());
    x = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(read.shape, type.getElementType()),
        x, read.groups);
  }
  if (map.isIdentity())
    return x;
  if (!map.isPermutation()) {
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
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, op.getInput());
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       op.getInputType().getElementType());
  return linalg::TransposeOp::create(rewriter, loc, x, init, perm)
      .getResult()[0];
}

/// The generic whose payload computes x (a value of its payload, x->in its
/// result read at a layout), when it only widens it: linalg-fuse-
/// elementwise-ops fuses the projection's rounding to bf16 with the norm's
/// extension back to f32.
linalg::GenericOp wideningOf(Node *x, Type element) {
  if (x->kind != Node::Compute || !x->in ||
      x->op->getResult(0).getType() != element)
    return {};
  auto widening = x->in->value.getDefiningOp<linalg::GenericOp>();
  if (!widening || widening->getNumResults() != 1 ||
      !widening.isAllParallelLoops() || !widening.hasPureTensorSemantics() ||
      !widening.getRegionOutputArgs()[0].use_empty() ||
      x->op->getBlock() != widening.getBody())
    return {};
  return widening;
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
  // x: a tensor of the op's input element type read whole (see readsWhole);
  // or a value of that type in the payload of an elementwise op whose
  // result widens it, computed by a copy of that op yielding it.
  Expressions &ex = matcher.reading.ex;
  Type element = op.getInputType().getElementType();
  Node *x = m->x;
  linalg::GenericOp widening = wideningOf(x, element);
  Node *read = widening ? x->in : x;
  if (read->kind != Node::Tensor)
    return failure();
  auto type = dyn_cast<RankedTensorType>(read->value.getType());
  if (!type || (!widening && type.getElementType() != element))
    return failure();
  std::optional<WholeRead> whole = readsWhole(
      ex, matcher.reading.layout, read->layout, type, op.getContext());
  if (!whole)
    return failure();

  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value xValue =
      widening ? raise::copyYielding(rewriter, widening, x->op->getResult(0))
               : read->value;
  Value input = materializeInput(rewriter, op, xValue, *whole);
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

/// Clones the element computation of a tensor (through the payloads the
/// expression reader opens) into one linalg.generic: the same scalar ops in
/// the same order and types, reading the tensors it stops at (reductions,
/// tensors it cannot open, and `stops`) at the maps their layouts are from
/// the root's dims.
class Gatherer {
public:
  Gatherer(Reading &reading, SmallVector<Value, 2> stops)
      : ex(reading.ex), root(reading.layout), top(reading.root),
        stops(std::move(stops)) {}

  FailureOr<Value> build(RewriterBase &rewriter, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    ctx = value.getContext();
    if (!top)
      return failure();
    Node *opened = ex.open(top);
    if (opened->kind != Node::Compute || failed(collect(opened)) ||
        ex.exhausted())
      return failure();
    Location loc = value.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, value);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (auto [leaf, map] : leaves) {
      inputs.push_back(leaf->value);
      maps.push_back(map);
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    bool ok = true;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, inputs, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          DenseMap<Node *, Value> emitted;
          Value result = emit(b, l, opened, args, emitted);
          ok = static_cast<bool>(result);
          linalg::YieldOp::create(b, l, result ? result : args.back());
        });
    if (!ok) {
      rewriter.eraseOp(generic);
      return failure();
    }
    return generic.getResult(0);
  }

private:
  /// A tensor read: its value and the leaves of its layout.
  using Key = std::pair<const void *, std::vector<unsigned>>;
  Key key(Node *tensor) const {
    std::vector<unsigned> atoms;
    for (const AtomList &dim : tensor->layout) {
      for (unsigned atom : ex.atoms.leaves(dim))
        atoms.push_back(atom);
      atoms.push_back(~0u);
    }
    return {tensor->value.getAsOpaquePointer(), atoms};
  }

  /// The root dim whose one atom an Index node indexes.
  std::optional<unsigned> indexDim(Node *index) const {
    AtomList atoms = ex.atoms.significant(index->atoms);
    for (auto [i, dim] : llvm::enumerate(root))
      if (ex.atoms.significant(dim) == atoms && atoms.size() == 1)
        return i;
    return std::nullopt;
  }

  LogicalResult collect(Node *node) {
    if (!visited.insert(node).second)
      return success();
    switch (node->kind) {
    case Node::Compute:
      for (Node *operand : node->operands)
        if (failed(collect(operand)))
          return failure();
      return success();
    case Node::Constant:
      return success(isa<TypedAttr>(node->constant));
    case Node::Index:
      if (std::optional<unsigned> dim = indexDim(node)) {
        indexDims[node] = *dim;
        return success();
      }
      return failure();
    case Node::Reduce:
    case Node::Undefined:
    case Node::Operand:
      return failure();
    case Node::Tensor:
      break;
    }
    // A scalar from outside every payload: used as is.
    if (!isa<RankedTensorType>(node->value.getType()))
      return success();
    Node *looked = ex.look(node);
    if (looked->kind != Node::Tensor) {
      resolved[node] = looked;
      return collect(looked);
    }
    if (!llvm::is_contained(stops, looked->value)) {
      Node *opened = ex.open(looked);
      if (opened->kind == Node::Compute) {
        resolved[node] = opened;
        return collect(opened);
      }
    }
    // A tensor the generic reads: as the payload read it, or under its
    // views, whichever is read by plain dims of the root (and index 0): the
    // expression reader reads no other indexing map, and the fold reads the
    // generic with it.
    for (Node *read : {node, looked}) {
      AffineMap map = mapFromRoot(ex, root, read->layout, ctx);
      if (!map || !llvm::all_of(map.getResults(), [](AffineExpr expr) {
            auto c = dyn_cast<AffineConstantExpr>(expr);
            return isa<AffineDimExpr>(expr) || (c && c.getValue() == 0);
          }))
        continue;
      resolved[node] = read;
      auto [it, added] = index.try_emplace(key(read), leaves.size());
      if (added)
        leaves.push_back({read, map});
      argOf[read] = it->second;
      return success();
    }
    return failure();
  }

  Value emit(OpBuilder &b, Location loc, Node *node, ValueRange args,
             DenseMap<Node *, Value> &emitted) {
    if (auto it = emitted.find(node); it != emitted.end())
      return it->second;
    Value result;
    switch (node->kind) {
    case Node::Tensor:
      if (!isa<RankedTensorType>(node->value.getType())) {
        result = node->value;
      } else if (Node *target = resolved.lookup(node); !target) {
        return {};
      } else if (target->kind == Node::Tensor) {
        result = args[argOf.at(target)];
      } else {
        result = emit(b, loc, target, args, emitted);
      }
      break;
    case Node::Constant:
      result =
          arith::ConstantOp::create(b, loc, cast<TypedAttr>(node->constant));
      break;
    case Node::Index:
      result = linalg::IndexOp::create(b, loc, indexDims.at(node));
      break;
    case Node::Compute: {
      IRMapping mapping;
      for (auto [operand, value] :
           llvm::zip_equal(node->operands, node->op->getOperands())) {
        Value emittedOperand = emit(b, loc, operand, args, emitted);
        if (!emittedOperand)
          return {};
        mapping.map(value, emittedOperand);
      }
      result = b.clone(*node->op, mapping)->getResult(0);
      break;
    }
    case Node::Reduce:
    case Node::Undefined:
    case Node::Operand:
      return {};
    }
    emitted[node] = result;
    return result;
  }

  Expressions &ex;
  const Layout &root;
  Node *top;
  SmallVector<Value, 2> stops;
  MLIRContext *ctx = nullptr;
  llvm::SmallPtrSet<Node *, 32> visited;
  /// What a Tensor node read in a payload is: the Compute its producer
  /// computes, a constant, or itself (looked through views) when read.
  DenseMap<Node *, Node *> resolved;
  /// The argument of each tensor read, one per tensor and layout.
  std::map<Key, unsigned> index;
  DenseMap<Node *, unsigned> argOf;
  DenseMap<Node *, unsigned> indexDims;
  SmallVector<std::pair<Node *, AffineMap>> leaves;
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
    Node *x = m->x;
    Value xTensor = x->kind == Node::Tensor ? x->value
                    : x->in                 ? x->in->value
                                            : Value();
    Gatherer gatherer(matcher.reading, {xTensor, m->weight});
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

/// One side of a clamp: `bound` the constant, `inner` the clamped value.
struct ClampStep {
  Side side;
  double bound;
  Node *inner;
};

/// A clamp step that keeps NaN: maximumf(v, lo), minimumf(v, hi), or
/// select(cmpf(v, c), c, v) with an ordered predicate true beyond the bound,
/// or select(cmpf(v, c), v, c) with an unordered one true within it. The
/// comparison is read by meaning: it may be computed in another op than the
/// select (an i1 tensor the select reads) and of v spelled otherwise.
std::optional<ClampStep> matchClampStep(Expressions &ex, Node *node) {
  Node *step = ex.open(node);
  if (step->kind != Node::Compute)
    return std::nullopt;
  Operation *def = step->op;
  // With `nnan` the IR has no NaN to keep (a NaN operand is poison), so
  // clamps that would send NaN to a bound are clamps too.
  auto noNaN = [](Operation *op) {
    auto fmf = dyn_cast<arith::ArithFastMathInterface>(op);
    return fmf &&
           arith::bitEnumContainsAll(fmf.getFastMathFlagsAttr().getValue(),
                                     arith::FastMathFlags::nnan);
  };
  if (isa<arith::MaximumFOp, arith::MinimumFOp>(def) ||
      (isa<arith::MaxNumFOp, arith::MinNumFOp>(def) && noNaN(def))) {
    if (step->operands.size() != 2)
      return std::nullopt;
    Side side = isa<arith::MaximumFOp, arith::MaxNumFOp>(def) ? Side::Lower
                                                              : Side::Upper;
    for (unsigned i : {0u, 1u})
      if (std::optional<double> c = constantOf(step->operands[1 - i]))
        return ClampStep{side, *c, step->operands[i]};
    return std::nullopt;
  }
  if (!isa<arith::SelectOp>(def) || step->operands.size() != 3)
    return std::nullopt;
  Node *cmp = computeOf<arith::CmpFOp>(ex, step->operands[0], 2);
  if (!cmp)
    return std::nullopt;
  Node *t = step->operands[1], *f = step->operands[2];
  std::optional<double> ct = constantOf(t), cf = constantOf(f);
  if (ct.has_value() == cf.has_value())
    return std::nullopt;
  bool boundIfTrue = ct.has_value();
  double bound = boundIfTrue ? *ct : *cf;
  Node *v = boundIfTrue ? f : t;
  // The comparison as v ? c.
  Node *lhs = cmp->operands[0], *rhs = cmp->operands[1];
  arith::CmpFPredicate p = cast<arith::CmpFOp>(cmp->op).getPredicate();
  std::optional<double> cr = constantOf(rhs), cl = constantOf(lhs);
  Renaming none;
  if (cr && *cr == bound && ex.same(lhs, v, none)) {
    // v ? c as is.
  } else if (cl && *cl == bound && ex.same(rhs, v, none)) {
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
  if (boundIfTrue != ordered && !noNaN(cmp->op))
    return std::nullopt;
  // True beyond the bound (bound chosen): v < lo, or v > hi; true within
  // it (v chosen): v >= lo, or v <= hi.
  Side side = (less == boundIfTrue) ? Side::Lower : Side::Upper;
  return ClampStep{side, bound, v};
}

/// clamp(v, lo, hi) in either order; returns v.
Node *matchClamp(Expressions &ex, Node *node, double lo, double hi) {
  std::optional<ClampStep> outer = matchClampStep(ex, node);
  if (!outer)
    return nullptr;
  std::optional<ClampStep> inner = matchClampStep(ex, outer->inner);
  if (!inner || inner->side == outer->side)
    return nullptr;
  for (const ClampStep &s : {*outer, *inner})
    if (s.bound != (s.side == Side::Lower ? lo : hi))
      return nullptr;
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
      Type element = getElementTypeOrSelf(current.getType());
      if (isa<Float8E4M3FNType, Float8E5M2Type>(element) ||
          element.isSignlessInteger(8))
        result = current;
    }
    if (!result)
      return failure();
    reading.emplace(result);
    if (!reading->root)
      return failure();
    Expressions &ex = reading->ex;
    QuantMatch m;
    m.result = result;
    Type storage = getElementTypeOrSelf(result.getType());
    Node *top = reading->root;
    Node *product = nullptr;
    if (auto f8 = dyn_cast<FloatType>(storage)) {
      Node *trunc = computeOf<arith::TruncFOp>(ex, top, 1);
      if (!trunc)
        return failure();
      auto truncOp = cast<arith::TruncFOp>(trunc->op);
      if (truncOp.getRoundingmodeAttr() &&
          truncOp.getRoundingmode() != arith::RoundingMode::to_nearest_even)
        return failure();
      double limit =
          APFloat::getLargest(f8.getFloatSemantics()).convertToDouble();
      Node *v =
          matchClamp(ex, throughCasts(ex, trunc->operands[0]), -limit, limit);
      if (!v)
        return failure();
      product = throughCasts(ex, v);
    } else {
      Node *convert = computeOf<arith::FPToSIOp>(ex, top, 1);
      if (!convert)
        return failure();
      Node *v = throughCasts(ex, convert->operands[0]);
      if (Node *rounded = computeOf<math::RoundEvenOp>(ex, v, 1)) {
        Node *u = matchClamp(ex, throughCasts(ex, rounded->operands[0]), -128.0,
                             127.0);
        if (!u)
          return failure();
        product = throughCasts(ex, u);
      } else {
        Node *u = matchClamp(ex, v, -128.0, 127.0);
        if (!u)
          return failure();
        Node *inner = computeOf<math::RoundEvenOp>(ex, throughCasts(ex, u), 1);
        if (!inner)
          return failure();
        product = throughCasts(ex, inner->operands[0]);
      }
    }
    if (failed(matchProduct(product, m)))
      return failure();
    return m;
  }

private:
  /// Whether `node` is y (through casts) read at the root's element.
  bool isY(Node *node) {
    Expressions &ex = reading->ex;
    Node *t = ex.look(throughCasts(ex, node));
    return t->kind == Node::Tensor && t->value == op.getResult() &&
           ex.layoutsEqual(t->layout, reading->layout, Renaming());
  }

  /// y * s (either order) or y / c, c a power of two, in f32.
  LogicalResult matchProduct(Node *node, QuantMatch &m) {
    Expressions &ex = reading->ex;
    Node *product = ex.open(node);
    if (product->kind != Node::Compute || product->operands.size() != 2 ||
        !isa<arith::MulFOp, arith::DivFOp>(product->op) ||
        !product->op->getResult(0).getType().isF32())
      return failure();
    if (isa<arith::DivFOp>(product->op)) {
      std::optional<double> c = constantOf(product->operands[1]);
      if (!isY(product->operands[0]) || !c || !isExactReciprocal(*c))
        return failure();
      m.scaleConstant = 1.0 / *c;
      return success();
    }
    for (unsigned side : {0u, 1u}) {
      if (!isY(product->operands[side]))
        continue;
      Node *s = product->operands[1 - side];
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
  LogicalResult matchScaleTensor(Node *node, QuantMatch &m) {
    Expressions &ex = reading->ex;
    Node *s = ex.look(node);
    if (s->kind != Node::Tensor)
      return failure();
    auto type = dyn_cast<RankedTensorType>(s->value.getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
      return failure();
    bool perTensor = llvm::all_of(s->layout, [&](const AtomList &dim) {
      return ex.atoms.significant(dim).empty();
    });
    std::optional<int64_t> head = op.getSingleHeadDim();
    if (perTensor) {
      // One element (size-1 dims collapse away).
      if (type.getNumElements() != 1)
        return failure();
    } else if (!head || static_cast<size_t>(*head) >= reading->layout.size() ||
               !readsOnly(ex, s->layout, reading->layout[*head].front()) ||
               type.getNumElements() != op.getInputType().getDimSize(*head)) {
      return failure();
    }
    m.scaleTensor = s->value;
    m.perTensor = perTensor;
    return success();
  }

  ApplyOp op;
  std::optional<Reading> reading;
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
