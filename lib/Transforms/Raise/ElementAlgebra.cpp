//===- ElementAlgebra.cpp - Tensor values as polynomials per channel ------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ElementAlgebra.h"
#include "Expressions.h"
#include "PayloadAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "rope/Dialect/Rope/Utils/GuardedValueBounds.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::rope::raise;

//===----------------------------------------------------------------------===//
// Polynomials
//===----------------------------------------------------------------------===//

namespace {
bool factorsLess(const Monomial &a, const Monomial &b) {
  return a.factors < b.factors;
}

Poly normalized(SmallVector<Monomial, 2> terms, bool undef) {
  for (Monomial &m : terms)
    llvm::sort(m.factors);
  llvm::stable_sort(terms, factorsLess);
  Poly out;
  out.undef = undef;
  for (Monomial &m : terms) {
    if (!out.terms.empty() && out.terms.back().factors == m.factors)
      out.terms.back().coef += m.coef;
    else
      out.terms.push_back(std::move(m));
  }
  llvm::erase_if(out.terms, [](const Monomial &m) { return m.coef == 0.0; });
  return out;
}
} // namespace

Poly Poly::constant(double c) {
  Poly p;
  if (c != 0.0)
    p.terms.push_back(Monomial{c, {}});
  return p;
}

Poly Poly::leaf(unsigned id, int64_t channel) {
  Poly p;
  p.terms.push_back(Monomial{1.0, {{id, channel}}});
  return p;
}

Poly Poly::operator+(const Poly &o) const {
  SmallVector<Monomial, 2> terms(this->terms);
  terms.append(o.terms.begin(), o.terms.end());
  return normalized(std::move(terms), undef || o.undef);
}

Poly Poly::scaled(double c) const {
  SmallVector<Monomial, 2> terms(this->terms);
  for (Monomial &m : terms)
    m.coef *= c;
  return normalized(std::move(terms), undef);
}

Poly Poly::operator-(const Poly &o) const { return *this + o.scaled(-1.0); }

Poly Poly::operator*(const Poly &o) const {
  SmallVector<Monomial, 2> terms;
  for (const Monomial &a : this->terms)
    for (const Monomial &b : o.terms) {
      Monomial m{a.coef * b.coef, a.factors};
      m.factors.append(b.factors.begin(), b.factors.end());
      terms.push_back(std::move(m));
    }
  return normalized(std::move(terms), undef || o.undef);
}

std::optional<double> Poly::asConstant() const {
  if (undef)
    return std::nullopt;
  if (terms.empty())
    return 0.0;
  if (terms.size() == 1 && terms[0].factors.empty())
    return terms[0].coef;
  return std::nullopt;
}

bool Poly::operator==(const Poly &o) const {
  if (undef != o.undef || terms.size() != o.terms.size())
    return false;
  for (auto [a, b] : llvm::zip_equal(terms, o.terms))
    if (a.coef != b.coef || a.factors != b.factors)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t mlir::rope::raise::numChannels(ArrayRef<int64_t> shape) {
  // Saturates: the sizes come from the IR (a mutated or hostile module can
  // spell tensor<4294967296x4294967296xf32>), and a wrapped product would
  // slip past the work budget into a huge or negative element count.
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0)
      return std::numeric_limits<int64_t>::max();
    if (llvm::MulOverflow(n, s, n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

SmallVector<int64_t> mlir::rope::raise::unflatten(int64_t flat,
                                                  ArrayRef<int64_t> shape) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

static int64_t flatten(ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (auto [c, s] : llvm::zip_equal(coords, shape))
    flat = flat * s + c;
  return flat;
}

/// Static values, and SSA values that are constants (JAX spells offsets
/// as `arith.constant` indices); kDynamic for the rest.
static SmallVector<int64_t> constantsOf(ArrayRef<OpFoldResult> values) {
  SmallVector<int64_t> out;
  for (OpFoldResult v : values)
    out.push_back(getConstantIntValue(v).value_or(ShapedType::kDynamic));
  return out;
}

/// Whether a slice with static `offset`, `size` and `stride` stays inside a
/// dim of `dimSize` elements (kDynamic: only the signs are known). The three
/// may be SSA constants, which the slice verifiers do not bound, and a stride
/// of 0 would divide by zero below.
static bool sliceInBounds(int64_t offset, int64_t size, int64_t stride,
                          int64_t dimSize) {
  if (offset < 0 || size < 0 || stride < 1)
    return false;
  if (ShapedType::isDynamic(dimSize) || size == 0)
    return true;
  int64_t last;
  if (llvm::MulOverflow(size - 1, stride, last) ||
      llvm::AddOverflow(last, offset, last))
    return false;
  return last < dimSize;
}

/// A size of `type`'s dim, or kDynamic.
static int64_t dimSize(Value value, int64_t dim) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

/// Whether `size` is the whole of dim `dim` of `tensor`: equal static
/// sizes, or a dynamic size given as `tensor.dim` of that tensor (or of the
/// tensor an empty tensor was sized from) or as the size operand the empty
/// tensor was made with.
static bool isWholeDim(OpFoldResult size, Value tensor, int64_t dim) {
  std::optional<int64_t> constant = getConstantIntValue(size);
  int64_t actual = dimSize(tensor, dim);
  if (constant)
    return !ShapedType::isDynamic(actual) && *constant == actual;
  if (!ShapedType::isDynamic(actual))
    return false;
  auto value = dyn_cast<Value>(size);
  if (auto dimOp = value.getDefiningOp<tensor::DimOp>()) {
    std::optional<int64_t> index = dimOp.getConstantIndex();
    if (index && *index == dim && dimOp.getSource() == tensor)
      return true;
  }
  if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>())
    if (empty.getDynamicSize(dim) == value)
      return true;
  // Any other spelling of the same size (a dim of another tensor the size
  // was made from, through reshapes and ops that keep it: what
  // linalg-fold-unit-extent-dims' rank-reducing slices give).
  return rope::provablyEqual(ValueBoundsConstraintSet::Variable(size),
                             ValueBoundsConstraintSet::Variable(tensor, dim));
}

/// The role `Fixed(i)` as `Unit` when the dim has size 1.
static DimRole fixedRole(Value value, int64_t dim, int64_t index) {
  if (dimSize(value, dim) == 1 && index == 0)
    return DimRole::unit();
  return DimRole::fixed(index);
}

bool ElementAlgebra::KeyLess::operator()(const Key &a, const Key &b) const {
  const auto &[va, viewA, shapeA] = a;
  const auto &[vb, viewB, shapeB] = b;
  if (va != vb)
    return va.getAsOpaquePointer() < vb.getAsOpaquePointer();
  if (viewA != viewB)
    return std::lexicographical_compare(viewA.begin(), viewA.end(),
                                        viewB.begin(), viewB.end());
  return std::lexicographical_compare(shapeA.begin(), shapeA.end(),
                                      shapeB.begin(), shapeB.end());
}

bool ElementAlgebra::LeafKeyLess::operator()(const LeafKey &a,
                                             const LeafKey &b) const {
  Key ka{std::get<0>(a), std::get<1>(a), std::get<2>(a)};
  Key kb{std::get<0>(b), std::get<1>(b), std::get<2>(b)};
  KeyLess less;
  if (less(ka, kb))
    return true;
  if (less(kb, ka))
    return false;
  return std::get<3>(a) < std::get<3>(b);
}

unsigned ElementAlgebra::internLeaf(Value root, const View &view,
                                    ArrayRef<int64_t> channelShape,
                                    unsigned component) {
  auto [it, inserted] = leafIds.try_emplace(
      LeafKey{root, view, SmallVector<int64_t>(channelShape), component},
      leaves.size());
  if (inserted)
    leaves.push_back(
        Leaf{root, view, SmallVector<int64_t>(channelShape), component});
  return it->second;
}

void ElementAlgebra::beginQuery() {
  budget = queryBudget;
  depth = 0;
  wasCut = false;
  deepest = 0;
  cutShort.clear();
  ++query;
}

void ElementAlgebra::forget(Operation *op) {
  for (Value result : op->getResults()) {
    Key first{result, {}, {}};
    auto dropFrom = [&](auto &map) {
      auto it = map.lower_bound(first);
      while (it != map.end() && std::get<0>(it->first) == result)
        it = map.erase(it);
    };
    dropFrom(known);
    dropFrom(cutShort);
  }
}

Elements ElementAlgebra::asLeaves(Value value, const View &view,
                                  ArrayRef<int64_t> channelShape) {
  Type elementType = value.getType();
  if (auto shaped = dyn_cast<ShapedType>(elementType))
    elementType = shaped.getElementType();
  bool complex = isa<ComplexType>(elementType);
  unsigned re = internLeaf(value, view, channelShape, 0);
  std::optional<unsigned> im;
  if (complex)
    im = internLeaf(value, view, channelShape, 1);
  Elements out;
  for (int64_t c = 0, e = numChannels(channelShape); c < e; ++c) {
    Element element{Poly::leaf(re, c), std::nullopt};
    if (im)
      element.im = Poly::leaf(*im, c);
    out.push_back(std::move(element));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

/// Whether `view` reads only elements of `type`: fixed indices inside their
/// dims, channel axes that exist and are as long as the dim they read (a
/// shorter one would leave elements unread, a longer one reads past the end;
/// a dynamic dim is as long as the loops that read it).
/// Every index a view holds comes from the IR (extract indices, slice
/// offsets, map constants), and the reshapes and slices above flatten
/// coordinates into channel numbers: an out-of-range coordinate there is an
/// out-of-range element read (issue 32).
static bool isInBounds(RankedTensorType type, const View &view,
                       ArrayRef<int64_t> channelShape) {
  if (llvm::any_of(channelShape, [](int64_t s) { return s < 0; }))
    return false;
  for (auto [d, role] : llvm::enumerate(view)) {
    int64_t size = type.getDimSize(d);
    bool dynamic = ShapedType::isDynamic(size);
    switch (role.kind) {
    case DimRole::Frame:
    case DimRole::FrameSet:
      break;
    case DimRole::Unit:
      if (!dynamic && size < 1)
        return false;
      break;
    case DimRole::Fixed:
      if (role.index < 0 || (!dynamic && role.index >= size))
        return false;
      break;
    case DimRole::Channel:
      if (role.index < 0 ||
          role.index >= static_cast<int64_t>(channelShape.size()) ||
          (!dynamic && channelShape[role.index] != size))
        return false;
      break;
    }
  }
  return true;
}

FailureOr<ArrayRef<Element>>
ElementAlgebra::evaluate(Value value, const View &view,
                         ArrayRef<int64_t> channelShape) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || static_cast<int64_t>(view.size()) != type.getRank() ||
      !isInBounds(type, view, channelShape))
    return failure();
  Key key{value, view, SmallVector<int64_t>(channelShape)};
  auto cutIt = cutShort.find(key);
  if (cutIt != cutShort.end()) {
    wasCut = true;
    return ArrayRef<Element>(cutIt->second);
  }
  auto it = known.find(key);
  // Known from this query, or from an earlier one when this request would
  // evaluate it without reaching the depth bound, or when an earlier query
  // reached the bound evaluating it (then the bound is where that query met
  // it: a residual stream deeper than the bound is read from the last
  // layer's candidates down once, not again from each layer's).
  if (it != known.end() && (it->second.query == query || it->second.cut ||
                            depth + it->second.height < kMaxDepth)) {
    wasCut |= it->second.cut;
    deepest = std::max(deepest, depth + it->second.height);
    // Read by this query: read again from anywhere in it, like a value it
    // evaluated itself.
    it->second.query = query;
    return ArrayRef<Element>(it->second.elements);
  }
  budget -= numChannels(channelShape);
  if (budget < 0)
    return failure();
  ++evaluated;
  bool outerCut = wasCut;
  int outerDeepest = deepest;
  wasCut = false;
  deepest = depth;
  // A bounded depth of producers (the stack is the host's): deeper values
  // are leaves.
  std::optional<Elements> elements;
  bool isOpaque = opaque.contains(value);
  if (depth < kMaxDepth && !isOpaque) {
    ++depth;
    elements = evaluateOp(value, view, channelShape);
    --depth;
  } else if (!isOpaque) {
    wasCut = true;
  }
  bool cut = wasCut;
  int height = deepest - depth;
  wasCut = outerCut || cut;
  deepest = std::max(outerDeepest, deepest);
  if (budget < 0)
    return failure();
  if (!elements)
    elements = asLeaves(value, view, channelShape);
  if (it != known.end()) {
    // Known without a cut, but asked for too deep here: what the bound
    // leaves of it lives for this query.
    if (!cut)
      return ArrayRef<Element>(it->second.elements);
    auto inserted = cutShort.emplace(std::move(key), std::move(*elements));
    return ArrayRef<Element>(inserted.first->second);
  }
  auto inserted = known.emplace(
      std::move(key), Known{std::move(*elements), height, query, cut});
  return ArrayRef<Element>(inserted.first->second.elements);
}

std::optional<Elements> ElementAlgebra::gather(const OperandRequest &request) {
  FailureOr<ArrayRef<Element>> elements =
      evaluate(request.value, request.view, request.channelShape);
  if (failed(elements))
    return std::nullopt;
  Elements out;
  int64_t size = static_cast<int64_t>(elements->size());
  for (int64_t c : request.channelOf) {
    // A channel past the operand's elements: its coordinates came from the
    // IR (an extract index, a slice offset) and lie outside the operand.
    if (c >= size)
      return std::nullopt;
    if (c < 0)
      out.push_back(Element{});
    else
      out.push_back((*elements)[c]);
  }
  return out;
}

FailureOr<SmallVector<DimRole>> ElementAlgebra::loopRoles(linalg::LinalgOp op,
                                                          OpResult result,
                                                          const View &view) {
  unsigned numLoops = op.getNumLoops();
  std::optional<SmallVector<int64_t>> ranges = staticLoopRanges(op);
  if (!ranges)
    return failure();
  AffineMap outMap = op.getIndexingMapMatchingResult(result);
  SmallVector<std::optional<DimRole>> loopRole(numLoops);
  for (auto [k, expr] : llvm::enumerate(outMap.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || loopRole[dim.getPosition()])
      return failure();
    loopRole[dim.getPosition()] = view[k];
  }
  SmallVector<DimRole> roles;
  for (unsigned l = 0; l < numLoops; ++l) {
    if (!loopRole[l]) {
      // A loop the result does not index: a reduction, followed only when
      // it has one iteration (a K = 1 contraction is an outer product).
      if ((*ranges)[l] != 1)
        return failure();
      loopRole[l] = DimRole::fixed(0);
    }
    roles.push_back(*loopRole[l]);
  }
  return roles;
}

FailureOr<OperandRequest>
ElementAlgebra::requestThroughMap(Value operand, AffineMap map,
                                  ArrayRef<DimRole> loopRole,
                                  ArrayRef<int64_t> channelShape) {
  OperandRequest request;
  request.value = operand;
  SmallVector<int64_t> requestAxis;
  for (auto [k, expr] : llvm::enumerate(map.getResults())) {
    DimRole role;
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (dim.getPosition() >= loopRole.size())
        return failure();
      role = loopRole[dim.getPosition()];
      if (role.kind == DimRole::Fixed)
        role = fixedRole(operand, k, role.index);
    } else if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      role = fixedRole(operand, k, constant.getValue());
    } else {
      return failure();
    }
    if (role.kind == DimRole::Channel) {
      if (role.index < 0 ||
          role.index >= static_cast<int64_t>(channelShape.size()) ||
          llvm::is_contained(requestAxis, role.index))
        return failure();
      requestAxis.push_back(role.index);
      request.channelShape.push_back(channelShape[role.index]);
      role.index = requestAxis.size() - 1;
    }
    request.view.push_back(role);
  }
  for (int64_t c = 0, e = numChannels(channelShape); c < e; ++c) {
    SmallVector<int64_t> coords = unflatten(c, channelShape);
    SmallVector<int64_t> operandCoords;
    for (int64_t axis : requestAxis)
      operandCoords.push_back(coords[axis]);
    request.channelOf.push_back(flatten(operandCoords, request.channelShape));
  }
  return request;
}

FailureOr<SmallVector<OperandRequest>>
ElementAlgebra::linalgInputRequests(linalg::LinalgOp op, OpResult result,
                                    const View &view,
                                    ArrayRef<int64_t> channelShape) {
  FailureOr<SmallVector<DimRole>> loopRole = loopRoles(op, result, view);
  if (failed(loopRole))
    return failure();
  SmallVector<OperandRequest> requests;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(operand->get().getType())) {
      OperandRequest request;
      request.value = operand->get();
      requests.push_back(std::move(request));
      continue;
    }
    FailureOr<OperandRequest> request =
        requestThroughMap(operand->get(), op.getMatchingIndexingMap(operand),
                          *loopRole, channelShape);
    if (failed(request))
      return failure();
    requests.push_back(std::move(*request));
  }
  return requests;
}

namespace {
/// Evaluates a payload, as Expressions::readPayload reads it, for one
/// channel: the payload's operands and gathered `tensor.extract`s are the
/// channel's elements (`read`), loop indices of channel and fixed dims are
/// known (`loopIndex`), and integers computed from them choose between
/// values (view_as_real's re/im lanes). Only what the result depends on is
/// evaluated.
class ChannelEvaluator {
public:
  ChannelEvaluator(function_ref<std::optional<Element>(Node *)> read,
                   function_ref<std::optional<Element>(Value)> captured,
                   function_ref<std::optional<int64_t>(unsigned)> loopIndex)
      : read(read), captured(captured), loopIndex(loopIndex) {}

  std::optional<Element> element(Node *node) {
    auto [it, inserted] = elements.try_emplace(node);
    if (inserted)
      it->second = computeElement(node);
    return elements.lookup(node);
  }

  /// An integer or index value known for this channel (loop indices of
  /// channel or fixed dims, constants, comparisons of them).
  std::optional<int64_t> integer(Node *node) {
    auto [it, inserted] = ints.try_emplace(node);
    if (inserted)
      it->second = computeInteger(node);
    return ints.lookup(node);
  }

private:
  std::optional<Element> computeElement(Node *node) {
    switch (node->kind) {
    case Node::Constant:
      if (auto attr = dyn_cast<FloatAttr>(node->constant))
        return Element{Poly::constant(attr.getValueAsDouble()), std::nullopt};
      return std::nullopt;
    case Node::Tensor:
      return captured(node->value);
    case Node::Operand:
      return read(node);
    case Node::Compute:
      break;
    default:
      return std::nullopt;
    }
    Operation *op = node->op;
    if (isa<tensor::ExtractOp>(op))
      return read(node);
    if (isa<arith::SelectOp>(op)) {
      // A choice made by the channel index.
      std::optional<int64_t> cond = integer(node->operands[0]);
      if (!cond)
        return std::nullopt;
      return element(node->operands[*cond ? 1 : 2]);
    }
    auto real = [&](unsigned i) -> std::optional<Poly> {
      std::optional<Element> e = element(node->operands[i]);
      if (!e || e->im)
        return std::nullopt;
      return e->re;
    };
    auto complexOf = [&](unsigned i) -> std::optional<Element> {
      std::optional<Element> e = element(node->operands[i]);
      if (!e || !e->im)
        return std::nullopt;
      return e;
    };
    auto realElement = [](std::optional<Poly> p) -> std::optional<Element> {
      if (!p)
        return std::nullopt;
      return Element{*p, std::nullopt};
    };
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op)) {
      std::optional<Poly> a = real(0), b = real(1);
      if (!a || !b)
        return std::nullopt;
      if (isa<arith::AddFOp>(op))
        return realElement(*a + *b);
      if (isa<arith::SubFOp>(op))
        return realElement(*a - *b);
      return realElement(*a * *b);
    }
    if (isa<arith::NegFOp>(op)) {
      std::optional<Poly> a = real(0);
      return a ? realElement(a->scaled(-1.0)) : std::nullopt;
    }
    if (isa<arith::DivFOp>(op)) {
      std::optional<Poly> a = real(0), b = real(1);
      if (!a || !b)
        return std::nullopt;
      std::optional<double> d = b->asConstant();
      if (!d || *d == 0.0)
        return std::nullopt;
      return realElement(a->scaled(1.0 / *d));
    }
    // Casts between float types: the algebra is exact; the rounding a
    // narrower type adds is what raising removes (docs/DESIGN.md).
    // Integer to float: the same number (the rounding of large positions
    // to f32 is what raising removes), so the integer tensor is the leaf;
    // an index computed in the payload (an iota) is not followed.
    if (isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp>(
            op))
      return element(node->operands[0]);
    if (isa<complex::CreateOp>(op)) {
      std::optional<Poly> re = real(0), im = real(1);
      if (!re || !im)
        return std::nullopt;
      return Element{*re, *im};
    }
    if (isa<complex::ReOp, complex::ImOp>(op)) {
      std::optional<Element> z = complexOf(0);
      if (!z)
        return std::nullopt;
      return realElement(isa<complex::ReOp>(op) ? z->re : *z->im);
    }
    if (isa<complex::AddOp, complex::SubOp, complex::MulOp>(op)) {
      std::optional<Element> a = complexOf(0), b = complexOf(1);
      if (!a || !b)
        return std::nullopt;
      if (isa<complex::AddOp>(op))
        return Element{a->re + b->re, *a->im + *b->im};
      if (isa<complex::SubOp>(op))
        return Element{a->re - b->re, *a->im - *b->im};
      return Element{a->re * b->re - *a->im * *b->im,
                     a->re * *b->im + *a->im * b->re};
    }
    if (isa<complex::NegOp>(op)) {
      std::optional<Element> a = complexOf(0);
      if (!a)
        return std::nullopt;
      return Element{a->re.scaled(-1.0), a->im->scaled(-1.0)};
    }
    return std::nullopt;
  }

  std::optional<int64_t> computeInteger(Node *node) {
    if (node->kind == Node::Constant) {
      auto attr = dyn_cast<IntegerAttr>(node->constant);
      if (!attr || attr.getValue().getSignificantBits() > 64)
        return std::nullopt;
      return attr.getValue().getSExtValue();
    }
    if (node->kind == Node::Index)
      // Unknown along a frame: fine as long as nothing computes with it
      // (the indices of a tensor.extract read like an input).
      return loopIndex(node->dim);
    if (node->kind != Node::Compute)
      return std::nullopt;
    Operation *op = node->op;
    if (isa<arith::IndexCastOp>(op))
      return integer(node->operands[0]);
    if (isa<arith::SelectOp>(op)) {
      std::optional<int64_t> cond = integer(node->operands[0]);
      if (!cond)
        return std::nullopt;
      return integer(node->operands[*cond ? 1 : 2]);
    }
    auto cmp = dyn_cast<arith::CmpIOp>(op);
    if (!cmp)
      return std::nullopt;
    std::optional<int64_t> a = integer(node->operands[0]),
                           b = integer(node->operands[1]);
    if (!a || !b)
      return std::nullopt;
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      return *a == *b;
    case arith::CmpIPredicate::ne:
      return *a != *b;
    case arith::CmpIPredicate::slt:
    case arith::CmpIPredicate::ult:
      return *a < *b;
    case arith::CmpIPredicate::sle:
    case arith::CmpIPredicate::ule:
      return *a <= *b;
    case arith::CmpIPredicate::sgt:
    case arith::CmpIPredicate::ugt:
      return *a > *b;
    case arith::CmpIPredicate::sge:
    case arith::CmpIPredicate::uge:
      return *a >= *b;
    }
    return std::nullopt;
  }

  function_ref<std::optional<Element>(Node *)> read;
  function_ref<std::optional<Element>(Value)> captured;
  function_ref<std::optional<int64_t>(unsigned)> loopIndex;
  DenseMap<Node *, std::optional<Element>> elements;
  DenseMap<Node *, std::optional<int64_t>> ints;
};
} // namespace

std::optional<Elements>
ElementAlgebra::evaluateLinalg(linalg::LinalgOp op, OpResult result,
                               const View &view,
                               ArrayRef<int64_t> channelShape) {
  if (!op.hasPureTensorSemantics())
    return std::nullopt;
  FailureOr<SmallVector<OperandRequest>> requests =
      linalgInputRequests(op, result, view, channelShape);
  if (failed(requests))
    return std::nullopt;
  FailureOr<SmallVector<DimRole>> loopRole = loopRoles(op, result, view);
  if (failed(loopRole))
    return std::nullopt;
  Block *body = op.getBlock();
  unsigned r = result.getResultNumber();
  OpOperand *initOperand = op.getDpsInitOperand(r);
  int64_t n = numChannels(channelShape);

  // What the result computes, read by the one payload reader: only the
  // payload values it depends on (a fused generic's other results and dead
  // values need not be readable).
  Expressions ex;
  Node *root = ex.readPayload(op, body->getTerminator()->getOperand(r), true);
  if (!root)
    return std::nullopt;
  SmallVector<Node *> operandNodes, extractNodes;
  for (Node *node : nodesOf(root)) {
    if (node->kind == Node::Operand)
      operandNodes.push_back(node);
    if (node->kind == Node::Compute && isa<tensor::ExtractOp>(node->op))
      extractNodes.push_back(node);
  }
  // Read in the payload's order (inputs, then the destination; gathers in
  // block order): the first reading of a value through a view names its
  // leaves.
  llvm::sort(operandNodes, [](Node *a, Node *b) {
    return a->operand->getOperandNumber() < b->operand->getOperandNumber();
  });
  llvm::sort(extractNodes,
             [](Node *a, Node *b) { return a->op->isBeforeInBlock(b->op); });

  // The inputs the payload reads, channel by channel, through their
  // requests.
  DenseMap<Node *, Elements> gathered;
  for (Node *node : operandNodes) {
    OpOperand *operand = node->operand;
    Elements elements;
    if (operand == initOperand) {
      continue; // after the gathers
    } else if (!op.isDpsInput(operand)) {
      return std::nullopt; // another result's destination
    } else if (!isa<RankedTensorType>(operand->get().getType())) {
      // A scalar operand: a constant, or a leaf without channels.
      Element e;
      if (std::optional<double> c = getScalarConstant(operand->get()))
        e = Element{Poly::constant(*c), std::nullopt};
      else
        e = asLeaves(operand->get(), {}, {}).front();
      elements = Elements(n, e);
    } else {
      std::optional<Elements> e =
          gather((*requests)[operand->getOperandNumber()]);
      if (!e)
        return std::nullopt;
      elements = std::move(*e);
    }
    gathered[node] = std::move(elements);
  }
  // `tensor.extract` of a captured tensor at loop indices and constants
  // (torch-mlir's view_as_complex) is read like an input.
  for (Node *node : extractNodes) {
    auto extract = cast<tensor::ExtractOp>(node->op);
    if (extract.getTensor().getParentBlock() == body)
      return std::nullopt;
    SmallVector<AffineExpr> exprs;
    for (Node *index : ArrayRef<Node *>(node->operands).drop_front()) {
      std::optional<APInt> c =
          index->kind == Node::Constant ? intConstant(ex, index) : std::nullopt;
      if (index->kind == Node::Index)
        exprs.push_back(getAffineDimExpr(index->dim, op->getContext()));
      else if (c && c->getSignificantBits() <= 32 && !c->isNegative())
        exprs.push_back(
            getAffineConstantExpr(c->getSExtValue(), op->getContext()));
      else
        return std::nullopt; // a gather: a leaf (CosSinSources reads it)
    }
    AffineMap map =
        AffineMap::get(op.getNumLoops(), 0, exprs, op->getContext());
    FailureOr<OperandRequest> request =
        requestThroughMap(extract.getTensor(), map, *loopRole, channelShape);
    if (failed(request))
      return std::nullopt;
    std::optional<Elements> elements = gather(*request);
    if (!elements)
      return std::nullopt;
    gathered[node] = std::move(*elements);
  }
  // The destination, when the payload reads it (an accumulator), through
  // the result's own view (the destination map equals the result's).
  for (Node *node : operandNodes) {
    if (node->operand != initOperand)
      continue;
    FailureOr<ArrayRef<Element>> e =
        evaluate(initOperand->get(), view, channelShape);
    if (failed(e))
      return std::nullopt;
    gathered[node] = Elements(*e);
  }

  Elements out;
  if (gathered.empty()) {
    // A payload that reads nothing: only constants.
    std::optional<double> v =
        getScalarConstant(body->getTerminator()->getOperand(r));
    if (!v)
      return std::nullopt;
    return Elements(n, Element{Poly::constant(*v), std::nullopt});
  }
  for (int64_t c = 0; c < n; ++c) {
    auto read = [&](Node *node) -> std::optional<Element> {
      auto it = gathered.find(node);
      if (it == gathered.end())
        return std::nullopt;
      return it->second[c];
    };
    auto captured = [&](Value v) -> std::optional<Element> {
      if (std::optional<double> k = getScalarConstant(v))
        return Element{Poly::constant(*k), std::nullopt};
      if (isa<RankedTensorType>(v.getType()))
        return std::nullopt;
      return asLeaves(v, {}, {}).front();
    };
    SmallVector<int64_t> coords = unflatten(c, channelShape);
    auto loopIndex = [&](unsigned l) -> std::optional<int64_t> {
      const DimRole &role = (*loopRole)[l];
      if (role.kind == DimRole::Channel)
        return coords[role.index];
      if (role.kind == DimRole::Fixed)
        return role.index;
      if (role.kind == DimRole::Unit)
        return 0;
      return std::nullopt;
    };
    std::optional<Element> e =
        ChannelEvaluator(read, captured, loopIndex).element(root);
    if (!e)
      return std::nullopt;
    out.push_back(std::move(*e));
  }
  return out;
}

std::optional<Elements>
ElementAlgebra::evaluateOp(Value value, const View &view,
                           ArrayRef<int64_t> channelShape) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  int64_t n = numChannels(channelShape);

  if (isa<tensor::EmptyOp>(def)) {
    Poly undef;
    undef.undef = true;
    return Elements(n, Element{undef, std::nullopt});
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat() && isa<FloatType>(dense.getElementType()))
      return Elements(
          n,
          Element{Poly::constant(
                      dense.getSplatValue<llvm::APFloat>().convertToDouble()),
                  std::nullopt});
    return std::nullopt;
  }
  if (auto castOp = dyn_cast<tensor::CastOp>(def)) {
    auto from = cast<RankedTensorType>(castOp.getSource().getType());
    if (from.getRank() != static_cast<int64_t>(view.size()))
      return std::nullopt;
    FailureOr<ArrayRef<Element>> e =
        evaluate(castOp.getSource(), view, channelShape);
    if (failed(e))
      return std::nullopt;
    return Elements(*e);
  }
  if (auto op = dyn_cast<linalg::LinalgOp>(def))
    return evaluateLinalg(op, cast<OpResult>(value), view, channelShape);

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    Value source = slice.getSource();
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> offsets = constantsOf(slice.getMixedOffsets());
    SmallVector<int64_t> sizes = constantsOf(slice.getMixedSizes());
    SmallVector<int64_t> strides = constantsOf(slice.getMixedStrides());
    OperandRequest request{source, {}, {}, {}};
    // For each request channel axis: (source axis, offset, stride).
    SmallVector<std::tuple<int64_t, int64_t, int64_t>> axisMap(
        channelShape.size(), {-1, 0, 1});
    unsigned resultDim = 0;
    int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
    for (int64_t s = 0; s < rank; ++s) {
      int64_t off = offsets[s], stride = strides[s];
      if (dropped.test(s)) {
        if (ShapedType::isDynamic(off) ||
            !sliceInBounds(off, 1, 1, dimSize(source, s)))
          return std::nullopt;
        request.view.push_back(fixedRole(source, s, off));
        continue;
      }
      DimRole role = view[resultDim++];
      switch (role.kind) {
      case DimRole::Frame:
      case DimRole::FrameSet:
        if (off != 0 || stride != 1 ||
            !isWholeDim(slice.getMixedSizes()[s], source, s))
          return std::nullopt;
        request.view.push_back(role);
        break;
      case DimRole::Unit:
      case DimRole::Fixed: {
        if (ShapedType::isDynamic(off) || ShapedType::isDynamic(stride) ||
            !sliceInBounds(off, role.index + 1, stride, dimSize(source, s)))
          return std::nullopt;
        request.view.push_back(fixedRole(source, s, off + role.index * stride));
        break;
      }
      case DimRole::Channel:
        if (ShapedType::isDynamic(off) || ShapedType::isDynamic(stride) ||
            ShapedType::isDynamic(dimSize(source, s)) ||
            !sliceInBounds(off, channelShape[role.index], stride,
                           dimSize(source, s)))
          return std::nullopt;
        axisMap[role.index] = {
            static_cast<int64_t>(request.channelShape.size()), off, stride};
        request.view.push_back(DimRole::channel(request.channelShape.size()));
        request.channelShape.push_back(dimSize(source, s));
        break;
      }
    }
    for (int64_t c = 0; c < n; ++c) {
      SmallVector<int64_t> coords = unflatten(c, channelShape);
      SmallVector<int64_t> src(request.channelShape.size());
      for (auto [axis, m] : llvm::enumerate(axisMap)) {
        auto [srcAxis, off, stride] = m;
        if (srcAxis < 0)
          return std::nullopt;
        src[srcAxis] = off + coords[axis] * stride;
      }
      request.channelOf.push_back(flatten(src, request.channelShape));
    }
    return gather(request);
  }

  if (auto concat = dyn_cast<tensor::ConcatOp>(def)) {
    int64_t dim = concat.getDim();
    DimRole role = view[dim];
    if (role.isFrameLike())
      return std::nullopt;
    Elements out(n);
    SmallVector<bool> filled(n, false);
    int64_t start = 0;
    for (Value input : concat.getInputs()) {
      int64_t size = dimSize(input, dim);
      int64_t end;
      if (ShapedType::isDynamic(size) || llvm::AddOverflow(start, size, end))
        return std::nullopt;
      OperandRequest request{
          input, view, SmallVector<int64_t>(channelShape), {}};
      if (role.kind == DimRole::Channel) {
        request.channelShape[role.index] = size;
        for (int64_t c = 0; c < n; ++c) {
          SmallVector<int64_t> coords = unflatten(c, channelShape);
          int64_t local = coords[role.index] - start;
          if (local < 0 || local >= size) {
            request.channelOf.push_back(-1);
            continue;
          }
          coords[role.index] = local;
          request.channelOf.push_back(flatten(coords, request.channelShape));
        }
      } else {
        int64_t index = role.kind == DimRole::Fixed ? role.index : 0;
        if (index < start || index >= end) {
          start = end;
          continue;
        }
        request.view[dim] = fixedRole(input, dim, index - start);
        for (int64_t c = 0; c < n; ++c)
          request.channelOf.push_back(c);
      }
      std::optional<Elements> part = gather(request);
      if (!part)
        return std::nullopt;
      for (int64_t c = 0; c < n; ++c)
        if (request.channelOf[c] >= 0) {
          out[c] = (*part)[c];
          filled[c] = true;
        }
      start = end;
    }
    if (!llvm::all_of(filled, [](bool b) { return b; }))
      return std::nullopt;
    return out;
  }

  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    Value source = insert.getSource(), dest = insert.getDest();
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    SmallVector<int64_t> offsets = constantsOf(insert.getMixedOffsets());
    SmallVector<int64_t> sizes = constantsOf(insert.getMixedSizes());
    SmallVector<int64_t> strides = constantsOf(insert.getMixedStrides());
    int64_t rank = static_cast<int64_t>(view.size());
    // Which request elements the source covers, and where in the source.
    OperandRequest request{source, {}, {}, {}};
    SmallVector<std::tuple<int64_t, int64_t, int64_t, int64_t>> axisMap(
        channelShape.size(), {-1, 0, 1, 0});
    for (int64_t d = 0; d < rank; ++d) {
      int64_t off = offsets[d], size = sizes[d], stride = strides[d];
      DimRole role = view[d];
      if (role.isFrameLike()) {
        if (off != 0 || stride != 1 ||
            !isWholeDim(insert.getMixedSizes()[d], dest, d))
          return std::nullopt;
        // A frame dim of size 1 the source does not have (a rank-expanding
        // insert, as linalg-fold-unit-extent-dims' rank-reducing slices
        // write): index 0 of it is all there is.
        if (dropped.test(d)) {
          if (dimSize(dest, d) != 1)
            return std::nullopt;
          continue;
        }
        request.view.push_back(role);
        continue;
      }
      if (ShapedType::isDynamic(off) || ShapedType::isDynamic(size) ||
          ShapedType::isDynamic(stride) ||
          !sliceInBounds(off, size, stride, dimSize(dest, d)))
        return std::nullopt;
      if (role.kind == DimRole::Channel) {
        if (dropped.test(d))
          return std::nullopt;
        axisMap[role.index] = {
            static_cast<int64_t>(request.channelShape.size()), off, stride,
            size};
        request.view.push_back(DimRole::channel(request.channelShape.size()));
        request.channelShape.push_back(size);
        continue;
      }
      int64_t index = role.kind == DimRole::Fixed ? role.index : 0;
      int64_t local = index - off;
      if (local < 0 || local % stride != 0 || local / stride >= size)
        return std::nullopt; // the fixed element is not from the source
      if (!dropped.test(d))
        request.view.push_back(
            fixedRole(source, request.view.size(), local / stride));
    }
    OperandRequest destRequest{
        dest, view, SmallVector<int64_t>(channelShape), {}};
    for (int64_t c = 0; c < n; ++c) {
      SmallVector<int64_t> coords = unflatten(c, channelShape);
      SmallVector<int64_t> src(request.channelShape.size());
      bool covered = true;
      for (auto [axis, m] : llvm::enumerate(axisMap)) {
        auto [srcAxis, off, stride, size] = m;
        if (srcAxis < 0)
          return std::nullopt;
        int64_t local = coords[axis] - off;
        if (local < 0 || local % stride != 0 || local / stride >= size) {
          covered = false;
          break;
        }
        src[srcAxis] = local / stride;
      }
      request.channelOf.push_back(covered ? flatten(src, request.channelShape)
                                          : -1);
      destRequest.channelOf.push_back(covered ? -1 : c);
    }
    std::optional<Elements> fromSource = gather(request);
    std::optional<Elements> fromDest = gather(destRequest);
    if (!fromSource || !fromDest)
      return std::nullopt;
    Elements out;
    for (int64_t c = 0; c < n; ++c)
      out.push_back(request.channelOf[c] >= 0 ? (*fromSource)[c]
                                              : (*fromDest)[c]);
    return out;
  }

  // Reshapes: the channels of a group of dims are the row-major flattening
  // of its channel coordinates, on both sides.
  auto reshape = [&](Value source, ArrayRef<ReassociationIndices> groups,
                     bool expanding) -> std::optional<Elements> {
    // expanding: `value` has more dims (each source dim is a group of value
    // dims); otherwise each value dim is a group of source dims.
    auto srcType = cast<RankedTensorType>(source.getType());
    auto valType = cast<RankedTensorType>(value.getType());
    // Dims no group names (a collapse to rank 0: all of size 1) are units.
    OperandRequest request{
        source, View(srcType.getRank(), DimRole::unit()), {}, {}};
    // Per request channel: a function of the coordinates computed below.
    // For each source dim that carries channels: its coordinate is computed
    // from value coordinates (expanding: combine a group; collapsing: split
    // one value dim into a group).
    struct SourceChannel {
      int64_t srcDim;
      SmallVector<int64_t> valueDims; // expanding: the group; else one dim
    };
    SmallVector<SourceChannel> srcChannels;
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (expanding) {
        // Source dim g = value dims `group`. Dims of size 1 carry nothing
        // (a frame of size 1 is index 0).
        if (srcType.getDimSize(g) == 1) {
          request.view[g] = DimRole::unit();
          continue;
        }
        int64_t frames = 0, channels = 0, mask = 0, last = -1;
        bool ascending = true;
        DimRole frame;
        std::optional<DimRole> frameSet;
        for (int64_t d : group) {
          if (valType.getDimSize(d) == 1)
            continue;
          if (view[d].kind == DimRole::Frame) {
            // The mask below has a bit per frame dim.
            if (view[d].index < 0 || view[d].index >= 62)
              return std::nullopt;
            ++frames;
            frame = view[d];
            ascending &= view[d].index > last;
            last = view[d].index;
            mask |= int64_t(1) << view[d].index;
          } else if (view[d].kind == DimRole::FrameSet) {
            // Frames flattened already: passed on when they are all the
            // group carries (the other dims of size 1).
            if (frameSet)
              return std::nullopt;
            frameSet = view[d];
          } else if (view[d].kind == DimRole::Channel ||
                     view[d].kind == DimRole::Fixed) {
            ++channels;
          }
        }
        if (frameSet) {
          if (frames > 0 || channels > 0)
            return std::nullopt;
          request.view[g] = *frameSet;
          continue;
        }
        if (frames > 0 && channels > 0)
          return std::nullopt;
        if (frames == 1) {
          request.view[g] = frame;
          continue;
        }
        if (frames > 1) {
          // Frames flattened into one dim, in row-major order.
          if (!ascending || last >= 62)
            return std::nullopt;
          request.view[g] = DimRole::frameSet(mask);
          continue;
        }
        bool anyChannel = llvm::any_of(
            group, [&](int64_t d) { return view[d].kind == DimRole::Channel; });
        for (int64_t d : group)
          if (valType.isDynamicDim(d))
            return std::nullopt;
        if (!anyChannel) {
          // Fixed and unit dims only: a fixed source coordinate.
          int64_t flat = 0;
          for (int64_t d : group)
            flat = flat * valType.getDimSize(d) +
                   (view[d].kind == DimRole::Fixed ? view[d].index : 0);
          request.view[g] = fixedRole(source, g, flat);
          continue;
        }
        request.view[g] = DimRole::channel(request.channelShape.size());
        request.channelShape.push_back(srcType.getDimSize(g));
        srcChannels.push_back(
            {static_cast<int64_t>(g),
             SmallVector<int64_t>(group.begin(), group.end())});
      } else {
        // Value dim g = source dims `group`.
        DimRole role = view[g];
        if (role.kind == DimRole::FrameSet) {
          // The flattened frames, one per non-unit source dim, ascending.
          SmallVector<int64_t> frames;
          for (int64_t f = 0; f < 63; ++f)
            if (role.index & (int64_t(1) << f))
              frames.push_back(f);
          SmallVector<int64_t> nonUnit;
          for (int64_t s : group)
            if (srcType.getDimSize(s) != 1)
              nonUnit.push_back(s);
          if (nonUnit.size() != frames.size())
            return std::nullopt;
          for (int64_t s : group)
            request.view[s] = DimRole::unit();
          for (auto [s, f] : llvm::zip_equal(nonUnit, frames))
            request.view[s] = DimRole::frame(f);
          continue;
        }
        if (role.kind == DimRole::Frame) {
          // One source dim of the group carries the frame, the rest are 1.
          SmallVector<int64_t> nonUnit;
          for (int64_t s : group)
            if (srcType.getDimSize(s) != 1)
              nonUnit.push_back(s);
          if (nonUnit.size() > 1)
            return std::nullopt;
          int64_t carrier = nonUnit.empty() ? group.front() : nonUnit.front();
          for (int64_t s : group)
            request.view[s] = s == carrier ? role : DimRole::unit();
          continue;
        }
        for (int64_t s : group)
          if (srcType.isDynamicDim(s))
            return std::nullopt;
        if (role.kind != DimRole::Channel) {
          int64_t index = role.kind == DimRole::Fixed ? role.index : 0;
          SmallVector<int64_t> sizes;
          for (int64_t s : group)
            sizes.push_back(srcType.getDimSize(s));
          SmallVector<int64_t> coords = unflatten(index, sizes);
          for (auto [s, c] : llvm::zip_equal(group, coords))
            request.view[s] = fixedRole(source, s, c);
          continue;
        }
        for (int64_t s : group) {
          request.view[s] = DimRole::channel(request.channelShape.size());
          request.channelShape.push_back(srcType.getDimSize(s));
          srcChannels.push_back({s, {static_cast<int64_t>(g)}});
        }
      }
    }
    // Request dims' channel coordinates -> source channel coordinates.
    for (int64_t c = 0; c < n; ++c) {
      SmallVector<int64_t> coords = unflatten(c, channelShape);
      auto valueCoord = [&](int64_t d) -> int64_t {
        if (view[d].kind == DimRole::Channel)
          return coords[view[d].index];
        if (view[d].kind == DimRole::Fixed)
          return view[d].index;
        return 0;
      };
      SmallVector<int64_t> src;
      if (expanding) {
        for (const SourceChannel &sc : srcChannels) {
          int64_t flat = 0;
          for (int64_t d : sc.valueDims)
            flat = flat * valType.getDimSize(d) + valueCoord(d);
          src.push_back(flat);
        }
      } else {
        // Split each channel value dim over its group.
        for (auto [g, group] : llvm::enumerate(groups)) {
          if (view[g].kind != DimRole::Channel)
            continue;
          SmallVector<int64_t> sizes;
          for (int64_t s : group)
            sizes.push_back(srcType.getDimSize(s));
          SmallVector<int64_t> split = unflatten(valueCoord(g), sizes);
          src.append(split.begin(), split.end());
        }
      }
      request.channelOf.push_back(flatten(src, request.channelShape));
    }
    return gather(request);
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
    return reshape(expand.getSrc(), expand.getReassociationIndices(),
                   /*expanding=*/true);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    return reshape(collapse.getSrc(), collapse.getReassociationIndices(),
                   /*expanding=*/false);
  return std::nullopt;
}

Value mlir::rope::raise::commonDataSource(Value y, ArrayRef<Value> roots) {
  if (roots.empty())
    return {};
  DenseSet<Value> rootSet(roots.begin(), roots.end());
  // Whether `from` reaches a root through producers, avoiding `cut`.
  auto reaches = [&](Value from, Value cut) {
    SmallVector<Value> worklist{from};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (v == cut || !seen.insert(v).second)
        continue;
      if (rootSet.contains(v))
        return true;
      Operation *def = v.getDefiningOp();
      if (!def || seen.size() > 1024)
        continue;
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          worklist.push_back(operand);
    }
    return false;
  };
  // The tensors on some path from y to a root, nearest first.
  SmallVector<Value> onPath;
  {
    SmallVector<Value> worklist{y};
    DenseSet<Value> seen;
    while (!worklist.empty() && onPath.size() < 256 && seen.size() < 1024) {
      Value v = worklist.front();
      worklist.erase(worklist.begin());
      if (!seen.insert(v).second)
        continue;
      if (v != y && reaches(v, Value()))
        onPath.push_back(v);
      if (rootSet.contains(v))
        continue;
      if (Operation *def = v.getDefiningOp())
        for (Value operand : def->getOperands())
          if (isa<RankedTensorType>(operand.getType()))
            worklist.push_back(operand);
    }
  }
  for (Value c : onPath) {
    if (rootSet.contains(c) && roots.size() > 1)
      continue;
    if (!reaches(y, c))
      return c;
  }
  return {};
}
