//===- CacheWriteDecompose.cpp - rope.cache_write as scf/linalg -----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// AggregatedOpInterface::decomposeOperation for `rope.cache_write`, and the
// portable scatter that `rope.apply`'s decomposition uses for `slots`:
//
//   %r = scf.for %t0 ... iter_args(%c = %cache) {     // one loop per token dim
//     %slot = tensor.extract %slots[%t0, ...]
//     (valid, cache token indices) = buildCacheSlot(%slot, cache token sizes)
//     %n = scf.if %valid {
//       %row  = tensor.extract_slice %input[token t, all heads, all D]
//       %dst  = tensor.extract_slice %c[slot's token indices, ...]
//       %st   = linalg.copy / generic (quantized) ins(%row) outs(%dst)
//       %ins  = tensor.insert_slice %st into %c[...]
//       scf.yield %ins
//     } else { scf.yield %c }
//     scf.yield %n
//   }
//
// A slot outside [0, prod(cache token sizes)) takes the else branch: nothing
// is written, nothing is addressed. The extract/insert pair on the loop's
// cache bufferizes in place (no copy of the cache).
//
//===----------------------------------------------------------------------===//

#include "CacheWriteDecompose.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/CacheSlots.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rope;

Value mlir::rope::buildCacheScatter(OpBuilder &b, Location loc, Value input,
                                    Value slots, Value scale, Value cache,
                                    ArrayRef<int64_t> tokenDims,
                                    std::optional<int64_t> singleHeadDim) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto cacheType = cast<RankedTensorType>(cache.getType());
  int64_t rank = inputType.getRank();
  Type storage = cacheType.getElementType();
  Type computeType = getComputeElementType(inputType.getElementType());
  MLIRContext *ctx = b.getContext();

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs, ubs, steps, cacheTokenSizes;
  for (int64_t d : tokenDims) {
    lbs.push_back(zero);
    steps.push_back(one);
    ubs.push_back(getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, input, d)));
    cacheTokenSizes.push_back(getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, cache, d)));
  }
  // The rows of one token: every head, every channel (the input's sizes,
  // which the cache shares on these dims).
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, input);
  for (int64_t d : tokenDims)
    rowSizes[d] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));

  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap scaleMap;
  if (scale) {
    if (cast<RankedTensorType>(scale.getType()).getRank() == 0)
      scaleMap = AffineMap::get(rank, 0, {}, ctx);
    else
      scaleMap =
          AffineMap::get(rank, 0, {getAffineDimExpr(*singleHeadDim, ctx)}, ctx);
  }

  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{cache},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs,
          ValueRange iterArgs) -> scf::ValueVector {
        Value current = iterArgs[0];
        Value slot = tensor::ExtractOp::create(nb, nloc, slots, ivs);
        CacheSlot place = buildCacheSlot(nb, nloc, slot, cacheTokenSizes);
        auto ifOp = scf::IfOp::create(
            nb, nloc, place.valid,
            [&](OpBuilder &tb, Location tloc) {
              SmallVector<OpFoldResult> rowOffsets(rank, tb.getIndexAttr(0));
              SmallVector<OpFoldResult> slotOffsets(rank, tb.getIndexAttr(0));
              for (auto [i, d] : llvm::enumerate(tokenDims)) {
                rowOffsets[d] = ivs[i];
                slotOffsets[d] = place.indices[i];
              }
              Value row = tensor::ExtractSliceOp::create(
                  tb, tloc, input, rowOffsets, rowSizes, strides);
              Value dest = tensor::ExtractSliceOp::create(
                  tb, tloc, current, slotOffsets, rowSizes, strides);
              // Without a scale the row already has the cache's element
              // type (verified; for rope.apply's slots the rotation stored
              // it): a linalg.copy, which canonicalization keeps (an
              // identity generic would fold into a bare insert_slice, a
              // strided memref.copy runtime call once bufferized) and the
              // loop lowering inlines. With a scale, a generic storing
              // buildStoredValue.
              Value stored;
              if (!scale) {
                stored =
                    linalg::CopyOp::create(tb, tloc, row, dest).getResult(0);
              } else {
                stored =
                    linalg::GenericOp::create(
                        tb, tloc, TypeRange{dest.getType()},
                        ValueRange{row, scale}, ValueRange{dest},
                        ArrayRef<AffineMap>{identity, scaleMap, identity},
                        SmallVector<utils::IteratorType>(
                            rank, utils::IteratorType::parallel),
                        [&](OpBuilder &gb, Location gloc, ValueRange args) {
                          Value x =
                              convertFloat(gb, gloc, args[0], computeType);
                          linalg::YieldOp::create(
                              gb, gloc,
                              buildStoredValue(gb, gloc, x, storage, args[1]));
                        })
                        .getResult(0);
              }
              Value written = tensor::InsertSliceOp::create(
                  tb, tloc, stored, current, slotOffsets, rowSizes, strides);
              scf::YieldOp::create(tb, tloc, written);
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, current);
            });
        return {ifOp.getResult(0)};
      });
  return nest.results.front();
}

FailureOr<SmallVector<Value>> CacheWriteOp::decomposeOperation(OpBuilder &b) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(*this);
  return SmallVector<Value>{buildCacheScatter(
      b, getLoc(), getInput(), getSlots(), getQuantScale(), getInit(),
      getTokenDimsOrDefault(), getSingleHeadDim())};
}
