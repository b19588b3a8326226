//===- CacheWriteDecompose.h - Portable KV-cache scatter --------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The portable (linalg/scf/tensor) form of a cache append, shared by
// `rope.cache_write`'s decomposition and `rope.apply`'s with `slots`.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_DIALECT_ROPE_IR_CACHEWRITEDECOMPOSE_H
#define ROPE_LIB_DIALECT_ROPE_IR_CACHEWRITEDECOMPOSE_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::rope {

/// Writes the token rows of `input` ([tokens..., heads..., D], tokens at
/// `tokenDims`) into `cache` at `slots` (buildCacheSlot's rule: a slot out of
/// range writes nothing) and returns the updated cache. Each value is stored
/// by buildStoredValue: converted to the cache's element type, or quantized
/// with `scale` (null, a `tensor<f32>`, or a `tensor<Hxf32>` indexed by
/// `singleHeadDim`). The form: one scf.for per token dim carrying the cache,
/// `scf.if valid` around an extract_slice of the token's rows, a
/// linalg.generic storing them into the cache's slice at the slot and a
/// tensor.insert_slice back (in place after bufferization).
Value buildCacheScatter(OpBuilder &b, Location loc, Value input, Value slots,
                        Value scale, Value cache, ArrayRef<int64_t> tokenDims,
                        std::optional<int64_t> singleHeadDim);

} // namespace mlir::rope

#endif // ROPE_LIB_DIALECT_ROPE_IR_CACHEWRITEDECOMPOSE_H
