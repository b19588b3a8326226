//===- TestPasses.td - Test-only rope passes ---------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TEST_PASSES_TD
#define ROPE_TEST_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestRopeFuseIntoAttentionPatternsPass
    : Pass<"test-rope-fuse-into-attention-patterns"> {
  let summary = "Apply populateRopeFuseIntoAttentionPatterns with "
                "applyPatternsGreedily";
  let description = [{
    Runs the scores patterns of `--rope-fuse-into-attention` (default
    options) under the default greedy driver, which revisits every op, the
    tiles included, until nothing changes; fails if that does not converge.
    The pass itself applies the patterns once per contraction (after raising
    whole attention to rope.attention, which these patterns do not do).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_TEST_PASSES_TD
