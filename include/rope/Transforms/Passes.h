//===- Passes.h - Rope transformation passes --------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_PASSES_H
#define ROPE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

#define GEN_PASS_DECL
#include "rope/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Transforms/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_TRANSFORMS_PASSES_H
