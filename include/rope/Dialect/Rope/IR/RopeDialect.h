//===- RopeDialect.h - Rope dialect -----------------------------*- C++ -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
#define ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "rope/Dialect/Rope/IR/RopeOpsDialect.h.inc"

#endif // ROPE_DIALECT_ROPE_IR_ROPEDIALECT_H
