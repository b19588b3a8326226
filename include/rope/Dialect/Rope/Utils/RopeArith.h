//===- RopeArith.h - Arithmetic shared by rope.apply lowerings --*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces of SEMANTICS.md's arithmetic that every lowering of `rope.apply`
// emits the same way, whether on scalars (the linalg decomposition) or on
// vectors of the P/2 frequencies (the vector lowering): the angle's precision
// method (§5), magnitude and direction (§1, §4), the runtime length of
// dynamic schemes (§4), and type conversions. Values may be scalars or
// vectors; constants are splatted to the operand's type.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_UTILS_ROPEARITH_H
#define ROPE_DIALECT_ROPE_UTILS_ROPEARITH_H

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <utility>

namespace mlir::rope {
class RotationCore;
class RopeOperandReader;

/// The element type rope.apply computes in for `elementType` data: f64 for
/// f64, f32 otherwise (f16/bf16 are rounded once, at the end).
Type getComputeElementType(Type elementType);

/// A float constant of `type` (a float type, or a vector of one: splat).
Value buildFloatConstant(OpBuilder &b, Location loc, Type type, double value);

/// Converts a float scalar or vector to element type `to` (ext or trunc).
Value convertFloat(OpBuilder &b, Location loc, Value value, Type to);

/// Converts an integer or index scalar to i64 (sign-extending).
Value toI64(OpBuilder &b, Location loc, Value value);

/// (cos, sin) of `position * theta` in element type `computeType`, per
/// SEMANTICS.md §5: the angle is formed in f64 and reduced to [-pi, pi] by a
/// two-constant Cody-Waite step with FMAs before it is rounded to
/// `computeType`. `position` and `theta` are f64 values of one shape (scalar
/// or vector).
std::pair<Value, Value> buildCosSinOfAngle(OpBuilder &b, Location loc,
                                           Value position, Value theta,
                                           Type computeType);

/// How a lowering forms and reduces the angle `position * theta`.
enum class AngleMethod {
  /// In f64, reduced by a two-constant Cody-Waite step (buildCosSinOfAngle).
  F64,
  /// With no float wider than f32 (targets without fast f64, consumers that
  /// demote f64): theta as a phase step, a fixed-point fraction of a turn in
  /// i64 (kPhaseBits fractional bits), the phase `position * step` reduced
  /// exactly by the wrap of integer arithmetic, then turned into an f32
  /// angle in [-pi, pi] (buildCosSinOfPhase). Per-call frequencies
  /// (dynamic NTK) have their steps computed in fixed point
  /// (FrequencyAttrInterface::buildPhaseStepState).
  Turns,
  /// Turns where the scheme has phase steps (hasPhaseSteps: every scheme
  /// but dynamic NTK with base < 1), else F64 (what a portable output asks
  /// for: exact without f64 wherever it can be).
  TurnsOrF64,
};

/// Fractional bits of a phase step (AngleMethod::Turns): 2^-52 of a turn.
constexpr int kPhaseBits = 52;

/// The phase steps of `thetas`: round(frac(theta / 2pi) * 2^kPhaseBits),
/// integers below 2^52, so exactly held by the doubles returned.
SmallVector<double> phaseSteps(ArrayRef<double> thetas);

/// Whether every theta of `freqs` is read from constant tables (so that a
/// whole table, or one picked per call, stands for each read): the static
/// schemes and LongRoPE (two tables, one picked per call). Not dynamic_ntk,
/// whose frequencies are computed per call.
bool hasConstantFrequencyTables(FrequencyAttrInterface freqs);

/// (cos, sin) of `position * step` turns (AngleMethod::Turns) in f32:
/// `position` and `step` are i64 values of one shape (scalar or vector).
/// The product wraps modulo 2^64, so its low kPhaseBits bits are the phase
/// modulo one turn exactly, for any position; centred to [-1/2, 1/2) of a
/// turn, it becomes radians by an FMA with a two-part 2pi/2^24 (about half
/// an ulp of the angle, as the f64 method's final rounding), then cos/sin.
std::pair<Value, Value> buildCosSinOfPhase(OpBuilder &b, Location loc,
                                           Value position, Value step);

/// (cos, sin) of a cache row gathered by position (SEMANTICS.md §3): `read`
/// builds the two reads of row `row` (an index) in `type` (a float type, or a
/// vector of one), and runs only when 0 <= `position` < `rows` (i64 values);
/// any other position reads nothing and yields NaN. A branch, not a select of a
/// clamped read: an empty cache has no row to clamp to.
std::pair<Value, Value> buildGatherOrNaN(
    OpBuilder &b, Location loc, Value position, Value rows, Type type,
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value row)>
        read);

/// Applies `op`'s magnitude (c, s -> a c, a s) and direction (s -> -s).
std::pair<Value, Value> applyMagnitudeAndDirection(OpBuilder &b, Location loc,
                                                   ApplyOp op, Value cos,
                                                   Value sin);

/// For the interleaved layout on vectors: (cos, sin) of N pairs spread over
/// the 2N lanes as ([c0, c0, c1, c1, ...], [-s0, s0, -s1, s1, ...]), so that
/// rotateInterleavedLanes needs one pair swap per row. Done once per token.
std::pair<Value, Value> spreadForInterleavedLanes(OpBuilder &b, Location loc,
                                                  Value cos, Value sin);

/// Rotates interleaved pairs (2j, 2j + 1) held in the lanes of `x` with
/// spread cos/sin: y = x * cos + swap(x) * sin, swap exchanging the two lanes
/// of each pair (one in-register permute instead of splitting and merging
/// even and odd lanes).
Value rotateInterleavedLanes(OpBuilder &b, Location loc, Value x, Value cos,
                             Value sin);

/// The max over all elements of an integer tensor, as an i64 (a linalg
/// reduction).
Value buildMaxElement(OpBuilder &b, Location loc, Value tensor);

/// buildMaxElement's reduction, as its 0-d `tensor<i64>` (no extract: a
/// consumer on tensors keeps it on the device).
Value buildMaxTensor(OpBuilder &b, Location loc, Value tensor);

/// The call's runtime length as an i64, for dynamic frequency schemes
/// (RotationCore::runtimeLength on the op's tensors).
Value buildRuntimeLength(OpBuilder &b, Location loc, ApplyOp op);

/// The `tensor<P/2 x f64>` of theta_i: a constant for static schemes, code
/// running once per call for dynamic ones (the length from `core`, which
/// must have built its per-call values with `reader`).
Value buildInverseFrequencies(OpBuilder &b, Location loc, ApplyOp op,
                              RotationCore &core, RopeOperandReader &reader);

/// The op's frequency scheme's per-call state for method `angle`
/// (buildFrequencyState, or buildPhaseStepState for Turns, on the call's
/// runtime length from `core`, which must have built its per-call values
/// with `reader`), or null for a static scheme.
Value buildFrequencyStateOf(OpBuilder &b, Location loc, ApplyOp op,
                            RotationCore &core, RopeOperandReader &reader,
                            AngleMethod angle);

/// theta of pair `index` (buildInverseFrequencyAt) or, for Turns, its phase
/// step (buildPhaseStepAt): what RotationCore::cosSin takes as `theta`.
/// `readTable` must be frequencyTableReader's of the same method.
Value buildFrequencyAt(OpBuilder &b, Location loc, FrequencyAttrInterface freqs,
                       AngleMethod angle, Value state, Value index,
                       int64_t lanes, int64_t rotaryDim,
                       FrequencyTableReader readTable);

/// The `tensor<P/2 x i64>` of phase steps (AngleMethod::Turns): a constant,
/// for LongRoPE one of its two constants picked per call, for dynamic NTK
/// a linalg.generic computing them once per call. The op's scheme must
/// have phase steps (FrequencyAttrInterface::hasPhaseSteps).
Value buildPhaseStepTable(OpBuilder &b, Location loc, ApplyOp op,
                          RotationCore &core, RopeOperandReader &reader);

/// How a lowering reads one constant per-pair table at a pair index (`lanes`
/// as in FrequencyTableReader): a constant, a global, an extract.
using ConstantTableRead =
    std::function<Value(OpBuilder &, Location, DenseElementsAttr table,
                        Value index, int64_t lanes)>;

/// The FrequencyTableReader of method `angle`: each constant table of
/// thetas it is given becomes `tensor<n x f64>` of them (F64) or
/// `tensor<n x i64>` of their phase steps (Turns), read by `readTable`. For
/// schemes with constant tables, buildInverseFrequencyAt with it yields the
/// thetas or their phase steps: one reader for every lowering.
std::function<Value(OpBuilder &, Location, ArrayRef<double>, Value, int64_t)>
frequencyTableReader(AngleMethod angle, ConstantTableRead readTable);

/// The method a lowering asked for, as it applies to `op`: Turns only for
/// computed cos/sin in f32 (f64 data computes in f64 anyway). Fails, with
/// an error on the op, when Turns applies and the scheme has no phase
/// steps.
FailureOr<AngleMethod> angleMethodFor(ApplyOp op, AngleMethod requested);

} // namespace mlir::rope

#endif // ROPE_DIALECT_ROPE_UTILS_ROPEARITH_H
