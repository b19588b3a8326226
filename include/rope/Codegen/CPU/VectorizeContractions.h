//===- VectorizeContractions.h - Register-tiled contractions ----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_VECTORIZECONTRACTIONS_H
#define ROPE_CODEGEN_CPU_VECTORIZECONTRACTIONS_H

#include "rope/Codegen/CPU/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::rope {

/// The register tile a contraction on buffers is lowered to.
struct ContractionRegisterTile {
  /// Bits of one vector register (512: AVX-512; 256: AVX2/NEON pairs). The
  /// lanes of a vector are vectorBits / element bits.
  int64_t vectorBits = 512;
  /// Outer-product form: rows (of the broadcast operand) times
  /// `vectorsPerRow` vectors of the unit-stride operand accumulated at once.
  int64_t rows = 4;
  int64_t vectorsPerRow = 2;
  /// Dot form (the reduction dim has unit stride in both inputs, as in
  /// Q·Kᵀ): rows × `columns` vector accumulators, reduced once after the
  /// reduction loop.
  int64_t columns = 4;
  /// Bytes of the slab of the vector operand (its rows over the whole
  /// reduction, for a block of output columns) that every row tile of the
  /// contraction, and every iteration of its sequential outer dims, reads
  /// before the next block: sized to stay in the L1 data cache (0: no
  /// blocking).
  int64_t slabBytes = 16384;
  /// bf16 × bf16 → f32 contractions: widened f32 FMAs, AVX512-BF16's pair
  /// dot products where the reduction and the packing allow them, or AMX
  /// tiles where whole tiles fit (also f32 × bf16, the f32 side split into
  /// three exact bf16 parts).
  BFloat16Products bf16Products = BFloat16Products::Fma;
  /// Where one row tile holds every row (a decode step's query group), the
  /// vector operand (K in Q·Kᵀ, V in P·V) is streamed once: its rows this
  /// many ahead are prefetched into L2 (0: none).
  int64_t prefetchRows = 0;
  /// Where one row tile holds every row, the accumulator registers an
  /// outer-product tile may use to cover whole output rows, so that the
  /// vector operand is streamed in as few passes as possible (0: from
  /// `vectorBits`, 32 for AVX-512's registers, 12 for AVX2's).
  int64_t rowAccumulators = 0;
};

/// Lowers mul-add contractions on buffers (`linalg.matmul`,
/// `linalg.batch_matmul`, `linalg.generic` contractions of any rank with one
/// reduction dim, f32/f64) to scf loops over register tiles of
/// vector.load / vector.fma / vector.store, whenever one dim can be read with
/// unit stride:
/// - outer-product form: a parallel dim innermost in the output and in one
///   input (P·V, A·B): each step of the reduction loop loads that input's
///   vectors once and FMAs them with broadcast scalars of the other input;
///   the accumulators live in registers across the whole reduction loop;
/// - dot form: the reduction dim innermost in both inputs (Q·Kᵀ with K
///   stored [keys, head_dim]): vector accumulators per output element,
///   reduced once after the reduction loop (all together by a shuffle/add
///   tree when there are as many as lanes, else each horizontally).
/// The loops over the other dims are an scf.forall unless the op is inside
/// a parallel loop already.
/// A vector operand streamed once (one row tile) has its rows
/// `prefetchRows` ahead prefetched, clamped to the caller's buffer.
/// Remainders of the tiles use narrower tiles (one row, one column, one
/// lane), so any shape, static or dynamic, is lowered. Contractions without a
/// unit-stride dim, with several reduction dims, mixed element types or
/// non-float types are left alone.
void populateRopeVectorizeContractionsPatterns(
    RewritePatternSet &patterns, const ContractionRegisterTile &tile = {});

} // namespace mlir::rope

#endif // ROPE_CODEGEN_CPU_VECTORIZECONTRACTIONS_H
