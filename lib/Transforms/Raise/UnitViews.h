//===- UnitViews.h - Slices that are reshapes of unit dims ------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// linalg-fold-unit-extent-dims{use-rank-reducing-slices} spells the reshapes
// that add or drop unit dims as slices; the raises (RaiseAttention's
// openValue, RaiseNeighbours' reader) read those as the reshapes they are.
// Views that differ in unit dims only are compared by their other sizes.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_UNITVIEWS_H
#define ROPE_LIB_TRANSFORMS_RAISE_UNITVIEWS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <type_traits>

namespace mlir::rope::raise {

/// Whether `op` (an extract_slice or insert_slice) reads or writes its whole
/// larger tensor, every dim that it drops being of size 1: a reshape that
/// adds or drops unit dims, spelled as a slice.
template <typename SliceOp> bool isWholeUnitView(SliceOp op) {
  RankedTensorType whole;
  if constexpr (std::is_same_v<SliceOp, tensor::ExtractSliceOp>)
    whole = op.getSourceType();
  else
    whole = op.getDestType();
  if (!whole.hasStaticShape() ||
      !llvm::all_of(op.getMixedOffsets(),
                    [](OpFoldResult v) { return isZeroInteger(v); }) ||
      !llvm::all_of(op.getMixedStrides(),
                    [](OpFoldResult v) { return isOneInteger(v); }))
    return false;
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  if (sizes.size() != static_cast<size_t>(whole.getRank()))
    return false;
  for (auto [size, dim] : llvm::zip(sizes, whole.getShape()))
    if (getConstantIntValue(size) != dim)
      return false;
  return true;
}

/// The sizes of `shape` that are not 1, in order: two row-major views of
/// one tensor with the same such sizes differ only in unit dims.
inline SmallVector<int64_t> nonUnitSizes(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> sizes;
  for (int64_t size : shape)
    if (size != 1)
      sizes.push_back(size);
  return sizes;
}

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_UNITVIEWS_H
