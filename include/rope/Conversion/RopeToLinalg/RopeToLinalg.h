//===- RopeToLinalg.h - rope.apply to linalg --------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H
#define ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H

#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace rope {

#define GEN_PASS_DECL_CONVERTROPETOLINALGPASS
#include "rope/Conversion/Passes.h.inc"

/// Adds the pattern that rewrites `rope.apply` into its linalg/tensor
/// decomposition (see RopeDecompose.cpp), its angle formed by `angle`.
void populateRopeToLinalgConversionPatterns(
    RewritePatternSet &patterns, AngleMethod angle = AngleMethod::F64);

} // namespace rope
} // namespace mlir

#endif // ROPE_CONVERSION_ROPETOLINALG_ROPETOLINALG_H
