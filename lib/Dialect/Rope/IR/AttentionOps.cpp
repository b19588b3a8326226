//===- AttentionOps.cpp - rope.attention and rope.online_attention --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loop-dim roles of the attention ops (AttentionDims), their verifier
// (one diagnostic per misuse, naming the operand) and shape reification.
// Tiling lives in AttentionTiling.cpp, the decomposition into linalg in
// AttentionDecompose.cpp.
//
//===----------------------------------------------------------------------===//

#include "FoldTensorCasts.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::rope;

//===----------------------------------------------------------------------===//
// AttentionDims
//===----------------------------------------------------------------------===//

namespace {
/// The loop dims `map` reads (map results that are plain dims).
llvm::SmallBitVector dimsOf(AffineMap map) {
  llvm::SmallBitVector used(map.getNumDims());
  for (AffineExpr e : map.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      used.set(d.getPosition());
  return used;
}
} // namespace

FailureOr<AttentionDims> AttentionDims::infer(AffineMap query, AffineMap key,
                                              AffineMap value, AffineMap output,
                                              std::optional<int64_t> queryDim,
                                              std::string *why) {
  auto fail = [&](const Twine &message) -> FailureOr<AttentionDims> {
    if (why)
      *why = message.str();
    return failure();
  };
  AttentionDims dims;
  dims.numLoops = query.getNumDims();
  llvm::SmallBitVector q = dimsOf(query), k = dimsOf(key), v = dimsOf(value),
                       o = dimsOf(output);
  std::optional<unsigned> m, k1, k2, n;
  SmallVector<unsigned> queryOnly; // in Q and O only: m candidates
  for (unsigned d = 0; d < dims.numLoops; ++d)
    if (q[d] && !k[d] && !v[d] && o[d])
      queryOnly.push_back(d);
  if (queryDim) {
    if (!llvm::is_contained(queryOnly, *queryDim))
      return fail("query_dim = " + Twine(*queryDim) +
                  " is not a loop in the query and output maps only");
    m = *queryDim;
  } else if (queryOnly.size() > 1) {
    return fail("loops d" + Twine(queryOnly[0]) + " and d" +
                Twine(queryOnly[1]) +
                " are both in the query and output maps only: set "
                "query_dim to the one that is the queries (the other is a "
                "broadcast batch dim, e.g. a GQA group)");
  }
  auto assign = [&](std::optional<unsigned> &role, unsigned d,
                    StringRef name) -> bool {
    if (role) {
      if (why)
        *why = (Twine("more than one ") + name + " dim (d" + Twine(*role) +
                " and d" + Twine(d) + ")")
                   .str();
      return false;
    }
    role = d;
    return true;
  };
  for (unsigned d = 0; d < dims.numLoops; ++d) {
    bool inQ = q[d], inK = k[d], inV = v[d], inO = o[d];
    bool ok = true;
    if (inQ && inK && !inV && !inO)
      ok = assign(k1, d, "channel (k1: query and key only)");
    else if (!inQ && inK && inV && !inO)
      ok = assign(k2, d, "key (k2: key and value only)");
    else if (inQ && !inK && !inV && inO && (!m || *m == d))
      m = d;
    else if (!inQ && !inK && inV && inO)
      ok = assign(n, d, "value channel (n: value and output only)");
    else if (inQ && inO)
      dims.batch.push_back(d); // in K and V or not (broadcast: GQA)
    else
      return fail("loop d" + Twine(d) +
                  " has no role: a batch dim must be in the query and "
                  "output maps, and every other dim is exactly one of k1 "
                  "(query, key), k2 (key, value), m (query, output), n "
                  "(value, output)");
    if (!ok)
      return failure();
  }
  if (!m)
    return fail("no query dim (m: in the query and output maps only)");
  if (!k1)
    return fail("no channel dim (k1: in the query and key maps only)");
  if (!k2)
    return fail("no key dim (k2: in the key and value maps only)");
  if (!n)
    return fail("no value channel dim (n: in the value and output maps only)");
  dims.m = *m;
  dims.k1 = *k1;
  dims.k2 = *k2;
  dims.n = *n;
  return dims;
}

SmallVector<unsigned> AttentionDims::scoreDims() const {
  SmallVector<unsigned> result;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != k1 && d != n)
      result.push_back(d);
  return result;
}

SmallVector<unsigned> AttentionDims::rowDims() const {
  SmallVector<unsigned> result;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != k1 && d != n && d != k2)
      result.push_back(d);
  return result;
}

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

namespace {

bool isAttentionFloat(Type type) {
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type);
}

FloatType accumulatorTypeOf(ArrayRef<Type> elementTypes) {
  MLIRContext *ctx = elementTypes.front().getContext();
  for (Type t : elementTypes)
    if (isa<Float64Type>(t))
      return Float64Type::get(ctx);
  return Float32Type::get(ctx);
}

/// The checks both ops share. `outputs` are (name, type) of the value
/// destinations that the last map indexes (the output, or acc).
template <typename OpTy>
LogicalResult verifyAttention(OpTy op, Value output, StringRef outputName) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned expected = 4 + (op.getMask() ? 1 : 0) +
                      (op.getQueryPositions() ? 1 : 0) +
                      (op.getSinks() ? 1 : 0);
  if (maps.size() != expected)
    return op.emitOpError("expected ")
           << expected
           << " indexing maps (query, key, value, [mask], [query_positions], "
           << (std::is_same_v<OpTy, AttentionOp> ? "[sinks], " : "")
           << outputName << "), got " << maps.size();

  SmallVector<std::pair<Value, StringRef>> operands = {
      {op.getQuery(), "query"}, {op.getKey(), "key"}, {op.getValue(), "value"}};
  if (op.getMask())
    operands.push_back({op.getMask(), "mask"});
  if (op.getQueryPositions())
    operands.push_back({op.getQueryPositions(), "query_positions"});
  if (op.getSinks())
    operands.push_back({op.getSinks(), "sinks"});
  operands.push_back({output, outputName});

  unsigned numLoops = maps.front().getNumDims();
  // Static extent of each loop seen so far, and who set it.
  SmallVector<int64_t> extents(numLoops, ShapedType::kDynamic);
  SmallVector<StringRef> setBy(numLoops);
  for (auto [map, operand] : llvm::zip(maps, operands)) {
    auto [value, name] = operand;
    if (map.getNumDims() != numLoops || map.getNumSymbols() != 0)
      return op.emitOpError("indexing map of ")
             << name << " must have " << numLoops
             << " dims and no symbols, got " << AffineMapAttr::get(map);
    if (!map.isProjectedPermutation())
      return op.emitOpError("indexing map of ")
             << name << " must be a projected permutation, got "
             << AffineMapAttr::get(map);
    auto type = cast<RankedTensorType>(value.getType());
    if (map.getNumResults() != type.getRank())
      return op.emitOpError("indexing map of ")
             << name << " has " << map.getNumResults()
             << " results but the operand has rank " << type.getRank();
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      unsigned d = map.getDimPosition(r);
      int64_t size = type.getDimSize(r);
      if (ShapedType::isDynamic(size))
        continue;
      if (!ShapedType::isDynamic(extents[d]) && extents[d] != size)
        return op.emitOpError("dim ")
               << r << " of " << name << " has size " << size << " but d" << d
               << " has size " << extents[d] << " in " << setBy[d];
      extents[d] = size;
      setBy[d] = name;
    }
  }

  std::string why;
  FailureOr<AttentionDims> dims = AttentionDims::infer(
      maps[0], maps[1], maps[2], maps.back(), op.getQueryDim(), &why);
  if (failed(dims))
    return op.emitOpError("indexing maps do not describe attention: ") << why;

  // Element types.
  Type qType = getElementTypeOrSelf(op.getQuery().getType());
  Type kType = getElementTypeOrSelf(op.getKey().getType());
  Type vType = getElementTypeOrSelf(op.getValue().getType());
  for (auto [type, name] : {std::pair<Type, StringRef>{qType, "query"},
                            {kType, "key"},
                            {vType, "value"}})
    if (!isAttentionFloat(type))
      return op.emitOpError(name)
             << " element type must be f16, bf16, f32 or f64, got " << type;
  if (qType != kType)
    return op.emitOpError("query and key element types differ: ")
           << qType << " vs " << kType;
  if (!isAttentionFloat(getElementTypeOrSelf(output.getType())))
    return op.emitOpError(outputName)
           << " element type must be f16, bf16, f32 or f64, got "
           << getElementTypeOrSelf(output.getType());

  // Mask and positions: only batch dims, queries and keys.
  llvm::SmallBitVector allowed(numLoops);
  for (unsigned d : dims->scoreDims())
    allowed.set(d);
  if (AffineMap mask = op.getMaskMap()) {
    for (AffineExpr e : mask.getResults())
      if (!allowed[cast<AffineDimExpr>(e).getPosition()])
        return op.emitOpError("mask map ")
               << AffineMapAttr::get(mask)
               << " indexes a channel dim (k1 or n)";
    Type t = getElementTypeOrSelf(op.getMask().getType());
    if (!t.isInteger(1) && !isAttentionFloat(t))
      return op.emitOpError("mask element type must be i1 (true keeps the "
                            "key) or a float (added to the score), got ")
             << t;
  }
  if (AffineMap positions = op.getQueryPositionsMap()) {
    allowed.reset(dims->k2);
    for (AffineExpr e : positions.getResults())
      if (!allowed[cast<AffineDimExpr>(e).getPosition()])
        return op.emitOpError("query_positions map ")
               << AffineMapAttr::get(positions)
               << " may index only batch dims and the query dim";
    Type t = getElementTypeOrSelf(op.getQueryPositions().getType());
    if (!isa<IntegerType>(t) || t.isInteger(1) ||
        t.getIntOrFloatBitWidth() > 64)
      return op.emitOpError(
                 "query_positions element type must be an integer of 2 to "
                 "64 bits, got ")
             << t;
  }
  if (AffineMap sinks = op.getSinksMap()) {
    for (AffineExpr e : sinks.getResults())
      if (!llvm::is_contained(dims->batch,
                              cast<AffineDimExpr>(e).getPosition()))
        return op.emitOpError("sinks map ")
               << AffineMapAttr::get(sinks)
               << " may index only batch dims (one sink logit per row of "
                  "the softmax, the same for every query)";
    Type t = getElementTypeOrSelf(op.getSinks().getType());
    if (!isAttentionFloat(t))
      return op.emitOpError("sinks element type must be f16, bf16, f32 or "
                            "f64, got ")
             << t;
  }
  if ((op.getQueryPositions() || op.getQueryOffset() || op.getKeyOffset()) &&
      !op.hasPositionMask())
    return op.emitOpError(
        "query_positions, query_offset and key_offset only position the "
        "causal/window mask; the op has neither");
  if (op.getQueryPositions() && op.getQueryOffset())
    return op.emitOpError(
        "query_offset and query_positions both give the query positions");
  if (std::optional<int64_t> window = op.getWindow()) {
    if (*window <= 0)
      return op.emitOpError("window must be positive, got ") << *window;
    if (!op.getCausal())
      return op.emitOpError(
          "window requires causal (keys kpos with qpos - window < kpos <= "
          "qpos)");
  }
  double scale = op.getScale().convertToDouble();
  if (!std::isfinite(scale))
    return op.emitOpError("scale must be finite, got ") << scale;

  // Score region.
  FloatType acc = op.getAccumulatorType();
  if (Block *block = op.getModifierBlock()) {
    unsigned expectedArgs = 1 + dims->scoreDims().size();
    if (block->getNumArguments() != expectedArgs)
      return op.emitOpError("score region must take the score and one index "
                            "per loop but k1 and n (")
             << expectedArgs << " arguments), got " << block->getNumArguments();
    if (block->getArgument(0).getType() != acc)
      return op.emitOpError("score region's first argument must have the "
                            "accumulator type ")
             << acc << ", got " << block->getArgument(0).getType();
    for (BlockArgument arg : block->getArguments().drop_front())
      if (!arg.getType().isIndex())
        return op.emitOpError("score region's index arguments must be index, "
                              "got ")
               << arg.getType();
    auto yield = block->empty() ? YieldOp() : dyn_cast<YieldOp>(block->back());
    if (!yield || yield.getValue().getType() != acc)
      return op.emitOpError("score region must end in rope.yield of a ") << acc;
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

AttentionDims AttentionOp::getDims() {
  SmallVector<AffineMap> maps = getIndexingMapsArray();
  return *AttentionDims::infer(maps[0], maps[1], maps[2], maps.back(),
                               getQueryDim());
}

FloatType AttentionOp::getAccumulatorType() {
  // The operands decide, not the output (which is only converted to), so
  // that rope.attention and its online steps agree.
  return accumulatorTypeOf({getElementTypeOrSelf(getQuery().getType()),
                            getElementTypeOrSelf(getValue().getType())});
}

LogicalResult AttentionOp::verify() {
  if (getInit().getType() != getResult().getType())
    return emitOpError("result type ")
           << getResult().getType() << " must match init type "
           << getInit().getType();
  return verifyAttention(*this, getInit(), "output");
}

LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &shapes) {
  shapes.push_back(tensor::getMixedSizes(b, getLoc(), getInit()));
  return success();
}

//===----------------------------------------------------------------------===//
// rope.online_attention
//===----------------------------------------------------------------------===//

AttentionDims OnlineAttentionOp::getDims() {
  SmallVector<AffineMap> maps = getIndexingMapsArray();
  return *AttentionDims::infer(maps[0], maps[1], maps[2], maps.back(),
                               getQueryDim());
}

FloatType OnlineAttentionOp::getAccumulatorType() {
  return accumulatorTypeOf({getElementTypeOrSelf(getQuery().getType()),
                            getElementTypeOrSelf(getValue().getType())});
}

LogicalResult OnlineAttentionOp::verify() {
  if (failed(verifyAttention(*this, getAcc(), "acc")))
    return failure();
  FloatType acc = getAccumulatorType();
  auto accType = cast<RankedTensorType>(getAcc().getType());
  if (accType.getElementType() != acc)
    return emitOpError("acc element type must be the accumulator type ")
           << acc << ", got " << accType.getElementType();
  // max and sum: acc without its n dim.
  AttentionDims dims = getDims();
  AffineMap accMap = getOutputMap();
  SmallVector<int64_t> rowShape;
  for (unsigned r = 0; r < accMap.getNumResults(); ++r)
    if (accMap.getDimPosition(r) != dims.n)
      rowShape.push_back(accType.getDimSize(r));
  auto rowType = RankedTensorType::get(rowShape, acc);
  for (auto [value, name] :
       {std::pair<Value, StringRef>{getMax(), "max"}, {getSum(), "sum"}})
    if (failed(verifyCompatibleShape(value.getType(), rowType)) ||
        getElementTypeOrSelf(value.getType()) != acc)
      return emitOpError(name)
             << " must be acc's type without the value channel dim (" << rowType
             << "), got " << value.getType();
  if (getAccResult().getType() != getAcc().getType() ||
      getMaxResult().getType() != getMax().getType() ||
      getSumResult().getType() != getSum().getType())
    return emitOpError("result types must match acc, max and sum");
  return success();
}

LogicalResult
OnlineAttentionOp::reifyResultShapes(OpBuilder &b,
                                     ReifiedRankedShapedTypeDims &shapes) {
  for (Value init : {getAcc(), getMax(), getSum()})
    shapes.push_back(tensor::getMixedSizes(b, getLoc(), init));
  return success();
}

//===----------------------------------------------------------------------===//
// Canonicalization
//===----------------------------------------------------------------------===//

namespace {
/// Folds `tensor.cast`s that make an operand less static into the op, as
/// upstream's FoldTensorCastProducerOp does for destination-style ops, with
/// a cast back for each result whose type changes. Upstream's pattern would
/// apply to these ops too, but it copies an op with mlir::clone, which
/// (MLIR 22) dereferences the first block of every region when a listener
/// is attached: with the score region absent, that crashes. This pattern
/// has a higher benefit, so it folds first, and moves the region instead.
template <typename OpTy>
struct FoldTensorCastIntoAttention : OpRewritePattern<OpTy> {
  FoldTensorCastIntoAttention(MLIRContext *ctx)
      : OpRewritePattern<OpTy>(ctx, /*benefit=*/10) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> operands;
    if (!operandsWithCastsFolded(op, operands))
      return rewriter.notifyMatchFailure(op, "no foldable tensor.cast");
    // Results take the (possibly more static) types of their destinations.
    SmallVector<Type> resultTypes;
    unsigned firstInit = op->getNumOperands() - op->getNumResults();
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      resultTypes.push_back(operands[firstInit + i].getType());
    OperationState state(op.getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultTypes);
    state.addAttributes(llvm::to_vector(op->getDiscardableAttrs()));
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addRegion();
    Operation *folded = rewriter.create(state);
    rewriter.inlineRegionBefore(op->getRegion(0), folded->getRegion(0),
                                folded->getRegion(0).end());
    SmallVector<Value> replacements;
    for (auto [old, now] : llvm::zip(op->getResults(), folded->getResults()))
      replacements.push_back(
          old.getType() == now.getType()
              ? Value(now)
              : Value(tensor::CastOp::create(rewriter, op.getLoc(),
                                             old.getType(), now)));
    rewriter.replaceOp(op, replacements);
    return success();
  }
};
} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *ctx) {
  patterns.add<FoldTensorCastIntoAttention<AttentionOp>>(ctx);
}

void OnlineAttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                    MLIRContext *ctx) {
  patterns.add<FoldTensorCastIntoAttention<OnlineAttentionOp>>(ctx);
}
