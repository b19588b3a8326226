//===- AttentionToGPU.cpp - Tiled attention loops to GPU threads ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GPU mapping of rope.attention. rope-to-nvvm first tiles the op with
// rope-tile-attention into FlashAttention-2 loops whose outer scf.forall has
// one query row per iteration (queries and GQA group heads tiled by 1), the
// rotation of Q fused per row and, in decode, the rotation of K per key
// tile; inside, an scf.for over key tiles carries the row's online softmax
// state (acc[Dv], max, sum) around rope.online_attention, and a normalize
// generic writes the row. Then:
//
//   rope-decompose-in-forall   the fused rope.apply tiles and the online
//                              steps inside the forall become linalg (the
//                              thread computes them itself; a top-level
//                              rope.apply still gets its own gpu.launch from
//                              convert-rope-to-gpu, which runs after this);
//   one-shot bufferization;
//   rope-map-forall-to-gpu     the forall becomes scf.parallel loops mapped
//                              to blocks x threads, one row per thread, its
//                              buffers per-thread allocas;
//   convert-parallel-loops-to-gpu (upstream) makes the gpu.launch.
//
// One thread owns one query row and runs that row's whole online softmax
// over every key: no value is shared between threads, so the kernel needs no
// shared memory and no barrier, and any order of the threads computes the
// same result (which is why the CPU emulation of the launch is exact). This
// is the simplest correct mapping, not a fast one: K/V tiles are re-read by
// every row (from L1/L2, not shared memory), the Q·Kᵀ and P·V products are
// scalar FMA loops instead of tensor-core MMAs, and the row state and
// scores live in local memory.
//
// What is written here rather than taken from upstream, and why:
// - The mapping uses upstream's loop utilities (scf::forallToParallelLoop,
//   collapseParallelLoops, scf::tileParallelLoop, gpu::setMappingAttr) and
//   upstream's convert-parallel-loops-to-gpu, not the transform dialect's
//   map_forall_to_blocks/threads: those need static trip counts, and
//   attention's query and key lengths are often dynamic. gpu-map-parallel-
//   loops maps at most three dims per level and makes the rest sequential
//   loops, hence the collapse into one dim first.
// - One-shot bufferization allocates a fresh heap buffer per tile, inside
//   the key loop. upstream's promote-buffers-to-stack would leave those
//   allocas inside the loop (the stack grows with every iteration) and
//   buffer-loop-hoisting cannot know that the parallel loop's iterations are
//   threads (it would hoist a buffer out of them, shared by all threads). A
//   buffer that does not escape its block is private to the thread, so it
//   becomes one alloca at the start of the thread's body (the kernel's entry
//   block: local memory, registers where LLVM can promote it).
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToGPU/AttentionToGPU.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "rope/Dialect/Rope/Utils/GuardedValueBounds.h"

#include <numeric>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEINFORALLPASS
#define GEN_PASS_DEF_ROPEMAPFORALLTOGPUPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

//===----------------------------------------------------------------------===//
// rope-decompose-in-forall
//===----------------------------------------------------------------------===//

namespace {
struct DecomposeAggregateInForall
    : OpInterfaceRewritePattern<linalg::AggregatedOpInterface> {
  DecomposeAggregateInForall(MLIRContext *ctx, AngleMethod angle)
      : OpInterfaceRewritePattern(ctx), angle(angle) {}

  LogicalResult matchAndRewrite(linalg::AggregatedOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (!op->getParentOfType<scf::ForallOp>())
      return rewriter.notifyMatchFailure(op, "not inside an scf.forall");
    auto apply = dyn_cast<ApplyOp>(op.getOperation());
    FailureOr<SmallVector<Value>> values =
        apply ? decomposeApply(rewriter, apply, angle)
              : op.decomposeOperation(rewriter);
    if (failed(values))
      return rewriter.notifyMatchFailure(op, "no decomposition");
    rewriter.replaceOp(op, *values);
    return success();
  }

  AngleMethod angle;
};

struct RopeDecomposeInForallPass
    : rope::impl::RopeDecomposeInForallPassBase<RopeDecomposeInForallPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](linalg::AggregatedOpInterface op) {
      if (op->getParentOfType<scf::ForallOp>())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateDecomposeInForallPatterns(patterns, angle);
    // Only these ops and what their decompositions create (which may be
    // aggregated again: rope.online_attention -> linalg.softmax-like
    // steps); nothing else in the module is folded or rewritten.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
        .enableFolding(false)
        .enableConstantCSE(false);
    (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
    WalkResult left =
        getOperation()->walk([](linalg::AggregatedOpInterface op) {
          if (!op->getParentOfType<scf::ForallOp>())
            return WalkResult::advance();
          op->emitOpError("inside an scf.forall could not be decomposed");
          return WalkResult::interrupt();
        });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateDecomposeInForallPatterns(RewritePatternSet &patterns,
                                                   AngleMethod angle) {
  patterns.add<DecomposeAggregateInForall>(patterns.getContext(), angle);
}

//===----------------------------------------------------------------------===//
// rope-map-forall-to-gpu
//===----------------------------------------------------------------------===//

namespace {

/// A buffer allocated inside an iteration, and the static shape of the
/// alloca that replaces it (its sizes, or their constant upper bounds).
struct PrivateBuffer {
  memref::AllocOp alloc;
  SmallVector<int64_t> shape;
};

/// True when a view of `alloc` leaves the block it is allocated in (yielded
/// from a loop or an scf.if, passed to a call): reusing one alloca for every
/// execution of that block would then alias a value still in use.
bool escapesBlock(memref::AllocOp alloc) {
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(user))
        return true;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// The shape of the private copy of `alloc`: dynamic sizes replaced by
/// their constant upper bounds (a partial key tile: affine.min(Tk, ...)).
FailureOr<SmallVector<int64_t>> privateShape(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    if (!type.isDynamicDim(d))
      continue;
    FailureOr<int64_t> bound =
        guardedConstantBound(presburger::BoundType::UB, {alloc.getResult(), d},
                             /*closedUB=*/true);
    if (failed(bound) || *bound < 0)
      return failure();
    shape[d] = *bound;
  }
  return shape;
}

/// `a * b` of two index values or constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x);
  std::optional<int64_t> cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// Replaces `buffer.alloc` by an alloca at `start` (and, for dynamic sizes,
/// a view of the alloca with the alloc's sizes and row-major strides, so
/// the users keep their identity-layout type).
void privatize(RewriterBase &rewriter, const PrivateBuffer &buffer,
               Block *start) {
  memref::AllocOp alloc = buffer.alloc;
  MemRefType type = alloc.getType();
  Location loc = alloc.getLoc();
  rewriter.setInsertionPointToStart(start);
  auto privateType =
      MemRefType::get(buffer.shape, type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace());
  Value replacement = memref::AllocaOp::create(rewriter, loc, privateType,
                                               alloc.getAlignmentAttr());
  if (!type.hasStaticShape()) {
    rewriter.setInsertionPoint(alloc);
    SmallVector<OpFoldResult> sizes;
    auto dynamicSizes = alloc.getDynamicSizes().begin();
    for (int64_t size : type.getShape())
      sizes.push_back(ShapedType::isDynamic(size)
                          ? OpFoldResult(*dynamicSizes++)
                          : OpFoldResult(rewriter.getIndexAttr(size)));
    SmallVector<OpFoldResult> strides(sizes.size(), rewriter.getIndexAttr(1));
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d)
      strides[d] = multiply(rewriter, loc, strides[d + 1], sizes[d + 1]);
    // The same elements, in a buffer as large as the bounds.
    int64_t elements = std::accumulate(buffer.shape.begin(), buffer.shape.end(),
                                       int64_t(1), std::multiplies<int64_t>());
    auto flatType =
        MemRefType::get({elements}, type.getElementType(),
                        MemRefLayoutAttrInterface(), type.getMemorySpace());
    Value flat = replacement;
    if (buffer.shape.size() != 1) {
      rewriter.setInsertionPointAfterValue(replacement);
      SmallVector<ReassociationIndices> all(1);
      all[0] = llvm::to_vector(
          llvm::seq<int64_t>(0, static_cast<int64_t>(buffer.shape.size())));
      flat = memref::CollapseShapeOp::create(rewriter, loc, flatType,
                                             replacement, all);
      rewriter.setInsertionPoint(alloc);
    }
    replacement = memref::ReinterpretCastOp::create(
        rewriter, loc, type, flat, rewriter.getIndexAttr(0), sizes, strides);
  }
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      rewriter.eraseOp(user);
  rewriter.replaceOp(alloc, replacement);
}

} // namespace

FailureOr<std::pair<scf::ParallelOp, scf::ParallelOp>>
mlir::rope::mapForallToGPU(RewriterBase &rewriter, scf::ForallOp forall,
                           const ForallToGPUOptions &options) {
  if (forall.getNumResults() != 0)
    return forall.emitOpError("must be bufferized (no results) to be mapped "
                              "to the GPU");
  if (options.blockSize < 1)
    return forall.emitOpError("block size must be >= 1");

  // Checked first, so that a failure changes nothing.
  SmallVector<PrivateBuffer> buffers;
  WalkResult walk = forall.getRegion().walk([&](memref::AllocOp alloc) {
    FailureOr<SmallVector<int64_t>> shape = privateShape(alloc);
    if (failed(shape)) {
      alloc.emitOpError("inside a loop mapped to GPU threads needs a static "
                        "size or a constant upper bound");
      return WalkResult::interrupt();
    }
    if (escapesBlock(alloc)) {
      alloc.emitOpError("inside a loop mapped to GPU threads leaves the block "
                        "it is allocated in");
      return WalkResult::interrupt();
    }
    buffers.push_back({alloc, *shape});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // The iteration count when static: a smaller block then fits it exactly.
  std::optional<int64_t> iterations = 1;
  for (auto [lb, ub, st] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                 forall.getMixedStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb);
    std::optional<int64_t> u = getConstantIntValue(ub);
    std::optional<int64_t> s = getConstantIntValue(st);
    if (!iterations || !l || !u || !s || *s < 1)
      iterations = std::nullopt;
    else
      *iterations *= std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s));
  }

  rewriter.setInsertionPoint(forall);
  scf::ParallelOp parallel;
  if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel)))
    return failure();
  {
    // One dim from 0 with step 1 (also for one dim: tileParallelLoop's tail
    // guard is only right for unit steps). collapseParallelLoops replaces
    // the loop by a new one at its place.
    Operation *next = parallel->getNextNode();
    std::vector<unsigned> dims(parallel.getNumLoops());
    std::iota(dims.begin(), dims.end(), 0u);
    collapseParallelLoops(rewriter, parallel, {dims});
    parallel = cast<scf::ParallelOp>(next->getPrevNode());
  }
  if (iterations) {
    // The collapsed bound as a constant, so that tileParallelLoop sees
    // whether the block size divides it (and guards only then).
    rewriter.setInsertionPoint(parallel);
    Value count = arith::ConstantIndexOp::create(rewriter, parallel.getLoc(),
                                                 *iterations);
    rewriter.modifyOpInPlace(
        parallel, [&] { parallel.getUpperBoundMutable()[0].set(count); });
  }

  int64_t tile = options.blockSize;
  if (iterations)
    tile = std::max<int64_t>(1, std::min(tile, *iterations));
  // No min/max bounds: the thread loop has a constant trip count (the block
  // size) and a guard for the tail, which convert-parallel-loops-to-gpu maps
  // without an imprecise bound.
  std::pair<scf::ParallelOp, scf::ParallelOp> loops =
      scf::tileParallelLoop(parallel, {tile}, /*noMinMaxBounds=*/true);
  scf::ParallelOp blocks = loops.first, threads = loops.second;

  MLIRContext *ctx = rewriter.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  auto mapping = [&](gpu::Processor processor) {
    return gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity,
                                                identity);
  };
  if (failed(gpu::setMappingAttr(blocks, {mapping(gpu::Processor::BlockX)})) ||
      failed(gpu::setMappingAttr(threads, {mapping(gpu::Processor::ThreadX)})))
    return failure();

  Block *body = threads.getBody();
  for (const PrivateBuffer &buffer : buffers)
    privatize(rewriter, buffer, body);

  SmallVector<memref::CopyOp> copies;
  body->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
  }

  SmallVector<OpOperand *> globalUses;
  body->walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      if (auto global = use.get().getDefiningOp<memref::GetGlobalOp>();
          global && !threads->isAncestor(global))
        globalUses.push_back(&use);
  });
  DenseMap<Operation *, Value> globals;
  for (OpOperand *use : globalUses) {
    Operation *global = use->get().getDefiningOp();
    Value &local = globals[global];
    if (!local) {
      rewriter.setInsertionPointToStart(body);
      local = rewriter.clone(*global)->getResult(0);
    }
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(local); });
  }
  return loops;
}

namespace {
struct RopeMapForallToGPUPass
    : rope::impl::RopeMapForallToGPUPassBase<RopeMapForallToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    getOperation()->walk([&](scf::ForallOp forall) {
      Operation *parent = forall->getParentOp();
      while (
          parent &&
          !isa<scf::ForallOp, scf::ParallelOp, gpu::LaunchOp, gpu::GPUModuleOp>(
              parent))
        parent = parent->getParentOp();
      if (!parent)
        loops.push_back(forall);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : loops)
      if (failed(mapForallToGPU(rewriter, forall, {blockSize})))
        return signalPassFailure();
  }
};
} // namespace
