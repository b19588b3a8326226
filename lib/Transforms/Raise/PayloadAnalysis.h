//===- PayloadAnalysis.h - Reading linalg payloads for raises ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What every raising (RaiseAttention, RaiseSoftmax, RaiseNeighbours, the
// rotation raise's ElementAlgebra and CosSinSources, RaiseCacheAppend) reads
// the same way in a frontend's linalg: scalar constants (folding the float
// casts frontends put on them), the value a payload yields, splat values
// through views and payloads, the slices that are reshapes of unit dims, a
// generic copied up to a value of its payload, and the work bound per
// candidate. Every raise reads payloads with one reader, the expressions of
// Expressions.h: the attention, softmax and neighbours raises match them
// over atoms; the rotation raise's ElementAlgebra (per channel) and
// CosSinSources (at a point, and the angle's and cos/sin's shape) interpret
// what Expressions::readPayload reads. All of them share these.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_PAYLOADANALYSIS_H
#define ROPE_LIB_TRANSFORMS_RAISE_PAYLOADANALYSIS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"

#include <optional>
#include <type_traits>

namespace mlir::rope::raise {

//===----------------------------------------------------------------------===//
// Budgets
//===----------------------------------------------------------------------===//

/// The work one candidate may cost (values evaluated by the element algebra,
/// expression nodes built by the attention reader): raises run inside other
/// people's processes, on modules of any size.
constexpr int64_t kCandidateWorkBudget = 20000;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// A float constant: `arith.constant` (scalar or splat), possibly through
/// `arith.truncf` / `arith.extf` (a frontend's f64 factor truncated to f32 is
/// the f32 value).
std::optional<double> getScalarConstant(Value value);

/// A scalar float or integer constant attribute, folding one arith.truncf or
/// arith.extf of a float constant with its rounding (round-to-nearest-even
/// truncations only); null otherwise.
Attribute getScalarConstantAttr(Value value);

/// The float every element of `value` is, read through views, fills,
/// broadcasts and payloads yielding a constant, at the level of values (no
/// layout is read), at most `maxDepth` producers deep.
std::optional<llvm::APFloat> getSplatFloat(Value value, int maxDepth,
                                           int depth = 0);

/// Whether a row max may start from `value` (softmax's max over the keys):
/// −inf; NaN for `maxnumf` (`maxnum`), which ignores it (upstream's
/// decomposition starts from one); or the lowest float, which differs from
/// −inf only on rows of −inf, where both give NaN probabilities.
bool isRowMaxStart(const llvm::APFloat &value, bool maxnum);

//===----------------------------------------------------------------------===//
// Payloads
//===----------------------------------------------------------------------===//

/// The static loop ranges of `op` (kDynamic where a size is dynamic), or
/// nullopt when its operands' shapes do not determine its loops: a loop no
/// operand indexes, which upstream's dead-operand folding can leave, where
/// LinalgOp::getStaticLoopRanges asserts (and composes a null map in
/// release builds).
std::optional<SmallVector<int64_t>> staticLoopRanges(linalg::LinalgOp op);

/// The value the payload of `op` yields for its result `result`.
inline Value yieldedValue(linalg::LinalgOp op, unsigned result = 0) {
  return op.getBlock()->getTerminator()->getOperand(result);
}

/// A host's elementwise fusion puts a value the raises need as a tensor (Q
/// before SDPA's sqrt(scale), a QK-norm's x before its widening to f32)
/// inside the payload of a generic that computes more. The raises compute it
/// by a copy of that generic that stops there: a copy of the all-parallel,
/// one-result generic `op` (before it) that yields `inner`, a value of its
/// payload, into a new empty tensor of `inner`'s type: the same inputs and
/// maps, only the payload ops `inner` depends on.
Value copyYielding(RewriterBase &rewriter, linalg::GenericOp op, Value inner);

//===----------------------------------------------------------------------===//
// Unit views
//===----------------------------------------------------------------------===//

// linalg-fold-unit-extent-dims{use-rank-reducing-slices} spells the reshapes
// that add or drop unit dims as slices; the raises (RaiseAttention's
// openValue, RaiseNeighbours' reader) read those as the reshapes they are.
// Views that differ in unit dims only are compared by their other sizes.

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

#endif // ROPE_LIB_TRANSFORMS_RAISE_PAYLOADANALYSIS_H
