//===- RotationCore.h - What every rope.apply lowering computes -*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The meaning of `rope.apply` (SEMANTICS.md §1-§5), written once for the linalg
// decomposition, the vector lowering and the GPU kernel:
//   - the call's runtime length (dynamic frequency schemes),
//   - the position of a token (explicit, offset + index, per-row offset,
//     implicit) and, for M-RoPE, of each pair (the axis a pair reads),
//   - the (cos, sin) of a pair: computed from a position and theta, gathered
//     from a [M, P/2] cache with the out-of-range-is-NaN rule, or
//     pre-gathered; then magnitude and direction,
//   - the pair rotation, with one rounding everywhere.
// A lowering differs only in how it reads operands (RopeOperandReader:
// tensor.extract, a linalg block argument, memref.load, vector reads), in
// the loops it builds around these pieces and in how many pairs it handles
// at once (`lanes`: 0 for a scalar pair, else a vector of consecutive
// pairs). A new position form or cache layout is an edit here.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_ROTATIONCORE_H
#define ROPE_DIALECT_ROPE_UTILS_ROTATIONCORE_H

#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir::rope {

/// How a lowering reads the operands of `rope.apply` (op operands: the
/// positions, offset and cos/sin tensors as the op holds them; the reader
/// maps them to whatever the lowering works on).
class RopeOperandReader {
public:
  virtual ~RopeOperandReader() = default;
  /// Reads `operand` at `indices`: one element when `lanes` is 0, else
  /// `lanes` consecutive elements along its last dim (cos/sin caches).
  virtual Value read(OpBuilder &b, Location loc, Value operand,
                     ValueRange indices, int64_t lanes) = 0;
  /// The size of dim `dim` of `operand`, as an index.
  virtual Value dimSize(OpBuilder &b, Location loc, Value operand,
                        int64_t dim) = 0;
  /// The max over every element of an integer `operand`, as an i64 (for the
  /// runtime length of dynamic schemes).
  virtual Value maxElement(OpBuilder &b, Location loc, Value operand) = 0;
};

/// Reads the op's tensors outside linalg bodies: tensor.extract for one
/// element, vector.transfer_read for lanes, tensor.dim, a linalg reduction
/// for the max.
class TensorOperandReader : public RopeOperandReader {
public:
  Value read(OpBuilder &b, Location loc, Value operand, ValueRange indices,
             int64_t lanes) override;
  Value dimSize(OpBuilder &b, Location loc, Value operand,
                int64_t dim) override;
  Value maxElement(OpBuilder &b, Location loc, Value operand) override;
};

/// The pieces of `rope.apply`'s semantics every lowering builds.
class RotationCore {
public:
  explicit RotationCore(ApplyOp op);

  /// Values computed once per call, outside any loop over tokens: the
  /// scalar (or rank-0) offset and the number of cache rows, read through
  /// `reader`. Call before `position` / `cosSin`.
  void buildPerCall(OpBuilder &b, Location loc, RopeOperandReader &reader);

  /// The call's runtime length (i64): the `length` operand, else max
  /// position + 1 over the call (offset + S with offsets, S without).
  Value runtimeLength(OpBuilder &b, Location loc, RopeOperandReader &reader);

  /// The position (i64) of the token at `tokenIvs` (one index per token
  /// dim, outermost first). Not for M-RoPE.
  Value tokenPosition(OpBuilder &b, Location loc, RopeOperandReader &reader,
                      ValueRange tokenIvs);

  /// The positions (i64; a vector of `lanes` when `lanes` > 0) of pairs
  /// `pair .. pair + lanes - 1` (`pair` an index) of the token: the token's
  /// position, or for M-RoPE the position on the axis each pair reads.
  Value pairPosition(OpBuilder &b, Location loc, RopeOperandReader &reader,
                     ValueRange tokenIvs, Value pair, int64_t lanes);

  /// (cos, sin) in the compute type of pairs `pair .. pair + lanes - 1` of
  /// the token, with magnitude and direction applied. `theta` (of the
  /// pairs' shape) is used for computed cos/sin only: f64 frequencies
  /// (AngleMethod::F64), or i64 phase steps (AngleMethod::Turns, f32
  /// compute type).
  std::pair<Value, Value> cosSin(OpBuilder &b, Location loc,
                                 RopeOperandReader &reader, ValueRange tokenIvs,
                                 Value pair, int64_t lanes, Value theta);

  /// The M-RoPE axis (0 = t, 1 = h, 2 = w) of pair `pair` (an index, or a
  /// vector of indices), by arithmetic on the sections: the one encoding
  /// every lowering uses.
  Value mropeAxis(OpBuilder &b, Location loc, Value pair);

  /// The element type the rotation computes in.
  Type getComputeType() const { return computeType; }

private:
  ApplyOp op;
  int64_t numPairs;
  SmallVector<int64_t> tokenDims;
  Type computeType;
  Value scalarOffset; // i64: a scalar or rank-0 offset
  Value cacheRows;    // i64: rows of a gathered cache
};

/// The pair rotation (x1 + i x2)(c + i s), with one rounding in every
/// lowering: the product of each member with cos is rounded, the partner's
/// term is added by one FMA:
///   y1 = fma(x2, -s, x1 c)     y2 = fma(x1, s, x2 c)
/// (the interleaved lane form, fma(swap(x), [-s, s], x c), is the same
/// arithmetic lane by lane). Scalars or vectors.
std::pair<Value, Value> rotatePair(OpBuilder &b, Location loc, Value x1,
                                   Value x2, Value cos, Value sin);

/// One member of a pair: `self` with its `partner`, as rotatePair computes
/// it: fma(partner, isFirst ? -s : s, self c).
Value rotatePairMember(OpBuilder &b, Location loc, Value self, Value partner,
                       Value cos, Value sin, Value isFirst);

//===----------------------------------------------------------------------===//
// Fused neighbours (docs/FUSIONS.md): what comes before and after the
// rotation, written once for every lowering. Scalars or vectors; a scalar
// operand next to a vector one is broadcast.
//===----------------------------------------------------------------------===//

/// QK-norm's factor of one row: rsqrt(sumSquares / D + epsilon), with
/// `sumSquares` the sum of x^2 over the row's D channels in the compute type
/// (the division, not a multiplication by 1/D, as torch's mean).
Value buildRmsNormFactor(OpBuilder &b, Location loc, Value sumSquares,
                         int64_t headDim, double epsilon);

/// QK-norm applied to channels `x` (compute type): w * (x * factor), with
/// `weight` the matching channels of the norm weight (any float type).
Value applyRmsNorm(OpBuilder &b, Location loc, Value x, Value factor,
                   Value weight);

/// The value stored for output `y` (compute type) in a destination of
/// element type `storage`: `y` converted when `scale` is null, else
/// quantized: y * scale (f32), then for f8E4M3FN/f8E5M2 clamped to the
/// largest finite value (NaN stays NaN) and truncated (arith.truncf: round
/// to nearest even); for i8 rounded to nearest even, clamped to [-128, 127]
/// and NaN -> 0.
Value buildStoredValue(OpBuilder &b, Location loc, Value y, Type storage,
                       Value scale);

/// `op`'s decomposition into linalg (AggregatedOpInterface's, which uses
/// AngleMethod::F64) with the angle formed by `angle` (angleMethodFor: an
/// error on the op when the method cannot apply).
FailureOr<SmallVector<Value>> decomposeApply(OpBuilder &b, ApplyOp op,
                                             AngleMethod angle);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_UTILS_ROTATIONCORE_H
