//===- HuggingFace.h - Hugging Face rope_scaling to attributes --*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one translation from a Hugging Face `rope_scaling` (or
// `rope_parameters`) dict to the attributes of `rope.apply`. The Python
// package calls it through the C API (ropeJitScalingAttributes) so that
// Python and C++ importers cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_INTEROP_HUGGINGFACE_H
#define ROPE_INTEROP_HUGGINGFACE_H

#include "rope/Dialect/Rope/IR/RopeAttrs.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::rope {

/// What a Hugging Face RoPE configuration means for one `rope.apply`.
struct HuggingFaceRope {
  /// The `freqs` attribute (one per scheme of SEMANTICS.md §4).
  FrequencyAttrInterface freqs;
  /// The `magnitude` the op must state: the scheme's implied magnitude (YaRN,
  /// LongRoPE), else 1.
  double magnitude = 1.0;
  /// The `mrope` attribute, null unless the dict has `mrope_section`.
  MRopeAttr mrope;
  /// The rotary dimension the attributes were checked against.
  int64_t rotaryDim = 0;
};

/// Translates `ropeScaling` (the keys of a config.json `rope_scaling` dict,
/// with the top-level `max_position_embeddings` and, where the config has it
/// there, `original_max_position_embeddings` merged in) for a head of
/// `headDim` channels whose RoPE base is `base` (`rope_theta`).
///
/// `rotaryDim` <= 0 derives the rotary dimension the way Hugging Face does:
/// `int(partial_rotary_factor * headDim)` when the dict has that key (except
/// for `proportional`, which rotates the whole head), else `headDim`.
///
/// Every key must be one Hugging Face defines: an unknown (e.g. misspelt) key
/// is an error rather than a silent default. Attributes are built with
/// `getChecked` and checked against the rotary dimension, so an invalid value
/// yields the attribute verifier's message. On failure returns failure and
/// sets `error`.
FailureOr<HuggingFaceRope> buildFrequencyAttrFromHF(
    MLIRContext *context, const llvm::json::Object &ropeScaling, double base,
    int64_t headDim, int64_t rotaryDim, std::string &error);

/// The text of `attr`, checked to parse back to `attr` (the text crosses
/// the C API, so a lossy printer must fail here rather than change numbers).
FailureOr<std::string> printAttributeExactly(Attribute attr);

} // namespace mlir::rope

#endif // ROPE_INTEROP_HUGGINGFACE_H
