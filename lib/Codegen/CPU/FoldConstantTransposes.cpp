//===- FoldConstantTransposes.cpp - Transpose constant weights once -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A frontend's linear layer x·Wᵀ keeps W as the model stores it ([out, in])
// and transposes it in the graph: torch-mlir exports a linalg.transpose of
// the weight constant (a dense_resource blob) ahead of every matmul. Lowered
// as written, each call of the compiled model copies every weight matrix
// column by column, and the code generator compiles one gather loop per
// weight (issue 33: a third of a layer's code). This transposes the constant
// at compile time instead: the transpose becomes a constant holding the
// transposed data.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEFOLDCONSTANTTRANSPOSESPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The bytes of a constant's elements in row-major order, when they are
/// available as such (a non-splat dense attribute, or a dense_resource blob
/// that is loaded) and each element is whole bytes; else std::nullopt.
std::optional<ArrayRef<char>> rawElements(Attribute value) {
  auto type = dyn_cast<ShapedType>(cast<TypedAttr>(value).getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    int64_t bytes = type.getNumElements() *
                    (type.getElementType().getIntOrFloatBitWidth() / 8);
    if (static_cast<int64_t>(data.size()) != bytes)
      return std::nullopt;
    return data;
  }
  return std::nullopt;
}

struct FoldConstantTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    Attribute value;
    if (!matchPattern(op.getInput(), m_Constant(&value)))
      return rewriter.notifyMatchFailure(op, "input is not a constant");
    auto resultType = cast<RankedTensorType>(op.getResult()[0].getType());
    // A splat transposes to itself.
    if (auto dense = dyn_cast<DenseElementsAttr>(value);
        dense && dense.isSplat()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, resultType, dense.resizeSplat(resultType));
      return success();
    }
    std::optional<ArrayRef<char>> data = rawElements(value);
    if (!data)
      return rewriter.notifyMatchFailure(op, "elements not available as "
                                             "bytes");
    auto inputType = cast<ShapedType>(op.getInput().getType());
    ArrayRef<int64_t> permutation = op.getPermutation();
    int64_t rank = inputType.getRank();
    int64_t elementBytes =
        inputType.getElementType().getIntOrFloatBitWidth() / 8;
    // Input strides (in elements) in the order of the output's dims.
    SmallVector<int64_t> inputStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inputStrides[d] = inputStrides[d + 1] * inputType.getDimSize(d + 1);
    SmallVector<int64_t> strideOfOutputDim(rank);
    for (int64_t d = 0; d < rank; ++d)
      strideOfOutputDim[d] = inputStrides[permutation[d]];
    ArrayRef<int64_t> outputShape = resultType.getShape();
    std::vector<char> transposed(data->size());
    SmallVector<int64_t> index(rank, 0);
    int64_t source = 0;
    for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
      std::memcpy(transposed.data() + i * elementBytes,
                  data->data() + source * elementBytes, elementBytes);
      // Next output index, row-major; `source` follows it.
      for (int64_t d = rank - 1; d >= 0; --d) {
        source += strideOfOutputDim[d];
        if (++index[d] < outputShape[d])
          break;
        source -= strideOfOutputDim[d] * outputShape[d];
        index[d] = 0;
      }
    }
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(resultType, transposed, splat))
      return rewriter.notifyMatchFailure(op, "not a valid raw buffer");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, resultType,
        DenseElementsAttr::getFromRawBuffer(resultType, transposed));
    return success();
  }
};

struct RopeFoldConstantTransposesPass
    : rope::impl::RopeFoldConstantTransposesPassBase<
          RopeFoldConstantTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConstantTranspose>(&getContext());
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
