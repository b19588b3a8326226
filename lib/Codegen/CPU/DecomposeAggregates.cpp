//===- DecomposeAggregates.cpp - Decompose linalg.softmax & co. -----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU pipeline lowers linalg ops to loops; an aggregated op such as
// linalg.softmax has no loop lowering of its own, only a decomposition into
// structured ops (upstream's AggregatedOpInterface, which MLIR 22 exposes
// through the transform dialect's decompose_interface and no pass). This is
// that decomposition as a pass, so unfused attention compiles too, and so do
// rope.attention and rope.online_attention (whose decompositions nest).
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEDECOMPOSEAGGREGATESPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
struct RopeDecomposeAggregatesPass
    : rope::impl::RopeDecomposeAggregatesPassBase<RopeDecomposeAggregatesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // A decomposition may produce aggregated ops again (rope.attention ->
    // rope.online_attention -> linalg): repeat until a round changes
    // nothing. Ops that do not decompose are left alone, once each.
    DenseSet<Operation *> undecomposable;
    while (true) {
      SmallVector<linalg::AggregatedOpInterface> ops;
      getOperation()->walk([&](linalg::AggregatedOpInterface op) {
        if (!undecomposable.contains(op))
          ops.push_back(op);
      });
      if (ops.empty())
        break;
      for (linalg::AggregatedOpInterface op : ops) {
        rewriter.setInsertionPoint(op);
        FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
        if (failed(values)) {
          undecomposable.insert(op);
          continue;
        }
        rewriter.replaceOp(op, *values);
      }
    }
  }
};
} // namespace
