//===- Expressions.cpp - Linalg values as expressions over atoms ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The out-of-line parts of the expression reader (Expressions.h): comparing
// nodes, opening a value's producer (views, constants, fills, linalg ops)
// and reading a payload.
//
//===----------------------------------------------------------------------===//

#include "Expressions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace mlir::rope::raise {

bool Expressions::same(Node *a, Node *b, const Renaming &renaming, int depth) {
  if (depth > kMaxDepth || exhausted())
    return false;
  a = look(a);
  b = look(b);
  if (a->kind == Node::Tensor && b->kind == Node::Tensor &&
      a->value == b->value && layoutsEqual(a->layout, b->layout, renaming))
    return true;
  if (a->kind == Node::Tensor || b->kind == Node::Tensor) {
    Node *x = a->kind == Node::Tensor ? openOnce(a) : a;
    Node *y = b->kind == Node::Tensor ? openOnce(b) : b;
    if (!x || !y)
      return false;
    return same(x, y, renaming, depth + 1);
  }
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case Node::Constant:
    return a->constant == b->constant;
  case Node::Index:
    return atomsEqual(a->atoms, b->atoms, renaming);
  case Node::Operand:
    return a->operand == b->operand;
  case Node::Undefined:
  case Node::Tensor:
    return false;
  case Node::Compute:
    if (a->op->getName() != b->op->getName() ||
        a->op->getAttrDictionary() != b->op->getAttrDictionary() ||
        a->op->getResultTypes() != b->op->getResultTypes() ||
        a->operands.size() != b->operands.size())
      return false;
    for (auto [x, y] : llvm::zip_equal(a->operands, b->operands))
      if (!same(x, y, renaming, depth + 1))
        return false;
    return true;
  case Node::Reduce: {
    if (a->op->getName() != b->op->getName() ||
        a->op->getAttrDictionary() != b->op->getAttrDictionary())
      return false;
    AtomList la = atoms.leaves(a->atoms), lb = atoms.leaves(b->atoms);
    if (la.size() != lb.size())
      return false;
    Renaming inner = renaming;
    for (auto [x, y] : llvm::zip_equal(la, lb)) {
      if (atoms.size(x) != atoms.size(y))
        return false;
      inner[x] = y;
    }
    return same(a->operands[0], b->operands[0], renaming, depth + 1) &&
           same(a->operands[1], b->operands[1], inner, depth + 1);
  }
  }
  return false;
}

Node *Expressions::openOnce(Node *node) {
  if (node->kind != Node::Tensor || exhausted())
    return nullptr;
  Key key{node->value.getAsOpaquePointer(), {}};
  for (const AtomList &dim : node->layout) {
    for (unsigned atom : atoms.leaves(dim))
      key.atoms.push_back(atom);
    key.atoms.push_back(-1);
  }
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  Node *result = openValue(node->value, node->layout);
  memo[key] = result;
  return result;
}

Node *Expressions::openValue(Value value, const Layout &layout) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || static_cast<size_t>(type.getRank()) != layout.size())
    return nullptr;
  for (auto [i, dim] : llvm::enumerate(layout)) {
    if (type.isDynamicDim(i)) {
      // One atom of unknown size (and units): nothing else is known to
      // have the dim's extent.
      AtomList significant = atoms.significant(dim);
      if (!dynamicDims || significant.size() != 1 ||
          !ShapedType::isDynamic(atoms.size(significant.front())))
        return nullptr;
      continue;
    }
    std::optional<int64_t> product = atoms.product(dim);
    if (!product || *product != type.getDimSize(i))
      return nullptr;
  }
  Operation *def = value.getDefiningOp();
  if (!def)
    return nullptr;
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return nullptr;
    return constantNode(dense.getSplatValue<Attribute>());
  }
  if (isa<tensor::EmptyOp>(def))
    return make(Node::Undefined);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    Layout source;
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      AtomList list;
      for (int64_t i : group) {
        if (i < 0 || static_cast<size_t>(i) >= layout.size())
          return nullptr;
        list.append(layout[i]);
      }
      source.push_back(list);
    }
    opened.insert(def);
    return tensor(expand.getSrc(), source);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    RankedTensorType sourceType = collapse.getSrcType();
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    if (groups.size() != layout.size())
      return nullptr;
    Layout source;
    for (auto [g, group] : llvm::enumerate(groups)) {
      SmallVector<int64_t> sizes;
      for (int64_t i : group) {
        if (i < 0 || i >= sourceType.getRank())
          return nullptr;
        sizes.push_back(sourceType.getDimSize(i));
      }
      std::optional<SmallVector<AtomList>> parts =
          atoms.split(layout[g], sizes);
      if (!parts)
        return nullptr;
      source.append(parts->begin(), parts->end());
    }
    if (source.size() != static_cast<size_t>(sourceType.getRank()))
      return nullptr;
    opened.insert(def);
    return tensor(collapse.getSrc(), source);
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def)) {
    auto sourceType = dyn_cast<RankedTensorType>(cast.getSource().getType());
    if (!sourceType || sourceType.getRank() != type.getRank())
      return nullptr;
    opened.insert(def);
    return tensor(cast.getSource(), layout);
  }
  // linalg-fold-unit-extent-dims=use-rank-reducing-slices spells the
  // reshapes that add or drop unit dims as slices covering the whole
  // tensor: read them as the reshapes they are.
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    if (!raise::isWholeUnitView(slice))
      return nullptr;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    Layout source;
    size_t next = 0;
    for (size_t d = 0; d < dropped.size(); ++d) {
      if (dropped.test(d))
        source.push_back({atoms.make(1)});
      else if (next < layout.size())
        source.push_back(layout[next++]);
      else
        return nullptr;
    }
    if (next != layout.size())
      return nullptr;
    opened.insert(def);
    return tensor(slice.getSource(), source);
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    if (!raise::isWholeUnitView(insert))
      return nullptr;
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    if (dropped.size() != layout.size())
      return nullptr;
    Layout source;
    for (auto [d, dim] : llvm::enumerate(layout))
      if (!dropped.test(d))
        source.push_back(dim);
    opened.insert(def);
    return tensor(insert.getSource(), source);
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def))
    return openLinalg(linalgOp, cast<OpResult>(value), layout);
  return nullptr;
}

Node *Expressions::openLinalg(linalg::LinalgOp op, OpResult result,
                              const Layout &layout) {
  if (!op.hasPureTensorSemantics() || op->getNumRegions() != 1)
    return nullptr;
  unsigned r = result.getResultNumber();
  if (r >= op.getNumDpsInits())
    return nullptr;
  OpOperand *init = op.getDpsInitOperand(r);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  unsigned numLoops = op.getNumLoops();
  std::optional<SmallVector<int64_t>> staticRanges =
      raise::staticLoopRanges(op);
  if (!staticRanges)
    return nullptr;
  SmallVector<int64_t> ranges = std::move(*staticRanges);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (outMap.getNumResults() != layout.size() ||
      outMap.getNumDims() != numLoops || ranges.size() != numLoops ||
      iterators.size() != numLoops)
    return nullptr;
  SmallVector<std::optional<AtomList>> loops(numLoops);
  for (auto [i, expr] : llvm::enumerate(outMap.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      unsigned d = dim.getPosition();
      if (loops[d] || iterators[d] != utils::IteratorType::parallel)
        return nullptr;
      loops[d] = layout[i];
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0 || atoms.product(layout[i]) != 1)
      return nullptr;
  }
  AtomList reduced;
  for (unsigned d = 0; d < numLoops; ++d) {
    if (loops[d]) {
      if (!ShapedType::isDynamic(ranges[d]) &&
          atoms.product(*loops[d]) != ranges[d])
        return nullptr;
      continue;
    }
    if (iterators[d] != utils::IteratorType::reduction ||
        ShapedType::isDynamic(ranges[d]) || ranges[d] <= 0)
      return nullptr;
    unsigned atom = atoms.make(ranges[d]);
    loops[d] = AtomList{atom};
    reduced.push_back(atom);
  }
  Payload ctx;
  ctx.op = op;
  // Node::in, kept outside the node budget: recording where a payload was
  // read must not change what fits in it.
  reads.push_back(std::make_unique<Node>());
  ctx.in = reads.back().get();
  ctx.in->kind = Node::Tensor;
  ctx.in->value = result;
  ctx.in->layout = layout;
  for (std::optional<AtomList> &loop : loops)
    ctx.loops.push_back(*loop);
  Block *block = op.getBlock();
  if (!block || block->empty())
    return nullptr;
  Operation *terminator = block->getTerminator();
  if (r >= terminator->getNumOperands())
    return nullptr;
  Value yielded = terminator->getOperand(r);
  if (reduced.empty()) {
    Node *node = payload(ctx, yielded, 0);
    if (node)
      opened.insert(op);
    return node;
  }
  // A reduction: `yield combiner(acc, x)` with x not reading a destination.
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != block ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      combiner->getNumRegions() != 0)
    return nullptr;
  Value acc = op.getMatchingBlockArgument(init);
  Value other;
  if (combiner->getOperand(0) == acc)
    other = combiner->getOperand(1);
  else if (combiner->getOperand(1) == acc)
    other = combiner->getOperand(0);
  else
    return nullptr;
  Node *body = payload(ctx, other, 0);
  if (!body)
    return nullptr;
  Node *node = make(Node::Reduce);
  node->op = combiner;
  node->producer = op;
  node->atoms = reduced;
  node->operands = {tensor(init->get(), layout), body};
  opened.insert(op);
  return node;
}

/// A scalar float or integer constant, its casts not folded.
static Attribute constantAttr(Value value) {
  Attribute attr;
  if (matchPattern(value, m_Constant(&attr)) &&
      isa<FloatAttr, IntegerAttr>(attr))
    return attr;
  return {};
}

Node *Expressions::payload(Expressions::Payload &ctx, Value value, int depth) {
  if (depth > 4 * kMaxDepth || exhausted())
    return nullptr;
  if (auto it = ctx.memo.find(value); it != ctx.memo.end())
    return it->second;
  Node *result = nullptr;
  Block *block = ctx.op.getBlock();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != block) {
      result = scalar(value);
    } else {
      OpOperand *operand = ctx.op.getMatchingOpOperand(arg);
      if (!operand ||
          !(ctx.op.isDpsInput(operand) || (ctx.operands && ctx.readInits)))
        return nullptr;
      Value input = operand->get();
      auto type = dyn_cast<RankedTensorType>(input.getType());
      if (ctx.operands) {
        result = make(Node::Operand);
        result->operand = operand;
      } else if (!type) {
        result = scalar(input);
      } else {
        AffineMap map = ctx.op.getMatchingIndexingMap(operand);
        if (map.getNumResults() != type.getRank())
          return nullptr;
        Layout layout;
        for (auto [i, expr] : llvm::enumerate(map.getResults())) {
          if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
            if (dim.getPosition() >= ctx.loops.size())
              return nullptr;
            layout.push_back(ctx.loops[dim.getPosition()]);
            continue;
          }
          auto constant = dyn_cast<AffineConstantExpr>(expr);
          if (!constant || constant.getValue() != 0 || type.getDimSize(i) != 1)
            return nullptr;
          layout.push_back({});
        }
        result = tensor(input, layout);
      }
    }
  } else {
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != block) {
      result = scalar(value);
    } else if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      if (index.getDim() >= ctx.op.getNumLoops())
        return nullptr;
      result = make(Node::Index);
      result->dim = index.getDim();
      if (!ctx.operands)
        result->atoms = ctx.loops[index.getDim()];
      result->in = ctx.in;
    } else if (Attribute attr = ctx.operands
                                    ? constantAttr(value)
                                    : raise::getScalarConstantAttr(value)) {
      result = constantNode(attr, value);
    } else {
      if (def->getNumResults() != 1 || def->getNumRegions() != 0)
        return nullptr;
      SmallVector<Node *, 2> operands;
      for (Value operand : def->getOperands()) {
        Node *node = payload(ctx, operand, depth + 1);
        if (!node)
          return nullptr;
        operands.push_back(node);
      }
      result = make(Node::Compute);
      result->op = def;
      result->operands = std::move(operands);
      result->in = ctx.in;
    }
  }
  ctx.memo[value] = result;
  return result;
}

Node *Expressions::readPayload(linalg::LinalgOp op, Value value,
                               bool readInits) {
  if (!op.getBlock() || !value)
    return nullptr;
  std::unique_ptr<Payload> &ctx = operandPayloads[{op, readInits}];
  if (!ctx) {
    ctx = std::make_unique<Payload>();
    ctx->op = op;
    ctx->operands = true;
    ctx->readInits = readInits;
  }
  return payload(*ctx, value, 0);
}

/// The one atom a reduction over `atoms` reduces, reductions of one
/// iteration aside (fold and fuse leave a unit dim reduced next to the keys
/// or the channels); the unit atom when it is the only one.
std::optional<unsigned> reducedAtom(Expressions &ex, ArrayRef<unsigned> atoms) {
  AtomList leaves = ex.atoms.leaves(atoms);
  AtomList significant = ex.atoms.significant(atoms);
  if (significant.size() == 1)
    return significant[0];
  if (significant.empty() && leaves.size() == 1)
    return leaves[0];
  return std::nullopt;
}

std::optional<APFloat> floatConstant(Expressions &ex, Node *node) {
  if (node->kind == Node::Tensor)
    // Probing an operand for a constant factor must not split the dims of
    // what it reads when it is not one (a Q normalized after a reshape would
    // split the channel atom): read values, not layouts.
    return raise::getSplatFloat(node->value, kMaxDepth);
  if (node->kind != Node::Constant)
    return std::nullopt;
  if (auto attr = dyn_cast<FloatAttr>(node->constant))
    return attr.getValue();
  return std::nullopt;
}

std::optional<APInt> intConstant(Expressions &ex, Node *node) {
  node = ex.look(node);
  if (node->kind != Node::Constant)
    return std::nullopt;
  if (auto attr = dyn_cast<IntegerAttr>(node->constant))
    return attr.getValue();
  return std::nullopt;
}

double toDouble(APFloat value) {
  bool lost = false;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToDouble();
}

/// A constant factor of the scores: a float constant, read before the float
/// cast the frontend put on it (see Node::uncast).
std::optional<double> scaleFactor(Expressions &ex, Node *node) {
  if (node->kind == Node::Constant)
    if (auto uncast = dyn_cast_if_present<FloatAttr>(node->uncast))
      return uncast.getValueAsDouble();
  std::optional<APFloat> c = floatConstant(ex, node);
  if (!c)
    return std::nullopt;
  return toDouble(*c);
}

SmallVector<Node *> nodesOf(Node *root) {
  SmallVector<Node *> out, worklist{root};
  DenseSet<Node *> seen;
  while (!worklist.empty()) {
    Node *node = worklist.pop_back_val();
    if (!seen.insert(node).second)
      continue;
    out.push_back(node);
    worklist.append(node->operands.begin(), node->operands.end());
  }
  return out;
}

/// Strips float extensions written in a payload (mixed-precision operands).
Node *stripExtF(Expressions &ex, Node *node) {
  for (int i = 0; i < 4; ++i) {
    Node *ext = computeOf<arith::ExtFOp>(ex, node, 1);
    if (!ext)
      break;
    node = ext->operands[0];
  }
  return node;
}

bool isZero(Expressions &ex, Node *node) {
  std::optional<APFloat> value = floatConstant(ex, node);
  return value && value->isZero();
}

} // namespace mlir::rope::raise
