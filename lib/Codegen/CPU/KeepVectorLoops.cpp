//===- KeepVectorLoops.cpp - No LLVM unrolling of vector loops ------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loops whose bodies the pipeline has already vectorized (register
// tiles of rope-vectorize-contractions, rows of rope-vectorize-elementwise,
// convert-rope-to-vector's chunks, attention's key tiles) have static trip
// counts in a whole model, and LLVM's unroller fully unrolls them: its size
// estimate counts instructions, so a body of a few <16 x float> operations
// looks small. A 2-layer model became basic blocks of thousands of machine
// instructions, on which the schedulers (quadratic in a block's size) spent
// most of the compile time, for no gain in run time: the vector width and
// the register tiles were chosen here already (issue 33, docs/PERFORMANCE.md
// "Whole-model compile time").
//
// This marks each such loop `llvm.loop.unroll.disable` (an LLVM loop
// annotation, which scf-to-cf and cf-to-llvm carry to the loop's back edge).
// Loops without vector code are left to LLVM, which vectorizes and unrolls
// scalar loops as it sees fit.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEKEEPVECTORLOOPSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

bool hasVectorType(TypeRange types) {
  return llvm::any_of(types, [](Type type) { return isa<VectorType>(type); });
}

/// Whether an op of `loop`'s body (at any depth) computes on vectors.
bool hasVectorCode(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([](Operation *op) {
    if (hasVectorType(op->getResultTypes()) ||
        hasVectorType(op->getOperandTypes()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

struct RopeKeepVectorLoopsPass
    : rope::impl::RopeKeepVectorLoopsPassBase<RopeKeepVectorLoopsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto annotation = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
        /*interleave=*/nullptr,
        LLVM::LoopUnrollAttr::get(context,
                                  /*disable=*/BoolAttr::get(context, true),
                                  /*count=*/nullptr,
                                  /*runtimeDisable=*/nullptr,
                                  /*full=*/nullptr,
                                  /*followupUnrolled=*/nullptr,
                                  /*followupRemainder=*/nullptr,
                                  /*followupAll=*/nullptr),
        /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
        /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr,
        /*mustProgress=*/nullptr, /*isVectorized=*/nullptr,
        /*startLoc=*/nullptr, /*endLoc=*/nullptr, /*parallelAccesses=*/{});
    // The name of llvm.br's inherent attribute: scf-to-cf copies the loop's
    // LLVM-dialect attributes to its back edge, and cf-to-llvm the branch's
    // attributes to llvm.br.
    StringRef name = LLVM::BrOp::getLoopAnnotationAttrName(
                         OperationName(LLVM::BrOp::getOperationName(), context))
                         .getValue();
    getOperation()->walk([&](scf::ForOp loop) {
      if (!loop->hasAttr(name) && hasVectorCode(loop))
        loop->setAttr(name, annotation);
    });
  }
};
} // namespace
