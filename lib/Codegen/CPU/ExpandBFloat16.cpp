//===- ExpandBFloat16.cpp - bf16 conversions as integer arithmetic --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// On x86 without AVX512-BF16, LLVM lowers `fptrunc float to bfloat` to one
// call of the compiler runtime's __truncsfbf2 per element, vectors included:
// a bf16 rope.apply then runs at 5-10% of the copy bandwidth, bound by that
// call, not by memory. Upstream's bf16 expansion (the `include-bf16` part of
// arith-expand) writes the same round-to-nearest-even as shifts, adds and
// selects on the bits, which stay vectors. Only those patterns run here:
// arith-expand would also rewrite min/max and the integer divisions, which
// LLVM already lowers well.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEEXPANDBFLOAT16PASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
struct RopeExpandBFloat16Pass
    : rope::impl::RopeExpandBFloat16PassBase<RopeExpandBFloat16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
