//===- RopeOptimize.cpp - The rope-optimize pipeline ----------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pipeline a compiler runs on a frontend's linalg before its own
// lowering: raise, clean up, fuse. Kept apart from the lowering pipelines
// because it neither bufferizes nor lowers: its output is still tensors.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Pipelines/Pipelines.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

void mlir::rope::buildRopeOptimizePipeline(
    OpPassManager &pm, const RopeOptimizePipelineOptions &options) {
  // IR that verifies but that MLIR 22's passes crash on is an error first.
  pm.addPass(createRopeCheckIRSafetyPass());
  // Frontends split attention into helper functions (JAX's @tril,
  // @_where): raising sees through calls only once they are inlined.
  pm.addPass(createInlinerPass());
  RopeRaisePassOptions raise;
  raise.remarks = options.remarks;
  pm.addPass(createRopeRaisePass(raise));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.portable) {
    // For another compiler: no rope op and no loops of ours. The rotation
    // keeps its exact angle without f64 (IREE demotes f64 to f32 by
    // default); attention is the linalg of its decomposition, which the
    // consumer's dispatch formation takes as any other.
    ConvertRopeToLinalgPassOptions toLinalg;
    toLinalg.angle = AngleMethod::TurnsOrF64;
    pm.addPass(createConvertRopeToLinalgPass(toLinalg));
    pm.addPass(createRopeDecomposeAggregatesPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    return;
  }
  // Raise (the rest of it: a softmax the attention raising did not take),
  // tile, fuse: each once.
  RopeRaiseSoftmaxPassOptions softmax;
  softmax.remarks = options.remarks;
  pm.addPass(createRopeRaiseSoftmaxPass(softmax));
  // rope.attention as FlashAttention loops with the rotations of Q and K
  // fused into them.
  RopeTileAttentionPassOptions tile;
  options.forwardTo(tile);
  pm.addPass(createRopeTileAttentionPass(tile));
  // A raised rotation feeding attention scores the raising did not take.
  RopeFuseIntoScoresPassOptions fuse;
  fuse.remarks = options.remarks;
  pm.addPass(createRopeFuseIntoScoresPass(fuse));
}
