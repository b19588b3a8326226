//===- SoftmaxReader.h - A softmax read from expressions --------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one reader of a softmax in linalg, shared by the attention raise (P is
// a softmax over the keys P·V sums) and rope-raise-softmax (a division by a
// row sum becomes linalg.softmax). It reads expressions of the attention
// raise's reader (RaiseAttentionInternal.h): a softmax is recognized by what
// its elements compute over one atom (the dim it is over), whatever ops,
// payloads, broadcasts and views spell it.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_SOFTMAXREADER_H
#define ROPE_LIB_TRANSFORMS_RAISE_SOFTMAXREADER_H

#include "RaiseAttentionInternal.h"

#include <string>

namespace mlir::rope::raise {

class SoftmaxReader {
public:
  /// `over` names the dim of `key` in what the reader says (the keys P·V
  /// sums, the dim the sum reduces).
  SoftmaxReader(Expressions &ex, unsigned key, StringRef over)
      : ex(ex), key(key), over(over) {}

  /// No: not a softmax (nothing to say). Mismatch: it looks like one, and
  /// `why` says which check failed.
  enum class Found { No, Yes, Mismatch };
  struct Result {
    /// x, the softmax is of (over `key`).
    Node *input = nullptr;
    /// torch-mlir's guard zeroing fully masked rows was read around it.
    bool guard = false;
    /// The row max and row sum (written-out softmaxes only).
    Node *max = nullptr, *sum = nullptr;
  };

  std::string why;

  /// `p` as softmax over the key atom: linalg.softmax or written out, with
  /// torch-mlir's fully-masked-row guard (or the ONNX export's NaN test) and
  /// an f32 upcast's truncf after it.
  Found softmax(Node *p, Result &result);

  /// `quotient` as exp(x − rowmax x) / rowsum exp(x − rowmax x), nothing
  /// around it.
  Found writtenSoftmax(Node *quotient, Result &result);

  /// P·V of unnormalized P = exp(x − rowmax x) divided afterwards by the row
  /// sum of P (`sum`, read through the division's layout).
  Found deferredSoftmax(Node *p, Node *sum, Result &result);

  /// `numerator` as exp(x − rowmax x) over the key; the result's input
  /// (x) and max set.
  Found expOfShift(Node *numerator, Result &result);

  /// `x − rowmax(x)` over the key is `x` to a softmax (gpt-oss subtracts
  /// the max before softmax, which subtracts it again): exact, as the max
  /// of the shifted row is 0 (or the row is NaN either way).
  Node *peelRowShift(Node *x);

  /// Whether `row` is `x` reduced over the key by one of `combiners`.
  bool isRowReduce(Node *row, Node *x, ArrayRef<StringRef> combiners);

private:
  Found mismatch(const Twine &reason) {
    why = reason.str();
    return Found::Mismatch;
  }
  /// Whether the reduction `reduce` (opened) is read by the row only: its
  /// result is read without the key atom. Were the key in it, the summand
  /// could read x at the key itself, and renaming the reduced atom to the
  /// key would take sum_r x[k] (x[k] times the extent) for the row's sum.
  bool readByRow(Node *reduce) const;
  bool isNaNOf(Node *condition, Node *p);
  bool isFullyMaskedRow(Node *condition, Node *x);

  Expressions &ex;
  unsigned key;
  std::string over;
};

} // namespace mlir::rope::raise

#endif // ROPE_LIB_TRANSFORMS_RAISE_SOFTMAXREADER_H
