//===- Prefetch.cpp - Software prefetches within a caller's buffer --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Prefetch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value rope::outermostView(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewDest() != memref)
      break;
    auto source = dyn_cast<MemRefType>(view.getViewSource().getType());
    if (!source || source.getElementType() != type.getElementType() ||
        source.getMemorySpace() != type.getMemorySpace() || !source.isStrided())
      break;
    memref = view.getViewSource();
  }
  return memref;
}

/// Linear positions (from the base buffer) of the view's first and last
/// elements: the corners of its index space at which every stride's term is
/// smallest and largest. Both are elements of the view, so every position
/// between them lies in its allocation.
static std::pair<Value, Value>
viewBounds(OpBuilder &b, Location loc, memref::ExtractStridedMetadataOp meta) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value first = meta.getOffset(), last = meta.getOffset();
  for (auto [size, stride] : llvm::zip(meta.getSizes(), meta.getStrides())) {
    Value term = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, size, one), stride);
    first = arith::AddIOp::create(b, loc, first,
                                  arith::MinSIOp::create(b, loc, term, zero));
    last = arith::AddIOp::create(b, loc, last,
                                 arith::MaxSIOp::create(b, loc, term, zero));
  }
  return {first, last};
}

rope::PrefetchBuffer rope::prefetchBufferOf(OpBuilder &b, Location loc,
                                            Value memref) {
  Value root = outermostView(memref);
  OpBuilder::InsertionGuard guard(b);
  if (auto argument = dyn_cast<BlockArgument>(root))
    b.setInsertionPointToStart(argument.getOwner());
  else
    b.setInsertionPointAfterValue(root);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, root);
  auto [first, last] = viewBounds(b, loc, meta);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto rootType = cast<MemRefType>(root.getType());
  auto flatType =
      MemRefType::get({ShapedType::kDynamic}, rootType.getElementType(),
                      AffineMap(), rootType.getMemorySpace());
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, meta.getBaseBuffer(), b.getIndexAttr(0),
      {OpFoldResult(arith::AddIOp::create(b, loc, last, one).getResult())},
      {b.getIndexAttr(1)});
  return {flat, first, last};
}

Value rope::linearPosition(OpBuilder &b, Location loc, Value memref,
                           ValueRange indices) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value position = meta.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, meta.getStrides()))
    position = arith::AddIOp::create(
        b, loc, position, arith::MulIOp::create(b, loc, index, stride));
  return position;
}

/// The prefetch itself, at a position already within the buffer.
static void prefetchAt(OpBuilder &b, Location loc,
                       const rope::PrefetchBuffer &buffer, Value position) {
  // A read prefetch into L2: a write prefetch (prefetchw) holds a fill
  // buffer until the line is owned, and many rows' lines then crowd out the
  // demand misses (measured slower on MLA's q, bf16 and f32: docs/
  // PERFORMANCE.md, "Numbers from code comments"); into L1 (locality 3,
  // prefetcht0) a decode step's streamed K read at about half the rate it
  // reads with L2 (bench/cpp/stream_prefetch_probe.cpp; docs/PERFORMANCE.md,
  // "Decode: the streamed rows prefetched").
  memref::PrefetchOp::create(b, loc, buffer.flat, ValueRange{position},
                             /*isWrite=*/false, /*localityHint=*/2,
                             /*isDataCache=*/true);
}

void rope::prefetchClamped(OpBuilder &b, Location loc,
                           const PrefetchBuffer &buffer, Value position) {
  prefetchAt(b, loc, buffer,
             arith::MaxSIOp::create(
                 b, loc, arith::MinSIOp::create(b, loc, position, buffer.last),
                 buffer.first));
}

void rope::prefetchRowClamped(OpBuilder &b, Location loc,
                              const PrefetchBuffer &buffer, Value rowStart,
                              int64_t extent, int64_t lineElements) {
  // One clamp for the whole row: its start within [first, last - extent +
  // 1], which is not empty as the caller reads a row of `extent` elements of
  // this buffer in the same loop body; then every line of the row is in the
  // buffer. (A clamp per line cost a decode step at L = 1024 keys, whose K
  // and V sit in the L3, more than the prefetches gained.)
  Value lastStart = arith::SubIOp::create(
      b, loc, buffer.last,
      arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(extent - 1, 0)));
  Value start = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, rowStart, lastStart),
      buffer.first);
  for (int64_t at = 0; at < extent; at += std::max<int64_t>(lineElements, 1))
    prefetchAt(
        b, loc, buffer,
        at == 0 ? start
                : arith::AddIOp::create(
                      b, loc, start, arith::ConstantIndexOp::create(b, loc, at))
                      .getResult());
}
