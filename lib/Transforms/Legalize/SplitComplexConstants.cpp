//===- SplitComplexConstants.cpp - Complex tensor constants as parts ------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Frontends keep complex tables (Meta's freqs_cis) as complex tensor
// constants; MLIR 22 cannot make an LLVM global of complex elements. Two
// real constants and an elementwise complex.create say the same thing in
// ops every lowering handles.
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <complex>
#include <cstring>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPESPLITCOMPLEXCONSTANTSPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The parts of every element of a complex constant, or failure when the
/// data cannot be read (a resource that was not loaded).
LogicalResult readParts(Attribute value, RankedTensorType type,
                        SmallVectorImpl<llvm::APFloat> &re,
                        SmallVectorImpl<llvm::APFloat> &im) {
  auto part = cast<FloatType>(
      cast<ComplexType>(type.getElementType()).getElementType());
  int64_t n = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    auto values = dense.tryGetValues<std::complex<llvm::APFloat>>();
    if (failed(values))
      return failure();
    for (int64_t i = 0; i < n; ++i) {
      std::complex<llvm::APFloat> z =
          *(values->begin() + (dense.isSplat() ? 0 : i));
      re.push_back(z.real());
      im.push_back(z.imag());
    }
    return success();
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return failure();
  const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  unsigned bits = part.getWidth();
  if (!blob || bits % 8 || bits > 64)
    return failure();
  ArrayRef<char> data = blob->getData();
  size_t bytes = bits / 8;
  if (data.size() < static_cast<size_t>(2 * n) * bytes)
    return failure();
  for (int64_t i = 0; i < 2 * n; ++i) {
    uint64_t word = 0;
    std::memcpy(&word, data.data() + i * bytes, bytes);
    llvm::APFloat f(part.getFloatSemantics(), llvm::APInt(bits, word));
    (i % 2 ? im : re).push_back(f);
  }
  return success();
}

struct SplitComplexConstant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !type.hasStaticShape() ||
        !isa<ComplexType>(type.getElementType()))
      return failure();
    auto part = dyn_cast<FloatType>(
        cast<ComplexType>(type.getElementType()).getElementType());
    if (!part)
      return failure();
    SmallVector<llvm::APFloat> re, im;
    if (failed(readParts(op.getValue(), type, re, im)))
      return rewriter.notifyMatchFailure(op, "unreadable complex constant");
    auto partType = RankedTensorType::get(type.getShape(), part);
    Location loc = op.getLoc();
    Value reValue = arith::ConstantOp::create(
        rewriter, loc, partType, DenseElementsAttr::get(partType, re));
    Value imValue = arith::ConstantOp::create(
        rewriter, loc, partType, DenseElementsAttr::get(partType, im));
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{reValue, imValue},
        ValueRange{init}, ArrayRef<AffineMap>{id, id, id}, iterators,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value z = complex::CreateOp::create(b, nloc, type.getElementType(),
                                              args[0], args[1]);
          linalg::YieldOp::create(b, nloc, z);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct RopeSplitComplexConstantsPass
    : rope::impl::RopeSplitComplexConstantsPassBase<
          RopeSplitComplexConstantsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitComplexConstant>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
