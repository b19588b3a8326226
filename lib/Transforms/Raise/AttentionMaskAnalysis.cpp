//===- AttentionMaskAnalysis.cpp - Masks of the attention raise -----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The masks rope-raise-attention reads from index comparisons: linear forms
// of the loops' atoms (and of a tensor of query positions), with the bounds
// that make the frontend's fixed-width arithmetic the exact integers, and
// the causal / sliding-window / position masks of rope.attention they state.
//
//===----------------------------------------------------------------------===//

#include "RaiseAttentionInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::rope;

namespace mlir::rope::raise::attention {

namespace {

/// The linear forms of masks built from iota comparisons, with the bounds
/// that make the frontend's fixed-width arithmetic the exact integers.
class MaskAnalysis {
public:
  explicit MaskAnalysis(Expressions &ex) : ex(ex) {}

  /// The largest |l| over the loops' domain (each atom in [0, size)), or
  /// nullopt when it does not fit int64.
  std::optional<int64_t> magnitudeBound(const Linear &l) const {
    if (l.constant == INT64_MIN)
      return std::nullopt;
    int64_t bound = std::abs(l.constant);
    for (auto [atom, c] : l.terms) {
      int64_t term;
      if (c == INT64_MIN ||
          llvm::MulOverflow(std::abs(c), ex.atoms.size(atom) - 1, term) ||
          llvm::AddOverflow(bound, term, bound))
        return std::nullopt;
    }
    return bound;
  }

  /// `node` as a Linear; positions are allowed only as a direct operand
  /// (through casts) of a comparison, so no arithmetic on them can wrap.
  std::optional<Linear> linear(Node *node, bool allowPositions, int depth) {
    if (depth > kMaxDepth)
      return std::nullopt;
    node = ex.open(node);
    Linear result;
    switch (node->kind) {
    case Node::Constant: {
      auto attr = dyn_cast<IntegerAttr>(node->constant);
      if (!attr || attr.getValue().getBitWidth() > 64 ||
          attr.getType().isInteger(1))
        return std::nullopt;
      result.constant = attr.getValue().getSExtValue();
      return result;
    }
    case Node::Index: {
      int64_t stride = 1;
      AtomList leaves = ex.atoms.significant(node->atoms);
      for (unsigned atom : llvm::reverse(leaves)) {
        int64_t size = ex.atoms.size(atom);
        if (size <= 0 || !result.add(atom, stride) ||
            llvm::MulOverflow(stride, size, stride))
          return std::nullopt;
      }
      return result;
    }
    case Node::Tensor: {
      Type element = getElementTypeOrSelf(node->value.getType());
      if (!allowPositions || !isa<IntegerType>(element) ||
          element.isInteger(1) || element.getIntOrFloatBitWidth() > 64 ||
          !isa<RankedTensorType>(node->value.getType()))
        return std::nullopt;
      result.positions = node;
      result.positionsCoef = 1;
      return result;
    }
    case Node::Compute:
      break;
    default:
      return std::nullopt;
    }
    Operation *op = node->op;
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
      return fits(linear(node->operands[0], allowPositions, depth + 1), op);
    if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op)) {
      // Zero extension is the value only for non-negative values.
      std::optional<Linear> inner = linear(node->operands[0], false, depth + 1);
      if (!inner || !isNonNegative(*inner))
        return std::nullopt;
      return fits(inner, op);
    }
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      std::optional<Linear> a = linear(node->operands[0], false, depth + 1);
      std::optional<Linear> b = linear(node->operands[1], false, depth + 1);
      if (!a || !b)
        return std::nullopt;
      int64_t sign = isa<arith::SubIOp>(op) ? -1 : 1;
      // -INT64_MIN does not exist: a constant from the IR can be it.
      int64_t negated;
      for (auto [atom, c] : b->terms)
        if (llvm::MulOverflow(sign, c, negated) || !a->add(atom, negated))
          return std::nullopt;
      if (llvm::MulOverflow(sign, b->constant, negated) ||
          llvm::AddOverflow(a->constant, negated, a->constant))
        return std::nullopt;
      a->prune();
      return fits(a, op);
    }
    if (isa<arith::MulIOp>(op)) {
      for (unsigned side : {0u, 1u}) {
        std::optional<APInt> factor = intConstant(ex, node->operands[side]);
        if (!factor || factor->getBitWidth() > 64)
          continue;
        std::optional<Linear> a =
            linear(node->operands[1 - side], false, depth + 1);
        if (!a)
          return std::nullopt;
        int64_t f = factor->getSExtValue();
        for (auto &[atom, c] : a->terms)
          if (llvm::MulOverflow(c, f, c))
            return std::nullopt;
        if (llvm::MulOverflow(a->constant, f, a->constant))
          return std::nullopt;
        a->prune();
        return fits(a, op);
      }
    }
    return std::nullopt;
  }

  /// `node` (an i1) as a conjunction of `E <= 0`; nullopt when it is not
  /// one.
  std::optional<SmallVector<Linear>> condition(Node *node, int depth) {
    if (depth > kMaxDepth)
      return std::nullopt;
    node = ex.open(node);
    if (node->kind == Node::Constant) {
      auto attr = dyn_cast<IntegerAttr>(node->constant);
      if (attr && attr.getType().isInteger(1) && attr.getValue().isOne())
        return SmallVector<Linear>{};
      return std::nullopt;
    }
    if (node->kind != Node::Compute)
      return std::nullopt;
    Operation *op = node->op;
    auto both = [&](Node *a, Node *b) -> std::optional<SmallVector<Linear>> {
      std::optional<SmallVector<Linear>> x = condition(a, depth + 1);
      std::optional<SmallVector<Linear>> y = condition(b, depth + 1);
      if (!x || !y)
        return std::nullopt;
      x->append(y->begin(), y->end());
      return x;
    };
    if (isa<arith::AndIOp>(op) && node->operands.size() == 2)
      return both(node->operands[0], node->operands[1]);
    if (isa<arith::SelectOp>(op) && node->operands.size() == 3) {
      // c ? x : false is c and x (JAX's tril).
      std::optional<APInt> otherwise = intConstant(ex, node->operands[2]);
      if (otherwise && otherwise->getBitWidth() == 1 && otherwise->isZero())
        return both(node->operands[0], node->operands[1]);
      return std::nullopt;
    }
    if (isa<arith::XOrIOp>(op) && node->operands.size() == 2) {
      for (unsigned side : {0u, 1u}) {
        std::optional<APInt> flip = intConstant(ex, node->operands[side]);
        if (!flip || flip->getBitWidth() != 1 || !flip->isOne())
          continue;
        std::optional<SmallVector<Linear>> inner =
            condition(node->operands[1 - side], depth + 1);
        // not (E <= 0) is 1 - E <= 0, for one comparison.
        if (!inner || inner->size() != 1)
          return std::nullopt;
        return SmallVector<Linear>{negated((*inner)[0])};
      }
      return std::nullopt;
    }
    if (auto cmpf = dyn_cast<arith::CmpFOp>(op);
        cmpf && node->operands.size() == 2)
      return floatTest(cmpf.getPredicate(), node->operands[0],
                       node->operands[1], depth);
    auto cmp = dyn_cast<arith::CmpIOp>(op);
    if (!cmp || node->operands.size() != 2)
      return std::nullopt;
    if (cmp.getPredicate() == arith::CmpIPredicate::eq)
      return equality(node->operands[0], node->operands[1], depth);
    std::optional<Linear> a = linear(node->operands[0], true, depth + 1);
    std::optional<Linear> b = linear(node->operands[1], true, depth + 1);
    if (!a || !b)
      return std::nullopt;
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    bool isUnsigned =
        pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
    if (isUnsigned && (!isNonNegative(*a) || !isNonNegative(*b)))
      return std::nullopt;
    // d = a - b.
    Linear d = *a;
    for (auto [atom, c] : b->terms)
      if (!d.add(atom, -c))
        return std::nullopt;
    if (llvm::SubOverflow(d.constant, b->constant, d.constant))
      return std::nullopt;
    if (b->positions) {
      if (d.positions && d.positions != b->positions)
        return std::nullopt;
      d.positions = b->positions;
      d.positionsCoef -= b->positionsCoef;
    }
    d.prune();
    switch (pred) {
    case P::sle:
    case P::ule:
      return SmallVector<Linear>{d};
    case P::slt:
    case P::ult:
      return SmallVector<Linear>{plus(d, 1)};
    case P::sge:
    case P::uge:
      return SmallVector<Linear>{scaled(d, -1)};
    case P::sgt:
    case P::ugt:
      return SmallVector<Linear>{plus(scaled(d, -1), 1)};
    default:
      return std::nullopt;
    }
  }

private:
  /// A float mask tested against a constant (MaxText: the scores are kept
  /// where mask >= mask_value / 2), the mask a select of two constants on a
  /// condition: the test is that condition, its negation, or always true.
  std::optional<SmallVector<Linear>>
  floatTest(arith::CmpFPredicate pred, Node *lhs, Node *rhs, int depth) {
    for (unsigned side : {0u, 1u}) {
      Node *operands[2] = {lhs, rhs};
      std::optional<APFloat> c = floatConstant(ex, operands[1 - side]);
      Node *select = computeOf<arith::SelectOp>(ex, operands[side], 3);
      if (!c || !select)
        continue;
      std::optional<APFloat> a = floatConstant(ex, select->operands[1]);
      std::optional<APFloat> b = floatConstant(ex, select->operands[2]);
      if (!a || !b || &a->getSemantics() != &c->getSemantics() ||
          &b->getSemantics() != &c->getSemantics())
        return std::nullopt;
      auto test = [&](const APFloat &v) {
        return side == 0 ? arith::applyCmpPredicate(pred, v, *c)
                         : arith::applyCmpPredicate(pred, *c, v);
      };
      bool whenTrue = test(*a), whenFalse = test(*b);
      if (whenTrue && whenFalse)
        return SmallVector<Linear>{};
      if (whenTrue && !whenFalse)
        return condition(select->operands[0], depth + 1);
      if (!whenTrue && whenFalse) {
        std::optional<SmallVector<Linear>> inner =
            condition(select->operands[0], depth + 1);
        if (!inner || inner->size() != 1)
          return std::nullopt;
        return SmallVector<Linear>{negated((*inner)[0])};
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  /// `x` and `c` where `node` is floor(x / c) computed through floats
  /// (fptosi(floor(sitofp(x) / c)), Llama 4's chunk index): exact when |x|
  /// is below the float's integer range, c a positive integer.
  std::optional<std::pair<Linear, int64_t>> floorDivision(Node *node,
                                                          int depth) {
    Node *toInt = computeOf<arith::FPToSIOp>(ex, node, 1);
    Node *floor =
        toInt ? computeOf<math::FloorOp>(ex, toInt->operands[0], 1) : nullptr;
    Node *div =
        floor ? computeOf<arith::DivFOp>(ex, floor->operands[0], 2) : nullptr;
    Node *x =
        div ? computeOf<arith::SIToFPOp>(ex, div->operands[0], 1) : nullptr;
    if (!x)
      return std::nullopt;
    // A correctly rounded division (fast-math could take 1/c first) whose
    // floor the integer result holds.
    auto floatType = dyn_cast<FloatType>(div->op->getResult(0).getType());
    auto intType = dyn_cast<IntegerType>(toInt->op->getResult(0).getType());
    if (!floatType || !intType ||
        cast<arith::DivFOp>(div->op).getFastmath() !=
            arith::FastMathFlags::none)
      return std::nullopt;
    std::optional<int64_t> divisor;
    if (std::optional<APFloat> c = floatConstant(ex, div->operands[1])) {
      APSInt value(64, /*isUnsigned=*/false);
      bool exact = false;
      if (c->convertToInteger(value, APFloat::rmTowardZero, &exact) ==
              APFloat::opOK &&
          exact)
        divisor = value.getSExtValue();
    } else if (Node *fromInt =
                   computeOf<arith::SIToFPOp>(ex, div->operands[1], 1)) {
      if (std::optional<APInt> c = intConstant(ex, fromInt->operands[0]);
          c && c->getBitWidth() <= 64)
        divisor = c->getSExtValue();
    }
    if (!divisor || *divisor <= 0 || *divisor >= (int64_t(1) << 30))
      return std::nullopt;
    std::optional<Linear> l = linear(x->operands[0], false, depth + 1);
    if (!l || l->positions)
      return std::nullopt;
    // |x| < 2^(precision − 1): x and x / c (rounded) floor to floor(x / c).
    std::optional<int64_t> maybeBound = magnitudeBound(*l);
    if (!maybeBound)
      return std::nullopt;
    int64_t bound = *maybeBound;
    unsigned precision =
        APFloat::semanticsPrecision(floatType.getFloatSemantics());
    if (precision > 62 || bound >= (int64_t(1) << (precision - 1)) ||
        (intType.getWidth() < 64 &&
         bound >= (int64_t(1) << (intType.getWidth() - 1))))
      return std::nullopt;
    return std::pair(*l, *divisor);
  }

  /// `a == b` as `E <= 0` conditions: of two linear forms (both
  /// differences), or of floor(x / c) and a constant N (c·N <= x <= c·N +
  /// c − 1: a chunk of keys when x is the key position, decode's chunked
  /// attention).
  std::optional<SmallVector<Linear>> equality(Node *a, Node *b, int depth) {
    for (auto [x, y] : {std::pair(a, b), std::pair(b, a)}) {
      std::optional<std::pair<Linear, int64_t>> chunk = floorDivision(x, depth);
      if (!chunk || chunk->first.terms.empty())
        continue;
      std::optional<Linear> other;
      if (std::optional<std::pair<Linear, int64_t>> both =
              floorDivision(y, depth)) {
        // floor(x' / c') with x' a constant: a constant.
        if (!both->first.terms.empty())
          return std::nullopt;
        Linear n;
        n.constant =
            llvm::divideFloorSigned(both->first.constant, both->second);
        other = n;
      } else {
        other = linear(y, false, depth + 1);
      }
      if (!other || !other->terms.empty() || other->positions)
        return std::nullopt;
      int64_t lo, hi;
      if (llvm::MulOverflow(chunk->second, other->constant, lo) ||
          llvm::AddOverflow(lo, chunk->second - 1, hi) ||
          std::abs(lo) >= (int64_t(1) << 61) ||
          std::abs(hi) >= (int64_t(1) << 61))
        return std::nullopt;
      // lo − x <= 0 and x − hi <= 0.
      Linear below = scaled(chunk->first, -1), above = chunk->first;
      below.constant += lo;
      above.constant -= hi;
      return SmallVector<Linear>{below, above};
    }
    std::optional<Linear> x = linear(a, true, depth + 1);
    std::optional<Linear> y = linear(b, true, depth + 1);
    if (!x || !y || x->positions || y->positions)
      return std::nullopt;
    Linear d = *x;
    for (auto [atom, c] : y->terms)
      if (!d.add(atom, -c))
        return std::nullopt;
    if (llvm::SubOverflow(d.constant, y->constant, d.constant) ||
        d.constant == INT64_MIN)
      return std::nullopt;
    d.prune();
    return SmallVector<Linear>{d, plus(scaled(d, -1), 0)};
  }

  static Linear scaled(Linear l, int64_t f) {
    for (auto &[atom, c] : l.terms)
      c *= f; // |c| is bounded by fits()
    l.constant *= f;
    l.positionsCoef *= f;
    return l;
  }
  static Linear plus(Linear l, int64_t c) {
    l.constant += c;
    return l;
  }
  static Linear negated(const Linear &l) { return plus(scaled(l, -1), 1); }

  bool isNonNegative(const Linear &l) const {
    if (l.positions || l.constant < 0)
      return false;
    return llvm::all_of(l.terms, [](auto &t) { return t.second >= 0; });
  }

  /// `l` if every value it takes fits the signed range of `op`'s result
  /// width (so the frontend's fixed-width arithmetic computed exactly it);
  /// positions are passed through casts only, and not bounded here.
  std::optional<Linear> fits(std::optional<Linear> l, Operation *op) const {
    if (!l)
      return std::nullopt;
    Type type = op->getResult(0).getType();
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    if (!type.isIndex() && !isa<IntegerType>(type))
      return std::nullopt;
    if (l->positions) {
      // Only widening casts of the positions themselves.
      if (!l->terms.empty() || l->constant != 0 ||
          width < getElementTypeOrSelf(l->positions->value.getType())
                      .getIntOrFloatBitWidth())
        return std::nullopt;
      return l;
    }
    std::optional<int64_t> maybeBound = magnitudeBound(*l);
    if (!maybeBound)
      return std::nullopt;
    int64_t bound = *maybeBound;
    if (width < 64 && bound >= (int64_t(1) << (width - 1)))
      return std::nullopt;
    if (bound >= (int64_t(1) << 61))
      return std::nullopt;
    return l;
  }

  Expressions &ex;
};

} // namespace

std::optional<SmallVector<Linear>> maskConditions(Expressions &ex,
                                                  Node *condition) {
  return MaskAnalysis(ex).condition(condition, 0);
}

/// The causal (and window) mask `conds` states over key atom `key`, if it
/// is one: `key − q ≤ t` (+ `q − key ≤ W − 1 − t`), `key ≤ t` (+
/// `−key ≤ W − 1 − t`: no query index, one query row), or `key + c ≤ pos`.
std::optional<PositionMask> positionMask(ArrayRef<Linear> allConds,
                                         unsigned key) {
  // Bounds on the key alone intersect: key <= min of the upper bounds, key
  // >= max of the lower (decode's causal and chunk bounds).
  SmallVector<Linear> conds;
  std::optional<int64_t> upper, lower;
  for (const Linear &e : allConds) {
    bool keyOnly = !e.positions && e.terms.size() == 1 &&
                   e.terms[0].first == key && std::abs(e.terms[0].second) == 1;
    if (!keyOnly || e.constant == INT64_MIN) {
      conds.push_back(e);
      continue;
    }
    // key + c <= 0: key <= -c; −key + c <= 0: key >= c.
    if (e.terms[0].second == 1)
      upper = std::min(upper.value_or(INT64_MAX), -e.constant);
    else
      lower = std::max(lower.value_or(INT64_MIN), e.constant);
  }
  if (upper) {
    Linear e;
    e.terms.push_back({key, 1});
    e.constant = -*upper;
    conds.push_back(e);
  }
  if (lower) {
    Linear e;
    e.terms.push_back({key, -1});
    e.constant = *lower;
    conds.push_back(e);
  }
  std::optional<PositionMask> mask;
  const Linear *window = nullptr;
  for (const Linear &e : conds) {
    if (e.coef(key) == 1 && !mask) {
      PositionMask m;
      if (e.positions) {
        if (e.positionsCoef != -1 || e.terms.size() != 1)
          return std::nullopt;
        m.positions = e.positions;
        m.keyOffset = e.constant;
      } else if (e.terms.size() == 1) {
        if (e.constant == INT64_MIN)
          return std::nullopt;
        m.keyOnly = true;
        m.offset = -e.constant;
      } else {
        if (e.terms.size() != 2)
          return std::nullopt;
        unsigned q =
            e.terms[0].first == key ? e.terms[1].first : e.terms[0].first;
        if (e.coef(q) != -1 || e.constant == INT64_MIN)
          return std::nullopt;
        m.queryAtom = q;
        m.offset = -e.constant;
      }
      mask = m;
      continue;
    }
    if (e.coef(key) == -1 && !window && !e.positions &&
        (e.terms.size() == 1 || e.terms.size() == 2)) {
      window = &e;
      continue;
    }
    return std::nullopt;
  }
  if (!mask)
    return std::nullopt;
  if (window) {
    // q − key + c2 ≤ 0: key ≥ q + c2 = qpos − W + 1 with qpos = q + t (or
    // −key + c2 ≤ 0 with qpos = t).
    if (mask->positions || (window->terms.size() == 1) != mask->keyOnly)
      return std::nullopt;
    if (!mask->keyOnly) {
      unsigned q = window->terms[0].first == key ? window->terms[1].first
                                                 : window->terms[0].first;
      if (q != mask->queryAtom || window->coef(q) != 1)
        return std::nullopt;
    }
    int64_t w;
    if (llvm::SubOverflow(mask->offset, window->constant, w) || w >= INT64_MAX)
      return std::nullopt;
    mask->window = w + 1;
    if (*mask->window < 1)
      return std::nullopt;
  }
  return mask;
}

} // namespace mlir::rope::raise::attention
