//===- ApproximateTrig.cpp - Polynomial f32 sin/cos -----------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEAPPROXIMATETRIGPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
struct RopeApproximateTrigPass
    : rope::impl::RopeApproximateTrigPassBase<RopeApproximateTrigPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Upstream's patterns only match f32 (and vectors of f32); the predicate
    // sees full op names.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::SinOp::getOperationName() ||
             name == math::CosOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
