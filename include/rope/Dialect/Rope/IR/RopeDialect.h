//===- RopeDialect.h - Rope dialect -----------------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
#define ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "rope/Dialect/Rope/IR/RopeOpsDialect.h.inc"

namespace mlir::rope {
/// The largest head dimension `rope.apply` accepts (and so the largest rotary
/// dimension and M-RoPE section entry). Real models use at most a few hundred
/// channels; the bound keeps frequency tables small (a lowering materializes
/// P/2 entries) and every sum or product of dimensions far from overflow.
constexpr int64_t kMaxHeadDim = int64_t(1) << 16;
} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
