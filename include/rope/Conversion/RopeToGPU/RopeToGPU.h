//===- RopeToGPU.h - rope.apply to a GPU kernel -----------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_ROPETOGPU_ROPETOGPU_H
#define ROPE_CONVERSION_ROPETOGPU_ROPETOGPU_H

#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {

#define GEN_PASS_DECL_CONVERTROPETOGPUPASS
#include "rope/Conversion/Passes.h.inc"

/// Launch geometry of the kernels built by
/// `populateRopeToGPUConversionPatterns`.
struct RopeToGPUOptions {
  /// Threads per block (x: frequencies, y: tokens).
  int64_t blockSize = 256;
  /// At most this many blocks; tokens beyond are handled by a grid-stride
  /// loop.
  int64_t maxBlocks = 4096;
  /// Give each thread several consecutive pairs so that every access of x is
  /// 16 bytes (when alignment allows); false: one pair per thread.
  bool vectorize = true;
  /// How computed angles are formed (`angle`).
  AngleMethod angle = AngleMethod::F64;
};

/// Lowers `rope.apply` (on tensors) to a `gpu.launch` on the buffers of its
/// operands: each thread owns V consecutive frequencies of one token (V = 1, or
/// as many as make its accesses 16 bytes), computes (or gathers) their cos/sin
/// once and rotates those pairs of every head of that token, in a grid-stride
/// loop over tokens. Schemes whose frequencies depend on the
/// call's length (`dynamic_ntk`, `longrope`) are not matched.
void populateRopeToGPUConversionPatterns(RewritePatternSet &patterns,
                                         const RopeToGPUOptions &options = {});

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOGPU_ROPETOGPU_H
