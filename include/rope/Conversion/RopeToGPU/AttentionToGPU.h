//===- AttentionToGPU.h - Tiled attention loops to GPU threads --*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_ROPETOGPU_ATTENTIONTOGPU_H
#define ROPE_CONVERSION_ROPETOGPU_ATTENTIONTOGPU_H

#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Pass/Pass.h"

#include <utility>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
namespace scf {
class ForallOp;
class ParallelOp;
} // namespace scf
namespace rope {

#define GEN_PASS_DECL_ROPEDECOMPOSEINFORALLPASS
#define GEN_PASS_DECL_ROPEMAPFORALLTOGPUPASS
#include "rope/Conversion/Passes.h.inc"

/// Decomposes every op implementing AggregatedOpInterface that is nested in
/// an scf.forall (rope.apply tiles, rope.online_attention, linalg.softmax)
/// into its linalg form (rope.apply's with its angle formed by `angle`);
/// ops outside any scf.forall are left alone.
void populateDecomposeInForallPatterns(RewritePatternSet &patterns,
                                       AngleMethod angle = AngleMethod::F64);

/// How an scf.forall is spread over the GPU.
struct ForallToGPUOptions {
  /// Iterations (threads) per block.
  int64_t blockSize = 128;
};

/// Turns a bufferized `forall` (no results) into two nested scf.parallel
/// loops mapped to blockIdx.x and threadIdx.x (ready for upstream's
/// convert-parallel-loops-to-gpu): its dims collapsed into one, tiled by
/// `blockSize`. Buffers allocated inside an iteration become per-thread
/// allocas at the start of the thread loop's body, copies inside become
/// linalg.copy, and memref.get_global read inside is cloned into it.
/// Returns the (blocks, threads) loops; fails, changing nothing, when an
/// allocation inside has no constant size bound or escapes its block.
FailureOr<std::pair<scf::ParallelOp, scf::ParallelOp>>
mapForallToGPU(RewriterBase &rewriter, scf::ForallOp forall,
               const ForallToGPUOptions &options = {});

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOGPU_ATTENTIONTOGPU_H
