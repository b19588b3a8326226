//===- PayloadAnalysis.cpp - Reading linalg payloads for raises -----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "PayloadAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::rope;

std::optional<double> raise::getScalarConstant(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<arith::TruncFOp, arith::ExtFOp>(def)) {
      // The value the op produces: round through its result type.
      std::optional<double> inner = getScalarConstant(def->getOperand(0));
      if (!inner)
        return std::nullopt;
      auto type = dyn_cast<FloatType>(def->getResult(0).getType());
      if (!type)
        return std::nullopt;
      llvm::APFloat f(*inner);
      bool lost = false;
      f.convert(type.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      return f.convertToDouble();
    }
    FloatAttr attr;
    if (matchPattern(value, m_Constant(&attr)))
      return attr.getValueAsDouble();
    DenseElementsAttr dense;
    if (matchPattern(value, m_Constant(&dense)) && dense.isSplat() &&
        isa<FloatType>(dense.getElementType()))
      return dense.getSplatValue<llvm::APFloat>().convertToDouble();
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>>
raise::staticLoopRanges(linalg::LinalgOp op) {
  AffineMap shapesToLoops = op.getShapesToLoopsMap();
  if (!shapesToLoops)
    return std::nullopt;
  return shapesToLoops.compose(op.createFlatListOfOperandStaticDims());
}

Attribute raise::getScalarConstantAttr(Value value) {
  Attribute attr;
  if (matchPattern(value, m_Constant(&attr)) &&
      isa<FloatAttr, IntegerAttr>(attr))
    return attr;
  Operation *def = value.getDefiningOp();
  if (!isa_and_present<arith::TruncFOp, arith::ExtFOp>(def))
    return {};
  if (auto trunc = dyn_cast<arith::TruncFOp>(def);
      trunc && trunc.getRoundingmodeAttr() &&
      trunc.getRoundingmode() != arith::RoundingMode::to_nearest_even)
    return {};
  FloatAttr source;
  auto type = dyn_cast<FloatType>(value.getType());
  if (!type || !matchPattern(def->getOperand(0), m_Constant(&source)))
    return {};
  APFloat v = source.getValue();
  bool lost = false;
  v.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return FloatAttr::get(type, v);
}

std::optional<APFloat> raise::getSplatFloat(Value value, int maxDepth,
                                            int depth) {
  if (depth > maxDepth)
    return std::nullopt;
  if (Attribute attr = getScalarConstantAttr(value)) {
    if (auto f = dyn_cast<FloatAttr>(attr))
      return f.getValue();
    return std::nullopt;
  }
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
      return std::nullopt;
    return dense.getSplatValue<APFloat>();
  }
  // Any slice of a splat is the splat; an insert covering the whole
  // destination is its source.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
          tensor::ExtractSliceOp>(def))
    return getSplatFloat(def->getOperand(0), maxDepth, depth + 1);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def))
    return isWholeUnitView(insert)
               ? getSplatFloat(insert.getSource(), maxDepth, depth + 1)
               : std::nullopt;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      def->getNumRegions() != 1)
    return std::nullopt;
  Block *block = linalgOp.getBlock();
  auto result = cast<OpResult>(value);
  if (!block || block->empty() ||
      result.getResultNumber() >= block->getTerminator()->getNumOperands())
    return std::nullopt;
  Value yielded = block->getTerminator()->getOperand(result.getResultNumber());
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != block)
      return std::nullopt;
    OpOperand *operand = linalgOp.getMatchingOpOperand(arg);
    if (!operand || !linalgOp.isDpsInput(operand))
      return std::nullopt;
    return getSplatFloat(operand->get(), maxDepth, depth + 1);
  }
  if (yielded.getParentBlock() != block)
    return getSplatFloat(yielded, maxDepth, depth + 1);
  if (auto f = dyn_cast_if_present<FloatAttr>(getScalarConstantAttr(yielded)))
    return f.getValue();
  return std::nullopt;
}

bool raise::isRowMaxStart(const APFloat &value, bool maxnum) {
  return value.isNegInfinity() || (value.isNaN() && maxnum) ||
         value.bitwiseIsEqual(
             APFloat::getLargest(value.getSemantics(), /*Negative=*/true));
}

Value raise::copyYielding(RewriterBase &rewriter, linalg::GenericOp op,
                          Value inner) {
  Block *body = op.getBody();
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> worklist = {inner};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !needed.insert(def))
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value init = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op->getResult(0)),
      inner.getType());
  auto copy = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, op.getInputs(),
      ValueRange{init}, op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(body->getArguments(), args);
        for (Operation &payloadOp : body->without_terminator())
          if (needed.contains(&payloadOp))
            b.clone(payloadOp, mapping);
        linalg::YieldOp::create(b, l, mapping.lookupOrDefault(inner));
      });
  return copy.getResult(0);
}
