//===- Passes.h - Generic CPU codegen passes --------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PASSES_H
#define ROPE_CODEGEN_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/CPU/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_PASSES_H
