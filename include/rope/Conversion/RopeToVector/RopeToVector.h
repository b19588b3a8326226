//===- RopeToVector.h - rope.apply to vector code ---------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_ROPETOVECTOR_ROPETOVECTOR_H
#define ROPE_CONVERSION_ROPETOVECTOR_ROPETOVECTOR_H

#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {

#define GEN_PASS_DECL_CONVERTROPETOVECTORPASS
#include "rope/Conversion/Passes.h.inc"

/// The choices of the vector form (the pass options of the same names).
struct RopeToVectorOptions {
  /// Bytes of x's element type per vector chunk of a row (`vector-bytes`;
  /// 0: one 64-byte cache line of the compute type).
  int64_t vectorBytes = 0;
  /// Heads rotated at once by the tiled form (`tile-heads`, >= 1).
  int64_t tileHeads = 2;
  /// Tokens per tile of the tiled form (`tile-tokens`; 0: automatic).
  int64_t tileTokens = 0;
  /// Threads the token loop will run on (`num-threads`; 0: the OpenMP
  /// runtime's choice): the tiled form keeps a tile per thread.
  int64_t threads = 1;
  /// How computed angles are formed (`angle`).
  AngleMethod angle = AngleMethod::F64;
};

/// Lowers `rope.apply` to an `scf.forall` over tokens whose body computes
/// (or gathers) cos/sin as vectors of the P/2 frequencies once per token and
/// rotates every head's row with vector loads, FMAs and stores, in chunks of
/// `options.vectorBytes` of x's element type; where a head dim precedes the
/// last token dim, over tiles of tokens, `options.tileHeads` heads at once.
void populateRopeToVectorConversionPatterns(
    RewritePatternSet &patterns, const RopeToVectorOptions &options = {});

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOVECTOR_ROPETOVECTOR_H
