//===- Expressions.h - Linalg values as expressions over atoms --*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reader of linalg payloads every raise shares. The attention, softmax
// and neighbours raises (RaiseAttention.cpp, SoftmaxReader.cpp,
// RaiseSoftmax.cpp, RaiseNeighbours.cpp) match over it: a value read
// through a layout of atoms is a node; opening it evaluates its producer one
// level (elementwise payloads, reductions, linalg.index, views, fills,
// constants); two nodes are the same when they compute the same elements,
// up to a renaming of reduced atoms. The rotation raise (ElementAlgebra.cpp,
// CosSinSources.cpp) interprets what readPayload reads of a payload: the
// same expressions over the op's operands and loop indices. Expressions.cpp
// holds the out-of-line parts; RaiseAttention.cpp's file comment explains atoms
// and expressions.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_EXPRESSIONS_H
#define ROPE_LIB_TRANSFORMS_RAISE_EXPRESSIONS_H

#include "PayloadAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace mlir::rope::raise {

/// Bounds on the work one candidate may cost (this runs inside other
/// people's processes, on modules of any size).
constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = raise::kCandidateWorkBudget;

using AtomList = SmallVector<unsigned, 2>;
using Layout = SmallVector<AtomList, 6>;
using Renaming = DenseMap<unsigned, unsigned>;

//===----------------------------------------------------------------------===//
// Atoms
//===----------------------------------------------------------------------===//

class Atoms {
public:
  unsigned make(int64_t size) {
    sizes.push_back(size);
    children.emplace_back();
    return sizes.size() - 1;
  }
  int64_t size(unsigned atom) const { return sizes[atom]; }

  /// The unrefined atoms `list` stands for, in order.
  AtomList leaves(ArrayRef<unsigned> list) const {
    AtomList out;
    for (unsigned atom : list)
      appendLeaves(atom, out);
    return out;
  }
  /// leaves() without those of size 1 (a size-1 atom indexes nothing).
  AtomList significant(ArrayRef<unsigned> list) const {
    AtomList out;
    for (unsigned atom : leaves(list))
      if (sizes[atom] != 1)
        out.push_back(atom);
    return out;
  }
  /// The product of the sizes, if it is at most 2^62.
  std::optional<int64_t> product(ArrayRef<unsigned> list) const {
    int64_t p = 1;
    for (unsigned atom : leaves(list)) {
      int64_t s = sizes[atom];
      if (s <= 0 || p > (int64_t(1) << 62) / s)
        return std::nullopt;
      p *= s;
    }
    return p;
  }

  /// Splits `list` (a row-major flattening) into consecutive parts of sizes
  /// `targets`, refining an atom where a part boundary falls inside it.
  std::optional<SmallVector<AtomList>> split(ArrayRef<unsigned> list,
                                             ArrayRef<int64_t> targets) {
    if (targets.size() == 1) {
      if (ShapedType::isDynamic(targets[0]) || product(list) != targets[0])
        return std::nullopt;
      return SmallVector<AtomList>{leaves(list)};
    }
    AtomList pending = leaves(list);
    SmallVector<AtomList> parts;
    size_t next = 0;
    for (int64_t target : targets) {
      if (target <= 0)
        return std::nullopt;
      AtomList part;
      int64_t have = 1;
      while (have < target) {
        if (next == pending.size())
          return std::nullopt;
        unsigned atom = pending[next];
        int64_t s = sizes[atom];
        int64_t need = target / have;
        if (s <= 0)
          return std::nullopt;
        if (need % s == 0) {
          part.push_back(atom);
          have *= s;
          ++next;
          continue;
        }
        if (s % need != 0)
          return std::nullopt;
        // A boundary inside the atom: it becomes [need, s / need].
        unsigned outer = make(need), inner = make(s / need);
        children[atom] = {outer, inner};
        pending[next] = inner;
        part.push_back(outer);
        have *= need;
      }
      parts.push_back(part);
    }
    for (; next < pending.size(); ++next) {
      if (sizes[pending[next]] != 1 || parts.empty())
        return std::nullopt;
      parts.back().push_back(pending[next]);
    }
    return parts;
  }

private:
  void appendLeaves(unsigned atom, AtomList &out) const {
    // A refined atom's parts have sizes >= 2: the depth is at most 62.
    if (children[atom].empty()) {
      out.push_back(atom);
      return;
    }
    for (unsigned child : children[atom])
      appendLeaves(child, out);
  }

  SmallVector<int64_t> sizes;
  SmallVector<AtomList> children;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Node {
  enum Kind : uint8_t {
    /// `value` read through `layout` (a scalar has an empty layout).
    Tensor,
    /// A scalar constant (`constant`: a FloatAttr or an IntegerAttr).
    Constant,
    /// linalg.index of a loop whose atoms are `atoms` (flattened).
    Index,
    /// The payload op `op` applied to `operands`.
    Compute,
    /// `op` (the combiner) folded over the atoms `atoms` of
    /// `operands[1]`, starting from `operands[0]`.
    Reduce,
    /// An element of a tensor.empty.
    Undefined,
    /// readPayload's reading of a payload's block argument: the element of
    /// `operand` (an input or a destination of the payload's op; a scalar
    /// input is its value) at the loop point the payload computes.
    Operand
  };
  Kind kind = Undefined;
  Value value;
  Layout layout;
  Attribute constant;
  /// Constant: the wider float constant `constant` was cast from, unrounded
  /// (scale factors read it so, as the element algebra of the rotation
  /// raise reads cast constants: raising removes the frontend's roundings).
  Attribute uncast;
  AtomList atoms;
  /// Index: the loop's number in the op whose payload reads it.
  unsigned dim = 0;
  /// Operand: the operand the payload's block argument stands for.
  OpOperand *operand = nullptr;
  Operation *op = nullptr;
  /// Reduce: the linalg op it comes from.
  Operation *producer = nullptr;
  /// Compute, Index: the tensor (a Tensor node: the value and the layout it
  /// was read at) whose producer's payload computes it. A raise that takes a
  /// value of a payload as its operand (RaiseNeighbours' x, rounded and
  /// widened inside one fused generic) materializes it by a copy of that
  /// producer, read at that layout.
  Node *in = nullptr;
  SmallVector<Node *, 2> operands;
};

class Expressions {
public:
  Atoms atoms;
  /// Every op looked through or evaluated.
  llvm::SetVector<Operation *> opened;
  /// Whether a dynamic dim is read, by one atom of unknown size
  /// (`atoms.make(ShapedType::kDynamic)`, which views never split). Off for
  /// the attention and softmax raises, whose matches need the sizes; on for
  /// RaiseNeighbours, whose folds are elementwise over the token dims and
  /// hold for any extent of them (a prefill of any length).
  bool dynamicDims = false;

  bool exhausted() const { return nodes.size() > kMaxNodes; }

  Node *tensor(Value value, Layout layout) {
    Node *node = make(Node::Tensor);
    node->value = value;
    node->layout = std::move(layout);
    return node;
  }

  Node *constantNode(Attribute attr, Value value = {}) {
    Node *node = make(Node::Constant);
    node->constant = attr;
    FloatAttr source;
    if (Operation *def = value ? value.getDefiningOp() : nullptr;
        isa_and_present<arith::TruncFOp, arith::ExtFOp>(def) &&
        matchPattern(def->getOperand(0), m_Constant(&source)))
      node->uncast = source;
    return node;
  }

  /// A scalar value: a constant (folding a float cast of one), else a leaf.
  Node *scalar(Value value) {
    if (Attribute attr = raise::getScalarConstantAttr(value))
      return constantNode(attr, value);
    return tensor(value, {});
  }

  /// `node` read through views (reshapes, copies, transposes, broadcasts),
  /// fills and splat constants, as far as they go.
  Node *look(Node *node) {
    for (int step = 0; step < kMaxDepth && node->kind == Node::Tensor; ++step) {
      Node *next = openOnce(node);
      if (!next || next->kind == Node::Compute || next->kind == Node::Reduce ||
          next->kind == Node::Index)
        break;
      node = next;
    }
    return node;
  }

  /// look(), then the payload of the producer (one level), if there is one.
  Node *open(Node *node) {
    node = look(node);
    if (node->kind != Node::Tensor)
      return node;
    Node *opened = openOnce(node);
    return opened ? opened : node;
  }

  /// The payload value `value` of `op` (a block argument of its payload, a
  /// result of an op in it, or a value from outside that it yields) as an
  /// expression over the op's operands, at
  /// one point of its loops: block arguments of inputs (and of
  /// destinations, with `readInits`) are Node::Operand, linalg.index is a
  /// Node::Index with its `dim` (no atoms), values from outside the payload
  /// are read as scalar(), and float casts in the payload stay ops (whether
  /// a cast rounds is the interpreter's to say). The one reading of
  /// payloads for interpreters that evaluate a payload at given loop
  /// coordinates themselves (the rotation raise's ElementAlgebra, per
  /// channel; CosSinSources, at a point). Null when the value reads an op
  /// with regions or several results, a destination without `readInits`,
  /// or the budget is spent. Memoized per op and `readInits`.
  Node *readPayload(linalg::LinalgOp op, Value value, bool readInits);

  /// Whether `a`, with its atoms renamed by `renaming`, and `b` compute the
  /// same elements.
  bool same(Node *a, Node *b, const Renaming &renaming, int depth = 0);

  AtomList renamed(ArrayRef<unsigned> list, const Renaming &renaming) const {
    AtomList out;
    for (unsigned atom : atoms.significant(list))
      out.push_back(renaming.lookup_or(atom, atom));
    return out;
  }

  bool atomsEqual(ArrayRef<unsigned> a, ArrayRef<unsigned> b,
                  const Renaming &renaming) const {
    return renamed(a, renaming) == atoms.significant(b);
  }

  bool layoutsEqual(const Layout &a, const Layout &b,
                    const Renaming &renaming) const {
    if (a.size() != b.size())
      return false;
    for (auto [x, y] : llvm::zip_equal(a, b))
      if (!atomsEqual(x, y, renaming))
        return false;
    return true;
  }

private:
  Node *make(Node::Kind kind) {
    nodes.push_back(std::make_unique<Node>());
    nodes.back()->kind = kind;
    return nodes.back().get();
  }

  struct Key {
    const void *value;
    std::vector<int64_t> atoms;
    bool operator<(const Key &o) const {
      return value != o.value ? value < o.value : atoms < o.atoms;
    }
  };

  /// The producer of a Tensor node evaluated one level, memoized; null when
  /// it is not looked through.
  Node *openOnce(Node *node);

  Node *openValue(Value value, const Layout &layout);

  struct Payload {
    linalg::LinalgOp op;
    /// readPayload's reading: block arguments are Node::Operand and loops
    /// have no atoms.
    bool operands = false;
    bool readInits = false;
    /// The result being opened, at its layout (Node::in).
    Node *in = nullptr;
    SmallVector<AtomList> loops;
    DenseMap<Value, Node *> memo;
  };

  Node *openLinalg(linalg::LinalgOp op, OpResult result, const Layout &layout);

  /// The expression of `value` in the payload of `ctx.op`; null when it
  /// reads a destination or an op that is not a one-result scalar op.
  Node *payload(Payload &ctx, Value value, int depth);

  std::vector<std::unique_ptr<Node>> nodes;
  /// The Node::in of each payload opened.
  std::vector<std::unique_ptr<Node>> reads;
  std::map<Key, Node *> memo;
  /// readPayload's contexts, per op and `readInits`.
  std::map<std::pair<Operation *, bool>, std::unique_ptr<Payload>>
      operandPayloads;
};

//===----------------------------------------------------------------------===//
// Node helpers
//===----------------------------------------------------------------------===//

/// `node` (looked through and opened) when it is `OpTy` with `arity`
/// operands; null otherwise.
template <typename OpTy>
Node *computeOf(Expressions &ex, Node *node, unsigned arity) {
  node = ex.open(node);
  if (node->kind == Node::Compute && isa<OpTy>(node->op) &&
      node->operands.size() == arity)
    return node;
  return nullptr;
}

/// The one atom a reduction over `atoms` reduces, reductions of one
/// iteration aside (fold and fuse leave a unit dim reduced next to the keys
/// or the channels); the unit atom when it is the only one.
std::optional<unsigned> reducedAtom(Expressions &ex, ArrayRef<unsigned> atoms);

std::optional<APFloat> floatConstant(Expressions &ex, Node *node);

std::optional<APInt> intConstant(Expressions &ex, Node *node);

double toDouble(APFloat value);

/// A constant factor of the scores: a float constant, read before the float
/// cast the frontend put on it (see Node::uncast).
std::optional<double> scaleFactor(Expressions &ex, Node *node);

/// Every node `root` reads, itself included, each once (operands as they
/// are, not opened): the operands and loops a payload's expression reads.
SmallVector<Node *> nodesOf(Node *root);

/// Strips float extensions written in a payload (mixed-precision operands).
Node *stripExtF(Expressions &ex, Node *node);

bool isZero(Expressions &ex, Node *node);

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_EXPRESSIONS_H
