//===- CheckIRSafety.cpp - Refuse IR that MLIR's passes do not survive ----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pass form of rope::checkIRSafety, so that the named pipelines refuse
// such IR wherever they run (rope-opt, mlir-opt with the plugin, another
// compiler's pass manager), not only behind the C API and the fuzzer: IR
// that verifies but crashes a later upstream pass, or makes it build IR that
// does not verify, is an error naming the op before any of them runs.
//
//===----------------------------------------------------------------------===//

#include "rope/Guards/InputGuards.h"
#include "rope/Transforms/Passes.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPECHECKIRSAFETYPASS
#include "rope/Transforms/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
struct RopeCheckIRSafetyPass
    : rope::impl::RopeCheckIRSafetyPassBase<RopeCheckIRSafetyPass> {
  void runOnOperation() override {
    std::string reason;
    if (succeeded(rope::checkIRSafety(getOperation(), reason)))
      return markAllAnalysesPreserved();
    getOperation()->emitError() << "rope-check-ir-safety: " << reason;
    signalPassFailure();
  }
};
} // namespace
