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

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {

#define GEN_PASS_DECL_CONVERTROPETOVECTORPASS
#include "rope/Conversion/Passes.h.inc"

/// Lowers `rope.apply` to an `scf.forall` over tokens whose body computes
/// (or gathers) cos/sin as vectors of the P/2 frequencies once per token and
/// rotates every head's row with vector loads, FMAs and stores, in chunks of
/// `vectorBytes` of x's element type (0: one 64-byte cache line of the
/// compute type; the pass option `vector-bytes`).
void populateRopeToVectorConversionPatterns(RewritePatternSet &patterns,
                                            int64_t vectorBytes = 0);

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOVECTOR_ROPETOVECTOR_H
