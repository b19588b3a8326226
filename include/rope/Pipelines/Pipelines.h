//===- Pipelines.h - Named rope-mlir pipelines ------------------*- C++ -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_PIPELINES_PIPELINES_H
#define ROPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace rope {

/// Options of the `rope-to-llvm-cpu` pipeline.
struct RopeToLLVMCpuPipelineOptions
    : public PassPipelineOptions<RopeToLLVMCpuPipelineOptions> {
  PassOptions::Option<bool> bufferizeFunctionBoundaries{
      *this, "bufferize-function-boundaries",
      llvm::cl::desc("Bufferize function signatures (tensor arguments become "
                     "memrefs with identity layout)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers for every function (for "
                     "native callers and the Python package)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Lower rope.apply with convert-rope-to-vector (vector "
                     "code, token-parallel loop; the default) instead of "
                     "the scalar linalg loops (for debugging)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads for the token loop: 1 (default) runs it "
                     "sequentially, N > 1 maps it to an OpenMP parallel loop "
                     "with N threads, 0 lets the OpenMP runtime choose (all "
                     "cores); the program then needs libomp"),
      llvm::cl::init(1)};
};

/// rope IR (on tensors) -> LLVM dialect, runnable by mlir-runner or the JIT:
/// convert-rope-to-vector (or convert-rope-to-linalg with vectorize=false),
/// one-shot bufferization (destinations reused in place), ownership-based
/// deallocation, the token loop sequential or OpenMP-parallel, polynomial
/// f32 sin/cos, then the LLVM conversions.
void buildRopeToLLVMCpuPipeline(OpPassManager &pm,
                                const RopeToLLVMCpuPipelineOptions &options);

/// Registers the named pipelines with the global registry.
void registerRopePipelines();

} // namespace rope
} // namespace mlir

#endif // ROPE_PIPELINES_PIPELINES_H
