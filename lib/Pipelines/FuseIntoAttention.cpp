//===- FuseIntoAttention.cpp - The rope-fuse-into-attention pipeline ------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// rope-fuse-into-attention was one pass doing four jobs (raise the softmax,
// raise attention, tile it, fuse the rotations into the scores left); each
// is now a pass of its own, and this pipeline runs them under the old name
// and options, so that what users wrote keeps its meaning.
//
//===----------------------------------------------------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

void mlir::rope::buildRopeFuseIntoAttentionPipeline(
    OpPassManager &pm, const RopeFuseIntoAttentionPipelineOptions &options) {
  // IR that verifies but that MLIR 22's passes crash on is an error first.
  pm.addPass(createRopeCheckIRSafetyPass());
  if (options.wholeAttention) {
    // A softmax written out in linalg ops first becomes linalg.softmax, then
    // attention rope.attention, tiled FlashAttention style with the
    // rotations fused into its loops.
    RopeRaiseSoftmaxPassOptions softmax;
    softmax.remarks = options.remarks;
    pm.addPass(createRopeRaiseSoftmaxPass(softmax));
    RopeRaiseAttentionPassOptions attention;
    attention.remarks = options.remarks;
    pm.addPass(createRopeRaiseAttentionPass(attention));
    RopeTileAttentionPassOptions tile;
    tile.queryTileSize = options.queryTileSize;
    tile.keyTileSize = options.keyTileSize;
    tile.decodeKeyTileSize = options.decodeKeyTileSize;
    tile.fuseKey = options.fuseKey;
    tile.tileGroups = options.tileHeads;
    tile.parallelLoops = options.parallelLoops;
    options.forwardTo(tile);
    pm.addPass(createRopeTileAttentionPass(tile));
  }
  RopeFuseIntoScoresPassOptions scores;
  scores.queryTileSize = options.queryTileSize;
  scores.keyTileSize = options.keyTileSize;
  scores.fuseKey = options.fuseKey;
  scores.tileHeads = options.tileHeads;
  scores.parallelLoops = options.parallelLoops;
  scores.remarks = options.remarks;
  pm.addPass(createRopeFuseIntoScoresPass(scores));
}
