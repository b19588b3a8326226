// RUN: rope-opt --help | FileCheck %s

// The driver lists the project's conversion pass and its end-to-end pipeline
// with one-line descriptions, and the pipeline's options.

// CHECK-DAG: --convert-rope-to-linalg {{ *}}- {{ *}}Lower rope.apply to linalg.generic and tensor slices
// CHECK-DAG: --rope-to-llvm-cpu {{ *}}- {{ *}}Lower rope IR on tensors to the LLVM dialect for the CPU
// CHECK-DAG: --bufferize-function-boundaries {{ *}}- Bufferize function signatures
// CHECK-DAG: --emit-c-interface {{ *}}- Emit _mlir_ciface_ wrappers
