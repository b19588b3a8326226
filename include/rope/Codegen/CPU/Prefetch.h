//===- Prefetch.h - Prefetches within a caller's buffer ---------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one way the CPU code generation prefetches: into L2, at a linear
// position of the buffer a view was cut from, clamped to that buffer's first
// and last elements, so that a prefetch never names memory outside what the
// caller passed (rope-prefetch-strided-rows, and the streamed operand of
// rope-vectorize-contractions).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PREFETCH_H
#define ROPE_CODEGEN_CPU_PREFETCH_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::rope {

/// The buffer under a view, as prefetches address it: a flat view of it and
/// the linear positions of its first and last elements.
struct PrefetchBuffer {
  Value flat;
  Value first, last;
};

/// The outermost strided view of `memref` with its element type and memory
/// space, through view-like ops (subviews, casts, reshapes) up to a function
/// argument or allocation.
Value outermostView(Value memref);

/// The buffer under `memref` (outermostView), built where that view is
/// defined: at the start of its block for an argument, else after its
/// definition.
PrefetchBuffer prefetchBufferOf(OpBuilder &b, Location loc, Value memref);

/// The linear position (from the base buffer) of `memref[indices]`, by its
/// strided metadata.
Value linearPosition(OpBuilder &b, Location loc, Value memref,
                     ValueRange indices);

/// A read prefetch into L2 of the element at linear `position` of `buffer`,
/// clamped between its first and last elements.
void prefetchClamped(OpBuilder &b, Location loc, const PrefetchBuffer &buffer,
                     Value position);

/// Read prefetches into L2 of a row's `extent` elements from linear
/// `rowStart` of `buffer`, one per `lineElements`, the row's start clamped
/// once so that the whole row lies in the buffer. For loop bodies that read
/// a row of `extent` consecutive elements of the same buffer: then the
/// buffer is at least that long.
void prefetchRowClamped(OpBuilder &b, Location loc,
                        const PrefetchBuffer &buffer, Value rowStart,
                        int64_t extent, int64_t lineElements);

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_PREFETCH_H
