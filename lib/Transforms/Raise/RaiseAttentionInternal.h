//===- RaiseAttentionInternal.h - Shared by the attention raise -*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the three parts of rope-raise-attention share over the expression
// reader (Expressions.h): the mask analysis (AttentionMaskAnalysis.cpp), the
// match the matcher fills (RaiseAttention.cpp) and the builder of
// rope.attention (AttentionBuilder.cpp). See RaiseAttention.cpp's file comment
// for atoms, expressions and exactness.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_TRANSFORMS_RAISE_RAISEATTENTIONINTERNAL_H
#define ROPE_LIB_TRANSFORMS_RAISE_RAISEATTENTIONINTERNAL_H

#include "Expressions.h"

#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::rope::raise::attention {

/// `apply`'s frequency scheme with a unit magnitude: itself when the scheme
/// implies none (or cos/sin are given, the magnitude then the op's own), the
/// scheme with `attention_factor = 1` for YaRN and LongRoPE; null otherwise.
FrequencyAttrInterface unitMagnitudeFreqs(ApplyOp apply);

//===----------------------------------------------------------------------===//
// Masks from index comparisons (AttentionMaskAnalysis.cpp)
//===----------------------------------------------------------------------===//

/// Σ coef·atom + constant (+ coef·positions): an integer computed from loop
/// indices and, directly, one integer tensor of query positions.
struct Linear {
  SmallVector<std::pair<unsigned, int64_t>, 2> terms;
  int64_t constant = 0;
  Node *positions = nullptr;
  int64_t positionsCoef = 0;

  int64_t coef(unsigned atom) const {
    for (auto [a, c] : terms)
      if (a == atom)
        return c;
    return 0;
  }
  bool add(unsigned atom, int64_t c) {
    for (auto &[a, existing] : terms)
      if (a == atom) {
        if (llvm::AddOverflow(existing, c, existing))
          return false;
        return true;
      }
    terms.push_back({atom, c});
    return true;
  }
  void prune() {
    llvm::erase_if(terms, [](auto &t) { return t.second == 0; });
  }
};

/// A mask proven to be a position mask of rope.attention.
struct PositionMask {
  unsigned queryAtom = 0;
  /// kpos − qpos ≤ 0 with qpos = query + offset (no positions).
  int64_t offset = 0;
  /// A bound on the key alone, `key ≤ offset` (the query index is absent:
  /// one query row, decode): causal with qpos = query_offset = offset for a
  /// query dim of size 1.
  bool keyOnly = false;
  std::optional<int64_t> window;
  Node *positions = nullptr;
  int64_t keyOffset = 0;
};

/// The conditions under which `condition` (an i1 node) holds, as linear
/// forms `l <= 0` of atoms and query positions (a conjunction), or nullopt
/// when it is not one the analysis reads.
std::optional<SmallVector<Linear>> maskConditions(Expressions &ex,
                                                  Node *condition);

/// The causal (and window) mask `conds` states over key atom `key`, if it
/// is one: `key − q ≤ t` (+ `q − key ≤ W − 1 − t`), `key ≤ t` (+
/// `−key ≤ W − 1 − t`: no query index, one query row), or `key + c ≤ pos`.
std::optional<PositionMask> positionMask(ArrayRef<Linear> allConds,
                                         unsigned key);

//===----------------------------------------------------------------------===//
// The match (RaiseAttention.cpp)
//===----------------------------------------------------------------------===//

struct AttentionMatch {
  linalg::LinalgOp root;
  Layout output;
  /// The channel atoms Q·Kᵀ contracts (more than one where a reshape
  /// split the channel dim, as view_as_real's [D/2, 2]), and the keys P·V
  /// contracts.
  AtomList k1;
  unsigned k2 = 0;
  Node *query = nullptr, *key = nullptr, *value = nullptr;
  /// Rotations producing Q / K whose magnitude the scale took over.
  ApplyOp foldQuery, foldKey;
  /// A producer of Q / K whose payload multiplies its value by factors the
  /// scale took over: Q / K is a copy of it yielding `value`, before them.
  struct Unscaled {
    linalg::GenericOp producer;
    Value value;
  };
  Unscaled unscaledQuery, unscaledKey;
  double scale = 1.0;
  Node *mask = nullptr;
  std::optional<PositionMask> positionMask;
  /// The attention sinks (a logit per row joining the softmax).
  Node *sinks = nullptr;
  bool guard = false;
  /// A softcap between the scale and the mask: `outer · tanh(s ∘ inner)`
  /// with ∘ a division (or a multiplication when `innerMultiplies`).
  struct Softcap {
    double inner = 1.0, outer = 1.0;
    bool innerMultiplies = false;
  };
  std::optional<Softcap> softcap;
  /// The atoms of the root's loops that P and the output have and V not.
  SmallVector<unsigned> rootQueryAtoms;
  Operation *scores = nullptr;
};

//===----------------------------------------------------------------------===//
// Building rope.attention (AttentionBuilder.cpp)
//===----------------------------------------------------------------------===//

/// Plans the op for `match` (every check) and, when the plan holds, creates
/// it: the value that replaces the match's root. On failure `why` says
/// which check failed and nothing was created (a pattern that fails must
/// leave the IR as it was).
FailureOr<Value> buildAttention(RewriterBase &rewriter, Expressions &ex,
                                AttentionMatch &match, std::string &why);

} // namespace mlir::rope::raise::attention

#endif // ROPE_LIB_TRANSFORMS_RAISE_RAISEATTENTIONINTERNAL_H
