//===- AttentionBuilder.cpp - rope.attention from a match -----------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds the rope.attention a match of rope-raise-attention stands for:
// plans every operand's view (expand into atoms, collapse the unit dims
// that are no loop, insert the ones it lacks) and every attribute before
// creating anything, so that a pattern that fails leaves the IR as it was.
//
//===----------------------------------------------------------------------===//

#include "RaiseAttentionInternal.h"

#include "rope/Dialect/Rope/IR/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rope;

namespace mlir::rope::raise::attention {

/// `apply`'s frequency scheme with a unit magnitude: itself when the scheme
/// implies none (or cos/sin are given, the magnitude then the op's own), the
/// scheme with `attention_factor = 1` for YaRN and LongRoPE; null otherwise.
FrequencyAttrInterface unitMagnitudeFreqs(ApplyOp apply) {
  FrequencyAttrInterface freqs = apply.getFreqsOrDefault();
  if (apply.getCos() || !freqs.getImpliedMagnitude())
    return freqs;
  llvm::APFloat one(1.0);
  if (auto yarn = dyn_cast<YarnFrequenciesAttr>(freqs))
    return YarnFrequenciesAttr::get(
        yarn.getContext(), yarn.getBase(), yarn.getFactor(),
        yarn.getOriginalMaxPositionEmbeddings(), yarn.getBetaFast(),
        yarn.getBetaSlow(), yarn.getTruncate(), one, std::nullopt,
        std::nullopt);
  if (auto longRope = dyn_cast<LongRopeFrequenciesAttr>(freqs))
    return LongRopeFrequenciesAttr::get(
        longRope.getContext(), longRope.getBase(), longRope.getShortFactor(),
        longRope.getLongFactor(), longRope.getOriginalMaxPositionEmbeddings(),
        longRope.getFactor(), one);
  return {};
}

namespace {

//===----------------------------------------------------------------------===//
// Building rope.attention
//===----------------------------------------------------------------------===//

/// How an operand becomes one dim per loop: expand every dim into its
/// atoms, collapse away the size-1 dims that are no loop, add the size-1
/// loops it must have and lacks.
struct ViewPlan {
  Value source;
  Type element;
  SmallVector<int64_t> expandedShape, keptShape, finalShape;
  SmallVector<ReassociationIndices> expandGroups, collapseGroups, insertGroups;
  bool expand = false, collapse = false, insert = false;
  SmallVector<unsigned> loops;
  AffineMap map;
};

/// Plans the whole op (every check) before creating anything: a pattern
/// that fails must leave the IR as it was.
class Builder {
public:
  Builder(Expressions &ex, AttentionMatch &match) : ex(ex), match(match) {}
  std::string why;

  LogicalResult plan() {
    linalg::LinalgOp root = match.root;
    rootType = cast<RankedTensorType>(root->getResult(0).getType());
    MLIRContext *ctx = root->getContext();

    // Loops: the output's atoms but the value channels, then k1, k2, then
    // the value channels.
    AtomList outLeaves;
    for (const AtomList &dim : match.output) {
      ReassociationIndices group;
      for (unsigned leaf : ex.atoms.leaves(dim)) {
        group.push_back(outLeaves.size());
        outLeaves.push_back(leaf);
      }
      outGroups.push_back(group);
    }
    DenseSet<unsigned> queryLeaves = leavesOf(match.query),
                       keyLeaves = leavesOf(match.key),
                       valueLeaves = leavesOf(match.value);
    AtomList k2 = ex.atoms.leaves({match.k2});
    if (k2.size() != 1)
      return fail("the key dim is split by a reshape");
    // One channel loop: the contracted atoms in the order Q reads them.
    AtomList k1;
    for (const AtomList &dim : match.query->layout)
      for (unsigned leaf : ex.atoms.leaves(dim))
        if (llvm::is_contained(match.k1, leaf) && !llvm::is_contained(k1, leaf))
          k1.push_back(leaf);
    if (k1.size() != match.k1.size())
      return fail("the query does not read every contracted channel");
    channelHead = k1[0];
    channelParts.assign(k1.begin() + 1, k1.end());
    channelPrevious.clear();
    for (size_t i = 1; i < k1.size(); ++i)
      channelPrevious[k1[i]] = k1[i - 1];
    SmallVector<unsigned> channels, queryAndBatch;
    for (unsigned leaf : outLeaves) {
      if (llvm::is_contained(channels, leaf) ||
          llvm::is_contained(queryAndBatch, leaf) ||
          llvm::is_contained(k1, leaf) || leaf == k2[0])
        return fail("the output repeats a dim or has the keys or channels");
      if (valueLeaves.contains(leaf) && !queryLeaves.contains(leaf))
        channels.push_back(leaf);
      else
        queryAndBatch.push_back(leaf);
    }
    // A size-1 dim of V and the output only is a unit batch dim unless it
    // is the only value channel.
    if (channels.size() > 1) {
      SmallVector<unsigned> units;
      for (unsigned leaf : channels)
        if (ex.atoms.size(leaf) == 1)
          units.push_back(leaf);
      if (units.size() < channels.size())
        for (unsigned leaf : units) {
          llvm::erase(channels, leaf);
          queryAndBatch.push_back(leaf);
        }
    }
    // A key-only position mask (keys <= t, the same for every row) is
    // causal on one query row at qpos = t. With no query dim of size 1 (a
    // host compiler folded the decode step's unit dims away, or every row
    // of a prefill sees the same keys) the op gets a query loop of size 1 of
    // its own: Q and the output read it as a unit dim, and every other dim
    // of Q and the output is a batch dim. The op's causal attribute then
    // says what the frontend's mask said, whatever unit dims were folded.
    SmallVector<unsigned> candidates;
    for (unsigned leaf : queryAndBatch)
      if (!keyLeaves.contains(leaf) && !valueLeaves.contains(leaf))
        candidates.push_back(leaf);
    bool unitQueryLoop = match.positionMask && match.positionMask->keyOnly &&
                         llvm::none_of(candidates, [&](unsigned leaf) {
                           return ex.atoms.size(leaf) == 1;
                         });
    SmallVector<unsigned> loops;
    for (unsigned leaf : outLeaves)
      if (llvm::is_contained(queryAndBatch, leaf))
        loops.push_back(leaf);
    size_t unitQueryPosition = loops.size();
    loops.push_back(k1[0]);
    loops.push_back(k2[0]);
    loops.append(channels);
    unsigned position = 0;
    for (auto [i, leaf] : llvm::enumerate(loops)) {
      int64_t size = ex.atoms.size(leaf);
      if (ShapedType::isDynamic(size) || size <= 0)
        return fail("dynamic shapes are not raised");
      if (unitQueryLoop && i == unitQueryPosition)
        syntheticQueryLoop = position++;
      loopOf[leaf] = position++;
    }
    numLoops = position;
    keyLoop = loopOf[k2[0]];

    SmallVector<unsigned> queryUnits;
    for (unsigned leaf : queryAndBatch)
      if (ex.atoms.size(leaf) == 1)
        queryUnits.push_back(loopOf[leaf]);
    if (syntheticQueryLoop)
      queryUnits.push_back(*syntheticQueryLoop);
    if (failed(planView(match.query, queryUnits, "the query", q)) ||
        failed(planView(match.key, {}, "the key", k)) ||
        failed(planView(match.value, {}, "the value", v)))
      return failure();
    if (match.mask && failed(planView(match.mask, {}, "the mask", mask)))
      return failure();
    const std::optional<PositionMask> &pm = match.positionMask;
    hasPositions = pm && pm->positions;
    if (hasPositions &&
        failed(planView(pm->positions, {}, "the positions", positions)))
      return failure();
    if (match.sinks && failed(planView(match.sinks, {}, "the sinks", sinks)))
      return failure();

    // Roles, and which loop in Q and the output only is the queries.
    SmallVector<AffineExpr> outExprs;
    bool unitQueryPending = syntheticQueryLoop.has_value();
    auto addUnitQueryDim = [&] {
      insertUnitQueryDim(outExprs.size());
      outExprs.push_back(getAffineDimExpr(*syntheticQueryLoop, ctx));
      outShape.push_back(1);
      unitQueryPending = false;
    };
    for (unsigned leaf : outLeaves) {
      // The unit query dim goes before the value channels.
      if (unitQueryPending && llvm::is_contained(channels, leaf))
        addUnitQueryDim();
      outExprs.push_back(getAffineDimExpr(loopOf[leaf], ctx));
      outShape.push_back(ex.atoms.size(leaf));
    }
    if (unitQueryPending)
      addUnitQueryDim();
    outMap = AffineMap::get(numLoops, 0, outExprs, ctx);
    if (syntheticQueryLoop) {
      queryDim = *syntheticQueryLoop;
    } else {
      FailureOr<unsigned> queries = chooseQueries(candidates);
      if (failed(queries))
        return failure();
      if (candidates.size() > 1)
        queryDim = loopOf[*queries];
    }
    std::string rolesWhy;
    FailureOr<AttentionDims> dims =
        AttentionDims::infer(q.map, k.map, v.map, outMap, queryDim, &rolesWhy);
    if (failed(dims))
      return fail("the dims do not have attention's roles: " + rolesWhy);

    auto isAttentionFloat = [](Type t) {
      return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
    };
    if (!isAttentionFloat(q.element) || !isAttentionFloat(v.element) ||
        !isAttentionFloat(rootType.getElementType()) || q.element != k.element)
      return fail("Q, K, V and the output must be f16/bf16/f32/f64, Q and K "
                  "of one type");
    auto indexesNonScore = [&](const ViewPlan &plan, bool allowKeys) {
      return llvm::any_of(plan.loops, [&](unsigned loop) {
        return loop == loopOf[k1[0]] || (!allowKeys && loop == keyLoop) ||
               llvm::any_of(channels,
                            [&](unsigned c) { return loop == loopOf[c]; });
      });
    };
    if (match.mask) {
      if (!mask.element.isInteger(1) && !isAttentionFloat(mask.element))
        return fail("the mask is neither i1 nor f16/bf16/f32/f64");
      if (indexesNonScore(mask, /*allowKeys=*/true))
        return fail("the mask is indexed by a channel dim");
    }
    if (hasPositions && indexesNonScore(positions, /*allowKeys=*/false))
      return fail("the query positions are indexed by a key or channel dim");
    if (match.sinks) {
      if (!isAttentionFloat(sinks.element))
        return fail("the sinks are not f16/bf16/f32/f64");
      if (!llvm::all_of(sinks.loops, [&](unsigned loop) {
            return llvm::is_contained(dims->batch, loop);
          }))
        return fail("the sink column is not read from sinks indexed by "
                    "batch dims only (it varies along the queries or a "
                    "channel dim, or is computed per element)");
    }

    // A fully masked row: torch's guard gives zeros, the op NaN.
    if (match.guard) {
      if (hasPositions)
        return fail("a row may be fully masked by its position, and the "
                    "frontend's guard zeroes it");
      if (pm && pm->offset < 0)
        return fail("the causal mask leaves the first rows fully masked, and "
                    "the frontend's guard zeroes them");
      guardMask = match.mask != nullptr;
    }
    return success();
  }

  Value emit(RewriterBase &rewriter) {
    linalg::LinalgOp root = match.root;
    Location loc = root.getLoc();
    for (auto [apply, plan] :
         {std::pair(match.foldQuery, &q), std::pair(match.foldKey, &k)}) {
      if (!apply)
        continue;
      rewriter.setInsertionPoint(apply);
      auto unit = cast<ApplyOp>(rewriter.clone(*apply.getOperation()));
      unit.setMagnitudeAttr(rewriter.getF64FloatAttr(1.0));
      if (apply.getFreqs())
        unit.setFreqsAttr(unitMagnitudeFreqs(apply));
      plan->source = unit->getResult(0);
    }
    for (auto [unscaled, plan] : {std::pair(match.unscaledQuery, &q),
                                  std::pair(match.unscaledKey, &k)}) {
      if (!unscaled.producer)
        continue;
      plan->source =
          raise::copyYielding(rewriter, unscaled.producer, unscaled.value);
    }
    rewriter.setInsertionPoint(root);
    Value query = emitView(rewriter, loc, q), key = emitView(rewriter, loc, k),
          value = emitView(rewriter, loc, v);
    Value maskValue = match.mask ? emitView(rewriter, loc, mask) : Value();
    Value positionsValue =
        hasPositions ? emitView(rewriter, loc, positions) : Value();
    Value sinksValue = match.sinks ? emitView(rewriter, loc, sinks) : Value();
    Value init = tensor::EmptyOp::create(rewriter, loc, outShape,
                                         rootType.getElementType());
    SmallVector<Attribute> maps = {AffineMapAttr::get(q.map),
                                   AffineMapAttr::get(k.map),
                                   AffineMapAttr::get(v.map)};
    if (match.mask)
      maps.push_back(AffineMapAttr::get(mask.map));
    if (hasPositions)
      maps.push_back(AffineMapAttr::get(positions.map));
    if (match.sinks)
      maps.push_back(AffineMapAttr::get(sinks.map));
    maps.push_back(AffineMapAttr::get(outMap));
    const std::optional<PositionMask> &pm = match.positionMask;
    Value keyOffset, queryOffset;
    if (hasPositions && pm->keyOffset != 0)
      keyOffset = arith::ConstantIndexOp::create(rewriter, loc, pm->keyOffset);
    // One query row seeing keys up to t: qpos = t (Sk − 1 by default).
    if (pm && pm->keyOnly && pm->offset != ex.atoms.size(match.k2) - 1)
      queryOffset = arith::ConstantIndexOp::create(rewriter, loc, pm->offset);
    IntegerAttr window;
    if (pm && pm->window)
      window = rewriter.getI64IntegerAttr(*pm->window);
    auto attention = AttentionOp::create(
        rewriter, loc, init.getType(), query, key, value, maskValue,
        positionsValue, queryOffset, keyOffset, sinksValue,
        rewriter.getArrayAttr(maps), rewriter.getF64FloatAttr(match.scale),
        pm ? rewriter.getUnitAttr() : UnitAttr(), window,
        queryDim ? rewriter.getI64IntegerAttr(*queryDim) : IntegerAttr(), init);
    if (match.softcap)
      buildSoftcapRegion(rewriter, loc, attention, *match.softcap);
    Value result = attention.getResult();
    if (guardMask)
      result = zeroFullyMaskedRows(rewriter, loc, result, maskValue);
    if (outShape.size() != static_cast<size_t>(rootType.getRank()))
      result = tensor::CollapseShapeOp::create(rewriter, loc, rootType, result,
                                               outGroups);
    return result;
  }

private:
  LogicalResult fail(const Twine &reason) {
    why = reason.str();
    return failure();
  }

  /// Makes room for the unit query dim at output position `at`: it joins
  /// the group of the dim before it (the first group at 0).
  void insertUnitQueryDim(int64_t at) {
    for (ReassociationIndices &group : outGroups)
      for (int64_t &d : group)
        if (d >= at)
          ++d;
    for (ReassociationIndices &group : outGroups)
      if (at == 0 ? &group == &outGroups.front()
                  : llvm::is_contained(group, at - 1)) {
        group.push_back(at);
        llvm::sort(group);
        return;
      }
  }

  DenseSet<unsigned> leavesOf(Node *node) {
    DenseSet<unsigned> set;
    for (const AtomList &dim : node->layout)
      for (unsigned leaf : ex.atoms.leaves(dim))
        set.insert(leaf);
    return set;
  }

  /// The loop that is the queries among `candidates` (the loops in Q and
  /// the output only): the one a causal mask compares against; else the one
  /// the positions have; else the one query loop of the root contraction;
  /// else the sequence dim of Q's rope.apply; else the largest (later in the
  /// output on a tie). Without a position mask every choice computes the
  /// same: the others are batch dims of the softmax like it.
  FailureOr<unsigned> chooseQueries(ArrayRef<unsigned> candidates) {
    if (candidates.empty()) {
      why = "no dim is the queries (in Q and the output only)";
      return failure();
    }
    const std::optional<PositionMask> &pm = match.positionMask;
    if (pm && pm->keyOnly) {
      // One row: any query dim of size 1 (checked in plan()).
      for (unsigned leaf : candidates)
        if (ex.atoms.size(leaf) == 1)
          return leaf;
    }
    if (pm && !pm->positions && !pm->keyOnly) {
      if (!llvm::is_contained(candidates, pm->queryAtom)) {
        why = "the causal comparison is not against the query dim";
        return failure();
      }
      return pm->queryAtom;
    }
    auto unique = [&](ArrayRef<unsigned> atoms) -> std::optional<unsigned> {
      AtomList leaves = ex.atoms.leaves(atoms);
      std::optional<unsigned> found;
      for (unsigned leaf : leaves)
        if (llvm::is_contained(candidates, leaf) &&
            (ex.atoms.size(leaf) != 1 || leaves.size() == 1)) {
          if (found)
            return std::nullopt;
          found = leaf;
        }
      return found;
    };
    if (pm && pm->positions) {
      AtomList all;
      for (const AtomList &dim : pm->positions->layout)
        all.append(dim);
      if (std::optional<unsigned> m = unique(all))
        return *m;
    }
    if (match.rootQueryAtoms.size() == 1)
      if (std::optional<unsigned> m = unique(match.rootQueryAtoms))
        return *m;
    if (auto rope = match.query->value.getDefiningOp<ApplyOp>()) {
      SmallVector<int64_t> tokens = rope.getTokenDimsOrDefault();
      if (!tokens.empty() && tokens.back() >= 0 &&
          static_cast<size_t>(tokens.back()) < match.query->layout.size())
        if (std::optional<unsigned> m =
                unique(match.query->layout[tokens.back()]))
          return *m;
    }
    unsigned best = candidates.front();
    for (unsigned leaf : candidates)
      if (ex.atoms.size(leaf) >= ex.atoms.size(best))
        best = leaf;
    return best;
  }

  /// How `node` is read as one dim per loop, with the size-1 loops
  /// `unitLoops` it lacks added.
  LogicalResult planView(Node *node, ArrayRef<unsigned> unitLoops,
                         StringRef name, ViewPlan &plan) {
    auto type = dyn_cast<RankedTensorType>(node->value.getType());
    if (!type || node->layout.size() != static_cast<size_t>(type.getRank()))
      return fail(name + " is not a ranked tensor of its layout");
    plan.source = node->value;
    plan.element = type.getElementType();
    SmallVector<std::optional<unsigned>> loopAtDim;
    // Dims that continue the channel loop of the dim before them (the
    // parts of a split channel dim, which the view collapses back).
    SmallVector<bool> continues;
    std::optional<unsigned> previousLeaf;
    for (auto [i, dim] : llvm::enumerate(node->layout)) {
      ReassociationIndices group;
      AtomList leaves = ex.atoms.leaves(dim);
      if (leaves.empty()) {
        if (type.getDimSize(i) != 1)
          return fail(name + " has a dim of no loop");
        group.push_back(plan.expandedShape.size());
        plan.expandedShape.push_back(1);
        loopAtDim.push_back(std::nullopt);
        continues.push_back(false);
        previousLeaf.reset();
      }
      for (unsigned leaf : leaves) {
        group.push_back(plan.expandedShape.size());
        plan.expandedShape.push_back(ex.atoms.size(leaf));
        bool part = llvm::is_contained(channelParts, leaf);
        continues.push_back(part);
        if (part && previousLeaf != channelPrevious.lookup(leaf))
          return fail(name + " reads the parts of the split channel dim apart "
                             "or in another order than the query");
        previousLeaf = leaf;
        auto it = loopOf.find(leaf);
        if (part)
          loopAtDim.push_back(loopAtDim.back());
        else if (it != loopOf.end())
          loopAtDim.push_back(it->second);
        else if (ex.atoms.size(leaf) == 1)
          loopAtDim.push_back(std::nullopt);
        else
          return fail(name + " is indexed by a dim that is none of "
                             "attention's (batch, queries, keys, channels)");
      }
      plan.expandGroups.push_back(group);
    }
    // A split channel dim is read whole or not at all.
    size_t partsRead = llvm::count(continues, true);
    bool headRead = llvm::is_contained(leavesOf(node), channelHead);
    if (!channelParts.empty() &&
        partsRead != (headRead ? channelParts.size() : 0))
      return fail(name + " reads part of the split channel dim");
    plan.expand = plan.expandedShape.size() != plan.expandGroups.size();
    for (auto [i, loop] : llvm::enumerate(loopAtDim)) {
      if (!loop)
        continue;
      if (continues[i]) {
        plan.keptShape.back() *= plan.expandedShape[i];
        continue;
      }
      if (llvm::is_contained(plan.loops, *loop))
        return fail(name + " is read along a diagonal");
      plan.loops.push_back(*loop);
      plan.keptShape.push_back(plan.expandedShape[i]);
    }
    plan.collapse = plan.loops.size() != plan.expandedShape.size();
    if (plan.collapse && !plan.loops.empty()) {
      // Each kept dim takes the unit dims before it; the last kept dim also
      // those after it.
      size_t group = 0;
      plan.collapseGroups.emplace_back();
      for (auto [i, loop] : llvm::enumerate(loopAtDim)) {
        plan.collapseGroups[group].push_back(i);
        bool partFollows = i + 1 < continues.size() && continues[i + 1];
        if (loop && !partFollows && group + 1 < plan.loops.size()) {
          ++group;
          plan.collapseGroups.emplace_back();
        }
      }
    }
    plan.finalShape = plan.keptShape;
    for (unsigned loop : unitLoops) {
      if (llvm::is_contained(plan.loops, loop))
        continue;
      if (plan.insertGroups.empty())
        for (size_t i = 0; i < plan.keptShape.size(); ++i)
          plan.insertGroups.push_back({static_cast<int64_t>(i)});
      if (!plan.insertGroups.empty())
        plan.insertGroups.back().push_back(plan.finalShape.size());
      plan.finalShape.push_back(1);
      plan.loops.push_back(loop);
      plan.insert = true;
    }
    SmallVector<AffineExpr> exprs;
    for (unsigned loop : plan.loops)
      exprs.push_back(getAffineDimExpr(loop, match.root->getContext()));
    plan.map = AffineMap::get(numLoops, 0, exprs, match.root->getContext());
    return success();
  }

  Value emitView(RewriterBase &rewriter, Location loc, const ViewPlan &plan) {
    Value value = plan.source;
    if (plan.expand)
      value = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(plan.expandedShape, plan.element), value,
          plan.expandGroups);
    if (plan.collapse)
      value = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get(plan.keptShape, plan.element),
          value, plan.collapseGroups);
    if (plan.insert)
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(plan.finalShape, plan.element),
          value, plan.insertGroups);
    return value;
  }

  /// The score region `outer · tanh(s ∘ inner)`, in the accumulator type
  /// (the frontend's ops on its constants, widened exactly from f32).
  void buildSoftcapRegion(RewriterBase &rewriter, Location loc,
                          AttentionOp attention,
                          const AttentionMatch::Softcap &cap) {
    OpBuilder::InsertionGuard guard(rewriter);
    FloatType acc = attention.getAccumulatorType();
    SmallVector<Type> types = {acc};
    types.append(numLoops - 2, rewriter.getIndexType());
    SmallVector<Location> locs(types.size(), loc);
    Block *block =
        rewriter.createBlock(&attention.getModifier(), {}, types, locs);
    Value score = block->getArgument(0);
    Value inner = arith::ConstantOp::create(
        rewriter, loc, rewriter.getFloatAttr(acc, cap.inner));
    Value outer = arith::ConstantOp::create(
        rewriter, loc, rewriter.getFloatAttr(acc, cap.outer));
    Value x =
        cap.innerMultiplies
            ? arith::MulFOp::create(rewriter, loc, score, inner).getResult()
            : arith::DivFOp::create(rewriter, loc, score, inner).getResult();
    Value t = math::TanhOp::create(rewriter, loc, x);
    Value r = arith::MulFOp::create(rewriter, loc, t, outer);
    YieldOp::create(rewriter, loc, r);
  }

  /// torch's guard kept: rows whose keys are all masked (false, or −inf)
  /// are zero. For finite scores a masked score is −inf exactly where the
  /// mask masks it, so this is the frontend's test, on the mask alone (no
  /// scores tensor).
  Value zeroFullyMaskedRows(RewriterBase &rewriter, Location loc,
                            Value attention, Value maskValue) {
    MLIRContext *ctx = rewriter.getContext();
    auto maskType = cast<RankedTensorType>(maskValue.getType());
    unsigned rank = maskType.getRank();
    SmallVector<int64_t> rowShape;
    SmallVector<AffineExpr> rowExprs, rowInOut;
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    for (unsigned i = 0; i < rank; ++i) {
      unsigned loop = mask.loops[i];
      if (loop == keyLoop) {
        iterators[i] = utils::IteratorType::reduction;
        continue;
      }
      rowShape.push_back(maskType.getDimSize(i));
      rowExprs.push_back(getAffineDimExpr(i, ctx));
      // Checked in plan(): the mask's other loops are output loops.
      unsigned pos = *outMap.getResultPosition(getAffineDimExpr(loop, ctx));
      rowInOut.push_back(getAffineDimExpr(pos, ctx));
    }
    Type i1 = rewriter.getI1Type();
    Value rowInit = tensor::EmptyOp::create(rewriter, loc, rowShape, i1);
    Value trueValue = arith::ConstantIntOp::create(rewriter, loc, i1, 1);
    rowInit =
        linalg::FillOp::create(rewriter, loc, trueValue, rowInit).getResult(0);
    Type maskElement = maskType.getElementType();
    auto rows = linalg::GenericOp::create(
        rewriter, loc, TypeRange{rowInit.getType()}, ValueRange{maskValue},
        ValueRange{rowInit},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                            AffineMap::get(rank, 0, rowExprs, ctx)},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value masked;
          if (maskElement.isInteger(1)) {
            Value one = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
            masked = arith::XOrIOp::create(b, l, args[0], one);
          } else {
            auto floatType = cast<FloatType>(maskElement);
            Value negInf = arith::ConstantOp::create(
                b, l,
                b.getFloatAttr(floatType,
                               APFloat::getInf(floatType.getFloatSemantics(),
                                               /*Negative=*/true)));
            masked = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                           args[0], negInf);
          }
          Value all = arith::AndIOp::create(b, l, masked, args[1]);
          linalg::YieldOp::create(b, l, all);
        });
    auto outType = cast<RankedTensorType>(attention.getType());
    unsigned outRank = outType.getRank();
    Value empty = tensor::EmptyOp::create(rewriter, loc, outType.getShape(),
                                          outType.getElementType());
    auto zeroed = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType},
        ValueRange{attention, rows.getResult(0)}, ValueRange{empty},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(outRank, ctx),
                            AffineMap::get(outRank, 0, rowInOut, ctx),
                            AffineMap::getMultiDimIdentityMap(outRank, ctx)},
        SmallVector<utils::IteratorType>(outRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value zero = arith::ConstantOp::create(
              b, l, b.getFloatAttr(outType.getElementType(), 0.0));
          Value r = arith::SelectOp::create(b, l, args[1], zero, args[0]);
          linalg::YieldOp::create(b, l, r);
        });
    return zeroed.getResult(0);
  }

  Expressions &ex;
  AttentionMatch &match;
  RankedTensorType rootType;
  SmallVector<ReassociationIndices> outGroups;
  SmallVector<int64_t> outShape;
  DenseMap<unsigned, unsigned> loopOf;
  /// The channel atoms after the first (which has the channel loop) where
  /// a reshape split the channel dim, each with the part before it.
  unsigned channelHead = 0;
  AtomList channelParts;
  DenseMap<unsigned, unsigned> channelPrevious;
  unsigned numLoops = 0, keyLoop = 0;
  ViewPlan q, k, v, mask, positions, sinks;
  bool hasPositions = false, guardMask = false;
  AffineMap outMap;
  std::optional<int64_t> queryDim;
  /// The query loop of size 1 the op gets for a key-only mask when Q and
  /// the output have no query dim of size 1.
  std::optional<unsigned> syntheticQueryLoop;
};

} // namespace

FailureOr<Value> buildAttention(RewriterBase &rewriter, Expressions &ex,
                                AttentionMatch &match, std::string &why) {
  Builder builder(ex, match);
  if (failed(builder.plan())) {
    why = builder.why;
    return failure();
  }
  return builder.emit(rewriter);
}

} // namespace mlir::rope::raise::attention
