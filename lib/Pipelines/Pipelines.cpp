//===- Pipelines.cpp - Named rope-mlir pipelines --------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Conversion/Passes.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::rope::buildRopeToLLVMCpuPipeline(
    OpPassManager &pm, const RopeToLLVMCpuPipelineOptions &options) {
  // IR that verifies but that MLIR 22's passes crash on is an error first.
  pm.addPass(createRopeCheckIRSafetyPass());
  // The checks are generated from the input as the user wrote it (after
  // raising), before tiling and lowering make its ops our own code, which
  // needs none.
  if (options.checked)
    pm.addPass(createGenerateRuntimeVerificationPass());
  // Complex tables (Meta's freqs_cis) have no LLVM global form: as parts.
  pm.addPass(createRopeSplitComplexConstantsPass());
  // rope.attention left whole (not fused by rope-fuse-into-attention) still
  // runs as FlashAttention: tiled with an online softmax, never a
  // [.., Sq, Sk] scores tensor.
  RopeTileAttentionPassOptions attention;
  attention.fuseRotations = false;
  // Static key tiles whatever the sequence length: the register tiles
  // pack K and V only for static extents.
  attention.peelKeyTiles = true;
  pm.addPass(createRopeTileAttentionPass(attention));
  // Before rope.apply is lowered: the rotation moves into the scores'
  // payload, which only the register tiles compute without a stored key.
  if (options.vectorize && options.vectorizeContractions &&
      options.rotateKeysInScores)
    pm.addPass(createRopeRotateKeysInScoresPass());
  if (options.vectorize) {
    ConvertRopeToVectorPassOptions vector;
    vector.vectorBytes = options.vectorBytes;
    vector.tileHeads = options.tileHeads;
    vector.tileTokens = options.tileTokens;
    // A checked kernel runs on one thread (below).
    vector.threads = options.checked ? 1 : int64_t(options.numThreads);
    vector.angle = options.angle;
    pm.addPass(createConvertRopeToVectorPass(vector));
  } else {
    ConvertRopeToLinalgPassOptions linalg;
    linalg.angle = options.angle;
    pm.addPass(createConvertRopeToLinalgPass(linalg));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Canonicalization of rope.apply may produce tensor arithmetic on
  // positions (R(m)R(n) = R(m+n)).
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // linalg.softmax (unfused attention) has no loop lowering.
  pm.addPass(createRopeDecomposeAggregatesPass());
  // Weights transposed in the graph (x·Wᵀ) are transposed once, here.
  pm.addPass(createRopeFoldConstantTransposesPass());
  // Copies that only drop unit dims (views, in the frontend's meaning) are
  // views, not a buffer and a copy per call.
  pm.addPass(createRopeFoldUnitDimCopiesPass());

  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries =
      options.bufferizeFunctionBoundaries;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // In-place insert_slice leaves self-copies (memref.copy %v, %v) once the
  // expand/collapse pairs of the rotation fold and CSE merges the subviews.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones returned buffers it does not own.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every allocation exists now; a size from the caller must not wrap its
  // byte count.
  pm.addPass(createRopeCheckAllocationSizesPass());

  // Before math-to-libm declares the libm functions it calls: the wrappers
  // are requested for every func.func, and a libm declaration with one would
  // be called through a `_mlir_ciface_` symbol nobody defines. Before
  // rope-outline-repeats and rope-outline-chunks too: their functions are
  // called from here only.
  if (options.emitCInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // A model's layers are one layer's code repeated on other weights: from
  // here on, every pass and LLVM see that code once (issue 33). On buffers
  // (weights are globals then, passed as arguments), after deallocation
  // (whose ownership analysis stops at calls).
  if (options.outlineRepeats)
    pm.addPass(createRopeOutlineRepeatsPass());

  // Rows with gaps between them (MLA's rope slice of q) are missed on demand
  // one by one: prefetch them some rows ahead. Before the contractions are
  // vectorized, so only convert-rope-to-vector's row loops are seen.
  if (options.vectorize && options.prefetchRows != 0) {
    RopePrefetchStridedRowsPassOptions prefetch;
    prefetch.distance = options.prefetchRows;
    pm.addNestedPass<func::FuncOp>(createRopePrefetchStridedRowsPass(prefetch));
  }

  // On buffers, after deallocation: tiles index the (sub)views directly and
  // their accumulators are loop-carried registers; contractions it leaves
  // alone become scalar loops below.
  // Vectors no wider than a few of the target's registers: the code
  // generator splits a wider one into registers and spills what does not
  // fit (a 128-lane exp is 16 AVX2 registers per value), which costs both
  // run time and compile time (issue 33).
  if (options.vectorizeContractions) {
    RopeVectorizeContractionsPassOptions contractions;
    contractions.vectorBits = options.contractionVectorBits;
    contractions.slabBytes = options.contractionSlabBytes;
    if (options.contractionRows > 0)
      contractions.rows = options.contractionRows;
    if (options.contractionVectorsPerRow > 0)
      contractions.vectorsPerRow = options.contractionVectorsPerRow;
    if (options.contractionColumns > 0)
      contractions.columns = options.contractionColumns;
    contractions.bf16Products = options.contractionBF16Products;
    contractions.prefetchRows = options.contractionPrefetchRows;
    contractions.rowAccumulators = options.contractionRowAccumulators;
    pm.addNestedPass<func::FuncOp>(
        createRopeVectorizeContractionsPass(contractions));
    if (options.emulateBF16Products)
      pm.addNestedPass<func::FuncOp>(createRopeEmulateBF16ProductsPass());
    RopeVectorizeElementwisePassOptions elementwise;
    elementwise.maxLanes = options.elementwiseMaxLanes;
    pm.addNestedPass<func::FuncOp>(
        createRopeVectorizeElementwisePass(elementwise));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // The token loop (scf.forall of convert-rope-to-vector). A failed check
  // can return to the caller only from the caller's thread (ropeJitInvoke).
  if (options.numThreads == 1 || options.checked) {
    pm.addPass(createForallToForLoopPass());
  } else {
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions openMP;
    openMP.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(openMP));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createRopeApproximateTrigPass());
  // Frontend IR (torch-mlir, JAX via IREE) computes in complex numbers inside
  // linalg.generic bodies: complex.mul/div/exp/... become arith and math on
  // the parts here, complex.create/re/im LLVM structs below.
  pm.addPass(createConvertComplexToStandardPass());
  // bf16 rounding as vector integer ops, not one libcall per element (or,
  // with bf16-truncation=target, the target's conversion instruction).
  RopeExpandBFloat16PassOptions bf16;
  bf16.truncation = options.bf16Truncation;
  pm.addPass(createRopeExpandBFloat16Pass(bf16));
  // fp8 rounding (quantized outputs) has no LLVM lowering upstream.
  pm.addPass(createRopeExpandFloat8Pass());
  // torch-mlir's x^2 is math.fpowi(x, 2): once vectorized its exponent is a
  // vector, which llvm.intr.powi cannot take. A constant exponent becomes
  // multiplications, any other math.powf.
  math::MathExpandOpsPassOptions expandPowI;
  expandPowI.opMnemonics = {"fpowi"};
  pm.addPass(math::createMathExpandOpsPass(expandPowI));
  pm.addPass(createConvertVectorToSCFPass());
  // Loops of vector code stay loops in LLVM too (no unrolling of their
  // static trip counts into blocks that take the code generator seconds).
  pm.addPass(createRopeKeepVectorLoopsPass());
  // A whole model is one function of thousands of loops, and LLVM's loop
  // passes cost more than linear time in a function's size: LLVM is given
  // the body in chunks of bounded size instead, each a function of its own
  // (issue 33). On single-block bodies: before scf-to-cf.
  if (options.outlineMaxOps > 0) {
    RopeOutlineChunksPassOptions outline;
    outline.maxOps = options.outlineMaxOps;
    pm.addPass(createRopeOutlineChunksPass(outline));
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Math before vector to LLVM: math-to-libm unrolls a vector op that has no
  // LLVM intrinsic (math.erf of a vectorized generic) into vector.extract,
  // scalar calls and vector.insert.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  // vdpbf16ps (x86vector.avx512.dot) and AMX tiles of the bf16
  // contractions, unless rewritten into plain vector ops above.
  bool bf16Units = options.contractionBF16Products != BFloat16Products::Fma &&
                   !options.emulateBF16Products;
  vectorToLLVM.x86Vector = bf16Units;
  vectorToLLVM.amx =
      bf16Units && options.contractionBF16Products == BFloat16Products::Amx;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertComplexToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  if (options.runtimeTraps)
    pm.addPass(createRopeLowerAssertsToTrapsPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.numThreads != 1 && !options.checked)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // ub.poison (the padding of vector transfers, vector.from_elements) is
  // left by the vector lowering; without this the result does not translate
  // to LLVM IR.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // bf16 vector loads and stores as i16 vectors: x86 otherwise moves part
  // of a bf16 copy 2 bytes at a time.
  pm.addPass(createRopeExpandBFloat16Pass(bf16));
}

mlir::rope::AngleMethod mlir::rope::resolveGPUAngle(GPUAngle angle,
                                                    StringRef chip) {
  switch (angle) {
  case GPUAngle::F64:
    return AngleMethod::F64;
  case GPUAngle::Turns:
    return AngleMethod::Turns;
  case GPUAngle::Auto:
    break;
  }
  // Fast f64 (at least half the f32 rate): the data-centre parts, with
  // their variants (sm_90a), not their neighbours (sm_86, sm_89).
  for (StringRef fast : {"sm_60", "sm_70", "sm_80", "sm_90", "sm_100"})
    if (chip == fast ||
        (chip.starts_with(fast) && !llvm::isDigit(chip[fast.size()])))
      return AngleMethod::F64;
  return AngleMethod::Turns;
}

void mlir::rope::buildRopeToNVVMPipeline(
    OpPassManager &pm, const RopeToNVVMPipelineOptions &options) {
  // IR that verifies but that MLIR 22's passes crash on is an error first.
  pm.addPass(createRopeCheckIRSafetyPass());
  // rope.attention as FlashAttention loops with one query row per iteration
  // of the outer scf.forall (GQA group heads tiled too): each GPU thread
  // owns a row and its online softmax, so no value is shared between
  // threads (lib/Conversion/RopeToGPU/AttentionToGPU.cpp). The rotation of
  // Q is fused per row; K's per key tile only in decode (auto), else it
  // stays a top-level rope.apply and gets its own kernel below.
  RopeTileAttentionPassOptions attention;
  attention.queryTileSize = 1;
  attention.keyTileSize = options.attentionKeyTile;
  // A decode step's key tile too: its scores and rotated keys are
  // per-thread buffers.
  attention.decodeKeyTileSize = 0;
  attention.fuseKey = options.attentionFuseKey;
  attention.tileGroups = true;
  pm.addPass(createRopeTileAttentionPass(attention));
  // Before convert-rope-to-gpu, which would give every rope.apply tile
  // inside the loops a gpu.launch of its own.
  AngleMethod angle = resolveGPUAngle(options.angle, options.chip);
  RopeDecomposeInForallPassOptions inForall;
  inForall.angle = angle;
  pm.addPass(createRopeDecomposeInForallPass(inForall));
  ConvertRopeToGPUPassOptions toGPU;
  toGPU.blockSize = options.blockSize;
  toGPU.maxBlocks = options.maxBlocks;
  toGPU.vectorize = options.vectorize;
  toGPU.angle = angle;
  pm.addPass(createConvertRopeToGPUPass(toGPU));
  // The angle is already reduced to [-pi, pi] in f64, so libdevice's f32
  // sin/cos would carry a never-taken Payne-Hanek path (a local array, so a
  // stack frame and spills with several frequencies per thread).
  if (options.approximateTrig)
    pm.addPass(createRopeApproximateTrigPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());

  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The attention row loops to blocks x threads, their buffers per-thread
  // allocas; the launch right away (a canonicalization in between would
  // merge the mapped block and thread loops back into one).
  RopeMapForallToGPUPassOptions toThreads;
  toThreads.blockSize = options.attentionBlockSize;
  pm.addPass(createRopeMapForallToGPUPass(toThreads));
  pm.addPass(createConvertParallelLoopToGpuPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // fp8 rounding (quantized outputs) has no LLVM lowering upstream, and
  // PTX's cvt to fp8 saturates (and needs sm_89).
  pm.addPass(createRopeExpandFloat8Pass());

  // Upstream's buildLowerToNVVMPassPipeline from here, except that constants
  // and index computations are sunk into the launch first (so the kernel
  // takes only buffers and runtime sizes) and the toolkit is named.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = options.kernelBarePtr;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = options.kernelBarePtr;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.toolkitPath = options.toolkit;
  toBinary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::rope::registerRopePipelines() {
  PassPipelineRegistration<RopeFuseIntoAttentionPipelineOptions>(
      "rope-fuse-into-attention",
      "Fuse rope.apply into attention: raise written-out attention to "
      "rope.attention and tile it FlashAttention-style with the rotations of "
      "Q and K in its loops; fuse rotations into the tiles of Q·Kᵀ scores "
      "left",
      buildRopeFuseIntoAttentionPipeline);
  PassPipelineRegistration<RopeOptimizePipelineOptions>(
      "rope-optimize",
      "Raise RoPE and attention written out by a frontend to rope.apply and "
      "rope.attention, clean up, and tile attention with the rotations "
      "fused (tensors in, tensors out; ahead of any lowering)",
      buildRopeOptimizePipeline);
  PassPipelineRegistration<RopeToNVVMPipelineOptions>(
      "rope-to-nvvm",
      "Lower rope IR on tensors to a GPU kernel in a gpu.binary (PTX, cubin "
      "or fatbin for NVIDIA GPUs) and host LLVM dialect launching it",
      buildRopeToNVVMPipeline);
  PassPipelineRegistration<RopeToLLVMCpuPipelineOptions>(
      "rope-to-llvm-cpu",
      "Lower rope IR on tensors to the LLVM dialect for the CPU "
      "(mlir-runner, JIT)",
      buildRopeToLLVMCpuPipeline);
}
