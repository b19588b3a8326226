//===- IRGuards.cpp - Reject parsed IR that crashes MLIR's passes ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verified IR can still hold what its ops' semantics leave undefined and
// MLIR 22's passes do not survive. The ops are matched by name: the check
// needs no dialect library, only the IR.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/InputGuards.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult mlir::rope::checkIRSafety(Operation *root, std::string &reason) {
  WalkResult result = root->walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (name.starts_with("transform.structured.")) {
      // Tiling transforms take negative tile sizes and build slices of
      // negative size: invalid IR from a transform that reports success
      // (MLIR 22, transform.structured.fuse tile_sizes [0, 1, -1, 0]).
      for (NamedAttribute attr : op->getAttrs()) {
        auto sizes = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
        StringRef attrName = attr.getName().strref();
        if (!sizes ||
            (!attrName.contains("size") && !attrName.contains("num_threads")))
          continue;
        for (int64_t size : sizes.asArrayRef()) {
          // kDynamic marks a size given by an SSA value.
          if (size >= 0 || ShapedType::isDynamic(size))
            continue;
          llvm::raw_string_ostream os(reason);
          os << "a " << name << " at " << op->getLoc() << " with " << attrName
             << " entry " << size
             << " (negative: MLIR 22's tiling builds invalid slices from it, "
                "docs/RELIABILITY.md)";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    }
    if (name == "gpu.launch") {
      // Upstream's kernel outlining turns constant grid and block sizes into
      // i32 attributes (nvvm.maxntid); one outside (0, 2^31) makes LLVM's
      // NVPTX backend exit the process ("can't parse integer attribute").
      for (Value size : op->getOperands()) {
        APInt value;
        if (!isa<IndexType>(size.getType()) ||
            !matchPattern(size, m_ConstantInt(&value)) ||
            (!value.isNegative() && !value.isZero() &&
             value.getActiveBits() < 32))
          continue;
        llvm::raw_string_ostream os(reason);
        os << "a gpu.launch at " << op->getLoc() << " with a constant size "
           << value.getSExtValue()
           << " outside (0, 2^31) (LLVM's NVPTX backend exits on it, "
              "docs/RELIABILITY.md)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if ((name != "tensor.dim" && name != "memref.dim") ||
        op->getNumOperands() != 2)
      return WalkResult::advance();
    auto shaped = dyn_cast<ShapedType>(op->getOperand(0).getType());
    APInt index;
    if (!shaped || !shaped.hasRank() ||
        !matchPattern(op->getOperand(1), m_ConstantInt(&index)))
      return WalkResult::advance();
    // A negative dim index crashes MLIR 22's canonicalizer. One at or past
    // the rank is undefined behaviour too, but survives the passes: rope's
    // own passes guard their value bounds against it
    // (test/Transforms/Raise/rope-raise-guarded-bounds.mlir), which the fuzzer
    // keeps reaching.
    if (!index.isNegative())
      return WalkResult::advance();
    llvm::raw_string_ostream os(reason);
    os << "a " << name << " of dim " << index.getSExtValue() << " of a rank-"
       << shaped.getRank() << " value at " << op->getLoc()
       << ": a negative dim index (undefined behaviour; MLIR 22's "
          "canonicalizer crashes on it, docs/RELIABILITY.md)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
