//===- ElementAlgebra.h - Values as polynomials per channel -----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// rope-raise decides whether a tensor is a rotation of another by reading
// every channel of it as a polynomial over "leaves": values the algebra does
// not look through (the input, cos/sin tables, positions). Elementwise linalg
// ops (named or generic, with broadcasts in their indexing maps),
// extract_slice (also strided), concat, insert_slice into an empty tensor,
// expand/collapse_shape and casts are looked through, so one check covers
// every way a frontend spells the same arithmetic: rotate_half, the expanded
// half-split, GPT-J's stack-and-flatten, complex multiplication. A linalg
// op's payload is read by the raises' one payload reader
// (Expressions::readPayload) and evaluated per channel here.
//
// A request reads a value through a *view*: one role per dim. The frame is
// the dims of the candidate result (batch, heads, sequence); a dim is either
// one of them, a channel axis (the channels are the row-major flattening of
// the channel axes), a unit dim broadcast over the frame, or held at a fixed
// index (a slice of a dim the frame does not have, as M-RoPE's stream axis).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_ELEMENTALGEBRA_H
#define ROPE_LIB_TRANSFORMS_RAISE_ELEMENTALGEBRA_H

#include "PayloadAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::rope::raise {

/// What one dim of a viewed value stands for.
struct DimRole {
  enum Kind : uint8_t { Frame, Channel, Unit, Fixed, FrameSet };
  Kind kind;
  /// Frame: the frame dim; Channel: the channel axis; Fixed: the index;
  /// FrameSet: a bit mask of frame dims flattened into this one dim in
  /// ascending order (ONNX importers flatten [B, S] to gather).
  int64_t index = 0;

  static DimRole frame(int64_t d) { return {Frame, d}; }
  static DimRole channel(int64_t a) { return {Channel, a}; }
  static DimRole unit() { return {Unit, 0}; }
  static DimRole fixed(int64_t i) { return {Fixed, i}; }
  static DimRole frameSet(int64_t mask) { return {FrameSet, mask}; }
  /// A dim indexed by frame coordinates (one or several).
  bool isFrameLike() const { return kind == Frame || kind == FrameSet; }
  bool operator==(const DimRole &o) const {
    return kind == o.kind && index == o.index;
  }
  bool operator<(const DimRole &o) const {
    return kind != o.kind ? kind < o.kind : index < o.index;
  }
};
using View = SmallVector<DimRole, 6>;

/// One product `coef * leaf_1[c_1] * leaf_2[c_2] ...` (factors sorted).
struct Monomial {
  double coef = 1.0;
  SmallVector<std::pair<unsigned, int64_t>, 2> factors;
};

/// A sum of monomials in canonical form (like terms merged, zeros dropped).
/// `undef` marks an element read from a `tensor.empty`.
struct Poly {
  SmallVector<Monomial, 2> terms;
  bool undef = false;

  static Poly constant(double c);
  static Poly leaf(unsigned id, int64_t channel);
  Poly operator+(const Poly &o) const;
  Poly operator-(const Poly &o) const;
  Poly operator*(const Poly &o) const;
  Poly scaled(double c) const;
  /// The constant value, when the polynomial has no leaves.
  std::optional<double> asConstant() const;
  bool operator==(const Poly &o) const;
};

/// An element: real, or complex (`im` set).
struct Element {
  Poly re;
  std::optional<Poly> im;
};

using Elements = SmallVector<Element, 0>;

/// A value the algebra does not look through, read through a view.
struct Leaf {
  Value root;
  View view;
  SmallVector<int64_t> channelShape;
  /// 0: the value (or the real part of a complex one), 1: the imaginary part.
  unsigned component = 0;
};

/// How an operand of an op is read for a request on the op's result: its
/// view and channel shape, and for each channel of the request the operand's
/// channel (-1: not read, e.g. the part of an insert_slice destination that
/// is overwritten).
struct OperandRequest {
  Value value;
  View view;
  SmallVector<int64_t> channelShape;
  SmallVector<int64_t> channelOf;
};

class ElementAlgebra {
public:
  explicit ElementAlgebra(int64_t budget = kCandidateWorkBudget)
      : budget(budget), queryBudget(budget) {}

  /// Starts a new query (one candidate): the work budget is full again and
  /// the values evaluated so far stay known (a whole model's candidates all
  /// read the same residual stream: without this every candidate walks back
  /// through every earlier layer, issue 33). An evaluation no depth bound
  /// cut short is reused where the request would not reach the bound; one
  /// the bound cut short is reused as it is (the first query to meet the
  /// bound sets it). Within a query, everything evaluated is reused as
  /// before. Known values cost no budget.
  void beginQuery();

  /// Forgets what is known about the results of `op` (it is being erased:
  /// its values' storage may be reused by new ops).
  void forget(Operation *op);

  /// Values evaluated (not found known), over the algebra's life.
  int64_t numEvaluated() const { return evaluated; }

  /// The elements of `value` (one per channel, row-major over
  /// `channelShape`) read through `view` (one role per dim of `value`).
  /// Values the algebra cannot look through become leaves. Fails only when
  /// the work budget is exhausted or the view is inconsistent with the type.
  FailureOr<ArrayRef<Element>> evaluate(Value value, const View &view,
                                        ArrayRef<int64_t> channelShape);

  /// The requests of `op`'s inputs when its result `result` is read through
  /// `view`, or failure when the indexing maps are not ones the algebra
  /// follows (only projected permutations, constants and size-1 reductions).
  /// Entry i is for input i; inputs that are not ranked tensors get no view.
  FailureOr<SmallVector<OperandRequest>>
  linalgInputRequests(linalg::LinalgOp op, OpResult result, const View &view,
                      ArrayRef<int64_t> channelShape);

  /// The role of each loop of `op` when its result is read through `view`
  /// (reductions of one iteration are Fixed(0)).
  FailureOr<SmallVector<DimRole>> loopRoles(linalg::LinalgOp op,
                                            OpResult result, const View &view);

  /// The request of a tensor read at `map` (loop dims and constants) of
  /// loops with roles `loopRole`.
  FailureOr<OperandRequest> requestThroughMap(Value operand, AffineMap map,
                                              ArrayRef<DimRole> loopRole,
                                              ArrayRef<int64_t> channelShape);

  /// Values read as leaves, not looked through (the rotated tensor, when
  /// the data reaching a rotation is a sum of several tensors: a bias added
  /// to a projection that elementwise fusion no longer separates by a
  /// reshape).
  void setOpaque(ArrayRef<Value> values) {
    opaque.clear();
    opaque.insert(values.begin(), values.end());
  }

  const Leaf &leaf(unsigned id) const { return leaves[id]; }
  unsigned numLeaves() const { return leaves.size(); }
  /// The leaf id of `value` read through a view (interned).
  unsigned internLeaf(Value root, const View &view,
                      ArrayRef<int64_t> channelShape, unsigned component);

private:
  using Key = std::tuple<Value, View, SmallVector<int64_t>>;
  struct KeyLess {
    bool operator()(const Key &a, const Key &b) const;
  };

  Elements asLeaves(Value value, const View &view,
                    ArrayRef<int64_t> channelShape);
  std::optional<Elements> evaluateOp(Value value, const View &view,
                                     ArrayRef<int64_t> channelShape);
  std::optional<Elements> evaluateLinalg(linalg::LinalgOp op, OpResult result,
                                         const View &view,
                                         ArrayRef<int64_t> channelShape);
  std::optional<Elements> gather(const OperandRequest &request);

  int64_t budget;
  int64_t queryBudget;
  /// Producers followed from the candidate (a recursion bound: frontend
  /// modules can chain thousands of elementwise ops).
  int depth = 0;
  static constexpr int kMaxDepth = 128;
  /// An evaluation. One no depth bound cut short is the same wherever it is
  /// asked from, as long as the request's depth plus `height` (the deepest
  /// evaluation below it, relative) stays under the bound.
  struct Known {
    Elements elements;
    int height = 0;
    unsigned query = 0;
    /// Whether the depth bound cut it short (somewhere below).
    bool cut = false;
  };
  std::map<Key, Known, KeyLess> known;
  /// Evaluations of this query, cut short by the depth bound, of values
  /// known uncut but asked for too deep to be read as known.
  std::map<Key, Elements, KeyLess> cutShort;
  /// While evaluating: whether a bound cut the evaluation short, and the
  /// deepest depth an evaluation was asked at.
  bool wasCut = false;
  int deepest = 0;
  unsigned query = 0;
  int64_t evaluated = 0;
  using LeafKey = std::tuple<Value, View, SmallVector<int64_t>, unsigned>;
  struct LeafKeyLess {
    bool operator()(const LeafKey &a, const LeafKey &b) const;
  };
  std::map<LeafKey, unsigned, LeafKeyLess> leafIds;
  SmallVector<Leaf> leaves;
  llvm::DenseSet<Value> opaque;
};

/// The value closest to `y` through which every producer path from `y` to
/// any of `roots` passes (not `y` itself, not a root unless it is the only
/// one), or null: the one tensor a rotation of several data leaves reads
/// them through.
Value commonDataSource(Value y, ArrayRef<Value> roots);

/// The product of `shape`.
int64_t numChannels(ArrayRef<int64_t> shape);

/// Row-major coordinates of flat index `flat` in `shape`.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape);

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_ELEMENTALGEBRA_H
