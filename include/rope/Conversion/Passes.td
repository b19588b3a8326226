//===- Passes.td - Rope conversion passes ------------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_PASSES_TD
#define ROPE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// How a lowering forms the angle position * theta (RopeArith.h AngleMethod).
class AngleOption<string defaultValue, string extra> : Option<"angle", "angle",
    "::mlir::rope::AngleMethod", defaultValue,
    "How the angle position * theta is formed for computed cos/sin of f32, "
    "f16 and bf16 data: `f64` (SEMANTICS.md §5: in f64, reduced by a two-constant "
    "Cody-Waite step), or `turns` (no float wider than f32: theta as an i64 "
    "fixed-point phase step, 2^-52 of a turn, the phase reduced exactly by "
    "integer wrap, then an f32 angle in [-pi, pi]; for targets without fast "
    "f64 and consumers that demote f64; #rope.dynamic_ntk's steps are "
    "computed per call in fixed point and need base >= 1), or "
    "`turns-or-f64` (turns where it applies, else f64). f64 data always "
    "uses f64" # extra,
    [{::llvm::cl::values(
        clEnumValN(::mlir::rope::AngleMethod::F64, "f64",
                   "the angle in f64 (SEMANTICS.md §5)"),
        clEnumValN(::mlir::rope::AngleMethod::Turns, "turns",
                   "i64 phase steps and f32 only"),
        clEnumValN(::mlir::rope::AngleMethod::TurnsOrF64, "turns-or-f64",
                   "turns where the scheme has phase steps, else f64"))}]>;

def ConvertRopeToLinalgPass : Pass<"convert-rope-to-linalg"> {
  let summary = "Lower rope.apply to linalg.generic and tensor slices";
  let description = [{
    Replaces every `rope.apply` by its decomposition: a `linalg.generic`
    computing or gathering cos/sin once per (position, frequency), one rotating
    the channel pairs, and slices writing them into the destination; with
    `slots`, a portable scatter into the cache.

    ```mlir
    %y = rope.apply ins(%x : tensor<4x8x64xf32>) outs(%init : tensor<4x8x64xf32>)
           -> tensor<4x8x64xf32>
    // becomes a table linalg.generic over [4, 32] (positions are the index
    // along dim 0), a rotation linalg.generic over [4, 8, 32], and
    // tensor.insert_slice of both channels of each pair into %init
    ```

    Contract: docs/PASSES.md, `convert-rope-to-linalg`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    AngleOption<"::mlir::rope::AngleMethod::F64", "">
  ];
}

def ConvertRopeToVectorPass : Pass<"convert-rope-to-vector"> {
  let summary = "Lower rope.apply to a token-parallel loop of vector code";
  let description = [{
    Replaces every `rope.apply` by an `scf.forall` over its tokens whose body
    computes the token's cos/sin as vectors once and rotates every head's row
    with vector loads, FMAs and stores (the CPU fast path); sibling rotations of
    Q and K share one loop and one cos/sin.

    ```mlir
    %y = rope.apply ins(%x : tensor<4x8x64xf32>) outs(%init : tensor<4x8x64xf32>)
           -> tensor<4x8x64xf32>
    // becomes
    %y = scf.forall (%t) in (4) shared_outs(%o = %init) -> (tensor<4x8x64xf32>) {
      // cos/sin of the token's 32 frequencies: vector<16xf32> values
      // for each of the 8 heads: vector.transfer_read x[t, h, 0:32] and
      // x[t, h, 32:64], x1 * c - x2 * s and x2 * c + x1 * s, two writes
    }
    ```

    Contract: docs/PASSES.md, `convert-rope-to-vector`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"0",
           "Width in bytes of x's element type of each vector chunk a row "
           "is rotated in: 0 (the default) is one 64-byte cache line of the "
           "compute type (16 f32 lanes, for f32, f16 and bf16 data alike); "
           "rope-to-llvm-cpu passes 32 (8 f32 lanes, 16 bf16, 4 f64). bf16 "
           "rows in word lanes and rows stored quantized (fp8, int8) take "
           "at least one cache line of the compute type whatever is asked">,
    Option<"tileHeads", "tile-heads", "int64_t", /*default=*/"2",
           "Heads whose blocks of a tile the tiled form ([B, H, S, D]) "
           "rotates at once, unrolled and jammed (then a remainder loop): "
           ">= 1; rope-to-llvm-cpu passes 4">,
    Option<"tileTokens", "tile-tokens", "int64_t", /*default=*/"0",
           "Tokens per tile of the tiled form ([B, H, S, D]): each head's "
           "rows of a tile are one contiguous block; 0 (the default) "
           "chooses from the row and cos/sin table sizes (at most 256); at most "
           "4096">,
    Option<"threads", "num-threads", "int64_t", /*default=*/"1",
           "Threads the token loop is to run on (rope-to-llvm-cpu's "
           "num-threads; 0: the OpenMP runtime's choice, taken as 16): "
           "with more than one, the tiled form shortens its tiles at run "
           "time (to no fewer than 32 tokens) so that every thread gets "
           "one where the call's tokens allow">,
    AngleOption<"::mlir::rope::AngleMethod::F64", "">
  ];
}

def ConvertRopeToGPUPass : Pass<"convert-rope-to-gpu", "ModuleOp"> {
  let summary = "Lower rope.apply to a gpu.launch kernel";
  let description = [{
    Replaces every `rope.apply` on tensors by a `gpu.launch` over its buffers:
    each thread owns a few consecutive pairs of a token, computes or gathers
    their cos/sin once and rotates them for every head, with 16-byte coalesced
    accesses and a grid-stride loop over tokens.

    ```mlir
    %y = rope.apply ins(%x : tensor<4096x32x128xf16>) outs(%init : tensor<4096x32x128xf16>)
           -> tensor<4096x32x128xf16>
    // becomes
    %xb = bufferization.to_buffer %x : ...
    gpu.launch blocks(%bx, ...) in (...) threads(%tx, %ty, ...) in (...) {
      // per token t and 8 frequencies j..j+7: cos/sin once, in registers;
      // for every head: 16-byte loads of x[t, h, j:j+8] and x[t, h, 64+j:64+j+8],
      // rotated, stored
    }
    %y = bufferization.to_tensor %yb : ...
    ```

    Contract: docs/PASSES.md, `convert-rope-to-gpu`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"maxBlocks", "max-blocks", "int64_t", "4096",
           "Upper bound on the grid size (grid-stride loop over tokens)">,
    Option<"vectorize", "vectorize", "bool", "true",
           "Give each thread V consecutive pairs so that accesses to x are "
           "16 bytes wide where alignment allows (false: one pair per "
           "thread)">,
    AngleOption<"::mlir::rope::AngleMethod::F64",
                "; rope-to-nvvm picks turns for chips without fast f64">
  ];
}

def RopeDecomposeInForallPass : Pass<"rope-decompose-in-forall"> {
  let summary = "Decompose aggregated ops inside scf.forall loops into linalg "
                "(what each GPU thread of a mapped loop computes itself)";
  let description = [{
    Decomposes the aggregated ops nested in an `scf.forall` (`rope.apply` tiles,
    `rope.online_attention` key tiles, `linalg.softmax`) into linalg, so that
    each GPU thread of a mapped loop computes them inline; ops outside any
    forall are left alone.

    ```mlir
    scf.forall (%m) = (0) to (128) step (1) shared_outs(...) {
      %qt = rope.apply ins(%x_row : tensor<1x64xf32>) offset(%off : i64) ...
      ...
    }
    // becomes
    scf.forall (%m) = (0) to (128) step (1) shared_outs(...) {
      %cs = linalg.generic ...   // cos/sin of the row
      %qt = linalg.generic ...   // its pairs rotated
      ...
    }
    ```

    Contract: docs/PASSES.md, `rope-decompose-in-forall`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    AngleOption<"::mlir::rope::AngleMethod::F64", " (rope.apply tiles)">
  ];
}

def RopeMapForallToGPUPass : Pass<"rope-map-forall-to-gpu"> {
  let summary = "Map each outermost scf.forall on buffers to GPU blocks and "
                "threads (mapped scf.parallel loops) with per-thread buffers";
  let description = [{
    Prepares every outermost bufferized `scf.forall` for
    `convert-parallel-loops-to-gpu`: one collapsed `scf.parallel` tiled by
    `block-size` and mapped to blocks and threads, buffers allocated per
    iteration as per-thread `memref.alloca`, copies and globals made
    kernel-safe.

    ```mlir
    scf.forall (%i, %j) in (8, 128) {
      %row = memref.alloc() : memref<64xf32>
      ...
    }
    // becomes
    scf.parallel (%b) = (%c0) to (%c8) step (%c1) {
      scf.parallel (%t) = (%c0) to (%c128) step (%c1) {
        %row = memref.alloca() : memref<64xf32>   // per thread
        ...                                       // a tail guard where 1024 % 128 != 0
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```

    Contract: docs/PASSES.md, `rope-map-forall-to-gpu`.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "128",
           "Threads per block (iterations per tile of the collapsed loop)">
  ];
}

#endif // ROPE_CONVERSION_PASSES_TD
