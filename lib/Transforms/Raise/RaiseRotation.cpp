//===- RaiseRotation.cpp - Decomposed RoPE back to rope.apply -------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tensor is raised to `rope.apply` when, read channel by channel through
// the element algebra, every channel is exactly
//
//     a * (x[k] * cos(pos * theta_i) -/+ x[partner(k)] * sin(pos * theta_i))
//
// for one input x, one pair layout, one positive magnitude a and a position
// stream and frequency table that rope.apply can state (or a pass-through
// channel x[k] past the rotary dim), possibly in a fixed channel order that
// rope.apply's output is permuted to (DeepSeek's de-interleaving). Anything
// else is left alone, and with `remarks` the last op of a rotation-shaped
// computation says which check failed.
//
//===----------------------------------------------------------------------===//

#include "RaiseRotation.h"
#include "CosSinSources.h"
#include "ElementAlgebra.h"

#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::rope;
using namespace mlir::rope::raise;

namespace {

/// What a matched rotation becomes.
struct RaisePlan {
  Value input;
  /// How the rotation reads `input` (one role per dim of it), when not
  /// element for element in the candidate's own layout.
  std::optional<View> inputView;
  /// The first channel of `input`'s channel dim the rotation reads.
  int64_t channelOffset = 0;
  /// A rotation of the channels [w, w + rotaryDim) of the candidate, the
  /// others x's own (MLA's q = [q_nope, rope(q_pe)]): w, else -1. rope.apply
  /// rotates that window of x, inserted into x.
  int64_t windowOffset = -1;
  /// The candidate is [..., D/2, 2] (its channels the last two dims): the
  /// raised [..., D] is expanded back.
  bool pairedOutput = false;
  Layout layout = Layout::half;
  int64_t rotaryDim = 0;
  /// y channel -> rope.apply output channel; empty for the identity.
  SmallVector<int64_t> permutation;
  double magnitude = 1.0;
  bool inverse = false;
  // Positions: a stream leaf, or the index along one frame.
  int64_t positionsLeaf = -1;
  int64_t implicitFrame = -1;
  /// M-RoPE: the axis of each pair (empty otherwise).
  SmallVector<int64_t> mropeAxes;
  // Computed cos/sin: one theta per pair, and the element type of the
  // frontend's table when they are its entries as they are.
  SmallVector<double> thetas;
  Type tableType;
  /// Computed as positions / timescale: the timescales (1 / theta as the
  /// frontend's table holds them) and their element type, else empty.
  SmallVector<double> timescales;
  Type timescaleType;
  /// LongRoPE: the tables are chosen at run time by `length > threshold`
  /// (the switch read by analyzeLengthSwitch): `thetas` when not, else
  /// `longThetas`; `length` is the IR's integer (null: no switch).
  Value length;
  int64_t lengthAddend = 0;
  int64_t lengthThreshold = 0;
  SmallVector<double> longThetas;
  // Gathered cos/sin: the tables and the first column of each.
  Value cosTable, sinTable;
  int64_t cosColumn = 0, sinColumn = 0;
  /// Negative positions read row p + wrapRows (0: no wrapping).
  int64_t wrapRows = 0;
  /// Tables read by token index from this row on (no gather): the offset.
  std::optional<OpFoldResult> rowOffset;
  /// The parts of complex tables (0 real, 1 imaginary).
  unsigned cosComponent = 0, sinComponent = 0;
};

bool close(double a, double b) {
  return a == b ||
         std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

/// One term `coef * x[xChannel] * t[tChannel]` of a rotated channel.
struct Term {
  double coef;
  int64_t xChannel;
  unsigned trigLeaf;
  int64_t trigChannel;
};

class RotationMatcher {
public:
  /// Reads `y` with `shared` (the pass run's algebra: values evaluated for
  /// earlier candidates are known), or with an algebra of its own that reads
  /// `opaque` as leaves.
  explicit RotationMatcher(Value y, ElementAlgebra *shared = nullptr,
                           ArrayRef<Value> opaque = {})
      : y(y), algebra(shared ? *shared : own) {
    if (!shared)
      algebra.setOpaque(opaque);
    algebra.beginQuery();
  }

  /// When cos/sin were not proven because several data tensors reach the
  /// rotation, or x was read through a narrowing into a wider producer:
  /// their roots.
  SmallVector<Value> dataRoots;

  /// Whether a cos/sin leaf was found (the computation looks like RoPE).
  bool looksLikeRope = false;
  std::string why;

  FailureOr<RaisePlan> match() {
    auto type = cast<RankedTensorType>(y.getType());
    int64_t rank = type.getRank();
    int64_t d = type.getShape().back();
    View view;
    SmallVector<int64_t> channelShape = {d};
    if (rank >= 2 && d == 2 && !type.isDynamicDim(rank - 2) &&
        type.getDimSize(rank - 2) > 1) {
      // A rotation ending in view_as_real's [..., D/2, 2], which its
      // consumers keep apart (Llama 4 after linalg-fold-unit-extent-dims
      // and fusion): its channels are the last two dims, flattened.
      int64_t pairs = type.getDimSize(rank - 2);
      SmallVector<int64_t> shape(type.getShape().drop_back(2));
      shape.push_back(2 * pairs);
      type = RankedTensorType::get(shape, type.getElementType());
      plan.pairedOutput = true;
      for (int64_t i = 0; i + 2 < rank; ++i)
        view.push_back(DimRole::frame(i));
      view.append({DimRole::channel(0), DimRole::channel(1)});
      channelShape = {pairs, 2};
      rank = type.getRank();
      d = 2 * pairs;
    } else {
      for (int64_t i = 0; i + 1 < rank; ++i)
        view.push_back(DimRole::frame(i));
      view.push_back(DimRole::channel(0));
    }
    FailureOr<ArrayRef<Element>> elements =
        algebra.evaluate(y, view, channelShape);
    if (failed(elements))
      return fail("the computation is too large to follow");
    Elements merged = mergeSameReads(*elements);
    elements = ArrayRef<Element>(merged);

    // Classify the leaves: cos/sin sources, and the data leaves.
    DenseSet<unsigned> seen;
    for (const Element &e : *elements) {
      if (e.im)
        return fail("the result is complex");
      for (const Monomial &m : e.re.terms)
        for (auto [id, channel] : m.factors)
          seen.insert(id);
    }
    // Rotation-shaped: channels that are sums of two products of two
    // factors (x is the factor in every product) ...
    int64_t shaped = 0;
    DenseMap<unsigned, int64_t> occurrences;
    for (const Element &e : *elements) {
      bool twoProducts = e.re.terms.size() == 2;
      for (const Monomial &m : e.re.terms) {
        twoProducts &= m.factors.size() == 2;
        for (auto [id, channel] : m.factors)
          occurrences[id]++;
      }
      // ... one value read in both at two elements, x[k] and its partner
      // (two channels, or the two parts of a complex x; a product
      // distributed over a sum, r * (a + b), reads r at one).
      bool partnered = false;
      if (twoProducts)
        for (auto [id, channel] : e.re.terms[0].factors)
          for (auto [other, otherChannel] : e.re.terms[1].factors) {
            const Leaf &a = algebra.leaf(id), &b = algebra.leaf(other);
            partnered |=
                a.root == b.root && (channel != otherChannel || id != other);
          }
      shaped += twoProducts && partnered;
    }
    bool rotationShaped = shaped >= 2;
    SmallVector<unsigned> dataLeaves;
    std::string trigWhy;
    for (unsigned id : seen) {
      std::string leafWhy;
      FailureOr<CosSinLeaf> info = analyzeCosSinLeaf(algebra, id, leafWhy);
      if (succeeded(info)) {
        trig[id] = *info;
        continue;
      }
      dataLeaves.push_back(id);
    }
    // A cos/sin table itself is not rotation-shaped (no remark). A leaf
    // gathered from a table by an integer stream is no evidence alone: a
    // whole model's token embedding is one (its row the token id, its
    // column the channel), and every RMSNorm of the residual stream reads
    // it; computed cos/sin, or the rotation's shape, are.
    bool computedTrig = llvm::any_of(
        trig, [](const auto &entry) { return !entry.second.table; });
    looksLikeRope = !dataLeaves.empty() && (computedTrig || rotationShaped);
    if (dataLeaves.empty())
      return fail("no input tensor is rotated");
    // x: the data leaf in most products (every one in a rotation).
    unsigned xLeaf = dataLeaves.front();
    for (unsigned id : dataLeaves)
      if (occurrences[id] > occurrences[xLeaf])
        xLeaf = id;
    for (unsigned id : dataLeaves) {
      if (id == xLeaf)
        continue;
      std::string leafWhy;
      (void)analyzeCosSinLeaf(algebra, id, leafWhy);
      for (unsigned d : dataLeaves)
        dataRoots.push_back(algebra.leaf(d).root);
      return fail("cos/sin are not proven: " + leafWhy);
    }
    if (trig.empty())
      return fail("no factor is a cos or sin");
    const Leaf &x = algebra.leaf(xLeaf);
    // x may be a window [offset, offset + d) of a wider channel dim (q, k
    // and v sliced from one fused projection, GPT-NeoX): the channels of x
    // the rotation reads, relative to the window, are then x's channels.
    int64_t offset = 0;
    if (x.channelShape.size() == 1 && x.channelShape[0] > d) {
      int64_t lo = x.channelShape[0], hi = -1;
      for (const Element &e : *elements)
        for (const Monomial &m : e.re.terms)
          for (auto [id, channel] : m.factors)
            if (id == xLeaf) {
              lo = std::min(lo, channel);
              hi = std::max(hi, channel);
            }
      // A candidate continued into wider channels (concatenated with
      // pass-through channels along its channel dim) is the rotated part of
      // a partial rotation: the wider value is raised whole or not at all,
      // never its rotated channels alone.
      if (hi < 0 || hi - lo >= d || feedsWiderChannels(y))
        return fail(
            "the rotated tensor is not read whole, element for element");
      offset = std::min(lo, x.channelShape[0] - d);
    }
    if (!readsWholeChannels(x, type))
      return fail("the rotated tensor is not read whole, element for element");
    if (cast<RankedTensorType>(x.root.getType()).getElementType() !=
        type.getElementType()) {
      // The algebra read x through a narrowing (exact for it) into a wider
      // producer: a bf16 model's q/k are the truncf of an f32 projection,
      // which elementwise fusion leaves unseparated by the reshape that
      // stops the algebra in the frontend's IR. The rotated tensor is the
      // narrow one every path reaches x through (raiseRotation reads it as
      // a leaf), as the unfused IR has it.
      dataRoots.push_back(x.root);
      return fail("the input and result element types differ");
    }
    x0 = xLeaf;

    // Each channel: pass-through x[k], or two terms x[k]*cos + x[p]*sin.
    SmallVector<std::optional<std::pair<Term, Term>>> rotated(d);
    SmallVector<int64_t> passThrough(d, -1);
    for (auto [j, e] : llvm::enumerate(*elements)) {
      const Poly &p = e.re;
      if (p.undef)
        return fail("channel " + std::to_string(j) + " is never written");
      if (p.terms.size() == 1 && p.terms[0].factors.size() == 1 &&
          p.terms[0].factors[0].first == x0 && p.terms[0].coef == 1.0) {
        passThrough[j] = p.terms[0].factors[0].second - offset;
        continue;
      }
      if (p.terms.size() != 2)
        return fail("channel " + std::to_string(j) +
                    " is not x * cos +/- x' * sin");
      SmallVector<Term, 2> terms;
      for (const Monomial &m : p.terms) {
        if (m.factors.size() != 2)
          return fail("channel " + std::to_string(j) +
                      " is not x * cos +/- x' * sin");
        auto [a, b] = std::make_pair(m.factors[0], m.factors[1]);
        if (b.first == x0)
          std::swap(a, b);
        if (a.first != x0 || !trig.count(b.first))
          return fail("channel " + std::to_string(j) +
                      " is not x * cos +/- x' * sin");
        terms.push_back(Term{m.coef, a.second - offset, b.first, b.second});
      }
      // The cos term: computed cos, or (gathered) the one reading x[j].
      int cosIndex = -1;
      for (int t = 0; t < 2; ++t) {
        const CosSinLeaf &info = trig[terms[t].trigLeaf];
        if (!info.table && !info.isSin)
          cosIndex = cosIndex == -1 ? t : -2;
      }
      bool gathered =
          trig[terms[0].trigLeaf].table || trig[terms[1].trigLeaf].table;
      if (gathered) {
        cosIndex = -1;
        for (int t = 0; t < 2; ++t)
          if (terms[t].xChannel == static_cast<int64_t>(j))
            cosIndex = cosIndex == -1 ? t : -2;
      }
      if (cosIndex < 0)
        return fail("channel " + std::to_string(j) +
                    " does not multiply one cos and one sin");
      rotated[j] = std::make_pair(terms[cosIndex], terms[1 - cosIndex]);
    }

    // The rotated channels are a window [w, w + P) of the candidate, every
    // other channel x's own channel at its own index, and the window reads
    // x only inside itself (DeepSeek's MLA rotates the suffix q_pe of
    // q = [q_nope, q_pe]): rope.apply rotates a prefix of its channels, so
    // the window is rotated alone, as a tensor of P channels, and inserted
    // into x. A window at 0 is a partial rotation, checked below.
    int64_t first = -1, last = -1;
    for (int64_t j = 0; j < d; ++j)
      if (rotated[j]) {
        first = first < 0 ? j : first;
        last = j;
      }
    if (first > 0) {
      bool window = true;
      for (int64_t j = 0; j < d && window; ++j) {
        if (j < first || j > last) {
          window = passThrough[j] == j;
          continue;
        }
        window = rotated[j] && rotated[j]->first.xChannel >= first &&
                 rotated[j]->first.xChannel <= last &&
                 rotated[j]->second.xChannel >= first &&
                 rotated[j]->second.xChannel <= last;
      }
      if (window) {
        int64_t size = last - first + 1;
        SmallVector<std::optional<std::pair<Term, Term>>> inner(size);
        for (int64_t j = 0; j < size; ++j) {
          inner[j] = rotated[first + j];
          inner[j]->first.xChannel -= first;
          inner[j]->second.xChannel -= first;
        }
        rotated = std::move(inner);
        passThrough.assign(size, -1);
        plan.windowOffset = first;
        d = size;
      }
    }

    // The rotated channels are a prefix [0, P), each a rope channel.
    int64_t numRotated = 0;
    for (int64_t j = 0; j < d; ++j)
      if (rotated[j])
        ++numRotated;
    if (numRotated == 0 || numRotated % 2)
      return fail("no even number of channels is rotated");
    plan.rotaryDim = numRotated;
    int64_t p = numRotated;
    SmallVector<int64_t> ropeChannel(d, -1);
    SmallVector<bool> used(d, false);
    for (int64_t j = 0; j < d; ++j) {
      if (j < p && !rotated[j])
        return fail("the rotated channels are not the first " +
                    std::to_string(p));
      if (j >= p && passThrough[j] != j)
        return fail("channel " + std::to_string(j) +
                    " past the rotary dim is not passed through");
      int64_t k = j < p ? rotated[j]->first.xChannel : j;
      if (k < 0 || k >= d || used[k] || (j < p && k >= p))
        return fail("the rotated channels are not a permutation of x's");
      used[k] = true;
      ropeChannel[j] = k;
    }

    // The layout from the partner of rope channel 0.
    int64_t j0 = llvm::find(ropeChannel, 0) - ropeChannel.begin();
    int64_t partner0 = rotated[j0]->second.xChannel;
    if (p == 2 || partner0 == p / 2)
      plan.layout = Layout::half;
    else if (partner0 == 1)
      plan.layout = Layout::interleaved;
    else
      return fail("channel 0 is paired with channel " +
                  std::to_string(partner0) + ", neither P/2 nor 1");
    auto partnerOf = [&](int64_t k) {
      if (plan.layout == Layout::half)
        return k < p / 2 ? k + p / 2 : k - p / 2;
      return k ^ 1;
    };
    auto isFirst = [&](int64_t k) {
      return plan.layout == Layout::half ? k < p / 2 : k % 2 == 0;
    };
    auto pairOf = [&](int64_t k) {
      return plan.layout == Layout::half ? k % (p / 2) : k / 2;
    };

    // Signs and magnitude.
    std::optional<double> magnitude;
    std::optional<bool> inverse;
    for (int64_t j = 0; j < p; ++j) {
      auto [cosTerm, sinTerm] = *rotated[j];
      int64_t k = ropeChannel[j];
      if (sinTerm.xChannel != partnerOf(k))
        return fail("channel " + std::to_string(j) + " pairs x[" +
                    std::to_string(k) + "] with x[" +
                    std::to_string(sinTerm.xChannel) + "], not x[" +
                    std::to_string(partnerOf(k)) + "]");
      double a = cosTerm.coef * trig[cosTerm.trigLeaf].scale;
      double s = sinTerm.coef * trig[sinTerm.trigLeaf].scale;
      if (!(a > 0.0))
        return fail("cos is scaled by a non-positive factor");
      if (magnitude && !close(*magnitude, a))
        return fail("cos is scaled by different factors in different "
                    "channels");
      magnitude = a;
      if (!close(std::fabs(s), a))
        return fail("cos and sin are scaled differently in channel " +
                    std::to_string(j));
      // Forward rotation: first member -sin, second +sin.
      bool forward = (s < 0) == isFirst(k);
      if (inverse && *inverse == forward)
        return fail("the sign of sin is not the same rotation in every "
                    "channel");
      inverse = !forward;
    }
    plan.magnitude = *magnitude;
    plan.inverse = *inverse;

    // cos and sin of each pair come from one angle.
    if (failed(matchAngles(rotated, ropeChannel, pairOf)))
      return failure();

    plan.input = x.root;
    plan.channelOffset = offset;
    if (offset != 0 || plan.windowOffset >= 0 || x.channelShape.size() != 1 ||
        x.channelShape[0] != d || !isIdentityView(x) ||
        cast<RankedTensorType>(x.root.getType()).getRank() != rank)
      plan.inputView = x.view;
    bool identity = true;
    for (int64_t j = 0; j < d; ++j)
      identity &= ropeChannel[j] == j;
    if (!identity) {
      // Only the de-interleaving permutation is spelled (DeepSeek).
      for (int64_t j = 0; j < p; ++j) {
        int64_t expected = j < p / 2 ? 2 * j : 2 * (j - p / 2) + 1;
        if (ropeChannel[j] != expected)
          return fail("the output channels are permuted in an order other "
                      "than de-interleaving");
      }
      if (plan.layout != Layout::interleaved || p != d)
        return fail("a permuted output is only raised for a whole-head "
                    "interleaved rotation");
      plan.permutation = ropeChannel;
    }
    return plan;
  }

  ElementAlgebra &getAlgebra() { return algebra; }

private:
  FailureOr<RaisePlan> fail(const std::string &reason) {
    why = reason;
    return failure();
  }
  LogicalResult failWith(const std::string &reason) {
    why = reason;
    return failure();
  }

  /// Whether every element of the candidate's frame reads one element of
  /// the leaf, with the candidate's channel k reading the leaf's channel k
  /// along one whole dim of it: the leaf is then the rotated tensor in
  /// another layout (a whole model's q/k are a matmul result reshaped to
  /// [B, S, H, D] and transposed to [B, H, S, D]; the algebra looks through
  /// the transpose and stops at the reshape that merges heads and channels).
  /// The frame dims may be permuted, unit or fixed dims of the leaf are
  /// dropped, and only a frame dim of size 1 may be missing from the leaf.
  /// A broadcast is not raised: the rotation is then raised from the op
  /// that reads x element for element before the broadcast (GQA's repeat of
  /// the rotated keys), rotating each key once. Each frame dim is read at
  /// most once (no diagonals), and the channel dim is whole (the slices of
  /// a rotation are read as channels, so a proper slice of it is not x).
  static bool readsWholeChannels(const Leaf &leaf, RankedTensorType type) {
    int64_t d = type.getShape().back();
    // One channel dim of at least d channels (a window of a wider one is
    // sliced), or channel axes on consecutive dims, in order, of exactly d
    // channels (view_as_complex's [..., D/2, 2]).
    int64_t axes = leaf.channelShape.size();
    if (axes == 0 || (axes == 1 && leaf.channelShape[0] < d) ||
        (axes > 1 && numChannels(leaf.channelShape) != d))
      return false;
    auto rootType = dyn_cast<RankedTensorType>(leaf.root.getType());
    if (!rootType ||
        rootType.getRank() != static_cast<int64_t>(leaf.view.size()))
      return false;
    int64_t channelDims = 0, lastChannelDim = -1;
    SmallVector<bool> frameRead(type.getRank() - 1, false);
    for (auto [dim, role] : llvm::enumerate(leaf.view)) {
      int64_t size = rootType.getDimSize(dim);
      switch (role.kind) {
      case DimRole::Channel:
        if (role.index != channelDims ||
            size != leaf.channelShape[role.index] ||
            (channelDims > 0 &&
             lastChannelDim + 1 != static_cast<int64_t>(dim)))
          return false;
        lastChannelDim = dim;
        ++channelDims;
        break;
      case DimRole::Frame:
        if (role.index < 0 || role.index >= type.getRank() - 1 ||
            frameRead[role.index] || size != type.getDimSize(role.index))
          return false;
        frameRead[role.index] = true;
        break;
      case DimRole::Unit:
        if (size != 1)
          return false;
        break;
      case DimRole::Fixed:
        if (ShapedType::isDynamic(size) || role.index < 0 || role.index >= size)
          return false;
        break;
      case DimRole::FrameSet: {
        // Frame dims flattened into this one, row-major (the query heads of
        // a GQA group split from the KV head after
        // linalg-fold-unit-extent-dims): each read once, all static, and
        // together exactly this dim.
        int64_t product = 1;
        for (int64_t f = 0; f < 63; ++f) {
          if (!(role.index & (int64_t(1) << f)))
            continue;
          if (f >= type.getRank() - 1 || frameRead[f] || type.isDynamicDim(f))
            return false;
          frameRead[f] = true;
          product *= type.getDimSize(f);
        }
        if (ShapedType::isDynamic(size) || product != size)
          return false;
        break;
      }
      }
    }
    if (channelDims != axes)
      return false;
    for (auto [i, read] : llvm::enumerate(frameRead))
      if (!read && type.getDimSize(i) != 1)
        return false;
    return true;
  }

  /// `elements` with leaves that read the same elements of one value made
  /// one leaf (the lowest id). Views differ on a dim of size 1 that one path
  /// reads as a frame dim and another as a unit dim (Cohere's keys: the
  /// transpose passes batch as d0, the interleaved partner path reaches it
  /// through a reshape as a unit dim); both read index 0 there, so they are
  /// one tensor read one way, and the rotation must see one x, not a second
  /// unexplained factor. Likewise a channel axis of size 1 (a rank-1
  /// rotation's x collapsed whole, `[1, 1, 1, D]` into `[D]`, is read as four
  /// channel axes on one path and as unit dims and one channel axis through
  /// the partner's slices): dropping it leaves every row-major channel index
  /// as it is.
  Elements mergeSameReads(ArrayRef<Element> elements) {
    auto normalized = [&](const Leaf &leaf) {
      View v = leaf.view;
      SmallVector<int64_t> axisOf(leaf.channelShape.size(), -1);
      for (auto [axis, size] : llvm::enumerate(leaf.channelShape))
        if (size != 1)
          axisOf[axis] = llvm::count_if(
              ArrayRef<int64_t>(leaf.channelShape).take_front(axis),
              [](int64_t s) { return s != 1; });
      auto rootType = dyn_cast<RankedTensorType>(leaf.root.getType());
      for (auto [i, role] : llvm::enumerate(v)) {
        if (rootType && role.kind == DimRole::Frame &&
            static_cast<int64_t>(i) < rootType.getRank() &&
            rootType.getDimSize(i) == 1)
          role = DimRole::unit();
        if (role.kind == DimRole::Channel &&
            static_cast<size_t>(role.index) < axisOf.size())
          role = axisOf[role.index] < 0 ? DimRole::unit()
                                        : DimRole::channel(axisOf[role.index]);
      }
      return v;
    };
    auto channelsOf = [](const Leaf &leaf) {
      SmallVector<int64_t> shape;
      for (int64_t size : leaf.channelShape)
        if (size != 1)
          shape.push_back(size);
      return shape;
    };
    std::set<unsigned> ids;
    auto collect = [&](const Poly &p) {
      for (const Monomial &m : p.terms)
        for (auto [id, channel] : m.factors)
          ids.insert(id);
    };
    for (const Element &e : elements) {
      collect(e.re);
      if (e.im)
        collect(*e.im);
    }
    DenseMap<unsigned, unsigned> rep;
    SmallVector<unsigned> reps;
    bool changed = false;
    // The representative of equal reads is the one with the fewest channel
    // axes (the unit ones dropped already, where a path has that view).
    SmallVector<unsigned> order(ids.begin(), ids.end());
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return algebra.leaf(a).channelShape.size() <
             algebra.leaf(b).channelShape.size();
    });
    for (unsigned id : order) {
      const Leaf &leaf = algebra.leaf(id);
      View v = normalized(leaf);
      rep[id] = id;
      for (unsigned r : reps) {
        const Leaf &other = algebra.leaf(r);
        if (other.root == leaf.root && other.component == leaf.component &&
            channelsOf(other) == channelsOf(leaf) && normalized(other) == v) {
          rep[id] = r;
          changed = true;
          break;
        }
      }
      if (rep[id] == id)
        reps.push_back(id);
    }
    // Lanes: leaves that read one value at every index of its last dim
    // (view_as_complex's [..., D/2, 2] read by a gathering generic as
    // [..., i, 0] and [..., i, 1]) are one leaf whose channels are the
    // row-major pairs (i, lane): the last dim becomes the innermost channel
    // axis, after the channel axis on the dim before it.
    DenseMap<unsigned, std::pair<unsigned, int64_t>> lane;
    for (unsigned id : reps) {
      Leaf leaf = algebra.leaf(id); // a copy: interning may reallocate
      auto rootType = dyn_cast<RankedTensorType>(leaf.root.getType());
      int64_t rank = leaf.view.size();
      if (!rootType || rank < 2 || !rootType.hasStaticShape() ||
          leaf.view.back().kind != DimRole::Fixed ||
          leaf.channelShape.empty() ||
          !(leaf.view[rank - 2] ==
            DimRole::channel(leaf.channelShape.size() - 1)))
        continue;
      int64_t lanes = rootType.getShape().back();
      View merged = leaf.view;
      merged.back() = DimRole::channel(leaf.channelShape.size());
      SmallVector<int64_t> shape(leaf.channelShape);
      shape.push_back(lanes);
      bool other = false;
      for (unsigned o : reps) {
        const Leaf &b = algebra.leaf(o);
        other |= o != id && b.root == leaf.root &&
                 b.component == leaf.component &&
                 b.channelShape == leaf.channelShape &&
                 b.view.size() == leaf.view.size() &&
                 llvm::equal(ArrayRef<DimRole>(b.view).drop_back(),
                             ArrayRef<DimRole>(leaf.view).drop_back()) &&
                 b.view.back().kind == DimRole::Fixed;
      }
      if (!other)
        continue;
      unsigned mergedId =
          algebra.internLeaf(leaf.root, merged, shape, leaf.component);
      lane[id] = {mergedId, leaf.view.back().index};
      changed = true;
    }
    Elements result(elements.begin(), elements.end());
    if (!changed)
      return result;
    auto rebuild = [&](const Poly &p) {
      Poly sum;
      for (const Monomial &m : p.terms) {
        Poly term = Poly::constant(m.coef);
        for (auto [id, channel] : m.factors) {
          unsigned r = rep[id];
          auto it = lane.find(r);
          if (it != lane.end()) {
            int64_t lanes =
                cast<RankedTensorType>(algebra.leaf(r).root.getType())
                    .getShape()
                    .back();
            term = term * Poly::leaf(it->second.first,
                                     channel * lanes + it->second.second);
            continue;
          }
          term = term * Poly::leaf(r, channel);
        }
        sum = sum + term;
      }
      sum.undef = p.undef;
      return sum;
    };
    for (Element &e : result) {
      e.re = rebuild(e.re);
      if (e.im)
        e.im = rebuild(*e.im);
    }
    return result;
  }

  /// Whether a user of `value` puts its channels next to others: a concat
  /// along the last dim, or an insert into a tensor with more channels.
  static bool feedsWiderChannels(Value value) {
    int64_t last = cast<RankedTensorType>(value.getType()).getRank() - 1;
    for (Operation *user : value.getUsers()) {
      if (auto concat = dyn_cast<tensor::ConcatOp>(user))
        if (static_cast<int64_t>(concat.getDim()) == last)
          return true;
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user)) {
        auto dest = insert.getDestType();
        if (dest.getRank() < 1 ||
            dest.getDimSize(dest.getRank() - 1) !=
                cast<RankedTensorType>(value.getType()).getShape().back())
          return true;
      }
    }
    return false;
  }

  static bool isIdentityView(const Leaf &leaf) {
    int64_t rank = leaf.view.size();
    for (int64_t i = 0; i + 1 < rank; ++i)
      if (!(leaf.view[i] == DimRole::frame(i)))
        return false;
    return rank >= 1 && leaf.view.back() == DimRole::channel(0) &&
           leaf.channelShape.size() == 1;
  }

  template <typename PairOf>
  LogicalResult
  matchAngles(ArrayRef<std::optional<std::pair<Term, Term>>> rotated,
              ArrayRef<int64_t> ropeChannel, PairOf pairOf) {
    int64_t p = plan.rotaryDim;
    bool gathered = false;
    for (int64_t j = 0; j < p; ++j)
      gathered |= static_cast<bool>(trig[rotated[j]->first.trigLeaf].table);
    struct PairAngle {
      std::optional<AngleOfChannel> cos, sin;
    };
    SmallVector<PairAngle> pairs(p / 2);
    for (int64_t j = 0; j < p; ++j) {
      auto [cosTerm, sinTerm] = *rotated[j];
      const CosSinLeaf &c = trig[cosTerm.trigLeaf];
      const CosSinLeaf &s = trig[sinTerm.trigLeaf];
      if (static_cast<bool>(c.table) != gathered ||
          static_cast<bool>(s.table) != gathered)
        return failWith("cos/sin are computed for some channels and gathered "
                        "for others");
      if (!gathered && (c.isSin || !s.isSin))
        return failWith("the term of x[k] is not its cos");
      if (gathered) {
        if (plan.cosTable &&
            (plan.cosTable != c.table || plan.sinTable != s.table))
          return failWith("cos/sin are gathered from several tables");
        if (plan.cosTable &&
            (c.wrapRows != plan.wrapRows || s.wrapRows != plan.wrapRows))
          return failWith("cos/sin gathers treat negative positions "
                          "differently");
        if (plan.cosTable &&
            (c.component != plan.cosComponent ||
             s.component != plan.sinComponent ||
             c.rowOffset != plan.rowOffset || s.rowOffset != plan.rowOffset))
          return failWith("cos/sin are read from several tables");
        if (c.rowOffset != s.rowOffset)
          return failWith("cos and sin are read from different rows");
        if (c.table == s.table && c.component == s.component && c.rowOffset &&
            isa<ComplexType>(getElementTypeOrSelf(c.table)))
          return failWith("cos and sin are the same part of a complex table");
        plan.cosTable = c.table;
        plan.sinTable = s.table;
        plan.wrapRows = c.wrapRows;
        plan.rowOffset = c.rowOffset;
        plan.cosComponent = c.component;
        plan.sinComponent = s.component;
        if (s.wrapRows != c.wrapRows)
          return failWith("cos/sin gathers treat negative positions "
                          "differently");
      }
      int64_t pair = pairOf(ropeChannel[j]);
      AngleOfChannel ca = c.channels[cosTerm.trigChannel];
      AngleOfChannel sa = s.channels[sinTerm.trigChannel];
      for (AngleOfChannel *angle : {&ca, &sa}) {
        PairAngle &slot = pairs[pair];
        std::optional<AngleOfChannel> &seen =
            angle == &ca ? slot.cos : slot.sin;
        if (!seen) {
          seen = *angle;
          continue;
        }
        if (seen->positions != angle->positions ||
            seen->implicitFrame != angle->implicitFrame)
          return failWith("the two channels of pair " + std::to_string(pair) +
                          " take different positions");
        if (!gathered && (seen->theta != angle->theta ||
                          seen->frequencySwitch != angle->frequencySwitch ||
                          seen->thetaIfTrue != angle->thetaIfTrue))
          return failWith("the two channels of pair " + std::to_string(pair) +
                          " rotate by different frequencies");
        if (gathered && seen->column != angle->column &&
            !sameColumns(angle == &ca ? plan.cosTable : plan.sinTable,
                         seen->column, angle->column))
          return failWith("the two channels of pair " + std::to_string(pair) +
                          " read different table columns that are not proven "
                          "equal");
      }
      if (ca.positions != sa.positions || ca.implicitFrame != sa.implicitFrame)
        return failWith("cos and sin of pair " + std::to_string(pair) +
                        " take different positions");
      if (!gathered &&
          (ca.theta != sa.theta || ca.frequencySwitch != sa.frequencySwitch ||
           ca.thetaIfTrue != sa.thetaIfTrue))
        return failWith("cos and sin of pair " + std::to_string(pair) +
                        " have different frequencies");
    }

    // One position stream, or M-RoPE's three.
    SmallVector<int64_t> streams;
    for (const PairAngle &pair : pairs)
      streams.push_back(pair.cos->positions);
    bool oneStream = llvm::all_of(pairs, [&](const PairAngle &pa) {
      return pa.cos->positions == pairs[0].cos->positions &&
             pa.cos->implicitFrame == pairs[0].cos->implicitFrame;
    });
    if (oneStream) {
      plan.positionsLeaf = pairs[0].cos->positions;
      plan.implicitFrame = pairs[0].cos->implicitFrame;
    } else if (failed(matchMRope(streams))) {
      return failure();
    }

    if (gathered) {
      // Columns are contiguous from the first pair's.
      plan.cosColumn = pairs[0].cos->column;
      plan.sinColumn = pairs[0].sin->column;
      for (auto [i, pair] : llvm::enumerate(pairs)) {
        int64_t ci = static_cast<int64_t>(i);
        if (!(pair.cos->column == plan.cosColumn + ci ||
              sameColumns(plan.cosTable, pair.cos->column,
                          plan.cosColumn + ci)) ||
            !(pair.sin->column == plan.sinColumn + ci ||
              sameColumns(plan.sinTable, pair.sin->column,
                          plan.sinColumn + ci)))
          return failWith("the table columns of the pairs are not contiguous");
      }
      auto tableType = cast<RankedTensorType>(plan.cosTable.getType());
      Type tableElement = tableType.getElementType();
      if (auto complex = dyn_cast<ComplexType>(tableElement))
        tableElement = complex.getElementType();
      if (!isa<FloatType>(tableElement) ||
          plan.cosTable.getType() != plan.sinTable.getType())
        return failWith("the cos and sin tables differ in type");
      int64_t width = tableType.getDimSize(1);
      if (ShapedType::isDynamic(width) || plan.cosColumn < 0 ||
          plan.sinColumn < 0 || plan.cosColumn + p / 2 > width ||
          plan.sinColumn + p / 2 > width)
        return failWith("the table columns are out of the table");
      if (!plan.mropeAxes.empty())
        return failWith("M-RoPE with gathered cos/sin is not raised");
      return success();
    }
    plan.tableType = pairs[0].cos->tableType;
    plan.timescaleType = pairs[0].cos->timescaleType;
    for (const PairAngle &pair : pairs) {
      plan.timescales.push_back(pair.cos->timescale);
      if (!pair.cos->timescale || pair.cos->timescaleType != plan.timescaleType)
        plan.timescaleType = Type();
    }
    if (!plan.timescaleType)
      plan.timescales.clear();
    Value frequencySwitch = pairs[0].cos->frequencySwitch;
    SmallVector<double> ifTrue;
    for (const PairAngle &pair : pairs) {
      if (!(pair.cos->theta >= 0.0) || !std::isfinite(pair.cos->theta))
        return failWith("a frequency is negative or not finite");
      plan.thetas.push_back(pair.cos->theta);
      if (pair.cos->tableType != pairs[0].cos->tableType)
        plan.tableType = Type();
      if (pair.cos->frequencySwitch != frequencySwitch)
        return failWith("the pairs' frequencies are chosen by different "
                        "switches");
      if (frequencySwitch &&
          (!(pair.cos->thetaIfTrue > 0.0) ||
           !std::isfinite(pair.cos->thetaIfTrue) || !(pair.cos->theta > 0.0)))
        return failWith("a frequency chosen at run time is not positive and "
                        "finite");
      ifTrue.push_back(pair.cos->thetaIfTrue);
    }
    if (frequencySwitch) {
      // LongRoPE: short and long tables switched on the length (SEMANTICS.md
      // section 4), as rope.apply's length(%l) > L states it.
      std::string switchWhy;
      FailureOr<LengthSwitch> lengthSwitch =
          analyzeLengthSwitch(frequencySwitch, switchWhy);
      if (failed(lengthSwitch))
        return failWith(switchWhy);
      plan.length = lengthSwitch->length;
      plan.lengthAddend = lengthSwitch->addend;
      plan.lengthThreshold = lengthSwitch->threshold;
      plan.longThetas = ifTrue;
      if (!lengthSwitch->longWhenTrue)
        std::swap(plan.thetas, plan.longThetas);
    }
    return success();
  }

  /// Two columns of a constant table hold the same values.
  bool sameColumns(Value table, int64_t a, int64_t b) {
    auto type = cast<RankedTensorType>(table.getType());
    if (!type.hasStaticShape() || type.getRank() != 2 ||
        type.getNumElements() > (1 << 22))
      return false;
    for (int64_t r = 0; r < type.getDimSize(0); ++r) {
      std::optional<double> va = constantElement(table, {r, a});
      std::optional<double> vb = constantElement(table, {r, b});
      if (!va || !vb || *va != *vb)
        return false;
    }
    return true;
  }

  /// M-RoPE: the pairs' streams are one integer tensor read at three
  /// indices of its leading dim.
  LogicalResult matchMRope(ArrayRef<int64_t> streams) {
    for (int64_t s : streams) {
      if (s < 0)
        return failWith("pairs take their positions from different streams");
      const Leaf &leaf = algebra.leaf(s);
      const Leaf &first = algebra.leaf(streams[0]);
      if (leaf.root != first.root || leaf.view.size() != first.view.size())
        return failWith("pairs take their positions from different tensors");
      for (size_t d = 1; d < leaf.view.size(); ++d)
        if (!(leaf.view[d] == first.view[d]))
          return failWith("pairs take their positions from different streams");
      auto type = cast<RankedTensorType>(leaf.root.getType());
      DimRole axis = leaf.view[0];
      if (type.getDimSize(0) != 3 || axis.kind != DimRole::Fixed)
        return failWith(
            "pairs take their positions from different streams, not "
            "the three axes of an M-RoPE position tensor");
      plan.mropeAxes.push_back(axis.index);
    }
    // Fixed(0) on a dim of size 3 stays Fixed (fixedRole makes Unit only of
    // size-1 dims), so axis 0 is a stream like the others.
    plan.positionsLeaf = streams[0];
    return success();
  }

  Value y;
  ElementAlgebra own;
  ElementAlgebra &algebra;
  DenseMap<unsigned, CosSinLeaf> trig;
  unsigned x0 = 0;
  RaisePlan plan;
};

/// Ops whose result a rotation may end in.
bool isCandidate(Operation *op) {
  if (op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() < 1 || !isa<FloatType>(type.getElementType()) ||
      type.isDynamicDim(type.getRank() - 1) || type.getShape().back() < 2 ||
      type.getShape().back() % 2)
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics() && linalgOp.isAllParallelLoops();
  return isa<tensor::ConcatOp, tensor::InsertSliceOp, tensor::CollapseShapeOp>(
      op);
}

/// A candidate whose users do not go on computing channels from it (so a
/// remark names the whole rotation, not each of its steps).
bool isLastStep(Operation *op) {
  for (Operation *user : op->getUsers()) {
    if (isa<tensor::ConcatOp, tensor::InsertSliceOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp>(user))
      return false;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgOp || !linalgOp.isAllParallelLoops())
      continue;
    bool computes = llvm::any_of(
        linalgOp.getBlock()->without_terminator(), [](Operation &inner) {
          return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::NegFOp,
                     complex::MulOp>(inner);
        });
    if (computes)
      return false;
  }
  return true;
}

/// The frequency attribute saying `thetas` (SEMANTICS.md §7): `#rope.default`
/// only when every entry is base^(-2i/P) rounded to the table's element type
/// `tableType` (the exact values of the frontend's table), else `#rope.table`
/// with the entries widened exactly. A table computed in f32 by
/// `1 / base ** (arange / dim)` usually differs from the rounded powers in a
/// few entries, and is then kept as it is.
Attribute frequencyAttr(MLIRContext *ctx, ArrayRef<double> thetas,
                        int64_t rotaryDim, Type tableType,
                        ArrayRef<double> timescales = {},
                        Type timescaleType = {}) {
  int64_t pairs = thetas.size();
  double dim = static_cast<double>(rotaryDim);
  // The base a model states, near `estimate`: an integer or a few
  // significant digits, the first for which every entry is `entry(base, i)`.
  auto statedBase =
      [&](double estimate, ArrayRef<double> entries, Type type,
          llvm::function_ref<double(double, int64_t)> entry) -> Attribute {
    SmallVector<double> candidates{std::round(estimate)};
    for (int digits = 1; digits <= 6; ++digits) {
      double scale = std::pow(
          10.0, digits - 1 - std::floor(std::log10(std::fabs(estimate))));
      candidates.push_back(std::round(estimate * scale) / scale);
    }
    for (double base : candidates) {
      bool matches = base > 1.0;
      for (int64_t i = 0; i < pairs && matches; ++i)
        matches = entries[i] == roundTo(type, entry(base, i));
      if (matches)
        return DefaultFrequenciesAttr::get(ctx, llvm::APFloat(base));
    }
    return {};
  };
  // theta = 1 / timescale (MaxText): #rope.default when every timescale is
  // base^(2i/P) rounded to its element type.
  if (timescaleType && static_cast<int64_t>(timescales.size()) == pairs &&
      pairs >= 2 && timescales[1] > 0.0)
    if (Attribute found =
            statedBase(std::pow(timescales[1], dim / 2), timescales,
                       timescaleType, [&](double base, int64_t i) {
                         return std::pow(base, 2.0 * i / dim);
                       }))
      return found;
  if (tableType && pairs >= 2 && thetas[0] > 0.0 && thetas[1] > 0.0)
    if (Attribute found = statedBase(std::pow(thetas[1], -dim / 2), thetas,
                                     tableType, [&](double base, int64_t i) {
                                       return std::pow(base, -2.0 * i / dim);
                                     }))
      return found;
  return TableFrequenciesAttr::get(ctx, DenseF64ArrayAttr::get(ctx, thetas));
}

/// `#rope.longrope` stating two frontend tables (SEMANTICS.md §7, as
/// frequencyAttr states one): for theta_i the unscaled frequencies of the
/// attribute's default base (the tables do not say their base: the factors
/// are relative to it), each factor ext_i is the one with the fewest
/// significant digits for which theta_i / ext_i rounded to the tables'
/// element type `tableType` is the entry (a model's factors, 1.0714, when
/// the base is its own), or, without a table type, that equals the entry.
/// Switched at `length > threshold`, with the frontend's magnitude as its
/// attention_factor. Null when some entry is no such quotient.
Attribute longRopeAttr(MLIRContext *ctx, ArrayRef<double> shortThetas,
                       ArrayRef<double> longThetas, int64_t rotaryDim,
                       Type tableType, int64_t threshold, double magnitude) {
  llvm::APFloat base(10000.0);
  SmallVector<double> unscaled =
      DefaultFrequenciesAttr::get(ctx, base).getInverseFrequencies(rotaryDim);
  auto rounded = [&](double v) { return roundTo(tableType, v); };
  auto factors =
      [&](ArrayRef<double> thetas) -> std::optional<SmallVector<double>> {
    if (thetas.size() != unscaled.size())
      return std::nullopt;
    SmallVector<double> ext;
    for (auto [theta, target] : llvm::zip_equal(unscaled, thetas)) {
      if (!(target > 0.0) || !std::isfinite(target))
        return std::nullopt;
      double estimate = theta / target;
      if (!(estimate > 0.0) || !std::isfinite(estimate))
        return std::nullopt;
      std::optional<double> found;
      for (int digits = 1; digits <= 17 && !found; ++digits) {
        double scale = std::pow(
            10.0, digits - 1 - std::floor(std::log10(std::fabs(estimate))));
        double e = std::round(estimate * scale) / scale;
        if (e > 0.0 && std::isfinite(e) && rounded(theta / e) == target)
          found = e;
      }
      // The quotient rounds: step by ulps until theta / e is the entry.
      double e = estimate;
      for (int step = 0; !found && step < 8; ++step) {
        if (rounded(theta / e) == target)
          found = e;
        e = std::nextafter(e, theta / e > target ? HUGE_VAL : 0.0);
      }
      if (!found)
        return std::nullopt;
      ext.push_back(*found);
    }
    return ext;
  };
  std::optional<SmallVector<double>> shortFactor = factors(shortThetas);
  std::optional<SmallVector<double>> longFactor = factors(longThetas);
  if (!shortFactor || !longFactor)
    return {};
  return LongRopeFrequenciesAttr::get(
      ctx, base, DenseF64ArrayAttr::get(ctx, *shortFactor),
      DenseF64ArrayAttr::get(ctx, *longFactor), threshold, std::nullopt,
      llvm::APFloat(magnitude));
}

/// `value` with its unit dims (`drop`) collapsed away.
Value dropUnitDims(OpBuilder &b, Location loc, Value value,
                   ArrayRef<bool> drop) {
  if (llvm::none_of(drop, [](bool d) { return d; }))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    pending.push_back(d);
    if (!drop[d]) {
      groups.push_back(pending);
      pending.clear();
      shape.push_back(type.getDimSize(d));
    }
  }
  if (groups.empty())
    return {};
  groups.back().append(pending.begin(), pending.end());
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
}

/// Builds rope.apply (and the output permutation) for a plan.
/// `p < 0 ? p + rows : p` elementwise: the row a frontend's gather reads
/// for a negative index (Python's rule), made explicit so that rope.apply
/// reads the same row.
Value wrapNegative(OpBuilder &b, Location loc, Value positions, int64_t rows) {
  auto type = cast<RankedTensorType>(positions.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, positions);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{positions}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Type t = args[0].getType();
               Value zero = arith::ConstantOp::create(nb, nloc, t,
                                                      nb.getIntegerAttr(t, 0));
               Value m = arith::ConstantOp::create(nb, nloc, t,
                                                   nb.getIntegerAttr(t, rows));
               Value negative = arith::CmpIOp::create(
                   nb, nloc, arith::CmpIPredicate::slt, args[0], zero);
               Value wrapped = arith::AddIOp::create(nb, nloc, args[0], m);
               Value row = arith::SelectOp::create(nb, nloc, negative, wrapped,
                                                   args[0]);
               linalg::YieldOp::create(nb, nloc, row);
             })
      .getResult(0);
}

/// The tensor of type `type` that a rotation reads from `input` through
/// `view` (checked by readsWholeChannels): a copy of `input` into the
/// candidate's layout. rope.apply rotates the value the rotation reads, so
/// its token dims and positions stay those of the candidate; the copy is a
/// transpose (or reshape) that later passes fold into the producer, and is
/// stated here as a generic because one map says any mix of permuted
/// frame dims, dropped unit or fixed dims and added size-1 frame dims.
Value materializeInput(OpBuilder &b, Location loc, Value input,
                       const View &readView, int64_t channelOffset,
                       RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  View view = readView;
  // Channel axes on consecutive dims (checked by readsWholeChannels) are
  // collapsed into one channel dim first.
  int64_t firstChannel = -1, channelDims = 0;
  for (auto [dim, role] : llvm::enumerate(view))
    if (role.kind == DimRole::Channel) {
      if (firstChannel < 0)
        firstChannel = dim;
      ++channelDims;
    }
  if (channelDims > 1) {
    SmallVector<ReassociationIndices> groups;
    View collapsed;
    for (auto [dim, role] : llvm::enumerate(view)) {
      int64_t i = dim;
      if (i > firstChannel && i < firstChannel + channelDims) {
        groups.back().push_back(i);
        continue;
      }
      groups.push_back({i});
      collapsed.push_back(i == firstChannel ? DimRole::channel(0) : role);
    }
    input = tensor::CollapseShapeOp::create(b, loc, input, groups);
    view = collapsed;
  }
  // Frames flattened into one dim (checked static by readsWholeChannels)
  // are split back into one dim each.
  if (llvm::any_of(
          view, [](DimRole role) { return role.kind == DimRole::FrameSet; })) {
    auto flatType = cast<RankedTensorType>(input.getType());
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    View expanded;
    for (auto [dim, role] : llvm::enumerate(view)) {
      ReassociationIndices group;
      if (role.kind != DimRole::FrameSet) {
        group.push_back(shape.size());
        shape.push_back(flatType.getDimSize(dim));
        expanded.push_back(role);
      } else {
        for (int64_t f = 0; f < 63; ++f)
          if (role.index & (int64_t(1) << f)) {
            group.push_back(shape.size());
            shape.push_back(type.getDimSize(f));
            expanded.push_back(DimRole::frame(f));
          }
      }
      groups.push_back(group);
    }
    input = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, flatType.getElementType()), input,
        groups);
    view = expanded;
  }
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t d = type.getShape().back();
  for (auto [dim, role] : llvm::enumerate(view)) {
    if (role.kind != DimRole::Channel || inputType.getDimSize(dim) == d)
      continue;
    // The window of a wider channel dim: sliced first, so that the copy
    // reads through a projected permutation like any linalg op.
    SmallVector<OpFoldResult> offsets(inputType.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
    SmallVector<OpFoldResult> strides(inputType.getRank(), b.getIndexAttr(1));
    offsets[dim] = b.getIndexAttr(channelOffset);
    sizes[dim] = b.getIndexAttr(d);
    input =
        tensor::ExtractSliceOp::create(b, loc, input, offsets, sizes, strides);
  }
  SmallVector<AffineExpr> exprs;
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i)
    sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
  for (auto [dim, role] : llvm::enumerate(view)) {
    switch (role.kind) {
    case DimRole::Frame:
      exprs.push_back(getAffineDimExpr(role.index, ctx));
      if (type.isDynamicDim(role.index))
        sizes[role.index] = tensor::getMixedSize(b, loc, input, dim);
      break;
    case DimRole::Channel:
      exprs.push_back(getAffineDimExpr(rank - 1, ctx));
      break;
    case DimRole::Fixed:
      exprs.push_back(getAffineConstantExpr(role.index, ctx));
      break;
    default:
      exprs.push_back(getAffineConstantExpr(0, ctx));
      break;
    }
  }
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  AffineMap readMap = AffineMap::get(rank, 0, exprs, ctx);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input},
             ValueRange{init},
             ArrayRef<AffineMap>{readMap, b.getMultiDimIdentityMap(rank)},
             iterators,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, args[0]);
             })
      .getResult(0);
}

class RaisedBuilder {
public:
  std::string buildWhy;

  FailureOr<Value> build(RewriterBase &rewriter, Location loc,
                         const RaisePlan &plan, ElementAlgebra &algebra,
                         Value y) {
    MLIRContext *ctx = rewriter.getContext();
    auto fullType = cast<RankedTensorType>(y.getType());
    auto pairedType = fullType;
    if (plan.pairedOutput) {
      SmallVector<int64_t> shape(fullType.getShape().drop_back(2));
      shape.push_back(2 * fullType.getShape()[fullType.getRank() - 2]);
      fullType = RankedTensorType::get(shape, fullType.getElementType());
    }
    // A window rotation: rope.apply rotates the window's channels alone.
    RankedTensorType type = fullType;
    if (plan.windowOffset >= 0) {
      SmallVector<int64_t> shape(fullType.getShape());
      shape.back() = plan.rotaryDim;
      type = RankedTensorType::get(shape, fullType.getElementType());
    }
    int64_t rank = type.getRank();
    Value positions, offset, cosCache, sinCache;
    SmallVector<int64_t> tokenDims;
    bool addTokenDim = false;
    if (plan.positionsLeaf >= 0) {
      const Leaf &stream = algebra.leaf(plan.positionsLeaf);
      SmallVector<bool> drop;
      for (auto [d, role] : llvm::enumerate(stream.view)) {
        bool mropeAxis = !plan.mropeAxes.empty() && d == 0;
        if (role.kind == DimRole::Frame) {
          if (!tokenDims.empty() && role.index <= tokenDims.back()) {
            buildWhy = "the positions' dims are not in the input's order";
            return failure();
          }
          tokenDims.push_back(role.index);
          drop.push_back(false);
        } else if (mropeAxis) {
          drop.push_back(false);
        } else if (role.kind == DimRole::Unit) {
          drop.push_back(true);
        } else {
          buildWhy = "the positions are a slice of a larger tensor";
          return failure();
        }
      }
      auto streamType = cast<RankedTensorType>(stream.root.getType());
      // M-RoPE's stream axis (dim 0) is kept; every other dim of one token.
      bool mrope = !plan.mropeAxes.empty();
      int64_t kept = mrope ? 1 : 0;
      bool oneToken = tokenDims.empty() && streamType.hasStaticShape() &&
                      streamType.getRank() >= kept + 1;
      for (int64_t i = kept; oneToken && i < streamType.getRank(); ++i)
        oneToken = streamType.getDimSize(i) == 1;
      if (oneToken) {
        // One position for every element (one token, read through
        // broadcasting maps): any frame dim of size 1 is a token dim that
        // reads it. The innermost one is the sequence dim in every layout
        // frontends use ([B, H, S, D], [B, S, H, D], [B*H, S, D]), so the
        // raised op states the same token dims as at S > 1.
        for (int64_t i = rank - 2; i >= 0 && tokenDims.empty(); --i)
          if (type.getDimSize(i) == 1)
            tokenDims.push_back(i);
        if (tokenDims.empty()) {
          // No size-1 dim (linalg-fold-unit-extent-dims dropped the token
          // dim of a decode step): the op reads the input with one inserted
          // before the channels, and its result is collapsed back.
          addTokenDim = true;
          tokenDims.push_back(rank - 1);
        }
        if (!tokenDims.empty()) {
          SmallVector<ReassociationIndices> groups;
          SmallVector<int64_t> shape;
          if (mrope) {
            groups.push_back({0});
            shape.push_back(streamType.getDimSize(0));
          }
          groups.emplace_back();
          for (int64_t i = kept; i < streamType.getRank(); ++i)
            groups.back().push_back(i);
          shape.push_back(1);
          positions = streamType.getRank() == kept + 1
                          ? stream.root
                          : tensor::CollapseShapeOp::create(
                                rewriter, loc,
                                RankedTensorType::get(
                                    shape, streamType.getElementType()),
                                stream.root, groups)
                                .getResult();
        }
      }
      if (tokenDims.empty()) {
        buildWhy = "the positions do not vary over any token dim";
        return failure();
      }
      if (!positions)
        positions = dropUnitDims(rewriter, loc, stream.root, drop);
      if (!positions) {
        buildWhy = "the positions have no token dims";
        return failure();
      }
      if (plan.wrapRows)
        positions = wrapNegative(rewriter, loc, positions, plan.wrapRows);
    } else {
      tokenDims.push_back(plan.implicitFrame);
    }
    if (plan.cosTable) {
      // Gathered: the columns [c, c + P/2) of each table.
      auto tableType = cast<RankedTensorType>(plan.cosTable.getType());
      int64_t half = plan.rotaryDim / 2;
      auto slice = [&](Value table, int64_t column,
                       unsigned component) -> Value {
        if (auto complex = dyn_cast<ComplexType>(tableType.getElementType())) {
          // One part of a complex constant as a real constant table.
          auto partType = cast<FloatType>(complex.getElementType());
          int64_t rows = tableType.getDimSize(0);
          SmallVector<llvm::APFloat> values;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = column; c < column + half; ++c) {
              std::optional<double> v = constantPart(table, {r, c}, component);
              llvm::APFloat f(v.value_or(0.0));
              bool lost = false;
              f.convert(partType.getFloatSemantics(),
                        llvm::APFloat::rmNearestTiesToEven, &lost);
              values.push_back(f);
            }
          auto type = RankedTensorType::get({rows, half}, partType);
          return arith::ConstantOp::create(
              rewriter, loc, type, DenseElementsAttr::get(type, values));
        }
        if (column == 0 && tableType.getDimSize(1) == half)
          return table;
        SmallVector<OpFoldResult> offsets{rewriter.getIndexAttr(0),
                                          rewriter.getIndexAttr(column)};
        SmallVector<OpFoldResult> sizes{
            tensor::getMixedSize(rewriter, loc, table, 0),
            rewriter.getIndexAttr(half)};
        SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));
        return tensor::ExtractSliceOp::create(rewriter, loc, table, offsets,
                                              sizes, strides);
      };
      if (isa<ComplexType>(tableType.getElementType())) {
        // The split tables are built element by element: a splat constant
        // can claim any shape in a few bytes of IR, so the size is bounded
        // (2^22 entries: far above any position table) before anything is
        // read or allocated.
        int64_t entries;
        if (tableType.getDimSize(0) < 0 ||
            llvm::MulOverflow(tableType.getDimSize(0), half, entries) ||
            entries > (int64_t(1) << 22)) {
          buildWhy = "the complex table is too large to split";
          return failure();
        }
        // Every entry must be readable (checked before building anything).
        for (int64_t r = 0; r < tableType.getDimSize(0); ++r)
          for (int64_t c = 0; c < half; ++c)
            if (!constantPart(plan.cosTable, {r, plan.cosColumn + c},
                              plan.cosComponent) ||
                !constantPart(plan.sinTable, {r, plan.sinColumn + c},
                              plan.sinComponent)) {
              buildWhy = "the complex table cannot be read";
              return failure();
            }
      }
      cosCache = slice(plan.cosTable, plan.cosColumn, plan.cosComponent);
      sinCache = slice(plan.sinTable, plan.sinColumn, plan.sinComponent);
      if (!positions) {
        std::optional<int64_t> row =
            plan.rowOffset ? getConstantIntValue(*plan.rowOffset) : 0;
        if (row)
          offset = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getI64IntegerAttr(*row));
        else
          offset = cast<Value>(*plan.rowOffset);
      }
    }

    Value input = plan.input;
    if (plan.inputView)
      input = materializeInput(
          rewriter, loc, input, *plan.inputView,
          plan.channelOffset + std::max<int64_t>(plan.windowOffset, 0), type);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    int64_t d = type.getShape().back();
    Value applyInput = input, applyInit = init;
    if (addTokenDim) {
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i + 1 < rank; ++i)
        groups.push_back({i});
      groups.push_back({rank - 1, rank});
      auto expand = [&](Value v) -> Value {
        auto t = cast<RankedTensorType>(v.getType());
        SmallVector<int64_t> shape(t.getShape().drop_back());
        shape.append({1, t.getShape().back()});
        SmallVector<OpFoldResult> expandedSizes(sizes.begin(), sizes.end() - 1);
        expandedSizes.append({rewriter.getIndexAttr(1), sizes.back()});
        return tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get(shape, t.getElementType()), v,
            groups, expandedSizes);
      };
      applyInput = expand(input);
      applyInit = expand(init);
    }
    int64_t applyRank = addTokenDim ? rank + 1 : rank;
    SmallVector<int64_t> defaultTokens;
    if (applyRank == 2)
      defaultTokens = {0};
    else
      for (int64_t i = 0; i + 2 < applyRank; ++i)
        defaultTokens.push_back(i);
    Attribute freqs;
    Value length;
    if (!plan.cosTable && plan.length) {
      freqs =
          longRopeAttr(ctx, plan.thetas, plan.longThetas, plan.rotaryDim,
                       plan.tableType, plan.lengthThreshold, plan.magnitude);
      if (!freqs) {
        buildWhy = "the frequency tables chosen at run time are not stated "
                   "exactly by LongRoPE factors";
        return failure();
      }
      // The IR's own length, read where the rotation is.
      length = plan.length;
      if (auto lengthType = dyn_cast<RankedTensorType>(length.getType())) {
        SmallVector<Value> zeros(
            lengthType.getRank(),
            arith::ConstantIndexOp::create(rewriter, loc, 0));
        length = tensor::ExtractOp::create(rewriter, loc, length, zeros);
      }
      if (plan.lengthAddend)
        length = arith::AddIOp::create(
            rewriter, loc, length,
            arith::ConstantOp::create(
                rewriter, loc,
                rewriter.getIntegerAttr(length.getType(), plan.lengthAddend)));
    } else if (!plan.cosTable) {
      freqs = frequencyAttr(ctx, plan.thetas, plan.rotaryDim, plan.tableType,
                            plan.timescales, plan.timescaleType);
    }
    MRopeAttr mrope;
    if (!plan.mropeAxes.empty()) {
      SmallVector<int64_t> counts(3, 0);
      for (int64_t a : plan.mropeAxes)
        counts[a]++;
      bool chunked = llvm::is_sorted(plan.mropeAxes);
      for (bool interleaved : {false, true}) {
        if (!interleaved && !chunked)
          continue;
        MRopeAttr candidate = MRopeAttr::get(
            ctx, DenseI64ArrayAttr::get(ctx, counts), interleaved);
        if (ArrayRef<int64_t>(candidate.getPairAxes(plan.rotaryDim / 2)) ==
            ArrayRef<int64_t>(plan.mropeAxes)) {
          mrope = candidate;
          break;
        }
      }
      if (!mrope) {
        buildWhy = "the pairs' position axes follow no M-RoPE section rule";
        return failure();
      }
    }
    auto apply = ApplyOp::create(
        rewriter, loc, applyInit.getType(), applyInput, positions, offset,
        length, cosCache, sinCache, /*norm_weight=*/Value(),
        /*quant_scale=*/Value(), /*slots=*/Value(), applyInit,
        LayoutAttr::get(ctx, plan.layout),
        plan.rotaryDim == d ? IntegerAttr()
                            : rewriter.getI64IntegerAttr(plan.rotaryDim),
        tokenDims == defaultTokens ? DenseI64ArrayAttr()
                                   : rewriter.getDenseI64ArrayAttr(tokenDims),
        freqs ? cast<FrequencyAttrInterface>(freqs) : FrequencyAttrInterface(),
        mrope, rewriter.getF64FloatAttr(plan.magnitude),
        plan.inverse ? rewriter.getUnitAttr() : UnitAttr(),
        /*norm_epsilon=*/FloatAttr());
    if (failed(mlir::verify(apply, /*verifyRecursively=*/false))) {
      buildWhy = "the raised op does not verify";
      rewriter.eraseOp(apply);
      return failure();
    }
    Value result = apply.getResult();
    if (addTokenDim)
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, cast<RankedTensorType>(init.getType()), result,
          cast<tensor::ExpandShapeOp>(applyInit.getDefiningOp())
              .getReassociationIndices());
    if (!plan.permutation.empty()) {
      // De-interleave: [.., P/2, 2] -> [.., 2, P/2] -> [.., P].
      SmallVector<int64_t> pairShape(type.getShape().drop_back());
      pairShape.append({d / 2, 2});
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i + 1 < rank; ++i)
        groups.push_back({i});
      groups.push_back({rank - 1, rank});
      SmallVector<OpFoldResult> pairSizes(sizes.begin(), sizes.end() - 1);
      pairSizes.append(
          {rewriter.getIndexAttr(d / 2), rewriter.getIndexAttr(2)});
      Value pairsValue = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(pairShape, type.getElementType()), result,
          groups, pairSizes);
      SmallVector<OpFoldResult> swappedSizes(sizes.begin(), sizes.end() - 1);
      swappedSizes.append(
          {rewriter.getIndexAttr(2), rewriter.getIndexAttr(d / 2)});
      Value swappedInit = tensor::EmptyOp::create(rewriter, loc, swappedSizes,
                                                  type.getElementType());
      SmallVector<int64_t> perm;
      for (int64_t i = 0; i + 1 < rank; ++i)
        perm.push_back(i);
      perm.append({rank, rank - 1});
      Value swapped = linalg::TransposeOp::create(rewriter, loc, pairsValue,
                                                  swappedInit, perm)
                          .getResult()[0];
      result =
          tensor::CollapseShapeOp::create(rewriter, loc, type, swapped, groups);
    }
    if (plan.windowOffset >= 0) {
      // The rotated window inserted into x (in the candidate's layout).
      Value x = materializeInput(rewriter, loc, plan.input, *plan.inputView,
                                 plan.channelOffset, fullType);
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets.back() = rewriter.getIndexAttr(plan.windowOffset);
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(
          rewriter, loc, result, x, offsets,
          tensor::getMixedSizes(rewriter, loc, result), strides);
    }
    if (plan.pairedOutput) {
      // Back to the candidate's [..., D/2, 2].
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i + 1 < pairedType.getRank() - 1; ++i)
        groups.push_back({i});
      groups.push_back({pairedType.getRank() - 2, pairedType.getRank() - 1});
      result = tensor::ExpandShapeOp::create(rewriter, loc, pairedType, result,
                                             groups);
    }
    return result;
  }
};
} // namespace

/// Raises the rotation `op` ends, if it is one: replaces `op` and returns
/// success. Otherwise leaves the IR unchanged, sets `why`, and sets
/// `worthARemark` when `op` ends a computation that multiplies by a cos or
/// sin (the last op of a rotation-shaped computation).
LogicalResult mlir::rope::raise::raiseRotation(Operation *op,
                                               RewriterBase &rewriter,
                                               std::string &why,
                                               bool &worthARemark,
                                               ElementAlgebra *shared) {
  worthARemark = false;
  if (!isCandidate(op)) {
    why = "not a candidate";
    return failure();
  }
  RotationMatcher first(op->getResult(0), shared);
  FailureOr<RaisePlan> plan = first.match();
  // Several data tensors reach the rotation (a bias added to the projection
  // in the same loops), or x of another element type than the result (read
  // through a truncf into the wider projection): the rotated tensor is the
  // one they all reach it through, read as a leaf.
  std::optional<RotationMatcher> second;
  if (failed(plan) && first.looksLikeRope && !first.dataRoots.empty())
    if (Value x = commonDataSource(op->getResult(0), first.dataRoots)) {
      second.emplace(op->getResult(0), /*shared=*/nullptr, ArrayRef<Value>{x});
      FailureOr<RaisePlan> again = second->match();
      if (succeeded(again))
        plan = again;
      else
        second.reset();
    }
  RotationMatcher &matcher = second ? *second : first;
  if (failed(plan)) {
    why = matcher.why;
    worthARemark = matcher.looksLikeRope && isLastStep(op);
    return failure();
  }
  rewriter.setInsertionPoint(op);
  RaisedBuilder builder;
  FailureOr<Value> raised = builder.build(
      rewriter, op->getLoc(), *plan, matcher.getAlgebra(), op->getResult(0));
  if (failed(raised)) {
    why = builder.buildWhy;
    worthARemark = true;
    return failure();
  }
  rewriter.replaceOp(op, *raised);
  return success();
}

namespace {
struct RaiseRotationPattern : public RewritePattern {
  RaiseRotationPattern(MLIRContext *ctx, bool remarks)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        remarks(remarks) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    bool worthARemark = false;
    if (succeeded(raiseRotation(op, rewriter, why, worthARemark)))
      return success();
    if (remarks && worthARemark)
      op->emitRemark("rope-raise: not raised: ") << why;
    return rewriter.notifyMatchFailure(op, why);
  }

  bool remarks;
};
} // namespace

void mlir::rope::raise::populateRaiseRotationPatterns(
    RewritePatternSet &patterns, bool remarks) {
  patterns.add<RaiseRotationPattern>(patterns.getContext(), remarks);
}
