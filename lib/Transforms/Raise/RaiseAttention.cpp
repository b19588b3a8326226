//===- RaiseAttention.cpp - Written-out attention to rope.attention -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Frontends hand over attention as a P·V contraction of a softmax of
// scaled, masked Q·Kᵀ scores, spelled in many ways: named or generic
// contractions, K transposed by a map or by linalg.transpose, the batch and
// heads flattened for a batch_matmul, K/V repeated over a query group (GQA),
// the softmax as linalg.softmax or written out (torch-mlir adds an argmax
// and a guard for fully masked rows), the scale on the scores or split over
// Q and K, Gemma 2's softcap, a mask added, selected, or built from iota
// comparisons. This file reads such a computation as an expression over
// *atoms* and raises it to `rope.attention` when the expression is exactly
// the op's contract.
//
// Atoms. Every dim of every tensor read is a row-major flattening of atoms,
// symbolic loop dims with a static size. Reading through a collapse_shape
// splits an atom where a source dim boundary falls inside it (an atom then
// stands for its parts everywhere it is used), an expand_shape concatenates,
// and a linalg op's indexing maps say which atoms each operand has (a dim a
// map drops is a broadcast; a reduction loop is a fresh atom). So [B·H, S, D]
// of a batch_matmul, [B, H, S, D], and K repeated as [B, Hkv, G, S, D] →
// [B, Hkv·G, S, D] all meet as the same atoms B, Hkv, G, S, D, and the raised
// op's loops are the atoms: GQA falls out as a group atom that Q has and K/V
// do not.
//
// Expressions. A value read through a layout is a node; opening it evaluates
// its producer's payload one level (elementwise ops, reductions, linalg.index,
// views). Two nodes are the same when they compute the same elements, up to
// a renaming of reduced atoms: the softmax's row max and row sum must reduce,
// over the keys P·V contracts, the very values it exponentiates and divides.
//
// Exactness. The op computes the scores, the softmax and P·V in its
// accumulator type (f32 for f16/bf16/f32), so raising changes roundings only
// where it is more exact; the scale is the product of the constants found,
// in f64. Masks: a causal mask is raised only when the comparison is proven
// to be key j visible iff j <= i + (Sk − Sq) (or j + c <= positions[...], or
// j <= t with 0 <= t < Sk and a query dim of size 1: a decode step, raised
// with query_offset t); any other computed mask stays a mask tensor, added as
// the frontend adds it. Attention sinks (gpt-oss): P a slice of a softmax
// over the scores and one more column read from sinks per batch and head,
// the slice dropping exactly that column, become the op's sinks.
// A boolean argument selecting 0/−inf is passed as the i1 mask, and a finite
// masked value ≤ −2^100 counts as −inf only under a proven causal mask that
// leaves no row fully masked (both exact for finite scores below 2^99).
// torch-mlir's guard (a fully masked row gives 0, the op NaN) is dropped
// under such a causal mask and kept otherwise, as a test on the mask alone.
// What is not raised says why in a remark (rope-raise's `remarks` option).
//
// Files. This one holds the matcher, the pattern and the pass; the
// expression reader is Expressions.{h,cpp} (rope-raise-softmax reads with it
// too), SoftmaxReader.cpp reads P as a softmax, AttentionMaskAnalysis.cpp
// reads masks from index comparisons, AttentionBuilder.cpp builds the op from
// a match; RaiseAttentionInternal.h is what the attention parts share.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Raise/RaiseAttention.h"
#include "RaiseAttentionInternal.h"
#include "SoftmaxReader.h"

#include "rope/Dialect/Rope/IR/AttentionDims.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

using namespace mlir;
using namespace mlir::rope;

namespace mlir::rope::raise::attention {

namespace {

/// A finite masked value at most this (−2^100) is accepted in place of −inf
/// where no row is fully masked: exp(c + s − max) is then 0 in every float
/// type for scores of magnitude below 2^99.
constexpr double kMaskedValueBound = -1.2676506002282294e30;

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

/// Reads a contraction as P·V of a softmax of scaled, masked Q·Kᵀ into an
/// AttentionMatch, or says (`why`) which check failed.
class Matcher {
public:
  Matcher(Expressions &ex, linalg::LinalgOp root) : ex(ex) {
    match.root = root;
  }

  std::string why;
  AttentionMatch match;

  LogicalResult run() {
    linalg::LinalgOp root = match.root;
    if (!root.hasPureTensorSemantics() || root->getNumResults() != 1 ||
        root.getNumDpsInputs() != 2 || root.getNumDpsInits() != 1)
      return fail("not a two-input linalg op on tensors");
    auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return fail("not a float tensor contraction");
    for (int64_t size : type.getShape()) {
      if (ShapedType::isDynamic(size))
        return fail("dynamic shapes are not raised");
      match.output.push_back({ex.atoms.make(size)});
    }
    Node *pv = ex.open(ex.tensor(root->getResult(0), match.output));
    // MaxText's deferred normalization: (Σ exp(x − max)·V) / Σ exp(x − max),
    // the division after P·V (what the op computes: acc / sum).
    Node *deferredSum = nullptr;
    if (pv->kind == Node::Compute && isa<arith::DivFOp>(pv->op) &&
        pv->operands.size() == 2) {
      deferredSum = pv->operands[1];
      pv = ex.open(pv->operands[0]);
    }
    if (pv->kind != Node::Reduce || !isa<arith::AddFOp>(pv->op))
      return fail("not a sum-of-products contraction");
    if (!isZero(ex, pv->operands[0]))
      return fail("P·V does not accumulate into zeros");
    std::optional<unsigned> reduced = reducedAtom(ex, pv->atoms);
    if (!reduced)
      return fail("P·V does not contract exactly one dim (the keys)");
    match.k2 = *reduced;
    Node *product = computeOf<arith::MulFOp>(ex, pv->operands[1], 2);
    if (!product)
      return fail("not a sum-of-products contraction");

    SoftmaxReader::Result softmax;
    Node *probs = nullptr, *values = nullptr;
    for (unsigned side : {0u, 1u}) {
      Node *p = stripExtF(ex, product->operands[side]);
      std::optional<SinkSlice> sliced =
          deferredSum ? std::nullopt : sinkSlice(p);
      // The softmax is over the keys P·V sums, or those and the sink column.
      SoftmaxReader reader(ex, sliced ? sliced->key : match.k2,
                           "the keys P·V sums");
      SoftmaxReader::Found found =
          deferredSum ? reader.deferredSoftmax(p, deferredSum, softmax)
                      : reader.softmax(sliced ? sliced->source : p, softmax);
      if (found == SoftmaxReader::Found::Mismatch)
        return fail(reader.why);
      if (found == SoftmaxReader::Found::Yes) {
        probs = p;
        values = stripExtF(ex, product->operands[1 - side]);
        softmax.input = reader.peelRowShift(softmax.input);
        if (sliced && failed(matchSinkColumn(*sliced, softmax)))
          return failure();
        break;
      }
    }
    if (!probs)
      return fail("neither operand of the contraction is a softmax (over "
                  "the dim it sums: P·V)");
    match.guard = softmax.guard;

    Node *vTensor = ex.look(values);
    if (vTensor->kind != Node::Tensor ||
        !isa<RankedTensorType>(vTensor->value.getType()))
      return fail("V is not a tensor");
    match.value = vTensor;
    // Root loops in P and the output but not V: the queries (and a GQA
    // group when the contraction has one). P and V as the contraction reads
    // them are indexed by the root's own loop atoms.
    auto topAtoms = [](Node *node) {
      DenseSet<unsigned> set;
      if (node->kind == Node::Tensor)
        for (const AtomList &dim : node->layout)
          set.insert(dim.begin(), dim.end());
      return set;
    };
    DenseSet<unsigned> inP = topAtoms(probs), inV = topAtoms(values);
    for (const AtomList &dim : match.output)
      if (inP.contains(dim[0]) && !inV.contains(dim[0]))
        match.rootQueryAtoms.push_back(dim[0]);

    return matchScores(softmax.input);
  }

private:
  LogicalResult fail(const Twine &reason) {
    why = reason.str();
    return failure();
  }

  /// P read as the keys of a softmax over one more column, the sink, which
  /// is sliced off (gpt-oss: softmax(cat([scores, sink], -1))[..., :-1]):
  /// the softmax's input read over `key`, an atom of Sk + 1 keys, in the
  /// slice's dim `dim`; the sink column is the last (or, sliced from 1, the
  /// first).
  struct SinkSlice {
    Node *source = nullptr;
    unsigned key = 0;
    bool sinkFirst = false;
  };
  std::optional<SinkSlice> sinkSlice(Node *p) {
    Node *viewed = ex.look(p);
    if (viewed->kind != Node::Tensor)
      return std::nullopt;
    auto slice = viewed->value.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice.hasUnitStride())
      return std::nullopt;
    RankedTensorType source = slice.getSourceType(),
                     result = slice.getResultType();
    if (!source.hasStaticShape() ||
        static_cast<size_t>(result.getRank()) != viewed->layout.size())
      return std::nullopt;
    // A rank-reducing slice (linalg-fold-unit-extent-dims) drops unit dims
    // of the source: those are read with no atom.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t keys = ex.atoms.size(match.k2);
    std::optional<unsigned> keyDim;
    bool sinkFirst = false;
    Layout layout;
    unsigned r = 0;
    for (int64_t i = 0; i < source.getRank(); ++i) {
      std::optional<int64_t> offset =
          getConstantIntValue(slice.getMixedOffsets()[i]);
      if (!offset)
        return std::nullopt;
      if (dropped.test(i)) {
        if (source.getDimSize(i) != 1)
          return std::nullopt;
        layout.push_back({});
        continue;
      }
      if (r >= viewed->layout.size())
        return std::nullopt;
      const AtomList &atoms = viewed->layout[r];
      int64_t size = result.getDimSize(r++);
      layout.push_back(atoms);
      if (ex.atoms.significant(atoms) == AtomList{match.k2}) {
        if (keyDim || source.getDimSize(i) != keys + 1 || size != keys ||
            (*offset != 0 && *offset != 1))
          return std::nullopt;
        keyDim = i;
        sinkFirst = *offset == 1;
        continue;
      }
      if (*offset != 0 || source.getDimSize(i) != size)
        return std::nullopt;
    }
    if (!keyDim || r != viewed->layout.size())
      return std::nullopt;
    SinkSlice found;
    found.key = ex.atoms.make(keys + 1);
    found.sinkFirst = sinkFirst;
    layout[*keyDim] = {found.key};
    ex.opened.insert(slice);
    found.source = ex.tensor(slice.getSource(), layout);
    return found;
  }

  /// The softmax input of a sink slice: the concatenation along the keys of
  /// the scores and the sink column (on the side the slice drops), whose
  /// scores become the softmax input and whose column becomes the sinks.
  LogicalResult matchSinkColumn(const SinkSlice &sliced,
                                SoftmaxReader::Result &softmax) {
    if (softmax.guard)
      return fail("a softmax with a sink column has a guard for fully masked "
                  "rows (the sink leaves none)");
    Node *cat = ex.look(softmax.input);
    auto concat = cat->kind == Node::Tensor
                      ? cat->value.getDefiningOp<tensor::ConcatOp>()
                      : tensor::ConcatOp();
    if (!concat || concat->getNumOperands() != 2 ||
        cat->layout.size() != static_cast<size_t>(concat.getRank()))
      return fail("the softmax whose last (or first) column P drops is not "
                  "of a concatenation of the scores and a sink column");
    std::optional<unsigned> keyDim;
    for (auto [i, atoms] : llvm::enumerate(cat->layout))
      if (llvm::is_contained(ex.atoms.leaves(atoms), sliced.key))
        keyDim = i;
    if (!keyDim || concat.getDim() != *keyDim ||
        ex.atoms.significant(cat->layout[*keyDim]) != AtomList{sliced.key})
      return fail("the concatenation with the sink column is not along the "
                  "keys P·V sums");
    unsigned scoresSide = sliced.sinkFirst ? 1 : 0;
    Value scores = concat->getOperand(scoresSide),
          sink = concat->getOperand(1 - scoresSide);
    if (cast<RankedTensorType>(sink.getType()).getDimSize(*keyDim) != 1)
      return fail("the column P drops is not the sink column of the "
                  "concatenation (P keeps a sink, or drops a key)");
    Layout scoresLayout = cat->layout, sinkLayout = cat->layout;
    scoresLayout[*keyDim] = {match.k2};
    sinkLayout[*keyDim] = {};
    ex.opened.insert(concat);
    Node *sinkNode = ex.look(ex.tensor(sink, sinkLayout));
    if (sinkNode->kind != Node::Tensor ||
        !isa<RankedTensorType>(sinkNode->value.getType()))
      return fail("the sink column is not read from a tensor of sinks");
    // A size-1 dim indexes nothing (decode's single query): the sinks are
    // read without it.
    Layout significant;
    for (const AtomList &dim : sinkNode->layout)
      significant.push_back(ex.atoms.significant(dim));
    match.sinks = ex.tensor(sinkNode->value, significant);
    softmax.input = ex.tensor(scores, scoresLayout);
    return success();
  }

  /// The scaled Q·Kᵀ contraction under `node`: scale factors (constants
  /// multiplying or dividing it), then a contraction over the channel atoms
  /// whose operands are, up to constant factors, the query and key tensors.
  enum class Scores { No, Yes, MaskFirst };
  Scores matchScaledScores(Node *node, double &scale, bool record) {
    double factor = 1.0;
    Node *current = node;
    for (int i = 0; i < 8; ++i) {
      Node *op = ex.open(current);
      if (Node *ext = computeOf<arith::ExtFOp>(ex, op, 1)) {
        current = ext->operands[0];
        continue;
      }
      // A narrowing of the scores (torch-mlir's bf16 matmul: a contraction
      // into f32, then truncf) is a rounding the op leaves out: it computes
      // the scores in its accumulator type, which is more exact.
      if (Node *trunc = computeOf<arith::TruncFOp>(ex, op, 1)) {
        current = trunc->operands[0];
        continue;
      }
      if (Node *mul = computeOf<arith::MulFOp>(ex, op, 2)) {
        bool found = false;
        for (unsigned side : {0u, 1u})
          if (std::optional<double> c = scaleFactor(ex, mul->operands[side])) {
            factor *= *c;
            current = mul->operands[1 - side];
            found = true;
            break;
          }
        if (found)
          continue;
        return Scores::No;
      }
      if (Node *div = computeOf<arith::DivFOp>(ex, op, 2)) {
        std::optional<double> c = scaleFactor(ex, div->operands[1]);
        if (!c)
          return Scores::No;
        factor /= *c;
        current = div->operands[0];
        continue;
      }
      break;
    }
    Node *qk = ex.open(current);
    if (qk->kind != Node::Reduce) {
      Node *op = ex.open(current);
      if (op->kind == Node::Compute &&
          isa<arith::AddFOp, arith::SelectOp>(op->op) && factor != 1.0)
        return Scores::MaskFirst;
      return Scores::No;
    }
    if (!isa<arith::AddFOp>(qk->op) || !isZero(ex, qk->operands[0]))
      return Scores::No;
    // The channels: the contracted atoms that index something (one, or the
    // parts of a channel dim a reshape split; the Builder reads them as one
    // loop where Q and K both read them in one order, side by side).
    AtomList channel = ex.atoms.significant(qk->atoms);
    if (channel.empty() && ex.atoms.leaves(qk->atoms).size() == 1)
      channel = ex.atoms.leaves(qk->atoms);
    if (channel.empty())
      return Scores::No;
    Node *product = computeOf<arith::MulFOp>(ex, qk->operands[1], 2);
    if (!product)
      return Scores::No;
    Node *sides[2];
    ApplyOp folds[2];
    AttentionMatch::Unscaled unscaled[2];
    for (unsigned side : {0u, 1u}) {
      // Constant factors on Q or K (SDPA's √scale on each) join the scale,
      // also when fusion moved them into the contraction's own payload.
      Node *source = ex.look(stripExtF(ex, product->operands[side]));
      // The last tensor whose producer's payload the factors were peeled
      // in: what remains there may be a value of that payload, which the
      // raise then computes by a copy of the producer without the factors.
      Node *lastTensor = nullptr;
      for (int i = 0; i < 8 && (source->kind == Node::Tensor ||
                                source->kind == Node::Compute);
           ++i) {
        if (source->kind == Node::Tensor)
          lastTensor = source;
        // A widened Q or K (torch's SDPA on bf16 computes in f32) is the
        // narrower tensor: the op widens it itself, exactly.
        if (Node *ext = computeOf<arith::ExtFOp>(ex, source, 1)) {
          source = ex.look(ext->operands[0]);
          continue;
        }
        Node *mul = computeOf<arith::MulFOp>(ex, source, 2);
        if (!mul)
          break;
        std::optional<double> c = scaleFactor(ex, mul->operands[1]);
        unsigned other = 0;
        if (!c) {
          c = scaleFactor(ex, mul->operands[0]);
          other = 1;
        }
        if (!c)
          break;
        factor *= *c;
        source = ex.look(mul->operands[other]);
      }
      unscaled[side] = {};
      if (source->kind == Node::Compute && lastTensor) {
        // Fusion moved the factors into the producer of Q or K (an
        // L2-normalized Q times SDPA's √scale): Q is that producer's
        // payload before them.
        auto producer = lastTensor->value.getDefiningOp<linalg::GenericOp>();
        if (!producer || !source->op || source->op->getParentOp() != producer ||
            source->op->getNumResults() != 1 ||
            producer->getNumResults() != 1 || !producer.isAllParallelLoops() ||
            !producer.hasPureTensorSemantics() ||
            !producer.getRegionOutputArgs()[0].use_empty() ||
            source->op->getResult(0).getType() !=
                getElementTypeOrSelf(lastTensor->value.getType()))
          return Scores::No;
        unscaled[side] = {producer, source->op->getResult(0)};
        source = lastTensor;
      }
      if (source->kind != Node::Tensor ||
          !isa<RankedTensorType>(source->value.getType()))
        return Scores::No;
      sides[side] = source;
      // A rotation's magnitude (rope-raise takes a constant factor on a
      // rotated Q as one) is a factor of the scores too: it joins the scale
      // when nothing else reads the rotation and its frequency scheme does
      // not imply it. A QK-norm before the rotation does not matter (the
      // magnitude scales the rotated output); a quantized or appended
      // output does (the stored values carry it).
      // A magnitude the scheme implies (YaRN, LongRoPE) goes too, the scheme
      // stating a unit attention_factor: where the frontend multiplied its
      // own factors (SDPA's √scale) is then no part of the raised form.
      folds[side] = {};
      auto apply = source->value.getDefiningOp<ApplyOp>();
      if (apply && !apply.getQuantScale() && !apply.getSlots()) {
        double magnitude = apply.getMagnitude().convertToDouble();
        if (magnitude != 1.0 && unitMagnitudeFreqs(apply) &&
            llvm::all_of(apply->getUsers(), [&](Operation *user) {
              return ex.opened.contains(user);
            })) {
          factor *= magnitude;
          folds[side] = apply;
        }
      }
    }
    // K is the side indexed by the keys.
    auto hasKeys = [&](Node *n) {
      for (const AtomList &dim : n->layout)
        if (llvm::is_contained(ex.atoms.leaves(dim), match.k2))
          return true;
      return false;
    };
    unsigned keySide = hasKeys(sides[1]) ? 1 : 0;
    if (!hasKeys(sides[keySide]) || hasKeys(sides[1 - keySide]))
      return Scores::No;
    if (!std::isfinite(factor) || factor == 0.0)
      return Scores::No;
    if (record) {
      match.query = sides[1 - keySide];
      match.key = sides[keySide];
      match.foldQuery = folds[1 - keySide];
      match.foldKey = folds[keySide];
      match.unscaledQuery = unscaled[1 - keySide];
      match.unscaledKey = unscaled[keySide];
      match.k1 = channel;
      match.scores = qk->producer;
    }
    scale = factor;
    return Scores::Yes;
  }

  bool reachesScores(Node *node) {
    double scale;
    std::optional<AttentionMatch::Softcap> cap;
    return matchScaledScores(peelSoftcap(node, cap), scale,
                             /*record=*/false) == Scores::Yes;
  }

  /// Gemma 2's softcap `c · tanh(s / c)` (the division also as a product)
  /// on `node`: the capped scores, with `cap` set; else `node`.
  Node *peelSoftcap(Node *node, std::optional<AttentionMatch::Softcap> &cap) {
    cap.reset();
    Node *outer = computeOf<arith::MulFOp>(ex, node, 2);
    if (!outer)
      return node;
    for (unsigned side : {0u, 1u}) {
      std::optional<APFloat> c = floatConstant(ex, outer->operands[side]);
      Node *tanh = c ? computeOf<math::TanhOp>(ex, outer->operands[1 - side], 1)
                     : nullptr;
      if (!tanh)
        continue;
      Node *div = computeOf<arith::DivFOp>(ex, tanh->operands[0], 2);
      Node *mul = computeOf<arith::MulFOp>(ex, tanh->operands[0], 2);
      AttentionMatch::Softcap found;
      found.outer = toDouble(*c);
      Node *inner = nullptr;
      if (div) {
        if (std::optional<APFloat> d = floatConstant(ex, div->operands[1])) {
          found.inner = toDouble(*d);
          inner = div->operands[0];
        }
      } else if (mul) {
        for (unsigned m : {0u, 1u})
          if (std::optional<APFloat> d = floatConstant(ex, mul->operands[m])) {
            found.inner = toDouble(*d);
            found.innerMultiplies = true;
            inner = mul->operands[1 - m];
            break;
          }
      }
      if (!inner || !std::isfinite(found.inner) ||
          !std::isfinite(found.outer) || found.inner == 0.0)
        return node;
      cap = found;
      return inner;
    }
    return node;
  }

  /// The scores before the softmax: a mask (added, or selected) over the
  /// scaled Q·Kᵀ contraction, or that contraction alone.
  LogicalResult matchScores(Node *x) {
    Node *s = stripExtF(ex, x);
    Node *top = ex.open(s);
    Node *scaled = s;
    if (Node *add = computeOf<arith::AddFOp>(ex, top, 2)) {
      unsigned side = reachesScores(add->operands[0])   ? 0
                      : reachesScores(add->operands[1]) ? 1
                                                        : 2;
      if (side == 2)
        return fail(scoresFailure(add->operands[0], add->operands[1]));
      scaled = add->operands[side];
      if (failed(additiveMask(add->operands[1 - side])))
        return failure();
    } else if (Node *select = computeOf<arith::SelectOp>(ex, top, 3)) {
      unsigned side = reachesScores(select->operands[1])   ? 1
                      : reachesScores(select->operands[2]) ? 2
                                                           : 0;
      if (side == 0)
        return fail(scoresFailure(select->operands[1], select->operands[2]));
      scaled = select->operands[side];
      if (failed(selectMask(select->operands[0], select->operands[3 - side],
                            /*keepWhenTrue=*/side == 1)))
        return failure();
    }
    std::optional<AttentionMatch::Softcap> cap;
    scaled = peelSoftcap(scaled, cap);
    double scale = 1.0;
    Scores found = matchScaledScores(scaled, scale, /*record=*/true);
    if (found == Scores::MaskFirst)
      return fail("the scale is applied after a mask; rope.attention scales "
                  "first");
    if (found != Scores::Yes)
      return fail(scoresFailure(scaled, nullptr));
    match.scale = scale;
    match.softcap = cap;
    return success();
  }

  std::string scoresFailure(Node *a, Node *b) {
    for (Node *n : {a, b}) {
      if (!n)
        continue;
      double scale;
      if (matchScaledScores(n, scale, false) == Scores::MaskFirst)
        return "the scale is applied after a mask; rope.attention scales "
               "first";
    }
    return "the softmax input is not (a mask over) constant times Q·Kᵀ "
           "contracted over the channels";
  }

  /// Whether `node` is computed by ops this file reads (an iota comparison,
  /// say), rather than an argument or an opaque op's result.
  bool isComputed(Node *node) {
    node = ex.look(node);
    return node->kind != Node::Tensor || ex.open(node) != node;
  }

  /// Records `mask` as a causal/window mask (or query positions) if it is
  /// exactly one, with `finite` saying whether the masked value is finite.
  /// Returns whether it did.
  bool recordPositionMask(Node *condition, bool negate, bool finite) {
    std::optional<SmallVector<Linear>> conds = maskConditions(ex, condition);
    if (!conds)
      return false;
    if (negate) {
      if (conds->size() != 1)
        return false;
      Linear &e = (*conds)[0];
      for (auto &[atom, c] : e.terms)
        c = -c;
      e.positionsCoef = -e.positionsCoef;
      e.constant = 1 - e.constant;
    }
    std::optional<PositionMask> mask = positionMask(*conds, match.k2);
    if (!mask)
      return false;
    if (mask->keyOnly) {
      // key ≤ t for every row: causal on one query row at qpos = t (a
      // query dim of size 1, or the op's own unit query loop: see
      // Builder::plan). With 0 ≤ t < Sk key t is seen: no row is fully
      // masked.
      if (mask->offset < 0 || mask->offset >= ex.atoms.size(match.k2))
        return false;
    } else if (!mask->positions) {
      // Bottom-right alignment: qpos = m + Sk − Sq. Another offset stays a
      // mask tensor (exact).
      if (mask->offset !=
          ex.atoms.size(match.k2) - ex.atoms.size(mask->queryAtom))
        return false;
      // With Sq > Sk the first rows are fully masked, and a finite masked
      // value does not mask them.
      if (finite && mask->offset < 0)
        return false;
    } else if (finite) {
      // A row whose position is below every key is fully masked, and a
      // finite masked value does not mask it.
      return false;
    }
    match.positionMask = mask;
    return true;
  }

  /// mask + scores: −inf selected by a proven causal condition → causal; an
  /// i1 argument selecting 0/−inf → that i1 mask; any other tensor → that
  /// tensor as the float mask (added, as the op does: exact).
  LogicalResult additiveMask(Node *maskNode) {
    // A float extension of the mask (torch's SDPA on bf16 adds its bf16
    // mask in f32) is exact, as the op's own widening of a narrower mask.
    Node *mask = ex.look(stripExtF(ex, maskNode));
    if (Node *select = computeOf<arith::SelectOp>(ex, mask, 3)) {
      std::optional<APFloat> keep = floatConstant(ex, select->operands[1]);
      std::optional<APFloat> drop = floatConstant(ex, select->operands[2]);
      if (keep && drop && keep->isZero() && drop->isNegative() &&
          (drop->isInfinity() ||
           (drop->isFinite() && toDouble(*drop) <= kMaskedValueBound)) &&
          recordPositionMask(select->operands[0], false, drop->isFinite()))
        return success();
      Node *condition = ex.look(select->operands[0]);
      if (keep && drop && keep->isZero() && drop->isNegInfinity() &&
          condition->kind == Node::Tensor && !isComputed(condition) &&
          isa<RankedTensorType>(condition->value.getType())) {
        match.mask = condition;
        return success();
      }
    }
    // A zero mask (the ONNX export's decode step) adds nothing.
    if (isZero(ex, mask))
      return success();
    if (constantPositionMask(mask))
      return success();
    if (mask->kind != Node::Tensor ||
        !isa<RankedTensorType>(mask->value.getType()))
      return fail("the mask added to the scores is not a tensor (computed "
                  "inside the op that adds it)");
    match.mask = mask;
    return success();
  }

  /// A constant mask over (queries, keys) that is exactly a causal mask at
  /// bottom-right alignment (and a window): 0 where the key is visible, −inf
  /// or a value ≤ −2^100 elsewhere, every row seeing a key (the ONNX
  /// export folds the model's causal mask into such a constant).
  bool constantPositionMask(Node *mask) {
    if (mask->kind != Node::Tensor)
      return false;
    auto constant = mask->value.getDefiningOp<arith::ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    auto type = dyn_cast<RankedTensorType>(mask->value.getType());
    if (!dense || dense.isSplat() || !type || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) ||
        static_cast<size_t>(type.getRank()) != mask->layout.size())
      return false;
    std::optional<unsigned> keyDim, queryDim;
    for (auto [d, atoms] : llvm::enumerate(mask->layout)) {
      AtomList significant = ex.atoms.significant(atoms);
      if (significant.empty())
        continue;
      if (significant == AtomList{match.k2} && !keyDim)
        keyDim = d;
      else if (significant.size() == 1 && !queryDim)
        queryDim = d;
      else
        return false;
    }
    if (!keyDim || !queryDim)
      return false;
    unsigned queryAtom = ex.atoms.significant(mask->layout[*queryDim])[0];
    int64_t sq = ex.atoms.size(queryAtom), sk = ex.atoms.size(match.k2);
    if (sk < sq || sq * sk > (int64_t(1) << 22))
      return false;
    int64_t qStride = 1, kStride = 1;
    for (int64_t d = type.getRank() - 1, stride = 1; d >= 0; --d) {
      if (d == *queryDim)
        qStride = stride;
      if (d == *keyDim)
        kStride = stride;
      stride *= type.getDimSize(d);
    }
    SmallVector<APFloat> values = llvm::to_vector(dense.getValues<APFloat>());
    auto at = [&](int64_t i, int64_t j) -> const APFloat & {
      return values[i * qStride + j * kStride];
    };
    // Visible keys of the last row: [lo, sk − 1].
    int64_t t = sk - sq, lo = 0;
    while (lo < sk && !at(sq - 1, lo).isZero())
      ++lo;
    std::optional<int64_t> window;
    if (lo > 0)
      window = sk - lo;
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < sk; ++j) {
        bool visible = j <= i + t && (!window || j > i + t - *window);
        const APFloat &v = at(i, j);
        if (visible ? !v.isZero()
                    : !(v.isNegative() &&
                        (v.isInfinity() ||
                         (v.isFinite() && toDouble(v) <= kMaskedValueBound))))
          return false;
      }
    PositionMask pm;
    pm.queryAtom = queryAtom;
    pm.offset = t;
    pm.window = window;
    match.positionMask = pm;
    return true;
  }

  /// select(cond, scores, c) (or select(cond, c, scores)): c must be −inf,
  /// or a finite value ≤ −2^100 with a proven causal mask (no row fully
  /// masked, so c and −inf give the same softmax for scores below 2^99).
  LogicalResult selectMask(Node *condition, Node *maskedNode,
                           bool keepWhenTrue) {
    std::optional<APFloat> masked = floatConstant(ex, maskedNode);
    if (!masked || !masked->isNegative() ||
        !(masked->isInfinity() ||
          (masked->isFinite() && toDouble(*masked) <= kMaskedValueBound)))
      return fail("the scores are selected against a value that is not "
                  "-inf (nor a finite value <= -2^100)");
    if (recordPositionMask(condition, !keepWhenTrue, masked->isFinite()))
      return success();
    if (masked->isFinite())
      return fail("the masked value is finite and the mask is not a proven "
                  "causal mask: a fully masked row would differ");
    Node *mask = ex.look(condition);
    if (!keepWhenTrue)
      return fail("the select keeps the keys where the mask is false and the "
                  "mask is not a proven causal mask");
    if (mask->kind != Node::Tensor ||
        !isa<RankedTensorType>(mask->value.getType()))
      return fail("the boolean mask is not a tensor (computed inside the "
                  "select)");
    match.mask = mask;
    return success();
  }

  Expressions &ex;
};

} // namespace
} // namespace mlir::rope::raise::attention

using namespace mlir::rope::raise;
using namespace mlir::rope::raise::attention;

namespace {

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Whether a failed match on `root` is worth a remark: one of its inputs
/// is (within a few ops, not through another contraction) a softmax, or
/// computed from an exp and a reduction (a softmax written out: exp, max,
/// sum). An exp alone is not: SiLU and GELU feed every MLP's down
/// projection, which is no attention and needs no remark.
bool fedBySoftmax(linalg::LinalgOp root) {
  SmallVector<std::pair<Operation *, int>> stack;
  SmallPtrSet<Operation *, 16> seen;
  bool exp = false, reduction = false;
  for (Value input : root.getDpsInputs())
    if (Operation *def = input.getDefiningOp())
      stack.push_back({def, 0});
  while (!stack.empty() && seen.size() < 64) {
    auto [op, depth] = stack.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (isa<linalg::SoftmaxOp>(op))
      return true;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalg::isaContractionOpInterface(linalgOp))
        continue;
      if (linalgOp.getBlock() &&
          llvm::any_of(
              linalgOp.getBlock()->getOperations(),
              [](Operation &nested) { return isa<math::ExpOp>(nested); }))
        exp = true;
      if (linalgOp.getNumReductionLoops() > 0)
        reduction = true;
      if (exp && reduction)
        return true;
    }
    if (depth >= 12)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        stack.push_back({def, depth + 1});
  }
  return false;
}

/// The ops between the scores contraction and `root` (inclusive of the
/// former) that would stay alive after raising because something else uses
/// them: raising would then compute attention's scores twice.
Operation *usedOutside(Expressions &ex, AttentionMatch &match) {
  if (!match.scores)
    return nullptr;
  llvm::SetVector<Operation *> between;
  between.insert(match.scores);
  for (size_t i = 0; i < between.size(); ++i)
    for (Operation *user : between[i]->getUsers())
      if (ex.opened.contains(user) && user != match.root)
        between.insert(user);
  for (Operation *op : between)
    for (Operation *user : op->getUsers())
      if (user != match.root.getOperation() && !between.contains(user))
        return op;
  return nullptr;
}

/// Whether `op` is an elementwise division of two tensors (the root of
/// attention whose softmax is normalized after P·V).
bool isDivisionRoot(linalg::LinalgOp op) {
  if (op.getNumLoops() != op.getNumParallelLoops() ||
      op.getNumDpsInputs() != 2 || op->getNumResults() != 1 || !op.getBlock())
    return false;
  Expressions ex;
  Node *yielded =
      ex.readPayload(op, raise::yieldedValue(op), /*readInits=*/false);
  return yielded && computeOf<arith::DivFOp>(ex, yielded, 2);
}

/// Raises the attention `op` ends, if it is one; `why` and `worth` (a
/// remark is due) otherwise.
LogicalResult raiseAttentionAt(linalg::LinalgOp op, RewriterBase &rewriter,
                               std::string &why, bool &worth) {
  worth = false;
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      (!linalg::isaContractionOpInterface(op) && !isDivisionRoot(op))) {
    why = "not a contraction";
    return failure();
  }
  Expressions ex;
  Matcher matcher(ex, op);
  if (failed(matcher.run())) {
    why = ex.exhausted() ? "too large to analyze" : matcher.why;
    // A division is worth a remark only as attention's root: when it
    // divides a contraction's result.
    worth = linalg::isaContractionOpInterface(op) && fedBySoftmax(op);
    return failure();
  }
  worth = true;
  if (Operation *shared = usedOutside(ex, matcher.match)) {
    why = "an intermediate (" + shared->getName().getStringRef().str() +
          ") has users outside the attention (raising would compute it "
          "twice)";
    return failure();
  }
  FailureOr<Value> raised = buildAttention(rewriter, ex, matcher.match, why);
  if (failed(raised))
    return failure();
  rewriter.replaceOp(op, *raised);
  return success();
}

struct RaiseAttentionPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  RaiseAttentionPattern(MLIRContext *ctx, bool remarks)
      : OpInterfaceRewritePattern(ctx), remarks(remarks) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    bool worth = false;
    if (succeeded(raiseAttentionAt(op, rewriter, why, worth)))
      return success();
    if (remarks && worth)
      op->emitRemark("rope-raise: attention not raised: ") << why;
    return rewriter.notifyMatchFailure(op, why);
  }

  bool remarks;
};

/// Records erased ops (a raise erases the chain behind it).
struct ErasedListener : public RewriterBase::Listener {
  DenseSet<Operation *> erased;
  void notifyOperationErased(Operation *op) override { erased.insert(op); }
};

} // namespace

void mlir::rope::populateRopeRaiseAttentionPatterns(RewritePatternSet &patterns,
                                                    bool remarks) {
  patterns.add<RaiseAttentionPattern>(patterns.getContext(), remarks);
}

void mlir::rope::raiseAttention(Operation *root, bool remarks) {
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (op->getNumResults() == 1 && op.hasPureTensorSemantics() &&
        (linalg::isaContractionOpInterface(op) || isDivisionRoot(op)))
      candidates.push_back(op);
  });
  // Remarks wait until every candidate is tried: a P·V contraction whose
  // normalization follows it is raised from the division, and erased.
  SmallVector<std::pair<Operation *, std::string>> failures;
  ErasedListener listener;
  IRRewriter rewriter(root->getContext(), &listener);
  for (linalg::LinalgOp op : candidates) {
    if (listener.erased.contains(op))
      continue;
    std::string why;
    bool worth = false;
    SmallVector<Operation *> feeders;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        feeders.push_back(def);
    if (failed(raiseAttentionAt(op, rewriter, why, worth))) {
      if (remarks && worth)
        failures.push_back({op, why});
      continue;
    }
    // Erase what only fed the raised attention, producers after users.
    llvm::SetVector<Operation *> worklist(feeders.begin(), feeders.end());
    while (!worklist.empty()) {
      Operation *dead = worklist.pop_back_val();
      if (listener.erased.contains(dead) || !isOpTriviallyDead(dead))
        continue;
      dead->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && !dead->isAncestor(def))
            worklist.insert(def);
      });
      rewriter.eraseOp(dead);
    }
  }
  for (auto &[op, why] : failures)
    if (!listener.erased.contains(op))
      op->emitRemark("rope-raise: attention not raised: ") << why;
}

//===----------------------------------------------------------------------===//
// rope-raise-attention
//===----------------------------------------------------------------------===//

namespace mlir::rope {
#define GEN_PASS_DEF_ROPERAISEATTENTIONPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

namespace {
struct RopeRaiseAttentionPass
    : rope::impl::RopeRaiseAttentionPassBase<RopeRaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override { raiseAttention(getOperation(), remarks); }
};
} // namespace
