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
    Replaces every `rope.apply` by its decomposition
    (`AggregatedOpInterface::decomposeOperation`): one `linalg.generic`
    computing or gathering the cos/sin table once per (position, frequency)
    pair, one `linalg.generic` rotating the channel pairs over the pair
    domain, and `tensor.insert_slice`s writing both channels and the
    pass-through channels into the destination.

    Example:

    ```mlir
    %y = rope.apply ins(%x : tensor<4x8x64xf32>) outs(%init : tensor<4x8x64xf32>)
           -> tensor<4x8x64xf32>
    ```

    becomes a table `linalg.generic` over `[4, 32]` (positions are the index
    along dim 0) and a rotation `linalg.generic` over `[4, 8, 32]`.

    KV-cache append: `rope.apply` with `slots` becomes the rotation into a
    `tensor.empty` followed by the decomposition of `rope.cache_write`, a
    portable scatter (`scf.for` over the tokens, an `scf.if` on the slot's
    validity around a per-row `linalg.generic` inserted at the slot).
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
    Replaces every `rope.apply` by an `scf.forall` over its token dims whose
    body, once per token, computes the P/2 cos/sin values as vectors (the
    angle's f64 range reduction of `SEMANTICS.md` §5 on vectors, or a gather of
    one cache row), then rotates the row of every head with vector loads and
    stores: for the `half` layout two contiguous loads `x[0:P/2]`,
    `x[P/2:P]` and FMAs; for `interleaved` one load of `x[0:P]`, a
    pair-swapping `vector.shuffle` and `x * c + swap(x) * s` with cos/sin
    spread over the lanes once per token (`[c0, c0, c1, c1, ...]`,
    `[-s0, s0, -s1, s1, ...]`). Channels `[P, D)` are copied unless the
    rotation is in place.

    This is the CPU fast path: nothing is materialized between the cos/sin
    and the rotation, cos/sin are reused across heads in registers, and the
    `scf.forall` maps to threads (`rope-to-llvm-cpu{num-threads=N}`). The
    linalg form (`--convert-rope-to-linalg`) stays the path for tiling and
    fusion; linalg's vectorizer cannot handle its pair-partner map
    (`1 - k`), which is why this lowering builds vectors itself.

    Sibling `rope.apply` in one block (same attributes, positions, offset,
    length and caches, inputs differing only in their head dims' sizes:
    Q with Hq heads and K with Hkv) are lowered as one `scf.forall` over
    their tokens that computes cos/sin once per token and rotates the heads
    of each into its own shared output; where their token sizes are not
    statically equal an `scf.if` compares them at run time.

    KV-cache append (`rope.apply` with `slots`, `rope.cache_write`): the
    per-token form whatever the layout; each token's rows go to the cache
    slice at its slot (CacheSlots.h), `valid ? 1 : 0` rows under an `scf.if`,
    so an out-of-range slot writes nothing and one-shot bufferization keeps
    the cache in place. A Q without slots joins K's append loop.
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
           ">= 1; rope-to-llvm-cpu passes 3">,
    AngleOption<"::mlir::rope::AngleMethod::F64", "">
  ];
}

def ConvertRopeToGPUPass : Pass<"convert-rope-to-gpu", "ModuleOp"> {
  let summary = "Lower rope.apply to a gpu.launch kernel";
  let description = [{
    Replaces every `rope.apply` (on tensors) by a `gpu.launch` that reads the
    buffers of its operands (`bufferization.to_buffer`) and writes the
    destination's buffer, whose tensor becomes the result
    (`bufferization.to_tensor`); one-shot bufferization then resolves the
    buffers. Each thread owns V consecutive pairs (V = 1 with
    `vectorize=false`, else as many as make each access 16 bytes where
    alignment allows: 4 for f32 and 8 for f16/bf16 with the half layout):

        block = (tx: groups of V frequencies, ty: tokens),
                blockDim.x = min(P/2 / V, block-size), blockDim.y = the rest
        for token t = blockIdx.x * blockDim.y + ty; t < T; t += gridDim.x * blockDim.y
          for j = V * tx; j < P/2; j += V * blockDim.x
            c, s = cos/sin of frequencies j..j+V-1 of token t  // once, registers
            for every head h: rotate pairs j..j+V-1 of x[t, h]   // whole pairs
          pass-through channels [P, D) copied by the same threads

    so cos/sin are computed (f64 angle, Cody-Waite reduction, as on the CPU)
    or gathered from a cache once per (token, frequency) and reused across
    every head from registers; neighbouring threads touch neighbouring
    16-byte pieces of a row (coalesced: `half` loads x[j : j+V] and
    x[P/2+j : P/2+j+V], `interleaved` loads the 2V channels of its pairs and
    swaps lanes in registers); and the grid is capped at `max-blocks` with a
    grid-stride loop over tokens. Static frequency tables are
    `memref.global` constants (created through the rewriter at the start of
    the module the pass runs on: the pass is anchored on `builtin.module`,
    whose symbol table it extends) that outlining copies into the kernel
    module;
    M-RoPE's axis per frequency is arithmetic on the pair index. Schemes whose frequencies depend on the call's
    length (`dynamic_ntk`, `longrope`) compute that length inside the kernel
    from device buffers (the `length` operand, else max position + 1 over
    the positions or per-row offsets, once per thread before the token
    loop: O(tokens) loads per thread, so pass `length` for long prefill),
    then theta per pair with the scheme's per-element form
    (`FrequencyAttrInterface::buildInverseFrequencyAt`).

    KV-cache append: with `slots` the output buffer is the cache and each
    token's work (cos/sin, norm, rotation, stores) runs under `scf.if` on
    its slot's validity (CacheSlots.h): reads at the token's own index,
    stores at the slot's, never a clamped write. `rope.cache_write` becomes
    a coalesced copy kernel (x: 16-byte pieces of a row, y: tokens with a
    grid-stride loop, heads looped). A destination sliced from a function
    argument (MLA's channel ranges) gets a strided buffer, so it is written
    in place.
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
    Replaces every op implementing `AggregatedOpInterface` that is nested in
    an `scf.forall` (`rope.apply` tiles fused into attention loops,
    `rope.online_attention` key tiles, `linalg.softmax`) by its
    decomposition, repeatedly, until only linalg and tensor ops remain in
    the loops. Ops outside any `scf.forall` are left alone: in
    `rope-to-nvvm` a top-level `rope.apply` still becomes its own
    `gpu.launch` (`convert-rope-to-gpu`), while a tile inside a loop that
    `rope-map-forall-to-gpu` maps to threads must be computed inline by the
    thread that owns the iteration.
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
    Prepares every outermost bufferized `scf.forall` (no results, not inside
    a `gpu.launch`) for upstream's `convert-parallel-loops-to-gpu`, using
    upstream's loop utilities:

    - `scf::forallToParallelLoop`, then `collapseParallelLoops` (all dims
      into one, row-major: any number of dims, no sequential leftovers),
      then `scf::tileParallelLoop` by `block-size` (without min/max bounds:
      a tail guard instead), then `gpu::setMappingAttr`: tiles to
      `blockIdx.x`, iterations within a tile to `threadIdx.x`. One
      iteration is one thread; iterations must be independent (they are:
      an `scf.forall`'s iterations write disjoint slices).
    - Buffers allocated inside an iteration (`memref.alloc` of one-shot
      bufferization: an attention row's accumulator, scores, rotated tiles)
      become `memref.alloca` at the start of the thread's body, i.e. in the
      kernel's entry block: per-thread private memory, no heap and no
      deallocation. Sizes must be static or have a constant upper bound
      (the alloca then holds the bound).
    - `memref.copy` inside an iteration becomes `linalg.copy` (loops later),
      since a copy between non-contiguous views lowers to a call into the
      host runtime (`memrefCopy`) that a kernel cannot make.
    - `memref.get_global` read inside an iteration is cloned into it, so
      that outlining copies the global into the GPU module instead of
      passing a host address.

    `convert-parallel-loops-to-gpu` must follow immediately: the scf.parallel
    canonicalizations would merge the two mapped loops again.
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
