//===- CosSinSources.cpp - Where a frontend's cos/sin come from -----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CosSinSources.h"
#include "Expressions.h"
#include "PayloadAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <complex>
#include <cstring>

using namespace mlir;
using namespace mlir::rope::raise;

//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

double mlir::rope::raise::roundTo(Type type, double value) {
  auto floatType = dyn_cast_or_null<FloatType>(type);
  if (!floatType || floatType.isF64())
    return value;
  llvm::APFloat f(value);
  bool lost = false;
  f.convert(floatType.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

namespace {

/// Whether `coords` address an element of `value` (a scalar: no coords).
/// Indices come from IR the verifier does not bound (constants in indexing
/// maps, tensor.extract indices), so every read is checked.
bool inBounds(Value value, ArrayRef<int64_t> coords) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return coords.empty();
  if (static_cast<int64_t>(coords.size()) != type.getRank())
    return false;
  for (auto [c, size] : llvm::zip_equal(coords, type.getShape()))
    if (c < 0 || ShapedType::isDynamic(size) || c >= size)
      return false;
  return true;
}

int64_t linearIndex(ShapedType type, ArrayRef<int64_t> coords) {
  // -1 when the index does not fit: a type can claim more elements than
  // int64 counts (a dense_resource's shape is not its blob's size).
  int64_t flat = 0;
  for (auto [c, size] : llvm::zip_equal(coords, type.getShape()))
    if (llvm::MulOverflow(flat, size, flat) || llvm::AddOverflow(flat, c, flat))
      return -1;
  return flat;
}

std::optional<double> readBlob(DenseResourceElementsAttr attr,
                               ArrayRef<int64_t> coords,
                               unsigned component = 0) {
  const AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  ShapedType type = attr.getType();
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t index = linearIndex(type, coords);
  // Every element takes a byte or more: a larger index is past the blob
  // (and would overflow the byte offsets below).
  if (index < 0 || static_cast<uint64_t>(index) >= data.size())
    return std::nullopt;
  if (auto complex = dyn_cast<ComplexType>(element)) {
    // Interleaved (re, im) pairs.
    auto part = dyn_cast<FloatType>(complex.getElementType());
    if (!part || part.getWidth() % 8 || part.getWidth() > 64)
      return std::nullopt;
    size_t bytes = part.getWidth() / 8;
    size_t at = (2 * index + component) * bytes;
    if (at + bytes > data.size())
      return std::nullopt;
    uint64_t word = 0;
    std::memcpy(&word, data.data() + at, bytes);
    return llvm::APFloat(part.getFloatSemantics(),
                         llvm::APInt(part.getWidth(), word))
        .convertToDouble();
  }
  if (component != 0)
    return std::nullopt;
  if (!element.isIntOrFloat())
    return std::nullopt;
  unsigned bits = element.getIntOrFloatBitWidth();
  // Words of at most 64 bits (f80/f128/i128 tables are not read).
  if (bits % 8 || bits == 0 || bits > 64)
    return std::nullopt;
  size_t bytes = bits / 8;
  if (static_cast<size_t>(index + 1) * bytes > data.size())
    return std::nullopt;
  const char *at = data.data() + index * bytes;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    llvm::APInt raw(bits, 0);
    uint64_t word = 0;
    std::memcpy(&word, at, bytes);
    raw = llvm::APInt(bits, word);
    return llvm::APFloat(floatType.getFloatSemantics(), raw).convertToDouble();
  }
  if (auto intType = dyn_cast<IntegerType>(element)) {
    uint64_t word = 0;
    std::memcpy(&word, at, bytes);
    return static_cast<double>(llvm::APInt(bits, word).getSExtValue());
  }
  return std::nullopt;
}

/// A boolean a constant's value may depend on: LongRoPE's choice between
/// two inv_freq tables (torch.where(seq_len > L, long, short)) is the only
/// unknown of a table otherwise computed from constants. Evaluation under
/// `assumed` reads `cond` as that value; without it, the first unknown
/// condition of a select met is recorded in `cond`.
struct Switch {
  Value cond;
  std::optional<bool> assumed;
};

/// Whether `value` holds one element: an i1 scalar, or a tensor whose dims
/// are all static and 1 (rank 0 included).
bool isSingleElement(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return true;
  return llvm::all_of(type.getShape(), [](int64_t s) { return s == 1; });
}

/// The signed ordering `pred` with its operands swapped (`a < b` is
/// `b > a`); nullopt for the others.
std::optional<arith::CmpIPredicate>
swappedSignedPredicate(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  default:
    return std::nullopt;
  }
}

/// The input of the payload's op that `node` (a payload value read by
/// Expressions::readPayload) reads, or null.
OpOperand *inputOf(Node *node) {
  if (!node || node->kind != Node::Operand)
    return nullptr;
  auto op = cast<linalg::LinalgOp>(node->operand->getOwner());
  return op.isDpsInput(node->operand) ? node->operand : nullptr;
}

/// `node` with the payload ops `OpTys` (one-operand casts) stripped.
template <typename... OpTys> Node *stripCasts(Expressions &ex, Node *node) {
  for (int i = 0; node && i < kMaxDepth; ++i) {
    Node *open = ex.open(node);
    if (open->kind != Node::Compute || !isa<OpTys...>(open->op) ||
        open->operands.size() != 1)
      break;
    node = open->operands[0];
  }
  return node;
}

/// The value the payload of `op` yields for `result`, read by the raises'
/// one payload reader (destinations too); null when it cannot be read.
Node *yieldedNode(Expressions &ex, linalg::LinalgOp op, unsigned result = 0) {
  Block *body = op.getBlock();
  if (!body || body->empty() ||
      result >= body->getTerminator()->getNumOperands())
    return nullptr;
  return ex.readPayload(op, yieldedValue(op, result), /*readInits=*/true);
}

/// Evaluates constants element by element: dense and dense_resource
/// constants, through casts, slices and reshapes, and elementwise linalg
/// ops, whose payloads it reads with the raises' one payload reader
/// (Expressions::readPayload; each op's payload read once per evaluator).
/// With a Switch, the first unknown condition of a select met is recorded,
/// or read as the value assumed for it.
class ConstantEvaluator {
public:
  explicit ConstantEvaluator(Switch *sw = nullptr) : sw(sw) {}

  std::optional<double> element(Value value, ArrayRef<int64_t> coords,
                                int depth);

  /// The payload value `v` of `op` at loop coordinates `loops`.
  std::optional<double> payload(linalg::LinalgOp op, Value v,
                                ArrayRef<int64_t> loops, int depth) {
    return payload(op, ex.readPayload(op, v, /*readInits=*/false), loops,
                   depth);
  }

  /// The payload of `op` as `payload` evaluates it (null when unread).
  Node *read(linalg::LinalgOp op, Value v) {
    return ex.readPayload(op, v, /*readInits=*/false);
  }

  std::optional<double> payload(linalg::LinalgOp op, Node *node,
                                ArrayRef<int64_t> loops, int depth);

private:
  Expressions ex;
  Switch *sw;
};

std::optional<double> ConstantEvaluator::payload(linalg::LinalgOp op,
                                                 Node *node,
                                                 ArrayRef<int64_t> loops,
                                                 int depth) {
  if (!node || depth > 32)
    return std::nullopt;
  switch (node->kind) {
  case Node::Operand: {
    Value input = node->operand->get();
    if (!isa<RankedTensorType>(input.getType()))
      return element(input, {}, depth + 1);
    AffineMap map = op.getMatchingIndexingMap(node->operand);
    if (map.getNumDims() != loops.size())
      return std::nullopt;
    SmallVector<int64_t> coords = map.compose(loops);
    return element(input, coords, depth + 1);
  }
  case Node::Tensor:
    // A value from outside the payload.
    return element(node->value, {}, depth + 1);
  case Node::Constant:
    if (auto f = dyn_cast<FloatAttr>(node->constant))
      return f.getValueAsDouble();
    if (auto i = dyn_cast<IntegerAttr>(node->constant);
        i && i.getValue().getSignificantBits() <= 64)
      return static_cast<double>(i.getValue().getSExtValue());
    return std::nullopt;
  case Node::Index:
    if (node->dim >= loops.size())
      return std::nullopt;
    return static_cast<double>(loops[node->dim]);
  case Node::Compute:
    break;
  default:
    return std::nullopt;
  }
  Operation *def = node->op;
  Value v = def->getResult(0);
  if (sw && sw->assumed && v == sw->cond)
    return *sw->assumed ? 1.0 : 0.0;
  auto operand = [&](unsigned i) {
    return payload(op, node->operands[i], loops, depth);
  };
  if (isa<arith::SelectOp>(def)) {
    std::optional<double> c = operand(0);
    if (c)
      return *c != 0.0 ? operand(1) : operand(2);
    // An unknown condition: a switch when it is one boolean for every
    // element (an input read as a scalar, or a value from outside).
    if (sw && !sw->cond && !sw->assumed) {
      Node *condNode = node->operands[0];
      Value cond;
      if (condNode->kind == Node::Operand)
        cond = condNode->operand->get();
      else if (condNode->kind == Node::Tensor)
        cond = condNode->value;
      else if (condNode->kind == Node::Compute)
        cond = condNode->op->getResult(0);
      if (cond && condNode->kind != Node::Compute && isSingleElement(cond))
        sw->cond = cond;
      // A comparison in the payload (linalg-fuse-elementwise-ops fuses the
      // one that makes the boolean): analyzeLengthSwitch checks that it
      // compares one element.
      else if (cond && cond.getDefiningOp<arith::CmpIOp>())
        sw->cond = cond;
    }
    return std::nullopt;
  }
  Type type = v.getType();
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(def))
    return operand(0);
  if (isa<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp, arith::TruncFOp>(
          def)) {
    std::optional<double> a = operand(0);
    return a ? std::optional<double>(roundTo(type, *a)) : std::nullopt;
  }
  if (node->operands.size() == 2) {
    std::optional<double> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    double r;
    if (isa<arith::AddFOp, arith::AddIOp>(def))
      r = *a + *b;
    else if (isa<arith::SubFOp, arith::SubIOp>(def))
      r = *a - *b;
    else if (isa<arith::MulFOp, arith::MulIOp>(def))
      r = *a * *b;
    else if (isa<arith::DivFOp>(def))
      r = *a / *b;
    else if (isa<math::PowFOp>(def))
      r = std::pow(*a, *b);
    else
      return std::nullopt;
    return roundTo(type, r);
  }
  if (node->operands.size() == 1) {
    std::optional<double> a = operand(0);
    if (!a)
      return std::nullopt;
    double r;
    if (isa<arith::NegFOp>(def))
      r = -*a;
    else if (isa<math::ExpOp>(def))
      r = std::exp(*a);
    else if (isa<math::LogOp>(def))
      r = std::log(*a);
    else if (isa<math::SqrtOp>(def))
      r = std::sqrt(*a);
    else if (isa<math::RsqrtOp>(def))
      r = 1.0 / std::sqrt(*a);
    else
      return std::nullopt;
    return roundTo(type, r);
  }
  return std::nullopt;
}
} // namespace

std::optional<double>
mlir::rope::raise::constantElement(Value value, ArrayRef<int64_t> coords,
                                   int depth) {
  return ConstantEvaluator().element(value, coords, depth);
}

namespace {
std::optional<double>
ConstantEvaluator::element(Value value, ArrayRef<int64_t> coords, int depth) {
  if (depth > 32 || !inBounds(value, coords))
    return std::nullopt;
  if (sw && sw->assumed && value == sw->cond)
    return *sw->assumed ? 1.0 : 0.0;
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    Attribute attr = constant.getValue();
    if (auto f = dyn_cast<FloatAttr>(attr))
      return f.getValueAsDouble();
    if (auto i = dyn_cast<IntegerAttr>(attr))
      return static_cast<double>(i.getInt());
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      if (!dense.getType().hasStaticShape())
        return std::nullopt;
      int64_t index =
          dense.isSplat() ? 0 : linearIndex(dense.getType(), coords);
      if (isa<FloatType>(dense.getElementType()))
        return (*(dense.value_begin<llvm::APFloat>() + index))
            .convertToDouble();
      if (isa<IntegerType, IndexType>(dense.getElementType())) {
        llvm::APInt v = *(dense.value_begin<llvm::APInt>() + index);
        if (v.getSignificantBits() > 64)
          return std::nullopt;
        return static_cast<double>(v.getSExtValue());
      }
      return std::nullopt;
    }
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
      return readBlob(resource, coords);
    return std::nullopt;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return element(cast.getSource(), coords, depth + 1);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    if (!slice.getDroppedDims().none())
      return std::nullopt;
    SmallVector<int64_t> src;
    for (auto [c, off, stride] : llvm::zip_equal(
             coords, slice.getStaticOffsets(), slice.getStaticStrides())) {
      if (ShapedType::isDynamic(off) || ShapedType::isDynamic(stride))
        return std::nullopt;
      src.push_back(off + c * stride);
    }
    return element(slice.getSource(), src, depth + 1);
  }
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    auto resultType = cast<RankedTensorType>(value.getType());
    auto srcType = cast<RankedTensorType>(def->getOperand(0).getType());
    if (!resultType.hasStaticShape() || !srcType.hasStaticShape())
      return std::nullopt;
    int64_t flat = linearIndex(resultType, coords);
    SmallVector<int64_t> src = unflatten(flat, srcType.getShape());
    return element(def->getOperand(0), src, depth + 1);
  }
  if (auto op = dyn_cast<linalg::LinalgOp>(def)) {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        !op.isAllParallelLoops())
      return std::nullopt;
    AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
    if (!outMap.isPermutation())
      return std::nullopt;
    // Loop coordinates from result coordinates.
    SmallVector<int64_t> loops(op.getNumLoops());
    for (auto [k, expr] : llvm::enumerate(outMap.getResults()))
      loops[cast<AffineDimExpr>(expr).getPosition()] = coords[k];
    Value yielded = op.getBlock()->getTerminator()->getOperand(0);
    return payload(op, yielded, loops, depth);
  }
  return std::nullopt;
}
} // namespace

std::optional<SwitchedElement>
mlir::rope::raise::switchedElement(Value value, ArrayRef<int64_t> coords) {
  Switch sw;
  ConstantEvaluator evaluator(&sw);
  if (evaluator.element(value, coords, 0) || !sw.cond)
    return std::nullopt;
  sw.assumed = true;
  std::optional<double> ifTrue = evaluator.element(value, coords, 0);
  sw.assumed = false;
  std::optional<double> ifFalse = evaluator.element(value, coords, 0);
  if (!ifTrue || !ifFalse)
    return std::nullopt;
  return SwitchedElement{sw.cond, *ifTrue, *ifFalse};
}

FailureOr<LengthSwitch>
mlir::rope::raise::analyzeLengthSwitch(Value cond, std::string &why) {
  why = "the frequency tables are chosen by a boolean that is not a signed "
        "comparison of one integer with a constant";
  // cond: an i1 scalar compared outside any op, or the one element of a
  // tensor an elementwise op computes with a comparison in its payload
  // (read by the one payload reader: its sides are the op's inputs).
  Expressions ex;
  arith::CmpIOp cmp = cond.getDefiningOp<arith::CmpIOp>();
  linalg::LinalgOp op = cond.getDefiningOp<linalg::LinalgOp>();
  Node *cmpNode = nullptr;
  if (cmp) {
    op = dyn_cast_or_null<linalg::LinalgOp>(cmp->getParentOp());
    if (op && !(cmpNode = ex.readPayload(op, cond, /*readInits=*/false)))
      return failure();
  } else if (op) {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        !op.isAllParallelLoops() || !isSingleElement(cond))
      return failure();
    Node *yielded = yieldedNode(ex, op);
    cmpNode = yielded ? computeOf<arith::CmpIOp>(ex, yielded, 2) : nullptr;
    if (!cmpNode)
      return failure();
    cmp = cast<arith::CmpIOp>(cmpNode->op);
  }
  if (!cmp)
    return failure();
  // Each side: the integer (an input of one element, or a value from
  // outside when the comparison is), or a constant; the integer possibly
  // plus a constant (seq_len = max(position_ids) + 1 fused in).
  int64_t addend = 0;
  auto integerOrConstant = [&](Value v, Value &integer,
                               std::optional<int64_t> &constant) {
    if (!isSingleElement(v) ||
        !isa<IntegerType>(getElementTypeOrSelf(v.getType())))
      return false;
    if (std::optional<double> k = constantElement(
            v, SmallVector<int64_t>(
                   isa<RankedTensorType>(v.getType())
                       ? cast<RankedTensorType>(v.getType()).getRank()
                       : 0,
                   0))) {
      if (addend)
        return false; // a constant plus a constant: not folded here
      constant = static_cast<int64_t>(*k);
      return true;
    }
    integer = v;
    return true;
  };
  auto takeAddend = [&](const APInt &c) {
    if (c.getSignificantBits() > 32 || addend)
      return false;
    addend = c.getSExtValue();
    return true;
  };
  // Outside any payload: SSA values.
  auto valueSide = [&](Value v, Value &integer,
                       std::optional<int64_t> &constant) {
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c))) {
      if (c.getSignificantBits() > 63)
        return false;
      constant = c.getSExtValue();
      return true;
    }
    if (auto add = v.getDefiningOp<arith::AddIOp>()) {
      Value other;
      if (matchPattern(add.getRhs(), m_ConstantInt(&c)))
        other = add.getLhs();
      else if (matchPattern(add.getLhs(), m_ConstantInt(&c)))
        other = add.getRhs();
      if (!other || !takeAddend(c))
        return false;
      v = other;
    }
    return integerOrConstant(v, integer, constant);
  };
  // In a payload: the expressions the payload reader reads.
  auto nodeSide = [&](Node *n, Value &integer,
                      std::optional<int64_t> &constant) {
    if (std::optional<APInt> c = intConstant(ex, n)) {
      if (c->getSignificantBits() > 63)
        return false;
      constant = c->getSExtValue();
      return true;
    }
    if (Node *add = computeOf<arith::AddIOp>(ex, n, 2)) {
      std::optional<APInt> c = intConstant(ex, add->operands[1]);
      Node *other = add->operands[0];
      if (!c) {
        c = intConstant(ex, add->operands[0]);
        other = add->operands[1];
      }
      if (!c || !takeAddend(*c))
        return false;
      n = other;
    }
    OpOperand *input = inputOf(n);
    return input && integerOrConstant(input->get(), integer, constant);
  };
  Value lhs, rhs;
  std::optional<int64_t> lhsConstant, rhsConstant;
  bool sides = cmpNode ? nodeSide(cmpNode->operands[0], lhs, lhsConstant) &&
                             nodeSide(cmpNode->operands[1], rhs, rhsConstant)
                       : valueSide(cmp.getLhs(), lhs, lhsConstant) &&
                             valueSide(cmp.getRhs(), rhs, rhsConstant);
  if (!sides)
    return failure();
  arith::CmpIPredicate predicate = cmp.getPredicate();
  if (!lhs && rhs) {
    std::swap(lhs, rhs);
    std::swap(lhsConstant, rhsConstant);
    // K <pred> length is length <swapped pred> K.
    std::optional<arith::CmpIPredicate> swapped =
        swappedSignedPredicate(predicate);
    if (!swapped)
      return failure();
    predicate = *swapped;
  }
  if (!lhs || !rhsConstant || lhsConstant)
    return failure();
  // length <pred> K as "length > L" and which branch it picks.
  int64_t k = *rhsConstant;
  LengthSwitch result;
  result.length = lhs;
  result.addend = addend;
  switch (predicate) {
  case arith::CmpIPredicate::sgt: // length > K
    result.threshold = k;
    result.longWhenTrue = true;
    break;
  case arith::CmpIPredicate::sge: // length > K - 1
    result.threshold = k - 1;
    result.longWhenTrue = true;
    break;
  case arith::CmpIPredicate::slt: // not (length > K - 1)
    result.threshold = k - 1;
    result.longWhenTrue = false;
    break;
  case arith::CmpIPredicate::sle: // not (length > K)
    result.threshold = k;
    result.longWhenTrue = false;
    break;
  default:
    return failure();
  }
  if (result.threshold < 1) {
    why = "the frequency tables switch at a length below 1";
    return failure();
  }
  why.clear();
  return result;
}

std::optional<double> mlir::rope::raise::constantPart(Value value,
                                                      ArrayRef<int64_t> coords,
                                                      unsigned component) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant || !inBounds(value, coords))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !isa<ComplexType>(type.getElementType()))
    return component == 0 ? constantElement(value, coords) : std::nullopt;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    return readBlob(resource, coords, component);
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    int64_t index = dense.isSplat() ? 0 : linearIndex(type, coords);
    auto values = dense.tryGetValues<std::complex<llvm::APFloat>>();
    if (failed(values))
      return std::nullopt;
    std::complex<llvm::APFloat> z = *(values->begin() + index);
    return (component ? z.imag() : z.real()).convertToDouble();
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// cos/sin leaves
//===----------------------------------------------------------------------===//

namespace {
/// The coordinates of a leaf's root for one of its channels (Frame dims are
/// not allowed: the value is read as a table).
std::optional<SmallVector<int64_t>> tableCoords(const Leaf &leaf,
                                                int64_t channel) {
  SmallVector<int64_t> axes = unflatten(channel, leaf.channelShape);
  SmallVector<int64_t> coords;
  for (const DimRole &role : leaf.view) {
    switch (role.kind) {
    case DimRole::Frame:
    case DimRole::FrameSet:
      return std::nullopt;
    case DimRole::Channel:
      coords.push_back(axes[role.index]);
      break;
    case DimRole::Unit:
      coords.push_back(0);
      break;
    case DimRole::Fixed:
      coords.push_back(role.index);
      break;
    }
  }
  return coords;
}

bool hasFrames(const Leaf &leaf) {
  return llvm::any_of(leaf.view,
                      [](const DimRole &r) { return r.isFrameLike(); });
}

/// A leaf whose value is an arange along exactly one frame dim: the index
/// along that frame (implicit positions). Returns the frame.
std::optional<int64_t> arangeFrame(const Leaf &leaf) {
  auto type = cast<RankedTensorType>(leaf.root.getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> frame, frameDim;
  for (auto [d, role] : llvm::enumerate(leaf.view)) {
    if (role.kind == DimRole::FrameSet)
      return std::nullopt;
    if (role.kind == DimRole::Frame && type.getDimSize(d) > 1) {
      if (frame)
        return std::nullopt;
      frame = role.index;
      frameDim = d;
    }
  }
  // Each position is read one by one: a splat or computed arange can claim
  // any length in a few bytes of IR (2^22 positions: beyond any context).
  if (!frame || type.getDimSize(*frameDim) > (int64_t(1) << 22))
    return std::nullopt;
  SmallVector<int64_t> coords;
  for (const DimRole &role : leaf.view)
    coords.push_back(role.kind == DimRole::Fixed ? role.index : 0);
  for (int64_t i = 0; i < type.getDimSize(*frameDim); ++i) {
    coords[*frameDim] = i;
    std::optional<double> v = constantElement(leaf.root, coords);
    if (!v || *v != static_cast<double>(i))
      return std::nullopt;
  }
  return frame;
}

/// The single-factor leaf `poly` is (coefficient 1), if it is one.
std::optional<unsigned> singleLeaf(const Poly &poly) {
  if (poly.undef || poly.terms.size() != 1 || poly.terms[0].coef != 1.0 ||
      poly.terms[0].factors.size() != 1)
    return std::nullopt;
  return poly.terms[0].factors[0].first;
}

/// Integer position streams: a float leaf converted from integers
/// (`sitofp` in a linalg op) or an arange constant.
struct PositionFactor {
  int64_t positions = -1;
  int64_t implicitFrame = -1;
};

/// Python's negative-index wrap of an integer `p` into `rows` rows,
/// `select(p < 0, p + rows, p)`, however spelled (the comparison either way
/// round, `p <= -1`, the branches swapped with the predicate negated, the
/// addition's operands in either order), read in a payload: returns `p`,
/// or null.
Node *negativeIndexWrap(Expressions &ex, Node *value, int64_t rows) {
  Node *select = computeOf<arith::SelectOp>(ex, value, 3);
  if (!select || ShapedType::isDynamic(rows))
    return nullptr;
  Node *cmp = computeOf<arith::CmpIOp>(ex, select->operands[0], 2);
  if (!cmp)
    return nullptr;
  auto constant = [&](Node *n) -> std::optional<int64_t> {
    std::optional<APInt> c = intConstant(ex, n);
    if (c && c->getSignificantBits() <= 64)
      return c->getSExtValue();
    return std::nullopt;
  };
  // The comparison as `p < bound` or `p >= bound` (the constant to the
  // right), with bound 0 (`p <= -1` is `p < 0`).
  using P = arith::CmpIPredicate;
  P pred = cast<arith::CmpIOp>(cmp->op).getPredicate();
  Node *p = cmp->operands[0];
  std::optional<int64_t> bound = constant(cmp->operands[1]);
  if (!bound) {
    bound = constant(cmp->operands[0]);
    p = cmp->operands[1];
    std::optional<P> swapped = swappedSignedPredicate(pred);
    if (!swapped)
      return nullptr;
    pred = *swapped;
  }
  if (!bound)
    return nullptr;
  bool negativeIsTrue;
  if ((pred == P::slt && *bound == 0) || (pred == P::sle && *bound == -1))
    negativeIsTrue = true;
  else if ((pred == P::sge && *bound == 0) || (pred == P::sgt && *bound == -1))
    negativeIsTrue = false;
  else
    return nullptr;
  Node *wrapped = select->operands[negativeIsTrue ? 1 : 2];
  Node *kept = select->operands[negativeIsTrue ? 2 : 1];
  Node *add = computeOf<arith::AddIOp>(ex, wrapped, 2);
  if (kept != p || !add)
    return nullptr;
  Node *other = add->operands[0] == p ? add->operands[1] : add->operands[0];
  if ((add->operands[0] != p && add->operands[1] != p) ||
      constant(other) != rows)
    return nullptr;
  return p;
}

std::optional<PositionFactor>
positionFactor(ElementAlgebra &algebra, unsigned leafId, std::string &why) {
  Leaf leaf = algebra.leaf(leafId);
  if (!leaf.channelShape.empty()) {
    why = "the angle's position factor varies over channels";
    return std::nullopt;
  }
  if (std::optional<int64_t> frame = arangeFrame(leaf))
    return PositionFactor{-1, *frame};
  Type element = getElementTypeOrSelf(leaf.root.getType());
  if (element.isInteger(64) || element.isInteger(32))
    return PositionFactor{static_cast<int64_t>(leafId), -1};
  auto op = leaf.root.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1) {
    why = "the angle's positions are not converted from integers";
    return std::nullopt;
  }
  Expressions ex;
  Node *v = stripCasts<arith::ExtFOp>(ex, yieldedNode(ex, op));
  Node *conv = v ? computeOf<arith::SIToFPOp>(ex, v, 1) : nullptr;
  if (!conv && v)
    conv = computeOf<arith::UIToFPOp>(ex, v, 1);
  if (!conv || conv->operands[0]->kind != Node::Operand) {
    why = "the angle's positions are not converted from integers";
    return std::nullopt;
  }
  unsigned arg = conv->operands[0]->operand->getOperandNumber();
  FailureOr<SmallVector<OperandRequest>> requests = algebra.linalgInputRequests(
      op, cast<OpResult>(leaf.root), leaf.view, leaf.channelShape);
  if (failed(requests) || arg >= requests->size()) {
    why = "the positions' conversion reads them through unsupported maps";
    return std::nullopt;
  }
  const OperandRequest &request = (*requests)[arg];
  FailureOr<ArrayRef<Element>> ints =
      algebra.evaluate(request.value, request.view, request.channelShape);
  if (failed(ints) || ints->size() != 1) {
    why = "the positions could not be followed";
    return std::nullopt;
  }
  std::optional<unsigned> stream = singleLeaf((*ints)[0].re);
  if (!stream) {
    why = "the positions are computed, not a tensor of integers";
    return std::nullopt;
  }
  const Leaf &streamLeaf = algebra.leaf(*stream);
  auto type = cast<RankedTensorType>(streamLeaf.root.getType());
  if (!type.getElementType().isInteger(64) &&
      !type.getElementType().isInteger(32)) {
    why = "positions must be i32 or i64";
    return std::nullopt;
  }
  if (std::optional<int64_t> frame = arangeFrame(streamLeaf))
    return PositionFactor{-1, *frame};
  return PositionFactor{static_cast<int64_t>(*stream), -1};
}

/// A payload value of `op` that is one constant for every element: a
/// scalar constant, or an input of `op` that is a splat constant (torch's
/// `polar(ones_like(angle), angle)` multiplies cos and sin by a tensor of
/// ones).
std::optional<double> uniformConstant(Node *node) {
  switch (node->kind) {
  case Node::Operand:
    if (OpOperand *input = inputOf(node))
      return getScalarConstant(input->get());
    return std::nullopt;
  case Node::Constant:
    if (auto attr = dyn_cast<FloatAttr>(node->constant))
      return attr.getValueAsDouble();
    return std::nullopt;
  case Node::Tensor:
    return getScalarConstant(node->value);
  case Node::Compute:
    // Casts of a constant, rounded as the frontend rounds them.
    return getScalarConstant(node->op->getResult(0));
  default:
    return std::nullopt;
  }
}

/// An angle factor that one elementwise op computes as p / t (MaxText:
/// positions / timescale, the timescale base^(2i/D) computed from
/// constants): the leaf of p at the channel, and t there.
struct PositionQuotient {
  unsigned numerator;
  double divisor;
  Type divisorType;
};

/// The payload value `v` of the op producing `leaf` at the loops of
/// channel `channel`, when it is computed from linalg.index and constants
/// only and reads no loop of a frame (a timescale the same for every
/// token); else nullopt. With `sw`, inputs are read too (a table the
/// payload selects between, LongRoPE's), at the channel's loops, and the
/// unknown condition of a select is recorded or assumed as
/// ConstantEvaluator does: the caller proves that condition one element.
std::optional<double> channelPayloadValue(linalg::LinalgOp op, Value v,
                                          const Leaf &leaf, int64_t channel,
                                          Switch *sw = nullptr) {
  ConstantEvaluator evaluator(sw);
  Node *root = evaluator.read(op, v);
  if (!root)
    return std::nullopt;
  // The loops `v` reads through linalg.index, and (without `sw`) that it
  // reads no operand.
  llvm::SmallBitVector read(op.getNumLoops());
  for (Node *node : nodesOf(root)) {
    if (node->kind == Node::Operand) {
      if (!sw)
        return std::nullopt;
      // An input read at frame loops would vary over the tokens.
      for (AffineExpr expr :
           op.getMatchingIndexingMap(node->operand).getResults())
        for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
          if (expr.isFunctionOfDim(loop))
            read.set(loop);
      continue;
    }
    if (node->kind == Node::Index)
      read.set(node->dim);
  }
  AffineMap out = op.getIndexingMapMatchingResult(cast<OpResult>(leaf.root));
  if (!out.isPermutation() ||
      out.getNumResults() != static_cast<unsigned>(leaf.view.size()) ||
      channel < 0 || channel >= numChannels(leaf.channelShape))
    return std::nullopt;
  SmallVector<int64_t> axes = unflatten(channel, leaf.channelShape);
  SmallVector<int64_t> loops(op.getNumLoops(), 0);
  for (auto [k, role] : llvm::enumerate(leaf.view)) {
    unsigned loop = out.getDimPosition(k);
    if (role.isFrameLike()) {
      if (read.test(loop))
        return std::nullopt;
      continue;
    }
    if (role.kind == DimRole::Channel)
      loops[loop] = axes[role.index];
    else if (role.kind == DimRole::Fixed)
      loops[loop] = role.index;
  }
  return evaluator.payload(op, root, loops, 0);
}

/// The element of `leaf`'s op's input `arg` that channel `channel` of the
/// leaf reads, as the algebra evaluates it; nullopt when not followed.
std::optional<Poly> inputElementAt(ElementAlgebra &algebra, const Leaf &leaf,
                                   OpOperand *input, int64_t channel) {
  auto op = leaf.root.getDefiningOp<linalg::LinalgOp>();
  FailureOr<SmallVector<OperandRequest>> requests = algebra.linalgInputRequests(
      op, cast<OpResult>(leaf.root), leaf.view, leaf.channelShape);
  unsigned arg = input->getOperandNumber();
  if (failed(requests) || arg >= requests->size())
    return std::nullopt;
  // A copy: evaluating may add leaves and requests.
  OperandRequest request = (*requests)[arg];
  if (channel < 0 || channel >= static_cast<int64_t>(request.channelOf.size()))
    return std::nullopt;
  int64_t c = request.channelOf[channel];
  FailureOr<ArrayRef<Element>> elements =
      algebra.evaluate(request.value, request.view, request.channelShape);
  if (failed(elements) || c < 0 ||
      c >= static_cast<int64_t>(elements->size()) || (*elements)[c].im)
    return std::nullopt;
  return (*elements)[c].re;
}

/// positions * table, each element of `leaf`'s op: an integer input (the
/// positions) times a per-channel value computed in the payload (a table
/// linalg-fuse-elementwise-ops moved in with the positions when, at one
/// token, they have the same loops), possibly chosen by a switch.
struct PositionProduct {
  unsigned numerator;
  SwitchedElement table;
  Type tableType;
};

std::optional<PositionProduct>
positionProduct(ElementAlgebra &algebra, unsigned leafId, int64_t channel) {
  Leaf leaf = algebra.leaf(leafId);
  auto op = leaf.root.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      leaf.component != 0 || !op.isAllParallelLoops())
    return std::nullopt;
  Expressions ex;
  Node *yielded = yieldedNode(ex, op);
  Node *mul = yielded ? computeOf<arith::MulFOp>(ex, yielded, 2) : nullptr;
  if (!mul)
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    Node *toFloat = computeOf<arith::SIToFPOp>(ex, mul->operands[side], 1);
    OpOperand *arg = toFloat ? inputOf(toFloat->operands[0]) : nullptr;
    if (!arg)
      continue;
    Value tableValue = mul->op->getOperand(1 - side);
    Switch sw;
    std::optional<double> fixed =
        channelPayloadValue(op, tableValue, leaf, channel, &sw);
    SwitchedElement table{Value(), 0.0, 0.0};
    if (fixed) {
      table.ifTrue = table.ifFalse = *fixed;
    } else if (sw.cond) {
      sw.assumed = true;
      std::optional<double> ifTrue =
          channelPayloadValue(op, tableValue, leaf, channel, &sw);
      sw.assumed = false;
      std::optional<double> ifFalse =
          channelPayloadValue(op, tableValue, leaf, channel, &sw);
      if (!ifTrue || !ifFalse)
        continue;
      table = {sw.cond, *ifTrue, *ifFalse};
    } else {
      continue;
    }
    std::optional<Poly> p = inputElementAt(algebra, leaf, arg, channel);
    std::optional<unsigned> numerator = p ? singleLeaf(*p) : std::nullopt;
    if (!numerator)
      return std::nullopt;
    return PositionProduct{*numerator, table, tableValue.getType()};
  }
  return std::nullopt;
}

std::optional<PositionQuotient>
positionQuotient(ElementAlgebra &algebra, unsigned leafId, int64_t channel) {
  Leaf leaf = algebra.leaf(leafId);
  auto op = leaf.root.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      leaf.component != 0)
    return std::nullopt;
  Expressions ex;
  Node *yielded = yieldedNode(ex, op);
  Node *div = yielded ? computeOf<arith::DivFOp>(ex, yielded, 2) : nullptr;
  if (!div)
    return std::nullopt;
  // Conversions of an operand (int to float, float widening) read the
  // same number (as the algebra reads them).
  Node *numNode = stripCasts<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp>(
      ex, div->operands[0]);
  Node *denNode = stripCasts<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp>(
      ex, div->operands[1]);
  OpOperand *num = inputOf(numNode);
  OpOperand *den = inputOf(denNode);
  Value divisor = div->op->getOperand(1);
  if (!num)
    return std::nullopt;
  // A timescale computed in the payload from the loop indices alone (JAX's
  // base^(2i/d) fused into the angle's generic when, at one token, the
  // angle has no loop the timescale lacks): evaluated at the channel.
  std::optional<double> computed;
  if (denNode->kind == Node::Operand && !den)
    return std::nullopt; // a destination
  if (!den) {
    computed = channelPayloadValue(op, divisor, leaf, channel);
    if (!computed)
      return std::nullopt;
  }
  std::optional<Poly> p = inputElementAt(algebra, leaf, num, channel);
  if (computed) {
    std::optional<unsigned> numerator = p ? singleLeaf(*p) : std::nullopt;
    if (!numerator || !(*computed > 0.0) || !std::isfinite(*computed))
      return std::nullopt;
    return PositionQuotient{*numerator, *computed, divisor.getType()};
  }
  std::optional<Poly> t = inputElementAt(algebra, leaf, den, channel);
  if (!p || !t)
    return std::nullopt;
  std::optional<unsigned> numerator = singleLeaf(*p);
  if (!numerator)
    return std::nullopt;
  PositionQuotient q{*numerator, 0.0, Type()};
  if (std::optional<double> c = t->asConstant()) {
    q.divisor = *c;
  } else if (std::optional<unsigned> table = singleLeaf(*t)) {
    const Leaf &tableLeaf = algebra.leaf(*table);
    if (hasFrames(tableLeaf))
      return std::nullopt;
    std::optional<SmallVector<int64_t>> coords =
        tableCoords(tableLeaf, t->terms[0].factors[0].second);
    std::optional<double> value =
        coords ? constantElement(tableLeaf.root, *coords) : std::nullopt;
    if (!value)
      return std::nullopt;
    q.divisor = *value;
    q.divisorType = getElementTypeOrSelf(tableLeaf.root.getType());
  } else {
    return std::nullopt;
  }
  if (!(q.divisor > 0.0) || !std::isfinite(q.divisor))
    return std::nullopt;
  return q;
}

/// Peels `mulf` by constants and float casts off a payload value; returns
/// the value reached and multiplies `scale`.
Node *peelScale(Expressions &ex, Node *v, double &scale) {
  for (int i = 0; i < kMaxDepth; ++i) {
    Node *def = ex.open(v);
    if (def->kind != Node::Compute)
      break;
    if (isa<arith::ExtFOp, arith::TruncFOp>(def->op) &&
        def->operands.size() == 1) {
      v = def->operands[0];
      continue;
    }
    if (isa<arith::MulFOp, arith::DivFOp>(def->op) &&
        def->operands.size() == 2) {
      std::optional<double> rhs = uniformConstant(def->operands[1]);
      std::optional<double> lhs = uniformConstant(def->operands[0]);
      if (rhs && *rhs != 0.0) {
        scale *= isa<arith::MulFOp>(def->op) ? *rhs : 1.0 / *rhs;
        v = def->operands[0];
        continue;
      }
      if (lhs && isa<arith::MulFOp>(def->op)) {
        scale *= *lhs;
        v = def->operands[1];
        continue;
      }
    }
    break;
  }
  return v;
}

/// cos/sin gathered from a table: `tensor.extract %table[row, column]` in
/// the payload, row an integer input, column the channel's index.
FailureOr<CosSinLeaf> analyzeGather(ElementAlgebra &algebra, Expressions &ex,
                                    linalg::LinalgOp op, const Leaf &leaf,
                                    Node *extract, CosSinLeaf info,
                                    std::string &why) {
  Value table = cast<tensor::ExtractOp>(extract->op).getTensor();
  if (table.getParentBlock() == op.getBlock() ||
      extract->operands.size() != 3) {
    why = "cos/sin are gathered from a table that is not a captured 2-D "
          "tensor";
    return failure();
  }
  info.table = table;
  Node *rowIndex = extract->operands[1];
  Node *colIndex = extract->operands[2];
  FailureOr<SmallVector<OperandRequest>> requests = algebra.linalgInputRequests(
      op, cast<OpResult>(leaf.root), leaf.view, leaf.channelShape);
  if (failed(requests)) {
    why = "the gather's indexing maps are not followed";
    return failure();
  }
  // The row: an integer input of the op (index_cast of it), possibly with
  // negative indices wrapped (select(p < 0, p + rows, p)). Where a host
  // compiler split the payload, the cast or the wrap is computed per element
  // by an elementwise producer of that input: the chase goes on in the
  // producer's payload, with the producer's input read as the consumer reads
  // its result.
  int64_t tableRows = cast<RankedTensorType>(table.getType()).getDimSize(0);
  linalg::LinalgOp rowOwner = op;
  SmallVector<OperandRequest> rowRequests = *requests;
  std::optional<OperandRequest> rowRequest;
  for (int hops = 0; hops < 4 && !rowRequest; ++hops) {
    rowIndex = stripCasts<arith::IndexCastOp>(ex, rowIndex);
    if (!info.wrapRows) {
      if (Node *p = negativeIndexWrap(ex, rowIndex, tableRows)) {
        info.wrapRows = tableRows;
        rowIndex = stripCasts<arith::IndexCastOp>(ex, p);
      }
    }
    OpOperand *rowArg = inputOf(rowIndex);
    if (!rowArg)
      break;
    const OperandRequest &request = rowRequests[rowArg->getOperandNumber()];
    auto producer = request.value.getDefiningOp<linalg::GenericOp>();
    Node *yielded = nullptr;
    if (producer && producer.getNumLoops() == producer.getNumParallelLoops() &&
        isa<IntegerType, IndexType>(getElementTypeOrSelf(request.value)))
      yielded = yieldedNode(ex, producer,
                            cast<OpResult>(request.value).getResultNumber());
    // A producer that only copies an input is read by the algebra as it is.
    if (!yielded || yielded->kind != Node::Compute) {
      rowRequest = request;
      break;
    }
    FailureOr<SmallVector<OperandRequest>> inner =
        algebra.linalgInputRequests(producer, cast<OpResult>(request.value),
                                    request.view, request.channelShape);
    if (failed(inner))
      break;
    rowOwner = producer;
    rowRequests = std::move(*inner);
    rowIndex = yielded;
  }
  if (!rowRequest) {
    why = "the gathered row is computed from the positions (only "
          "Python's negative-index wrap is followed)";
    return failure();
  }
  // The column: linalg.index of the channel loop (+ a constant).
  int64_t colOffset = 0;
  if (Node *add = computeOf<arith::AddIOp>(ex, colIndex, 2)) {
    std::optional<APInt> c = intConstant(ex, add->operands[1]);
    if (c && c->getSignificantBits() <= 32) {
      colOffset = c->getSExtValue();
      colIndex = add->operands[0];
    }
  }
  if (colIndex->kind != Node::Index) {
    why = "the gathered column is not the channel index";
    return failure();
  }
  // Which channel axis the column loop is: from the result map.
  AffineMap outMap = op.getIndexingMapMatchingResult(cast<OpResult>(leaf.root));
  std::optional<DimRole> colRole;
  for (auto [k, expr] : llvm::enumerate(outMap.getResults()))
    if (cast<AffineDimExpr>(expr).getPosition() == colIndex->dim)
      colRole = leaf.view[k];
  if (!colRole ||
      (colRole->kind != DimRole::Channel && colRole->kind != DimRole::Fixed &&
       colRole->kind != DimRole::Unit)) {
    why = "the gathered column is not the channel index";
    return failure();
  }
  FailureOr<ArrayRef<Element>> rows = algebra.evaluate(
      rowRequest->value, rowRequest->view, rowRequest->channelShape);
  if (failed(rows) || rows->size() != 1) {
    why = "the gathered row varies over channels";
    return failure();
  }
  std::optional<unsigned> stream = singleLeaf((*rows)[0].re);
  if (!stream) {
    why = "the gathered row is computed, not a tensor of positions";
    return failure();
  }
  PositionFactor positions{static_cast<int64_t>(*stream), -1};
  if (std::optional<int64_t> frame = arangeFrame(algebra.leaf(*stream)))
    positions = PositionFactor{-1, *frame};
  for (int64_t c = 0, e = numChannels(leaf.channelShape); c < e; ++c) {
    SmallVector<int64_t> axes = unflatten(c, leaf.channelShape);
    int64_t column =
        colOffset + (colRole->kind == DimRole::Channel ? axes[colRole->index]
                                                       : colRole->index);
    AngleOfChannel angle;
    angle.positions = positions.positions;
    angle.implicitFrame = positions.implicitFrame;
    angle.column = column;
    info.channels.push_back(angle);
  }
  return info;
}
} // namespace

namespace {
/// cos/sin read from a constant table by the token index: the rows
/// [o, o + S) of a constant [M, W] table (Meta's freqs_cis[start : start +
/// S], real or complex: re is cos, im is sin), with o static or an SSA
/// index.
FailureOr<CosSinLeaf> analyzeFrameTable(const Leaf &leaf, std::string &why) {
  Value table = leaf.root;
  OpFoldResult rowOffset = OpBuilder(leaf.root.getContext()).getIndexAttr(0);
  int64_t colOffset = 0;
  if (auto slice = leaf.root.getDefiningOp<tensor::ExtractSliceOp>()) {
    auto srcType = cast<RankedTensorType>(slice.getSource().getType());
    if (srcType.getRank() != 2 || !slice.getDroppedDims().none() ||
        !llvm::all_of(slice.getStaticStrides(),
                      [](int64_t s) { return s == 1; }) ||
        ShapedType::isDynamic(slice.getStaticOffsets()[1])) {
      why = "cos/sin are a slice of a table that is not rows of a 2-D table";
      return failure();
    }
    table = slice.getSource();
    rowOffset = slice.getMixedOffsets()[0];
    colOffset = slice.getStaticOffsets()[1];
  }
  if (!table.getDefiningOp<arith::ConstantOp>() ||
      cast<RankedTensorType>(table.getType()).getRank() != 2 ||
      !cast<RankedTensorType>(table.getType()).hasStaticShape()) {
    why = "not computed by cos/sin or gathered from a table (a function "
          "argument or an unknown op)";
    return failure();
  }
  if (leaf.view.size() != 2 || leaf.view[0].kind != DimRole::Frame ||
      leaf.view[1].kind != DimRole::Channel) {
    why = "a constant cos/sin table is not read by token and channel";
    return failure();
  }
  CosSinLeaf info;
  info.table = table;
  info.rowOffset = rowOffset;
  info.component = leaf.component;
  info.isSin = leaf.component == 1;
  for (int64_t c = 0, e = numChannels(leaf.channelShape); c < e; ++c) {
    AngleOfChannel angle;
    angle.implicitFrame = leaf.view[0].index;
    angle.column = colOffset + c;
    info.channels.push_back(angle);
  }
  return info;
}
} // namespace

FailureOr<CosSinLeaf>
mlir::rope::raise::analyzeCosSinLeaf(ElementAlgebra &algebra, unsigned leafId,
                                     std::string &why) {
  Leaf leaf = algebra.leaf(leafId);
  auto op = leaf.root.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics())
    return analyzeFrameTable(leaf, why);
  auto result = cast<OpResult>(leaf.root);
  CosSinLeaf info;
  Expressions ex;
  Node *v = yieldedNode(ex, op, result.getResultNumber());
  if (!v) {
    why = "not computed by cos/sin or gathered from a table";
    return failure();
  }
  if (leaf.component != 0 ||
      isa<ComplexType>(yieldedValue(op, result.getResultNumber()).getType())) {
    // A complex table computed in the op (torch.polar: complex.create of
    // r * cos and r * sin): each part is one leaf.
    Node *create = computeOf<complex::CreateOp>(ex, v, 2);
    if (!create)
      return analyzeFrameTable(leaf, why);
    v = create->operands[leaf.component == 0 ? 0 : 1];
  }
  v = ex.open(peelScale(ex, v, info.scale));
  if (v->kind == Node::Compute && isa<tensor::ExtractOp>(v->op)) {
    // A gathered table: cos or sin is decided by the rotation's signs.
    return analyzeGather(algebra, ex, op, leaf, v, info, why);
  }
  if (v->kind != Node::Compute || !isa<math::CosOp, math::SinOp>(v->op) ||
      v->operands.size() != 1) {
    why = "not computed by cos/sin or gathered from a table";
    return failure();
  }
  info.isSin = isa<math::SinOp>(v->op);
  OpOperand *arg = inputOf(v->operands[0]);
  if (!arg) {
    why = "the angle is computed inside the cos/sin op";
    return failure();
  }
  FailureOr<SmallVector<OperandRequest>> requests =
      algebra.linalgInputRequests(op, result, leaf.view, leaf.channelShape);
  if (failed(requests)) {
    why = "the cos/sin op's indexing maps are not followed";
    return failure();
  }
  const OperandRequest &request = (*requests)[arg->getOperandNumber()];
  FailureOr<ArrayRef<Element>> angles =
      algebra.evaluate(request.value, request.view, request.channelShape);
  if (failed(angles)) {
    why = "the angle could not be followed";
    return failure();
  }
  for (int64_t c : request.channelOf) {
    // A channel the angle operand does not have (an index from the IR past
    // its end) is not an angle.
    if (c < 0 || c >= static_cast<int64_t>(angles->size())) {
      why = "the angle is read outside its operand";
      return failure();
    }
    const Poly &angle = (*angles)[c].re;
    if (angle.undef || angle.terms.size() != 1) {
      why = "the angle is not a product of positions and frequencies";
      return failure();
    }
    const Monomial &m = angle.terms[0];
    std::optional<PositionFactor> positions;
    std::optional<double> table;
    double tableIfTrue = 0.0;
    Value frequencySwitch;
    Type tableType;
    double timescale = 0.0;
    Type timescaleType;
    for (auto [id, channel] : m.factors) {
      // The angle's positions, from a quotient or product leaf: the only
      // ones, and no table read yet.
      auto takePositions = [&](unsigned numerator) {
        if (positions || table) {
          why = "the angle is not positions times a frequency table";
          return false;
        }
        positions = positionFactor(algebra, numerator, why);
        return positions.has_value();
      };
      if (std::optional<PositionQuotient> q =
              positionQuotient(algebra, id, channel)) {
        // positions / timescale: the frequency is 1 / timescale.
        if (!takePositions(q->numerator))
          return failure();
        table = 1.0 / q->divisor;
        timescale = q->divisor;
        timescaleType = q->divisorType;
        continue;
      }
      if (std::optional<PositionProduct> pp =
              positionProduct(algebra, id, channel)) {
        // positions * a table computed in the same payload.
        if (!takePositions(pp->numerator))
          return failure();
        table = pp->table.ifFalse;
        tableType = pp->tableType;
        if (pp->table.cond) {
          tableIfTrue = pp->table.ifTrue;
          frequencySwitch = pp->table.cond;
        }
        continue;
      }
      const Leaf &factor = algebra.leaf(id);
      if (!hasFrames(factor)) {
        std::optional<SmallVector<int64_t>> coords =
            tableCoords(factor, channel);
        std::optional<double> value =
            coords ? constantElement(factor.root, *coords) : std::nullopt;
        if (!value && coords) {
          // A table chosen at run time between two constant ones.
          if (std::optional<SwitchedElement> switched =
                  switchedElement(factor.root, *coords)) {
            if (table) {
              why = "the frequency table is not a constant";
              return failure();
            }
            table = switched->ifFalse;
            tableIfTrue = switched->ifTrue;
            frequencySwitch = switched->cond;
            tableType = getElementTypeOrSelf(factor.root.getType());
            continue;
          }
        }
        // A factor that varies over no frame dim is the frequency table, or,
        // when it is not a constant, positions the same for every token:
        // at one token (decode) the frontend broadcasts the size-1 token
        // dims of the position ids (constant indices in the indexing maps),
        // so the position stream has no frame dim. It is a stream only when
        // read from integers like any other (positionFactor decides), and
        // the builder then gives it a token dim of size 1.
        if (!value && !factor.channelShape.empty()) {
          why = "the frequency table is not a constant";
          return failure();
        }
        if (value) {
          if (table) {
            why = "the frequency table is not a constant";
            return failure();
          }
          table = value;
          tableType = getElementTypeOrSelf(factor.root.getType());
          continue;
        }
      }
      if (positions) {
        why = "the angle multiplies two position-dependent values";
        return failure();
      }
      positions = positionFactor(algebra, id, why);
      if (!positions)
        return failure();
    }
    if (!table || !positions) {
      why = "the angle is not positions times a frequency table";
      return failure();
    }
    AngleOfChannel a;
    a.positions = positions->positions;
    a.implicitFrame = positions->implicitFrame;
    a.theta = m.coef * *table;
    if (m.coef == 1.0 && !timescale)
      a.tableType = tableType;
    if (m.coef == 1.0 && timescale) {
      a.timescale = timescale;
      a.timescaleType = timescaleType;
    }
    if (frequencySwitch) {
      a.frequencySwitch = frequencySwitch;
      a.thetaIfTrue = m.coef * tableIfTrue;
    }
    info.channels.push_back(a);
  }
  return info;
}
