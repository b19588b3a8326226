//===- PrefetchStridedRows.cpp - Prefetch rows that are apart in memory ---===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A loop that visits rows of a memref one by one, where the rows are not
// contiguous (a slice of each row of a wider buffer: MLA rotates q's 64 rope
// channels of every 192 in place), keeps only as many rows' cache misses in
// flight as fit between its vector instructions: the hardware prefetchers
// follow contiguous streams, not every third pair of lines: the MLA kernel
// on DeepSeek-V3's q took about twice the time of a loop that only reads and
// writes back the same slices, and close to it with a prefetch of each row's
// lines 16 rows ahead (issue 18; docs/PERFORMANCE.md, "Numbers from code
// comments").
//
// The same holds for contiguous rows read from a view made of several runs
// of them apart (rowsInRunsApart): a tile of keys of every head of K, or of
// tokens of every head of [B, H, S, D], visited a few heads at a time. Each
// head's rows are a run that restarts every tile, and the loop interleaves
// as many runs as it visits heads at once; the rows past a run's tile are
// the same run's next rows, visited with the next tile (issue 35). A single
// run ([B, S, H, D]'s rows) is left to the hardware.
//
// Rows ahead stop at the view's last row unless the enclosing loop visits
// the rows past it next (rowsContinue: MLA's q, a token's heads and then the
// next token's, faster than stopping at each token's last head); a
// [B, H, S, D] buffer visited token by token continues along S, not past
// its last head. Every prefetched position is clamped between the first
// and last elements of the outermost view of the same element type: a
// prefetch never names memory outside the caller's buffer.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Prefetch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEPREFETCHSTRIDEDROWSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// The rows a loop touches in one memref: `memref[leading..., iv, *]`.
/// `runOn`: the rows are contiguous, one run of a view made of several runs
/// apart (see rowsInRunsApart), so the rows past the view's last row are
/// the same run's in the buffer.
struct StridedRows {
  Value memref;
  SmallVector<Value> leading;
  bool runOn = false;
};

/// The memref and indices of a vector access, if it is one, and whether
/// it reads.
struct Access {
  Value memref;
  ValueRange indices;
  bool isRead;
};

std::optional<Access> vectorAccess(Operation *op) {
  if (auto read = dyn_cast<vector::TransferReadOp>(op))
    return Access{read.getBase(), read.getIndices(), true};
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    return Access{write.getBase(), write.getIndices(), false};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return Access{load.getBase(), load.getIndices(), true};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return Access{store.getBase(), store.getIndices(), false};
  return std::nullopt;
}

/// The strides of `type` when its rows (its last dim) are a static number
/// of elements of a known size (integers and floats) at stride 1 and its
/// row stride is static; none otherwise.
std::optional<SmallVector<int64_t>> rowStrides(MemRefType type) {
  int64_t rank = type.getRank();
  if (rank < 2 || type.isDynamicDim(rank - 1) ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      strides[rank - 1] != 1 || ShapedType::isDynamic(strides[rank - 2]))
    return std::nullopt;
  return strides;
}

/// Whether `type`'s rows are apart: the row stride is larger than the row.
bool rowsApart(MemRefType type) {
  std::optional<SmallVector<int64_t>> strides = rowStrides(type);
  int64_t rank = type.getRank();
  return strides && (*strides)[rank - 2] > type.getDimSize(rank - 1);
}

/// Whether `type`'s rows are contiguous but the view is several runs of
/// them apart in memory: a leading dim of more than one index whose static
/// stride is larger than the run (the rows' count times their stride; a
/// dynamic count is taken as smaller). A tile of K's keys for every head
/// ([H, keys, D] of [H, L, D]) or of [B, H, S, D]'s tokens: each head's
/// rows are a run of their own, and a loop over the rows of a few heads
/// at a time (convert-rope-to-vector's jammed heads) interleaves as many
/// runs, each restarting every tile, which the hardware prefetchers follow
/// too late: the rotation of the (hf) decode module's key tiles read K at
/// 12 GB/s without a prefetch and 19 GB/s with one, where one run read
/// alone streams at 35 (bench/cpp/stream_prefetch_probe.cpp; a single run,
/// [B, S, H, D]'s rows, lost 2-17 % to the same prefetch: it is left to
/// the hardware).
bool rowsInRunsApart(MemRefType type) {
  std::optional<SmallVector<int64_t>> strides = rowStrides(type);
  int64_t rank = type.getRank();
  if (!strides || (*strides)[rank - 2] != type.getDimSize(rank - 1))
    return false;
  int64_t rows = type.getDimSize(rank - 2);
  for (int64_t dim = 0; dim < rank - 2; ++dim) {
    int64_t stride = (*strides)[dim];
    if (type.getDimSize(dim) == 1 || ShapedType::isDynamic(stride))
      continue;
    if (ShapedType::isDynamic(rows) ? stride > (*strides)[rank - 2]
                                    : stride > rows * (*strides)[rank - 2])
      return true;
  }
  return false;
}

/// Whether `v` is defined outside `loop`, or computed in it by pure ops
/// without regions from such values (convert-rope-to-vector's jammed heads
/// index head h + 1 and h + 2 in the body): a few levels deep.
bool isInvariant(scf::ForOp loop, Value v, int depth = 3) {
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *op = v.getDefiningOp();
  return depth > 0 && op && isPure(op) && op->getNumRegions() == 0 &&
         op->getBlock() == loop.getBody() &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return isInvariant(loop, operand, depth - 1);
         });
}

/// Moves what computes `v` (isInvariant) in front of `loop`.
void hoist(scf::ForOp loop, Value v) {
  if (loop.isDefinedOutsideOfLoop(v))
    return;
  Operation *op = v.getDefiningOp();
  for (Value operand : op->getOperands())
    hoist(loop, operand);
  loop.moveOutOfLoop(op);
}

/// The rows of strided memrefs that `loop` (step 1) visits by its induction
/// variable, outside nested loops, with the rest of their indices invariant
/// in the loop (isInvariant; moved in front of it).
SmallVector<StridedRows> stridedRowsOf(scf::ForOp loop) {
  SmallVector<StridedRows> found;
  std::optional<APInt> step = loop.getConstantStep();
  if (!step || !step->isOne())
    return found;
  Value iv = loop.getInductionVar();
  loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<LoopLikeOpInterface>(op))
      return WalkResult::skip();
    std::optional<Access> access = vectorAccess(op);
    if (!access)
      return WalkResult::advance();
    auto type = dyn_cast<MemRefType>(access->memref.getType());
    if (!type || !loop.isDefinedOutsideOfLoop(access->memref))
      return WalkResult::advance();
    // Runs are prefetched where they are read: a write prefetch holds a
    // fill buffer until the line is owned (see the pass's contract).
    bool runOn = access->isRead && rowsInRunsApart(type);
    if (!runOn && !rowsApart(type))
      return WalkResult::advance();
    int64_t rank = type.getRank();
    if (access->indices[rank - 2] != iv)
      return WalkResult::advance();
    SmallVector<Value> leading(access->indices.take_front(rank - 2));
    if (!llvm::all_of(leading, [&](Value v) { return isInvariant(loop, v); }))
      return WalkResult::advance();
    bool seen = llvm::any_of(found, [&](const StridedRows &rows) {
      return rows.memref == access->memref && rows.leading == leading;
    });
    if (!seen)
      found.push_back(StridedRows{access->memref, leading, runOn});
    return WalkResult::advance();
  });
  // The prefetch's row offset is formed before the loop.
  for (StridedRows &rows : found)
    for (Value v : rows.leading)
      hoist(loop, v);
  return found;
}

/// The loop around `loop` and its innermost induction variable, when it
/// steps by 1.
Value enclosingInductionVariable(scf::ForOp loop) {
  Operation *parent = loop->getParentOp();
  while (parent && !isa<LoopLikeOpInterface>(parent))
    parent = parent->getParentOp();
  auto outer = dyn_cast_or_null<LoopLikeOpInterface>(parent);
  if (!outer)
    return Value();
  std::optional<SmallVector<Value>> ivs = outer.getLoopInductionVars();
  std::optional<SmallVector<OpFoldResult>> steps = outer.getLoopSteps();
  if (!ivs || !steps || ivs->empty() || steps->size() != ivs->size())
    return Value();
  std::optional<int64_t> step = getConstantIntValue(steps->back());
  if (!step || *step != 1)
    return Value();
  return ivs->back();
}

/// Whether the rows past the last of `rows` are the ones the enclosing loop
/// visits next: `rows` is a rank-reducing subview that drops a dim at the
/// enclosing loop's induction variable (step 1), and that dim's stride is
/// the view's rows times their stride (MLA's q: a token's H rope rows, then
/// the next token's).
struct Continuation {
  enum Kind { Never, Always, AtRunTime } kind = Never;
  /// The subview and its dropped dim (AtRunTime).
  memref::SubViewOp subview;
  int64_t dim = -1;
};

Continuation rowsContinue(scf::ForOp loop, Value rows) {
  auto subview = rows.getDefiningOp<memref::SubViewOp>();
  Value iv = enclosingInductionVariable(loop);
  if (!subview || !iv)
    return {};
  auto type = cast<MemRefType>(rows.getType());
  int64_t rank = type.getRank();
  llvm::SmallBitVector dropped = subview.getDroppedDims();
  SmallVector<OpFoldResult> offsets = subview.getMixedOffsets();
  for (int dim : dropped.set_bits()) {
    if (dyn_cast<Value>(offsets[dim]) != iv)
      continue;
    auto [parentStrides, parentOffset] =
        subview.getSourceType().getStridesAndOffset();
    auto [strides, offset] = type.getStridesAndOffset();
    int64_t count = type.getDimSize(rank - 2);
    if (ShapedType::isDynamic(parentStrides[dim]) ||
        ShapedType::isDynamic(count))
      return {Continuation::AtRunTime, subview, dim};
    return {parentStrides[dim] == count * strides[rank - 2]
                ? Continuation::Always
                : Continuation::Never,
            {},
            -1};
  }
  return {};
}

/// Prefetches, at the top of `loop`'s body, each cache line of the row
/// `distance` iterations ahead of `rows`: within `rows`' view (the last row
/// at most) unless the rows past it are the next ones the enclosing loop
/// visits (rowsContinue).
void prefetchAhead(scf::ForOp loop, const StridedRows &rows, int64_t distance,
                   int64_t lineBytes) {
  Location loc = loop.getLoc();
  auto type = cast<MemRefType>(rows.memref.getType());
  int64_t rank = type.getRank();
  // A view of at most `distance` rows that the enclosing loop does not
  // continue: every prefetch would name its last row, already on its way.
  Continuation onward = rowsContinue(loop, rows.memref);
  if (rows.runOn)
    onward = {Continuation::Always, {}, -1};
  if (onward.kind == Continuation::Never && !type.isDynamicDim(rank - 2) &&
      type.getDimSize(rank - 2) <= distance)
    return;
  int64_t rowLength = type.getDimSize(rank - 1);
  unsigned elementBits = type.getElementTypeBitWidth();
  int64_t lineElements =
      std::max<int64_t>(1, lineBytes * 8 / std::max(8u, elementBits));

  // Where the outermost view is defined (usually the function's argument):
  // its bounds and a flat view of its buffer up to its last element.
  OpBuilder b(loop);
  rope::PrefetchBuffer buffer = rope::prefetchBufferOf(b, loc, rows.memref);
  // Before the loop: where the loop's rows start.
  b.setInsertionPoint(loop);
  auto rowsMeta = memref::ExtractStridedMetadataOp::create(b, loc, rows.memref);
  Value rowBase = rowsMeta.getOffset();
  for (auto [index, stride] :
       llvm::zip(rows.leading, rowsMeta.getStrides().take_front(rank - 2)))
    rowBase = arith::AddIOp::create(
        b, loc, rowBase, arith::MulIOp::create(b, loc, index, stride));
  Value rowStride = rowsMeta.getStrides()[rank - 2];
  Value count = rowsMeta.getSizes()[rank - 2];
  Value lastRow = arith::SubIOp::create(
      b, loc, count, arith::ConstantIndexOp::create(b, loc, 1));
  Value maxRow = lastRow;
  Value unbounded = arith::ConstantIndexOp::create(
      b, loc, std::numeric_limits<int64_t>::max());
  if (onward.kind == Continuation::Always) {
    maxRow = unbounded;
  } else if (onward.kind == Continuation::AtRunTime) {
    auto parent = memref::ExtractStridedMetadataOp::create(
        b, loc, onward.subview.getSource());
    Value next = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, parent.getStrides()[onward.dim],
        arith::MulIOp::create(b, loc, count, rowStride));
    maxRow = arith::SelectOp::create(b, loc, next, unbounded, lastRow);
  }

  // In the body: row iv + distance's start, then one position per line
  // (and the row's last element, for rows that do not start on a line).
  b.setInsertionPointToStart(loop.getBody());
  Value ahead = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, loop.getInductionVar(),
                            arith::ConstantIndexOp::create(b, loc, distance)),
      maxRow);
  Value start = arith::AddIOp::create(
      b, loc, rowBase, arith::MulIOp::create(b, loc, ahead, rowStride));
  SmallVector<int64_t> columns;
  for (int64_t column = 0; column < rowLength; column += lineElements)
    columns.push_back(column);
  if (rowLength - 1 > columns.back())
    columns.push_back(rowLength - 1);
  for (int64_t column : columns) {
    Value position = arith::AddIOp::create(
        b, loc, start, arith::ConstantIndexOp::create(b, loc, column));
    rope::prefetchClamped(b, loc, buffer, position);
  }
}

struct RopePrefetchStridedRowsPass
    : rope::impl::RopePrefetchStridedRowsPassBase<RopePrefetchStridedRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (distance < 0 || lineBytes < 1) {
      getOperation()->emitError()
          << "rope-prefetch-strided-rows: distance must be >= 0 and "
             "line-bytes >= 1 (got distance="
          << static_cast<int64_t>(distance)
          << ", line-bytes=" << static_cast<int64_t>(lineBytes) << ")";
      return signalPassFailure();
    }
    if (distance == 0)
      return;
    SmallVector<std::pair<scf::ForOp, StridedRows>> work;
    getOperation()->walk([&](scf::ForOp loop) {
      for (StridedRows &rows : stridedRowsOf(loop))
        work.emplace_back(loop, std::move(rows));
    });
    for (auto &[loop, rows] : work)
      prefetchAhead(loop, rows, distance, lineBytes);
  }
};

} // namespace
