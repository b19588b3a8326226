//===- Passes.h - Rope conversion passes ------------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_PASSES_H
#define ROPE_CONVERSION_PASSES_H

#include "rope/Conversion/RopeToGPU/AttentionToGPU.h"
#include "rope/Conversion/RopeToGPU/RopeToGPU.h"
#include "rope/Conversion/RopeToLinalg/RopeToLinalg.h"
#include "rope/Conversion/RopeToVector/RopeToVector.h"

namespace mlir::rope {

#define GEN_PASS_REGISTRATION
#include "rope/Conversion/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CONVERSION_PASSES_H
