//===- ExpandBFloat16.cpp - bf16 conversions as integer arithmetic --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// On x86 without AVX512-BF16, LLVM lowers `fptrunc float to bfloat` to one
// call of the compiler runtime's __truncsfbf2 per element, vectors included:
// a bf16 rope.apply then runs at a small fraction of the copy bandwidth,
// bound by that call, not by memory. Upstream's bf16 expansion (the
// `include-bf16` part of arith-expand) writes the same round-to-nearest-even as
// shifts, adds and selects on the bits, which stay vectors. Only those patterns
// run here: arith-expand would also rewrite min/max and the integer divisions,
// which LLVM already lowers well.
//
// The f32 -> bf16 rounding is our own pattern (preferred over upstream's),
// bit-identical to it: upstream detects NaN with `arith.cmpf une` and selects
// the quiet NaN 0x7fc0 among the i16 results. LLVM's InstCombine then moves
// the bitcast to bf16 into that select (its constant arm folds), and a
// select of <N x bfloat> has no vector form on x86 without AVX512-BF16: it
// is split into one vucomiss/cmov and one 2-byte store per element, which
// made a bf16 rope.apply several times slower than f32. Here the select is on
// the i32 values before the truncation to i16 (NaN found by an unordered
// compare of the f32 value with itself): a vector compare and blend with the
// mask of its own width, then one pack; nothing folds it into bf16.
//
// Run again on the LLVM dialect (rope-to-llvm-cpu does, at its end), the
// pass also gives every load and store of a bf16 vector the i16 vector type
// of the same bits (an llvm.bitcast next to it). A plain bf16 copy (the rows
// of rope.cache_write) is otherwise an <N x bfloat> load and store, which
// x86 legalizes partly as 2-byte scalar moves (4368 movzwl/movw per token
// of 8 heads x 128 channels, the rest ymm moves), slower than the f32 copy
// of twice the bytes. LLVM folds the bitcast pairs: the copy is then of i16
// vectors.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEXPANDBFLOAT16PASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// A splat i32 constant shaped like `like` (or a scalar).
static Value i32Constant(PatternRewriter &rewriter, Location loc, Type like,
                         int64_t value) {
  TypedAttr attr = rewriter.getI32IntegerAttr(static_cast<int32_t>(value));
  if (auto shaped = dyn_cast<ShapedType>(like))
    attr = SplatElementsAttr::get(shaped.clone(rewriter.getI32Type()), attr);
  return arith::ConstantOp::create(rewriter, loc, attr);
}

/// f32 `x` rounded to bf16, as i32 bits whose high half is the bf16 value
/// (round to nearest even, NaN -> 0x7fc0) and whose low half is not zero:
/// the one rounding rule of both patterns below. NaN is found by an
/// unordered compare of x with itself (one vcmpps on x86) and selected among
/// i32 values (see the file comment).
static Value roundedHighHalf(PatternRewriter &rewriter, Location loc, Value x) {
  Type type = x.getType();
  Type i32Type = type;
  if (auto shaped = dyn_cast<ShapedType>(type))
    i32Type = shaped.clone(rewriter.getI32Type());
  else
    i32Type = rewriter.getI32Type();
  auto constant = [&](int64_t value) {
    return i32Constant(rewriter, loc, type, value);
  };
  Value bits = arith::BitcastOp::create(rewriter, loc, i32Type, x);
  Value isNan =
      arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
  // 0x7fff or 0x8000 by bit 16: ties round to even; a carry into the
  // exponent is the correct rounding up (infinities have no mantissa).
  Value bit16 = arith::AndIOp::create(
      rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, constant(16)),
      constant(1));
  Value bias = arith::AddIOp::create(rewriter, loc, bit16, constant(0x7fff));
  Value rounded = arith::AddIOp::create(rewriter, loc, bits, bias);
  return arith::SelectOp::create(rewriter, loc, isNan, constant(0x7fc00000),
                                 rounded);
}

/// f32 -> bf16 round to nearest even, NaN -> 0x7fc0, as integer arithmetic
/// whose select stays on i32 (see the file comment).
struct TruncFToBFloat16 : OpRewritePattern<arith::TruncFOp> {
  TruncFToBFloat16(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type operandType = op.getIn().getType();
    Type resultType = op.getType();
    if (!getElementTypeOrSelf(operandType).isF32() ||
        !getElementTypeOrSelf(resultType).isBF16())
      return rewriter.notifyMatchFailure(op, "not a truncation f32 -> bf16");
    if (op.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not the default rounding");
    Location loc = op.getLoc();
    Type i16Type = rewriter.getI16Type();
    if (auto shaped = dyn_cast<ShapedType>(operandType))
      i16Type = shaped.clone(i16Type);
    Value high = arith::ShRUIOp::create(
        rewriter, loc, roundedHighHalf(rewriter, loc, op.getIn()),
        i32Constant(rewriter, loc, operandType, 16));
    Value narrow = arith::TruncIOp::create(rewriter, loc, i16Type, high);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, narrow);
    return success();
  }
};

/// The lanes of a bf16 vector split into even and odd, widened:
///   arith.extf (vector.deinterleave %v)#0 : vector<N x f32>
/// is the even lanes' bits shifted into the high half of the 32-bit words
/// of %v (vector<2N x bf16> as vector<N x i32>), and the odd lanes (#1) are
/// those words with their low half cleared: one shift or one mask per N
/// lanes, no lane moves (little-endian: lane 2j is the low half of word j).
/// Convert-rope-to-vector rotates bf16 rows in this form.
struct WidenBFloat16WordLanes : OpRewritePattern<arith::ExtFOp> {
  WidenBFloat16WordLanes(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/3) {}

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    auto lanes = op.getIn().getDefiningOp<vector::DeinterleaveOp>();
    auto resultType = dyn_cast<VectorType>(op.getType());
    if (!lanes || !resultType || !resultType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not an extf of lanes to f32");
    VectorType sourceType = lanes.getSourceVectorType();
    if (!sourceType.getElementType().isBF16() || sourceType.getRank() != 1 ||
        sourceType.isScalable())
      return rewriter.notifyMatchFailure(op, "not 1-D bf16 lanes");
    bool even = op.getIn() == lanes.getRes1();
    Location loc = op.getLoc();
    VectorType wordType = resultType.clone(rewriter.getI32Type());
    Value words =
        vector::BitCastOp::create(rewriter, loc, wordType, lanes.getSource());
    Value high =
        even ? arith::ShLIOp::create(rewriter, loc, words,
                                     i32Constant(rewriter, loc, wordType, 16))
                   .getResult()
             : arith::AndIOp::create(
                   rewriter, loc, words,
                   i32Constant(rewriter, loc, wordType, 0xffff0000))
                   .getResult();
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType, high);
    return success();
  }
};

/// The inverse: two f32 vectors rounded to bf16 and interleaved,
///   vector.interleave (arith.truncf %a), (arith.truncf %b)
/// is the words (rounded(a) >> 16) | (rounded(b) & 0xffff0000) viewed as
/// vector<2N x bf16>: a shift and an and-or per 2N lanes instead of a
/// narrowing per N lanes and a word shuffle. The rounding is
/// roundedHighHalf's.
struct NarrowBFloat16WordLanes : OpRewritePattern<vector::InterleaveOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::InterleaveOp op,
                                PatternRewriter &rewriter) const override {
    auto even = op.getLhs().getDefiningOp<arith::TruncFOp>();
    auto odd = op.getRhs().getDefiningOp<arith::TruncFOp>();
    if (!even || !odd)
      return rewriter.notifyMatchFailure(op, "not an interleave of truncf");
    auto halfType = dyn_cast<VectorType>(even.getIn().getType());
    if (!halfType || halfType != odd.getIn().getType() ||
        !halfType.getElementType().isF32() || halfType.getRank() != 1 ||
        halfType.isScalable() ||
        !op.getResultVectorType().getElementType().isBF16() ||
        even.getRoundingmodeAttr() || odd.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not 1-D f32 -> bf16 halves");
    Location loc = op.getLoc();
    Value low = arith::ShRUIOp::create(
        rewriter, loc, roundedHighHalf(rewriter, loc, even.getIn()),
        i32Constant(rewriter, loc, halfType, 16));
    Value high = arith::AndIOp::create(
        rewriter, loc, roundedHighHalf(rewriter, loc, odd.getIn()),
        i32Constant(rewriter, loc, halfType, 0xffff0000));
    Value words = arith::OrIOp::create(rewriter, loc, low, high);
    rewriter.replaceOpWithNewOp<vector::BitCastOp>(op, op.getResultVectorType(),
                                                   words);
    return success();
  }
};

/// bf16 -> f32 as a shift of the bits into the high half (exact). Upstream
/// has the same pattern, but only together with its truncation, which
/// `truncation=target` must leave alone.
struct ExtFFromBFloat16 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type operandType = op.getIn().getType();
    if (!getElementTypeOrSelf(operandType).isBF16() ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not an extension bf16 -> f32");
    Location loc = op.getLoc();
    auto like = [&](Type element) -> Type {
      if (auto shaped = dyn_cast<ShapedType>(operandType))
        return shaped.clone(element);
      return element;
    };
    Type i16Type = like(rewriter.getI16Type());
    Type i32Type = like(rewriter.getI32Type());
    TypedAttr c16 = rewriter.getI32IntegerAttr(16);
    if (auto shaped = dyn_cast<ShapedType>(i32Type))
      c16 = SplatElementsAttr::get(shaped, c16);
    Value bits = arith::BitcastOp::create(rewriter, loc, i16Type, op.getIn());
    Value wide = arith::ExtUIOp::create(rewriter, loc, i32Type, bits);
    Value shifted = arith::ShLIOp::create(
        rewriter, loc, wide, arith::ConstantOp::create(rewriter, loc, c16));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), shifted);
    return success();
  }
};

struct RopeExpandBFloat16Pass
    : rope::impl::RopeExpandBFloat16PassBase<RopeExpandBFloat16Pass> {
  using Base::Base;

  void runOnOperation() override {
    // Nothing to expand without a bf16 value: skip the greedy rewrites,
    // whose region simplification walks every block of the function (after
    // scf-to-cf, thousands in a whole model; issue 33).
    if (!mentionsBFloat16())
      return;
    // First the word-lane forms, whose roots' operands the one-op patterns
    // below would otherwise rewrite first. They read lane 2j as the low half
    // of word j: not on a big-endian data layout (dlti.endianness = "big"),
    // where the one-op forms below and LLVM's lane moves stay correct.
    if (!isBigEndian()) {
      RewritePatternSet wordLanes(&getContext());
      wordLanes.add<WidenBFloat16WordLanes>(&getContext());
      if (truncation == rope::BFloat16Truncation::Bits)
        wordLanes.add<NarrowBFloat16WordLanes>(&getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(wordLanes))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    if (truncation == rope::BFloat16Truncation::Target) {
      // Only the extension: the truncation stays an arith.truncf, which
      // becomes LLVM's fptrunc to bfloat (vcvtneps2bf16 on AVX512-BF16).
      patterns.add<ExtFFromBFloat16>(&getContext());
    } else {
      patterns.add<TruncFToBFloat16>(&getContext());
      arith::populateExpandBFloat16Patterns(patterns);
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    bf16MemoryAsInteger();
  }

  /// Whether a value of the operation (an op's result or operand, a block
  /// argument) has a bf16 type or a type built on bf16 (vector, memref,
  /// LLVM struct or array).
  bool mentionsBFloat16() {
    // Few distinct types, many values: each type is looked into once.
    DenseMap<Type, bool> seen;
    auto isBF16 = [&](Type type) {
      auto [it, inserted] = seen.try_emplace(type, false);
      if (inserted)
        type.walk([&](Type nested) {
          if (nested.isBF16())
            it->second = true;
        });
      return it->second;
    };
    WalkResult result = getOperation()->walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (isBF16(type))
          return WalkResult::interrupt();
      for (Type type : op->getOperandTypes())
        if (isBF16(type))
          return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Type type : block.getArgumentTypes())
            if (isBF16(type))
              return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return result.wasInterrupted();
  }

  /// Whether the closest data layout declares big-endian byte order (no
  /// declaration: little, as on every target rope-to-llvm-cpu builds for).
  bool isBigEndian() {
    auto endianness = dyn_cast_if_present<StringAttr>(
        DataLayout::closest(getOperation()).getEndianness());
    return endianness && endianness.getValue() == "big";
  }

  /// The i16 vector type of a bf16 vector type, else null.
  static VectorType asInteger(Type type) {
    auto vector = dyn_cast<VectorType>(type);
    if (!vector || !vector.getElementType().isBF16())
      return nullptr;
    return vector.clone(IntegerType::get(type.getContext(), 16));
  }

  /// llvm.load / llvm.store of bf16 vectors as i16 vectors (see the file
  /// comment); the ops keep their attributes (alignment, nontemporal, ...).
  void bf16MemoryAsInteger() {
    getOperation()->walk([](LLVM::LoadOp load) {
      VectorType integer = asInteger(load.getType());
      if (!integer)
        return;
      Type type = load.getType();
      load.getResult().setType(integer);
      OpBuilder builder(load->getContext());
      builder.setInsertionPointAfter(load);
      auto cast = LLVM::BitcastOp::create(builder, load.getLoc(), type,
                                          load.getResult());
      load.getResult().replaceAllUsesExcept(cast.getResult(), cast);
    });
    getOperation()->walk([](LLVM::StoreOp store) {
      VectorType integer = asInteger(store.getValue().getType());
      if (!integer)
        return;
      OpBuilder builder(store);
      Value cast = LLVM::BitcastOp::create(builder, store.getLoc(), integer,
                                           store.getValue());
      store.getValueMutable().assign(cast);
    });
  }
};
} // namespace
