//===- CheckAllocationSizes.cpp - Dynamic allocation sizes checked --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The memref lowering computes an allocation's byte count as a plain 64-bit
// product of its sizes: a dynamic size from the caller (tensor.empty(%n) of a
// whole model's function) that makes it wrap gets a small block, which the
// code then fills past its end. A negative size becomes a huge one. Both are
// checked once per allocation here, before the lowering, so a failure is a
// trap (an exception in Python) instead of a write outside any buffer.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPECHECKALLOCATIONSIZESPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// Bytes of one element of `type`, or 0 when it has no fixed size here.
uint64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  if (auto vector = dyn_cast<VectorType>(type)) {
    if (vector.isScalable())
      return 0;
    uint64_t bytes = elementBytes(vector.getElementType());
    for (int64_t size : vector.getShape())
      bytes *= static_cast<uint64_t>(size);
    return bytes;
  }
  return 0;
}

/// The product of the static sizes of `type` times its element's bytes, or
/// nullopt when it overflows int64.
std::optional<int64_t> staticBytes(MemRefType type, uint64_t bytes) {
  uint64_t total = bytes;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(size), &total) ||
        total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
  }
  return static_cast<int64_t>(total);
}

/// Inserts, before `alloc`, the assert that its dynamic sizes are
/// non-negative and that their product with `known` bytes fits in int64.
void insertCheck(memref::AllocOp alloc, int64_t known) {
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value max = arith::ConstantIndexOp::create(
      b, loc, std::numeric_limits<int64_t>::max());
  Value bytes =
      arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(known, 1));
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value size : alloc.getDynamicSizes()) {
    // size <= max / bytes (bytes >= 1) is size * bytes <= max, without the
    // product; sizes after a zero one are still checked for sign.
    Value nonNegative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, zero);
    Value limit = arith::DivUIOp::create(b, loc, max, bytes);
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, size, limit);
    ok = arith::AndIOp::create(b, loc, ok, nonNegative);
    ok = arith::AndIOp::create(b, loc, ok, fits);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value factor = arith::MaxSIOp::create(b, loc, size, one);
    bytes = arith::MulIOp::create(b, loc, bytes, factor);
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "out of memory: allocating " << alloc.getType()
     << ": a size is negative or the byte count overflows int64 (at " << loc
     << ")";
  auto assertOp = cf::AssertOp::create(b, loc, ok, message);
  assertOp->setAttr(rope::kTrapAttrName,
                    b.getStringAttr(rope::kTrapOutOfMemory));
}

struct RopeCheckAllocationSizesPass
    : rope::impl::RopeCheckAllocationSizesPassBase<
          RopeCheckAllocationSizesPass> {
  void runOnOperation() override {
    WalkResult walked = getOperation()->walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      uint64_t bytes = elementBytes(type.getElementType());
      if (bytes == 0)
        return WalkResult::advance();
      std::optional<int64_t> known = staticBytes(type, bytes);
      if (!known) {
        alloc.emitOpError("allocates ")
            << type << ", whose byte size overflows int64";
        return WalkResult::interrupt();
      }
      if (!alloc.getDynamicSizes().empty())
        insertCheck(alloc, *known);
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
