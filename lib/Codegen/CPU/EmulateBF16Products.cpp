//===- EmulateBF16Products.cpp - AMX and vdpbf16ps as plain vector ops ----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// rope-vectorize-contractions emits AMX tiles (`bf16-products=amx`) and
// vdpbf16ps pairs (`avx512-dot`) for bf16 contractions, which run only on
// CPUs with those units. The packing and indexing around them are where
// such code goes wrong, and they must be testable on every machine CI runs
// on: this rewrites the unit-specific ops into vector ops computing the
// same exact bf16 products, added in the instructions' order.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEMULATEBF16PRODUCTSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// An AMX tile is a 2-D vector of its shape while emulated.
class TileAsVectorConverter : public TypeConverter {
public:
  TileAsVectorConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](amx::TileType tile) -> Type {
      return VectorType::get(tile.getShape(), tile.getElementType());
    });
  }
};

/// The indices of `base` at row `r` of a tile whose first row is at
/// `indices`: one more on the second innermost dim.
SmallVector<Value> rowIndices(OpBuilder &b, Location loc, ValueRange indices,
                              int64_t r) {
  SmallVector<Value> at(indices);
  Value &row = at[at.size() - 2];
  if (r != 0)
    row = arith::AddIOp::create(b, loc, row,
                                arith::ConstantIndexOp::create(b, loc, r));
  return at;
}

/// A tile load with the implicit stride (the base's second innermost dim):
/// one vector load per row.
struct EmulateTileLoad : OpConversionPattern<amx::TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getStride())
      return rewriter.notifyMatchFailure(op, "explicit stride");
    Location loc = op.getLoc();
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    VectorType row =
        VectorType::get(type.getShape().back(), type.getElementType());
    Value tile = arith::ConstantOp::create(rewriter, loc, type,
                                           rewriter.getZeroAttr(type));
    for (int64_t r = 0, e = type.getShape().front(); r < e; ++r) {
      Value v = vector::LoadOp::create(
          rewriter, loc, row, adaptor.getBase(),
          rowIndices(rewriter, loc, adaptor.getIndices(), r));
      tile = vector::InsertOp::create(rewriter, loc, v, tile, r);
    }
    rewriter.replaceOp(op, tile);
    return success();
  }
};

/// A tile store with the implicit stride: one vector store per row.
struct EmulateTileStore : OpConversionPattern<amx::TileStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getStride())
      return rewriter.notifyMatchFailure(op, "explicit stride");
    Location loc = op.getLoc();
    Value tile = adaptor.getVal();
    int64_t rows = cast<VectorType>(tile.getType()).getShape().front();
    for (int64_t r = 0; r < rows; ++r)
      vector::StoreOp::create(
          rewriter, loc, vector::ExtractOp::create(rewriter, loc, tile, r),
          adaptor.getBase(),
          rowIndices(rewriter, loc, adaptor.getIndices(), r));
    rewriter.eraseOp(op);
    return success();
  }
};

struct EmulateTileZero : OpConversionPattern<amx::TileZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileZeroOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   rewriter.getZeroAttr(type));
    return success();
  }
};

/// Lanes `parity`, `parity` + 2, ... of `v`: the first or second element of
/// each pair.
Value pairHalf(OpBuilder &b, Location loc, Value v, int64_t parity) {
  int64_t n = cast<VectorType>(v.getType()).getNumElements();
  SmallVector<int64_t> lanes;
  for (int64_t i = parity; i < n; i += 2)
    lanes.push_back(i);
  return vector::ShuffleOp::create(b, loc, v, v, lanes);
}

Value widen(OpBuilder &b, Location loc, Value v) {
  auto type = cast<VectorType>(v.getType());
  return arith::ExtFOp::create(b, loc, type.clone(b.getF32Type()), v);
}

/// tdpbf16ps: acc[m][n] += a[m][2k]·b[k][2n] + a[m][2k+1]·b[k][2n+1] for
/// every pair k in turn, the even product added first; each product of
/// two bf16 is exact in f32, so one FMA per product rounds as the
/// instruction's addition does.
struct EmulateTileMulF : OpConversionPattern<amx::TileMulFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileMulFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getLhsTileType().getElementType().isBF16())
      return rewriter.notifyMatchFailure(op, "not bf16 (tdpfp16ps)");
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs(),
          acc = adaptor.getAcc();
    auto accType = cast<VectorType>(acc.getType());
    int64_t rows = accType.getShape()[0];
    int64_t pairs = cast<VectorType>(rhs.getType()).getShape()[0];
    VectorType rowType =
        VectorType::get(accType.getShape()[1], accType.getElementType());
    // The second operand's pair rows split into even and odd halves once.
    SmallVector<std::array<Value, 2>> halves;
    for (int64_t k = 0; k < pairs; ++k) {
      Value pairRow = widen(rewriter, loc,
                            vector::ExtractOp::create(rewriter, loc, rhs, k));
      halves.push_back({pairHalf(rewriter, loc, pairRow, 0),
                        pairHalf(rewriter, loc, pairRow, 1)});
    }
    Value result = acc;
    for (int64_t m = 0; m < rows; ++m) {
      Value lhsRow = widen(rewriter, loc,
                           vector::ExtractOp::create(rewriter, loc, lhs, m));
      Value row = vector::ExtractOp::create(rewriter, loc, acc, m);
      for (int64_t k = 0; k < pairs; ++k)
        for (int64_t t = 0; t < 2; ++t) {
          Value scalar =
              vector::ExtractOp::create(rewriter, loc, lhsRow, 2 * k + t);
          Value splat =
              vector::BroadcastOp::create(rewriter, loc, rowType, scalar);
          row = vector::FMAOp::create(rewriter, loc, splat, halves[k][t], row);
        }
      result = vector::InsertOp::create(rewriter, loc, row, result, m);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// vdpbf16ps: dst[i] = src[i] + a[2i+1]·b[2i+1], then + a[2i]·b[2i].
struct EmulateDotBF16 : OpConversionPattern<x86vector::DotBF16Op> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(x86vector::DotBF16Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = widen(rewriter, loc, adaptor.getA());
    Value b = widen(rewriter, loc, adaptor.getB());
    Value odd =
        vector::FMAOp::create(rewriter, loc, pairHalf(rewriter, loc, a, 1),
                              pairHalf(rewriter, loc, b, 1), adaptor.getSrc());
    rewriter.replaceOpWithNewOp<vector::FMAOp>(
        op, pairHalf(rewriter, loc, a, 0), pairHalf(rewriter, loc, b, 0), odd);
    return success();
  }
};

struct RopeEmulateBF16ProductsPass
    : rope::impl::RopeEmulateBF16ProductsPassBase<RopeEmulateBF16ProductsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    TileAsVectorConverter converter;
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalDialect<amx::AMXDialect>();
    target.addIllegalOp<x86vector::DotBF16Op>();
    RewritePatternSet patterns(context);
    patterns.add<EmulateTileLoad, EmulateTileStore, EmulateTileZero,
                 EmulateTileMulF, EmulateDotBF16>(converter, context);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
