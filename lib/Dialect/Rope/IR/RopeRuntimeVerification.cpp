//===- RopeRuntimeVerification.cpp - Checked mode of the rope ops ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// RuntimeVerifiableOpInterface for rope.apply, rope.cache_write and the
// attention ops: the relations the static verifiers accept whenever a size is
// dynamic, asserted at run time (upstream's --generate-runtime-verification).
// Every check here is one the verifier makes on static sizes, plus the
// data-dependent ones no verifier can make: every gathered position inside
// the cos/sin cache, and offset + tokens inside int64.
//
//===----------------------------------------------------------------------===//

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::rope;

namespace {
/// Emits the asserts of one op at the builder's insertion point (before the
/// op), each with the op's location and upstream's message prefix.
class RuntimeChecker {
public:
  RuntimeChecker(OpBuilder &b, Location loc, Operation *op,
                 function_ref<std::string(Operation *, StringRef)> message)
      : b(b), loc(loc), op(op), message(message) {}

  /// Asserts `cond` (an i1), failing with `what`.
  void check(Value cond, const Twine &what) {
    cf::AssertOp::create(b, loc, cond, message(op, what.str()));
  }

  /// Asserts that dim `da` of `a` equals dim `db` of `bv`, unless both are
  /// static (then the verifier has compared them).
  void checkSameSize(Value a, int64_t da, StringRef aName, Value bv, int64_t db,
                     StringRef bName) {
    int64_t sa = cast<ShapedType>(a.getType()).getDimSize(da);
    int64_t sb = cast<ShapedType>(bv.getType()).getDimSize(db);
    if ((!ShapedType::isDynamic(sa) && !ShapedType::isDynamic(sb)) ||
        (a == bv && da == db))
      return;
    Value equal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        dim(a, da), dim(bv, db));
    // A static side is named by its size: the message then says what the
    // other operand should have been.
    std::string text;
    llvm::raw_string_ostream os(text);
    os << aName << " dim " << da;
    if (!ShapedType::isDynamic(sb))
      os << " must be " << sb << ", the size of ";
    else if (!ShapedType::isDynamic(sa))
      os << " has " << sa << ", which must be the size of ";
    else
      os << " must equal ";
    os << bName << " dim " << db;
    check(equal, text);
  }

  /// The size of dim `d` of `shaped` as an index (a constant when static).
  Value dim(Value shaped, int64_t d) {
    int64_t size = cast<ShapedType>(shaped.getType()).getDimSize(d);
    if (!ShapedType::isDynamic(size))
      return arith::ConstantIndexOp::create(b, loc, size);
    return tensor::DimOp::create(b, loc, shaped, d);
  }

  Value dimI64(Value shaped, int64_t d) {
    return toI64(b, loc, dim(shaped, d));
  }

  Value i64(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  Value cmp(arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  }
  Value orI(Value lhs, Value rhs) {
    return arith::OrIOp::create(b, loc, lhs, rhs);
  }

  /// True when some dim of `dims` of `shaped` is zero: then the op reads no
  /// position at all. Null when every one of them is static and non-zero.
  Value anyZero(Value shaped, ArrayRef<int64_t> dims) {
    Value result;
    for (int64_t d : dims) {
      int64_t size = cast<ShapedType>(shaped.getType()).getDimSize(d);
      if (size == 0)
        return arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      if (!ShapedType::isDynamic(size))
        continue;
      Value zero = cmp(arith::CmpIPredicate::eq, dim(shaped, d),
                       arith::ConstantIndexOp::create(b, loc, 0));
      result = result ? orI(result, zero) : zero;
    }
    return result;
  }

  /// The smallest and the largest element of an integer tensor as i64, by
  /// a loop nest over its elements (INT64_MAX and INT64_MIN when it is
  /// empty, so that an empty tensor passes every range check).
  std::pair<Value, Value> minMax(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<Value> ivs;
    Value lo = i64(std::numeric_limits<int64_t>::max());
    Value hi = i64(std::numeric_limits<int64_t>::min());
    auto result = buildMinMax(b, tensor, type.getRank(), ivs, lo, hi);
    return result;
  }

private:
  std::pair<Value, Value> buildMinMax(OpBuilder &nb, Value tensor, int64_t rank,
                                      SmallVector<Value> &ivs, Value lo,
                                      Value hi) {
    if (static_cast<int64_t>(ivs.size()) == rank) {
      Value v = toI64(nb, loc, tensor::ExtractOp::create(nb, loc, tensor, ivs));
      return {arith::MinSIOp::create(nb, loc, lo, v),
              arith::MaxSIOp::create(nb, loc, hi, v)};
    }
    int64_t d = ivs.size();
    Value upper =
        ShapedType::isDynamic(cast<ShapedType>(tensor.getType()).getDimSize(d))
            ? Value(tensor::DimOp::create(nb, loc, tensor, d))
            : Value(arith::ConstantIndexOp::create(
                  nb, loc, cast<ShapedType>(tensor.getType()).getDimSize(d)));
    auto loop = scf::ForOp::create(
        nb, loc, arith::ConstantIndexOp::create(nb, loc, 0), upper,
        arith::ConstantIndexOp::create(nb, loc, 1), ValueRange{lo, hi},
        [&](OpBuilder &lb, Location, Value iv, ValueRange args) {
          ivs.push_back(iv);
          auto [l, h] = buildMinMax(lb, tensor, rank, ivs, args[0], args[1]);
          ivs.pop_back();
          scf::YieldOp::create(lb, loc, ValueRange{l, h});
        });
    return {loop.getResult(0), loop.getResult(1)};
  }

  OpBuilder &b;
  Location loc;
  Operation *op;
  function_ref<std::string(Operation *, StringRef)> message;
};

/// Whether an offset of `type` (a scalar or the elements of a tensor) can
/// reach the top of int64 when tokens are added to it.
bool mayOverflowI64(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  return isa<IndexType>(type) || type.getIntOrFloatBitWidth() >= 64;
}
} // namespace

void ApplyOp::generateRuntimeVerification(
    OpBuilder &builder, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  RuntimeChecker c(builder, loc, getOperation(), generateErrorMessage);
  Value x = getInput();
  int64_t rank = getInputType().getRank();
  SmallVector<int64_t> tokenDims = getTokenDimsOrDefault();

  // The destination: x's shape, or with slots a cache whose head and
  // channel dims are x's.
  for (int64_t d = 0; d < rank; ++d)
    if (!getSlots() || !llvm::is_contained(tokenDims, d))
      c.checkSameSize(getInit(), d, getSlots() ? "the cache (outs)" : "outs", x,
                      d, "x");
  if (Value slots = getSlots())
    for (auto [i, d] : llvm::enumerate(tokenDims))
      c.checkSameSize(slots, i, "slots", x, d, "x");

  // Positions cover the tokens (M-RoPE's leading axis of 3 is static).
  if (Value positions = getPositions()) {
    int64_t first = getMropeAttr() ? 1 : 0;
    for (auto [i, d] : llvm::enumerate(tokenDims))
      c.checkSameSize(positions, first + i, "positions", x, d, "x");
  }
  Value offset = getOffset();
  auto offsetTensor =
      offset ? dyn_cast<RankedTensorType>(offset.getType()) : nullptr;
  if (offsetTensor && offsetTensor.getRank() == 1)
    c.checkSameSize(offset, 0, "the per-row offset", x, tokenDims.front(), "x");

  // Pre-gathered cos/sin have x's tokens.
  CosSinSource source = getCosSinSource();
  if (source == CosSinSource::PregatheredCache) {
    for (auto [i, d] : llvm::enumerate(tokenDims)) {
      c.checkSameSize(getCos(), i, "the pre-gathered cos", x, d, "x");
      c.checkSameSize(getSin(), i, "the pre-gathered sin", x, d, "x");
    }
  }
  if (source == CosSinSource::GatheredCache)
    c.checkSameSize(getSin(), 0, "the sin cache", getCos(), 0, "the cos cache");

  // A per-head quantization scale has one entry per head.
  if (Value scale = getQuantScale())
    if (cast<RankedTensorType>(scale.getType()).getRank() == 1)
      if (std::optional<int64_t> head = getSingleHeadDim())
        c.checkSameSize(scale, 0, "the per-head quant_scale", x, *head, "x");

  // With an offset, the positions are offset + s for s in [0, S): the last
  // must be an int64, and with a cache every one a row of it. Nothing is
  // read when x has no token.
  Value noToken;
  auto orNoToken = [&](Value cond) {
    return noToken ? c.orI(noToken, cond) : cond;
  };
  if (offset) {
    noToken = c.anyZero(x, tokenDims);
    Value seqLen = c.dimI64(x, tokenDims.back());
    Value lo, hi;
    if (!offsetTensor) {
      lo = hi = toI64(builder, loc, offset);
    } else if (offsetTensor.getRank() == 0) {
      lo = hi =
          toI64(builder, loc,
                tensor::ExtractOp::create(builder, loc, offset, ValueRange{}));
    } else {
      std::tie(lo, hi) = c.minMax(offset);
    }
    if (mayOverflowI64(offset.getType())) {
      Value limit = arith::SubIOp::create(
          builder, loc, c.i64(std::numeric_limits<int64_t>::max()), seqLen);
      c.check(orNoToken(c.cmp(arith::CmpIPredicate::sle, hi, limit)),
              "offset + tokens overflows int64");
    }
    if (source == CosSinSource::GatheredCache) {
      Value rows = c.dimI64(getCos(), 0);
      c.check(orNoToken(c.cmp(arith::CmpIPredicate::sge, lo, c.i64(0))),
              "offset is negative: a position outside the cos/sin cache");
      // offset + S <= rows, as offset <= rows - S (no overflow: both >= 0).
      Value last = arith::SubIOp::create(builder, loc, rows, seqLen);
      c.check(orNoToken(c.cmp(arith::CmpIPredicate::sle, hi, last)),
              "offset + tokens exceeds the rows of the cos/sin cache: a "
              "position outside the cos/sin cache");
    }
  } else if (source == CosSinSource::GatheredCache) {
    // Explicit positions: every one in [0, rows). An empty positions tensor
    // gives (INT64_MAX, INT64_MIN), which passes.
    auto [lo, hi] = c.minMax(getPositions());
    Value rows = c.dimI64(getCos(), 0);
    c.check(c.cmp(arith::CmpIPredicate::sge, lo, c.i64(0)),
            "a position is negative: outside the cos/sin cache");
    c.check(c.cmp(arith::CmpIPredicate::slt, hi, rows),
            "a position is >= the rows of the cos/sin cache: outside the "
            "cos/sin cache");
  }
}

void CacheWriteOp::generateRuntimeVerification(
    OpBuilder &builder, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  RuntimeChecker c(builder, loc, getOperation(), generateErrorMessage);
  Value x = getInput();
  SmallVector<int64_t> tokenDims = getTokenDimsOrDefault();
  for (int64_t d = 0; d < getInputType().getRank(); ++d)
    if (!llvm::is_contained(tokenDims, d))
      c.checkSameSize(getInit(), d, "the cache (outs)", x, d, "x");
  for (auto [i, d] : llvm::enumerate(tokenDims))
    c.checkSameSize(getSlots(), i, "slots", x, d, "x");
  if (Value scale = getQuantScale())
    if (cast<RankedTensorType>(scale.getType()).getRank() == 1)
      if (std::optional<int64_t> head = getSingleHeadDim())
        c.checkSameSize(scale, 0, "the per-head quant_scale", x, *head, "x");
}

/// Every operand dim an indexing map ties to one loop has that loop's size:
/// the first operand naming the loop is the reference.
template <typename OpTy>
static void verifyAttentionSizes(
    OpTy op, OpBuilder &builder, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  RuntimeChecker c(builder, loc, op.getOperation(), generateErrorMessage);
  SmallVector<std::pair<Value, StringRef>> operands = {
      {op.getQuery(), "query"}, {op.getKey(), "key"}, {op.getValue(), "value"}};
  if (Value mask = op.getMask())
    operands.push_back({mask, "mask"});
  if (Value positions = op.getQueryPositions())
    operands.push_back({positions, "query_positions"});
  if (Value sinks = op.getSinks())
    operands.push_back({sinks, "sinks"});
  operands.push_back({op.getDpsInits().front(), "outs"});
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Per loop: the first (operand index, dim) that names it.
  SmallVector<std::optional<std::pair<size_t, int64_t>>> reference(
      op.getNumLoops());
  for (auto [i, operand] : llvm::enumerate(operands)) {
    for (auto [d, expr] : llvm::enumerate(maps[i].getResults())) {
      auto loopDim = dyn_cast<AffineDimExpr>(expr);
      if (!loopDim)
        continue;
      auto &ref = reference[loopDim.getPosition()];
      if (!ref) {
        ref = {i, static_cast<int64_t>(d)};
        continue;
      }
      c.checkSameSize(operand.first, d, operand.second,
                      operands[ref->first].first, ref->second,
                      operands[ref->first].second);
    }
  }
}

void AttentionOp::generateRuntimeVerification(
    OpBuilder &builder, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  verifyAttentionSizes(*this, builder, loc, generateErrorMessage);
}

void OnlineAttentionOp::generateRuntimeVerification(
    OpBuilder &builder, Location loc,
    function_ref<std::string(Operation *, StringRef)> generateErrorMessage) {
  verifyAttentionSizes(*this, builder, loc, generateErrorMessage);
}
