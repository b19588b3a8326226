//===- CosSinSources.h - Where a frontend's cos/sin come from ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A rotation's cos and sin factors are leaves of the element algebra. This
// reads each back to what rope.apply can say: computed from integer
// positions times a constant frequency table (`positions(...)` with a
// frequency attribute), or gathered from a table by positions
// (`cache(...)`), and the constant the frontend scales them by (a
// magnitude). Anything else is not a source, with the reason.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_COSSINSOURCES_H
#define ROPE_LIB_TRANSFORMS_RAISE_COSSINSOURCES_H

#include "ElementAlgebra.h"

#include "mlir/IR/OpDefinition.h"

#include <string>

namespace mlir::rope::raise {

/// The angle of one channel of a cos/sin leaf.
struct AngleOfChannel {
  /// The position stream: a leaf of the algebra (an integer tensor read
  /// through a view, no channels), or -1 for the index along one frame dim
  /// (`implicitFrame`).
  int64_t positions = -1;
  int64_t implicitFrame = -1;
  /// Computed: the frequency theta (the frontend's inv_freq entry times the
  /// constant factors of the angle), in f64.
  double theta = 0.0;
  /// Computed: the element type of the inv_freq table when theta is one of
  /// its entries as it is (no other factor), else null.
  Type tableType;
  /// Computed as positions / timescale (MaxText), theta = 1 / timescale:
  /// the timescale entry and its element type, when no other factor
  /// scales the angle (else 0 and null).
  double timescale = 0.0;
  Type timescaleType;
  /// Computed from a table chosen at run time (SwitchedElement): the
  /// switch, and theta when it is true (`theta` is theta when false).
  Value frequencySwitch;
  double thetaIfTrue = 0.0;
  /// Gathered: the column of the table.
  int64_t column = -1;
};

struct CosSinLeaf {
  bool isSin = false;
  /// The constant the frontend multiplies cos/sin by inside the op.
  double scale = 1.0;
  /// Gathered: the table read by position (a captured tensor), else null.
  Value table;
  /// Gathered with Python's negative-index rule (`p < 0` reads row
  /// `p + rows`, as torch-mlir lowers `index_select`): the table's rows.
  int64_t wrapRows = 0;
  /// Read by token index from rows [offset, offset + S) of a constant
  /// table (no gather): the first row.
  std::optional<OpFoldResult> rowOffset;
  /// The part of a complex table: 0 real (cos), 1 imaginary (sin).
  unsigned component = 0;
  /// One per channel of the leaf.
  SmallVector<AngleOfChannel> channels;
};

/// Reads leaf `leafId` as cos or sin of an angle; failure with `why` set
/// when it is not one rope.apply can state.
FailureOr<CosSinLeaf> analyzeCosSinLeaf(ElementAlgebra &algebra,
                                        unsigned leafId, std::string &why);

/// The value of constant `value` (a dense or dense_resource constant, or
/// linalg ops computing one from constants and indices, as JAX emits
/// inv_freq) at `coords`, rounded as the frontend rounds it.
std::optional<double> constantElement(Value value, ArrayRef<int64_t> coords,
                                      int depth = 0);

/// An element of a table that is one of two constants chosen by one
/// boolean the IR computes at run time (LongRoPE's short and long inv_freq,
/// torch.where(seq_len > L, long, short)): the boolean (an i1 value or a
/// one-element i1 tensor) and the element under each of its values.
struct SwitchedElement {
  Value cond;
  double ifTrue = 0.0, ifFalse = 0.0;
};
std::optional<SwitchedElement> switchedElement(Value value,
                                               ArrayRef<int64_t> coords);

/// A switch read as LongRoPE's: `cond` is true exactly when
/// `length > threshold` (longWhenTrue) or exactly when it is not.
struct LengthSwitch {
  /// An integer scalar or one-element integer tensor, plus `addend`.
  Value length;
  int64_t addend = 0;
  int64_t threshold = 0;
  bool longWhenTrue = true;
};
FailureOr<LengthSwitch> analyzeLengthSwitch(Value cond, std::string &why);

/// Part `component` (0: real, 1: imaginary) of a constant at `coords`; for
/// a real constant, the element (component 0).
std::optional<double> constantPart(Value value, ArrayRef<int64_t> coords,
                                   unsigned component);

/// `value` rounded to `type` (a float type; anything else, and f64, leave it
/// as it is) as the frontend's arithmetic rounds it.
double roundTo(Type type, double value);

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_COSSINSOURCES_H
