//===- Passes.td - Generic CPU codegen passes --------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Passes of the CPU backend that know nothing of the rope dialect: they work
// on upstream linalg/vector/memref IR (and on any op through upstream
// interfaces), so the rope dialect, its conversions and transforms never
// depend on them; only the pipelines do (docs/DESIGN.md, the layer table).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PASSES_TD
#define ROPE_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeDecomposeAggregatesPass : Pass<"rope-decompose-aggregates"> {
  let summary = "Decompose aggregated ops (linalg.softmax, rope.attention, "
                "rope.online_attention) into structured ops";
  let description = [{
    Replaces every op implementing upstream's `AggregatedOpInterface`
    (`linalg.softmax`; `rope.attention`, which becomes an online step and a
    normalization; `rope.online_attention`, which becomes the scores
    contraction, one elementwise epilogue, the online-softmax update and
    P·V) by its decomposition, repeatedly until none is left, into
    `linalg.generic`/`linalg.fill` ops, which the loop lowering and the
    vectorizers handle. MLIR 22 offers this decomposition only through the
    transform dialect (`decompose_interface`); the CPU pipeline runs it.

    ```mlir
    %p = linalg.softmax dimension(1) ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes a max reduction, exp(x - max), a sum reduction and a division
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect"
  ];
}

def RopeVectorizeContractionsPass : Pass<"rope-vectorize-contractions"> {
  let summary = "Lower linalg contractions on buffers to register-tiled "
                "vector FMAs";
  let description = [{
    Rewrites every mul-add contraction on buffers (`linalg.matmul`,
    `linalg.batch_matmul`, `linalg.generic` contractions of any rank with one
    reduction dim; f32/f64) into scf loops over register tiles, choosing the
    micro-kernel from which dim can be read with unit stride:

    - outer product, when a parallel dim is innermost in the output and in
      one input (P·V, A·B): per reduction step, `vectors-per-row` vectors of
      that input are loaded once and FMA'd with `rows` broadcast scalars of
      the other input into `rows × vectors-per-row` accumulators;
    - dot, when the reduction dim is innermost in both inputs (Q·Kᵀ with K
      stored `[keys, head_dim]`): `rows × columns` vector accumulators over
      the reduction dim; when they are as many as the lanes (4×4 of 16 f32)
      they are reduced together at the end (pairs shuffled side by side and
      added, log2(lanes) levels) into one vector of scores, otherwise each
      horizontally;
    - packed outer product, for a dot-shaped contraction with enough rows
      (at least 16 per packed element, counting the outer dims that share
      the operand: a GQA group's heads) and static extents that are
      multiples of the lanes: the column operand is first transposed into a
      heap buffer `[reduction][columns]` (lanes × lanes blocks of shuffles;
      once for all the outer indices that do not index it), then read as in
      the outer-product form.

    Output columns are taken in blocks whose slab of the vector operand
    (the whole reduction for those columns) is `slab-bytes`, so that every
    row tile, and every head of a GQA group, reads it from L1 before the
    next block.

    Accumulators are `scf.for` iter_args across the whole reduction loop, so
    they stay in registers. Remainders use one row, one column, one lane;
    static and dynamic shapes are lowered alike. The other loop dims (batch,
    heads, a unit query dim) are an `scf.forall` around the tiles (OpenMP
    threads with `rope-to-llvm-cpu{num-threads=N}`), or plain `scf.for`
    inside a parallel loop already (the tiles of
    `rope-fuse-into-attention`). The payload must be exactly
    `acc + a·b`, each input at most extended by one `arith.extf` (bf16 or
    f16 inputs of an f32 contraction: loaded narrow, extended to f32 before
    the FMA); a unary op on an operand (`-a·b`, which upstream's contraction
    interface accepts), ops without a unit-stride dim, with several
    reduction dims or with a non-f32/f64 accumulator are left for
    `convert-linalg-to-loops`.
    `rope-to-llvm-cpu` runs it after bufferization
    (`vectorize-contractions=true`, the default).

    ```mlir
    linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>)
                  outs(%c : memref<64x64xf32>)
    // becomes
    scf.for %i = %c0 to %c64 step %c4 {
      scf.for %j = %c0 to %c64 step %c32 {
        %c00 = vector.load %c[%i, %j] : memref<64x64xf32>, vector<16xf32>
        ...
        %acc:8 = scf.for %k = %c0 to %c32 step %c1 iter_args(...) {
          %b0 = vector.load %b[%k, %j] : memref<32x64xf32>, vector<16xf32>
          %a0 = memref.load %a[%i, %k] : memref<64x32xf32>
          %s0 = vector.broadcast %a0 : f32 to vector<16xf32>
          %f00 = vector.fma %s0, %b0, %acc00 : vector<16xf32>
          ...
        }
        vector.store %acc#0, %c[%i, %j] : memref<64x64xf32>, vector<16xf32>
        ...
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Bits of one vector (512: AVX-512; 256: AVX2)">,
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Rows of a register tile">,
    Option<"vectorsPerRow", "vectors-per-row", "int64_t", /*default=*/"2",
           "Vectors per row of an outer-product tile">,
    Option<"columns", "columns", "int64_t", /*default=*/"4",
           "Output columns of a dot tile">,
    Option<"slabBytes", "slab-bytes", "int64_t", /*default=*/"16384",
           "Bytes of the vector operand's slab for one block of output "
           "columns, read by every row tile before the next block (0: no "
           "blocking)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeVectorizeElementwisePass : Pass<"rope-vectorize-elementwise"> {
  let summary = "Vectorize elementwise and row-reduction linalg ops on "
                "buffers row by row";
  let description = [{
    For linalg ops on buffers with static shapes that are not contractions,
    whose reductions (if any) are over the innermost loop — the mask, scale,
    row max, `exp(s - max)`, row sum and rescaling steps of an online softmax
    in `rope-fuse-into-attention`'s loops, and any other elementwise op —
    tiles every loop dim by 1 except the innermost (upstream
    `scf::tileUsingSCF`), vectorizes each row with upstream
    `linalg::vectorize`, lowers the vectors to 1-D (leading unit dims cast
    away, row reductions to `vector.reduction`, transfers to loads, stores
    and broadcasts), and expands f32 `math.exp` with upstream's polynomial
    approximation (otherwise a vector exp becomes one libm call per lane).
    Rows longer than `max-lanes` are split into tiles of 64, 32, 16 or 8
    lanes that divide them; rows shorter than 4 lanes and dynamic shapes are
    left for `convert-linalg-to-loops`. `rope-to-llvm-cpu` runs it after
    bufferization (`vectorize-contractions=true`, the default).
  }];
  let options = [
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"256",
           "Longest row vectorized whole">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeFoldConstantTransposesPass : Pass<"rope-fold-constant-transposes"> {
  let summary = "Transpose constant tensors at compile time";
  let description = [{
    Replaces a `linalg.transpose` (on tensors) of a constant — a dense
    attribute or a loaded `dense_resource` blob, elements of whole bytes —
    by a constant holding the transposed elements. Frontends export a
    linear layer x·Wᵀ as a transpose of the weight constant before the
    matmul; lowered as written, every call would copy every weight matrix
    column by column, and the code generator would compile a gather loop
    per weight (issue 33). `rope-to-llvm-cpu` runs it before bufferization.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def RopeFoldUnitDimCopiesPass : Pass<"rope-fold-unit-dim-copies"> {
  let summary = "Copies that only drop unit dims as tensor.collapse_shape";
  let description = [{
    A `linalg.generic` on tensors that yields its one input, written to the
    loop order, with the input indexed by the loop dims in order and a 0
    for each of its unit dims, becomes a `tensor.collapse_shape` of the
    input: a view after bufferization instead of a new buffer and a copy
    per call. `rope-to-llvm-cpu` runs it before bufferization.

    ```mlir
    %c = linalg.generic {indexing_maps = [
           affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>,
           affine_map<(d0, d1, d2) -> (d0, d1, d2)>], ...}
         ins(%q : tensor<1x32x1024x128xf32>)
         outs(%e : tensor<32x1024x128xf32>) { ... linalg.yield %in : f32 }
    // becomes
    %c = tensor.collapse_shape %q [[0, 1], [2], [3]]
         : tensor<1x32x1024x128xf32> into tensor<32x1024x128xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def RopeKeepVectorLoopsPass : Pass<"rope-keep-vector-loops"> {
  let summary = "Keep loops of vector code as loops: mark them not to be "
                "unrolled by LLVM";
  let description = [{
    Marks every `scf.for` whose body (at any depth) computes on vectors with
    the LLVM loop annotation `unroll<disable = true>`, which
    `convert-scf-to-cf` and `convert-cf-to-llvm` carry to the loop's back
    edge (`!llvm.loop !{"llvm.loop.unroll.disable"}`). Such loops are the
    pipeline's own register tiles, vector rows and attention tiles: their
    vector width and unrolling are chosen already, and LLVM's unroller,
    which sizes a body by its instruction count, fully unrolls them in a
    whole model (static trip counts) into basic blocks the code generator
    takes seconds to schedule, for no run-time gain (issue 33). Loops of
    scalar code are left to LLVM. `rope-to-llvm-cpu` runs it after
    `convert-vector-to-scf`.

    ```mlir
    scf.for %i = %c0 to %c16 step %c1 {
      %v = vector.load %m[%i, %c0] : memref<16x64xf32>, vector<16xf32>
      ...
    } {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def RopeOutlineChunksPass
    : Pass<"rope-outline-chunks", "::mlir::ModuleOp"> {
  let summary = "Cut a large function body into consecutive outlined chunks, "
                "so that LLVM optimizes functions of bounded size";
  let description = [{
    A whole model lowered to one function gives LLVM one function of
    thousands of loops, and some of its loop passes (IndVarSimplify,
    LoopRotate) cost more than linear time in a function's size: a 32-layer
    Llama spent 40 s of `opt -O3` there (issue 33, docs/PERFORMANCE.md
    "Whole-model compile time"). This pass cuts the body of every
    single-block `func.func` with more than `max-ops` operations (nested ones
    included) into consecutive chunks of its top-level ops, each of about
    `max-ops` operations, and moves each chunk into a private function,
    called in order where the chunk was. Each cut is placed where the fewest
    values are live (in the second half of the chunk's allowance); a
    chunk's live-in values become arguments and the values it defines that
    are used after it become results. Constant-like ops without operands
    (`arith.constant`, `memref.get_global`) used by a chunk are cloned into
    it, not passed. No cut is placed where a value derived from a
    `memref.alloca` of the function would leave a chunk. The chunks are
    internal and `passthrough = ["noinline"]` (LLVM's inliner would
    otherwise put every single-call internal function back).

    `rope-to-llvm-cpu` runs it on buffers, after vectorization and before
    `convert-scf-to-cf` (bodies are single blocks).
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"2000",
           "Bodies with more operations (nested ones included) than this "
           "are cut into chunks of about this many; 0 disables the pass">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def RopeOutlineRepeatsPass
    : Pass<"rope-outline-repeats", "::mlir::ModuleOp"> {
  let summary = "Outline a function body's repeated stretch of ops (a "
                "model's layers) into one function called once per repeat";
  let description = [{
    A model's layers are the same code on other weights: lowered whole, a
    32-layer Llama hands the later passes and LLVM 32 copies of one layer,
    and compile time grows with the number of layers (issue 33). This pass
    finds, in the body of every single-block `func.func`, the longest
    stretch of top-level ops that repeats with some period, checks each
    repeat against the first one op for op (names, attributes, types,
    regions, and every operand: from the same place in the repeat, or the
    same outside value for the same argument), and outlines the first
    repeat into one private function, called where each matching repeat
    was. What differs between repeats is passed: the values from outside a
    repeat (the previous layer's results, the function's arguments) and the
    repeat's `memref.get_global`s (its weights); constants without operands
    that are equal in every repeat are cloned into the function. A repeat
    whose operands come from elsewhere than the first's (another layer's
    value, another constant) is left inline.

    The period is one of the most frequent distances between two equal
    top-level ops (compared as above, operands aside): the one whose
    repeating stretch covers the most ops. Each repeat starts where the
    fewest values are live, and none starts where a value derived from a
    `memref.alloca` would cross. The first repeat that at least half of the
    stretch's repeats match (of the first three tried) is the function. A
    repeat of fewer than `min-ops` operations (nested ones included), or a
    stretch of fewer than two repeats, is left alone. The function is internal and
    `passthrough = ["noinline"]`, as `rope-outline-chunks`' chunks are.

    `rope-to-llvm-cpu` runs it on buffers, after deallocation and before
    vectorization (pipeline option `outline-repeats`), so every pass after
    it and LLVM see one layer instead of all of them.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"64",
           "Repeats of fewer operations (nested ones included) than this "
           "are left inline">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def RopeExpandBFloat16Pass : Pass<"rope-expand-bf16"> {
  let summary = "bf16 conversions as integer arithmetic on their bits";
  let description = [{
    Rewrites `arith.truncf` to bf16 (round to nearest even, NaN kept quiet)
    and `arith.extf` from bf16 as shifts, adds and selects on the bits, with
    upstream's bf16 expansion patterns (the `include-bf16` part of
    `arith-expand`, without its other rewrites). On x86 without AVX512-BF16
    LLVM otherwise calls `__truncsfbf2` once per element, vectors included.
    The f32 -> bf16 rounding is this pass's own pattern, bit-identical to
    upstream's but with the quiet NaN selected among i32 values before the
    truncation to i16 (LLVM
    turns upstream's i16 select into a select of bf16 vectors, which x86
    scalarizes). On the LLVM dialect it also gives `llvm.load` and
    `llvm.store` of bf16 vectors the i16 vector type of the same bits (with
    `llvm.bitcast`s), as x86 moves parts of a bf16 vector copy 2 bytes at a
    time. `rope-to-llvm-cpu` runs it before the conversion to LLVM and again
    at its end.

    Two word-lane forms come first: `arith.extf` of the even (odd) lanes of a
    bf16 vector (`vector.deinterleave` results) is a shift (a mask) of the
    vector's 32-bit words, and with `truncation=bits` a `vector.interleave`
    of two `arith.truncf` to bf16 is one or of the two roundings' words (the
    first shifted down, the second masked), so no lane moves at all:
    `convert-rope-to-vector` rotates bf16 rows in this form. Both read lane
    2j as the low half of word j: on a big-endian data layout
    (`dlti.endianness` = "big") they are not taken.

    `truncation=target` leaves `arith.truncf` f32 -> bf16 to the target:
    for a host with AVX512-BF16 (Intel Sapphire Rapids and later, AMD Zen 4
    and later) LLVM emits one `vcvtneps2bf16` per 16 lanes, which rounds
    to nearest even like `bits` but reads f32 subnormal inputs as zero, so
    results below 2^-126 in magnitude become +-0 (`bits` rounds them as
    bf16 subnormals). `arith.extf` from bf16 is a shift in both modes.
  }];
  let options = [
    Option<"truncation", "truncation", "::mlir::rope::BFloat16Truncation",
           /*default=*/"::mlir::rope::BFloat16Truncation::Bits",
           "How arith.truncf f32 -> bf16 is lowered",
           [{::llvm::cl::values(
             clEnumValN(::mlir::rope::BFloat16Truncation::Bits, "bits",
                        "integer arithmetic on the bits (any target; "
                        "subnormal results kept)"),
             clEnumValN(::mlir::rope::BFloat16Truncation::Target, "target",
                        "left to the target's conversion (AVX512-BF16: "
                        "subnormal results flushed to zero)"))}]>
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def RopePrefetchStridedRowsPass : Pass<"rope-prefetch-strided-rows"> {
  let summary = "Software prefetch for vector loops over rows that are "
                "apart in memory";
  let description = [{
    For each `scf.for` with step 1 whose body (outside nested loops) reads
    or writes rows of a memref with `vector.transfer_read`/`transfer_write`
    or `vector.load`/`store` whose second-to-last index is the loop's
    induction variable (the other indices defined outside the loop), where
    that dim's stride is static and larger than the last dim (static size,
    stride 1): inserts at the top of the body one `memref.prefetch` per
    cache line of the row `distance` iterations ahead, and one of its last
    element (a row that does not start on a line spans one more): read
    prefetches into L2 (locality 2). Write prefetches measured slower, as
    each holds a fill buffer until the line is owned.

    Why: the hardware prefetchers follow contiguous streams, but rows with
    gaps between them (MLA's rope channels, 64 of every 192 channels of q,
    rotated in place) leave each row's lines to be missed on demand, and
    the few rows whose misses fit between a row loop's vector instructions
    are not enough to reach memory bandwidth (issue 18, Intel: MLA's
    bf16 prefill kernel 25.5-27.3 ms without, 15.0 ms with 16 rows ahead,
    against 12.7-13.5 ms for a loop that only reads and writes back the
    same slices). Contiguous rows are left alone: the hardware serves them.

    Rows ahead stop at the view's last row, unless the view is a
    rank-reducing subview whose dropped dim is indexed by the enclosing
    loop's induction variable (step 1) with a stride of the view's rows
    times their stride: then the rows past it are the ones that loop visits
    next (MLA's q: a token's heads, then the next token's), tested at run
    time when the strides are dynamic. A view of at most `distance` rows
    that does not continue gets no prefetch (every one would name its last
    row). Every prefetched element is clamped between the first and last
    elements of the outermost view with the same element type (followed
    through view-like ops to a function argument or an allocation): never
    outside the caller's buffer, even past its end.
    `rope-to-llvm-cpu` runs it after bufferization with `prefetch-rows`.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"16",
           "Rows ahead to prefetch (0: none)">,
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64",
           "Cache line size in bytes">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def RopeCheckAllocationSizesPass : Pass<"rope-check-allocation-sizes"> {
  let summary = "Check at run time that each dynamic allocation's byte size "
                "is non-negative and fits in 64 bits";
  let description = [{
    Before every `memref.alloc` with dynamic sizes, inserts one `cf.assert`
    (marked `rope.trap = "out-of-memory"`) that every dynamic size is
    non-negative and that the byte count, the product of the sizes and the
    element's bytes, does not overflow int64. An allocation whose static
    byte size overflows is an error. Without the check, a size such as
    2^62 + 1 f32 elements wraps to a 4-byte block that the code then writes
    past. The cost is a few compares and one division per dynamic size per
    allocation, none per element.

    ```mlir
    %b = memref.alloc(%n) : memref<?xf32>
    // becomes: cf.assert (%n >= 0 && %n <= INT64_MAX / 4), "...";
    //          %b = memref.alloc(%n) : memref<?xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

def RopeLowerAssertsToTrapsPass : Pass<"rope-lower-asserts-to-traps"> {
  let summary = "Lower cf.assert to a call of the rope runtime's trap";
  let description = [{
    Replaces every `cf.assert %ok, "message"` by a branch to a block that
    calls `ropeRuntimeTrap(kind, message)` (declared here, provided by
    libRopeJit's runtime) and is unreachable after it: kind 1 for an assert
    marked `rope.trap = "out-of-memory"` (rope-check-allocation-sizes),
    2 for every other (runtime verification of `checked` code). Upstream's
    lowering prints the message and aborts the process; inside a host
    process (Python) the trap returns to the guarded call instead
    (`ropeJitInvoke`), which raises the message as an exception. Runs on
    CFG regions, after the SCF to CF lowering.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // ROPE_CODEGEN_CPU_PASSES_TD
