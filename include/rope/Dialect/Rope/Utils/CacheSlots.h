//===- CacheSlots.h - Where a token goes in a KV cache ----------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The meaning of a slot, shared by every lowering of a cache append
// (`rope.apply`'s `slots`, `rope.cache_write`): a token's slot is a linear
// index over the cache's token dims, row-major (vLLM's `slot_mapping`: for
// pages `[num_pages, page_size, ...]` collapsed to one dim, `page *
// page_size + offset`). A slot outside [0, prod(sizes)) is not an error the
// compiled code can report: the token is written nowhere, so no input, not
// even a corrupt block table, writes outside the cache.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_CACHESLOTS_H
#define ROPE_DIALECT_ROPE_UTILS_CACHESLOTS_H

#include "mlir/IR/Builders.h"

namespace mlir::rope {

/// A token's place in the cache.
struct CacheSlot {
  /// i1: 0 <= slot < prod(cache token sizes). Nothing may be written when
  /// false.
  Value valid;
  /// index: the slot delinearized over the cache's token dims (row-major);
  /// all 0 when not valid, so that even an address formed speculatively is
  /// inside the cache (when the cache is not empty).
  SmallVector<Value> indices;
};

/// The place of the token whose slot is `slot` (an i32/i64/index scalar) in
/// a cache whose token dims have sizes `cacheTokenSizes` (index values, in
/// dim order).
CacheSlot buildCacheSlot(OpBuilder &b, Location loc, Value slot,
                         ValueRange cacheTokenSizes);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_UTILS_CACHESLOTS_H
