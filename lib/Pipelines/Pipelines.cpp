//===- Pipelines.cpp - Named rope-mlir pipelines --------------------------===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#include "rope/Pipelines/Pipelines.h"
#include "rope/Conversion/Passes.h"
#include "rope/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::rope::buildRopeToLLVMCpuPipeline(
    OpPassManager &pm, const RopeToLLVMCpuPipelineOptions &options) {
  if (options.vectorize)
    pm.addPass(createConvertRopeToVectorPass());
  else
    pm.addPass(createConvertRopeToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Canonicalization of rope.apply may produce tensor arithmetic on
  // positions (R(m)R(n) = R(m+n)).
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());

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

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // The token loop (scf.forall of convert-rope-to-vector).
  if (options.numThreads == 1) {
    pm.addPass(createForallToForLoopPass());
  } else {
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions openMP;
    openMP.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(openMP));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createRopeApproximateTrigPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.numThreads != 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  if (options.emitCInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::rope::registerRopePipelines() {
  PassPipelineRegistration<RopeToLLVMCpuPipelineOptions>(
      "rope-to-llvm-cpu",
      "Lower rope IR on tensors to the LLVM dialect for the CPU "
      "(mlir-runner, JIT)",
      buildRopeToLLVMCpuPipeline);
}
