//===- Passes.h - Generic CPU codegen passes --------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PASSES_H
#define ROPE_CODEGEN_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope {

/// How `rope-expand-bf16` lowers `arith.truncf` f32 -> bf16.
enum class BFloat16Truncation {
  /// Round to nearest even as integer arithmetic on the bits: any target,
  /// subnormal results rounded as bf16 subnormals.
  Bits,
  /// Left to the target's own conversion (`vcvtneps2bf16` with
  /// AVX512-BF16): one instruction per vector, results below 2^-126 in
  /// magnitude flushed to zero.
  Target,
};

/// How rope-vectorize-contractions multiplies bf16 by bf16 into an f32
/// accumulator.
enum class BFloat16Products {
  /// Both inputs widened to f32 and multiplied by f32 FMAs: any target,
  /// one rounding per product-add, subnormal inputs kept.
  Fma,
  /// AVX512-BF16's `vdpbf16ps` (`x86vector.avx512.dot`): two products per
  /// f32 lane and instruction, each exact, added with one rounding each;
  /// subnormal inputs and results are flushed to zero.
  Avx512Dot,
  /// AMX's `tdpbf16ps` (`amx.tile_mulf`) on 16×16 f32 tiles where a packed
  /// outer product has whole tiles: prefill's Q·Kᵀ (products and additions
  /// as vdpbf16ps computes them) and P·V (f32 P split into three bf16
  /// parts that sum to it exactly, bf16 V packed as row pairs);
  /// `Avx512Dot` everywhere else. The target must have amx-tile, amx-bf16
  /// and avx512bf16, and the process must have been granted the AMX tile
  /// state (Linux: arch_prctl, which the JIT asks for).
  Amx,
};

/// The attribute rope-check-allocation-sizes puts on its `cf.assert`s, which
/// rope-lower-asserts-to-traps reads: the trap is an out-of-memory one.
inline constexpr llvm::StringLiteral kTrapAttrName = "rope.trap";
inline constexpr llvm::StringLiteral kTrapOutOfMemory = "out-of-memory";

#define GEN_PASS_DECL
#include "rope/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rope/Codegen/CPU/Passes.h.inc"

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_PASSES_H
