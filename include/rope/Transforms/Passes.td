//===- Passes.td - Rope transformation passes --------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_PASSES_TD
#define ROPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Raise: frontend IR to rope ops (lib/Transforms/Raise)
//===----------------------------------------------------------------------===//

def RopeRaisePass : Pass<"rope-raise"> {
  let summary = "Raise rotary position embeddings written out by frontends "
                "to rope.apply";
  let description = [{
    Recognizes RoPE in linalg-on-tensors IR as torch-mlir, StableHLO → linalg
    and ONNX → linalg emit it and replaces it by `rope.apply`, so that the
    rotation reaches rope-mlir's lowerings and fusions and its angle is
    computed in f64 (`SEMANTICS.md` §5) instead of the frontend's f32.

    Every channel of a candidate result (the last op of the rotation: an
    elementwise linalg op, `tensor.concat`, `insert_slice` or
    `collapse_shape`) is read as a polynomial over the tensors it is
    computed from, looking through elementwise linalg ops (named or generic,
    broadcasts in their indexing maps), `extract_slice` (also strided),
    `concat`, `insert_slice` into an empty tensor, `expand_shape` /
    `collapse_shape`, float casts, size-1 contractions (an outer product
    written as `batch_matmul`) and the `complex` ops of a payload. The
    rotation is raised when every channel is exactly

        a * (x[k] * cos(p * theta_i) - x[k'] * sin(p * theta_i))   (first of a pair)
        a * (x[k'] * cos(p * theta_i) + x[k] * sin(p * theta_i))   (second)

    (or with the signs swapped: `inverse`) for one input `x`, pairs that are
    one layout (`half`: `k' = k + P/2`; `interleaved`: `k' = k + 1`) over the
    first `P` channels, the rest passed through (`rotary_dim`), one positive
    magnitude `a` (YaRN's attention factor → `magnitude`), and cos/sin from
    a source rope.apply can state:
    - computed: `cos`/`sin` of integer positions (`sitofp`) times a constant
      frequency table (`dense`, `dense_resource`, or computed from constants
      in the IR) → `positions(...)` (or none for an arange) with
      `#rope.default<base>` when the table is `base^(-2i/P)` to f32 rounding,
      else `#rope.table<...>`; three position streams of one `[3, ...]`
      tensor split into sections → `#rope.mrope`;
    - gathered: `tensor.extract` of tables by position → `cache(...)`, when
      the two channels of each pair read the same column (or columns of a
      constant table proven equal).
    An output in de-interleaved order (DeepSeek's interleaved variant) is
    raised to `rope.apply` followed by the channel permutation.

    The rotation's neighbours are folded into the op (docs/FUSIONS.md): an
    RMSNorm over the head dim producing its input (QK-norm as Qwen3, OLMo-2
    and Gemma-3 write it: `w * (x * rsqrt(sum_D(x^2) / D + eps))`, the sum
    from zero over exactly the head dim, `* (1/D)` only for D a power of
    two, Gemma's `1 + w`; gathered into one op before the rotation is raised
    and put back if no rotation uses it) becomes `norm(%w)` +
    `norm_epsilon`; a quantization of its only result (`truncf` of `y * s`
    clamped to the fp8 type's finite range, or `fptosi` of `roundeven(y *
    s)` clamped to [-128, 127]; the clamp must keep NaN unless the IR says
    `fastmath<nnan>`; `s` a constant, a rank-0 tensor or one per head; `y /
    c` only for c a power of two) becomes `quant_scale(%s)` with the
    quantized destination. A raised rotation's only result inserted into a
    KV cache (`tensor.insert_slice` with unit strides, whole head and
    channel dims: JAX's `dynamic_update_slice` after stablehlo-to-linalg,
    torch-mlir's `slice_scatter`) becomes `slots(%s)` with the cache as the
    destination, `%s` computed from the insert's own offsets (docs/FUSIONS.md).

    Nothing else is raised; `remarks` says, on the last op of a computation
    that multiplies by a cos or sin, which check failed.

    Attention is raised too (after the rotations, so that the rotations
    stay the producers of Q and K): a P·V contraction whose P is the
    softmax over the keys (`linalg.softmax` or written out, f32 upcasts,
    torch-mlir's fully-masked-row guard) of a constant times Q·Kᵀ (or of
    √scale·Q times √scale·K), plus an additive mask, an `i1` select or a
    causal mask from iota comparisons (`causal` only when proven
    bottom-right, else the computed mask as the `mask` operand), with K/V
    through transposes, reshapes and a GQA repeat (no repeat in the result:
    the group is a batch dim K and V do not have), becomes
    `rope.attention`; `remarks` says why a contraction fed by a softmax or
    an exp is not raised. The numerics change
    only where rope.apply is more exact: the angle in f64 and no rounding of
    intermediate products to the frontend's type (docs/DESIGN.md).
    C++: `populateRopeRaisePatterns`, `raiseRope` (`rope/Transforms/Raise/RopeRaise.h`).

    ```mlir
    // q * cos + cat(-q[..., 64:], q[..., :64]) * sin, cos/sin computed from
    // %pos and inv_freq = 500000^(-2i/128)
    // becomes
    %r = rope.apply ins(%q : tensor<1x32x16x128xf32>)
           positions(%pos : tensor<1x16xi64>) outs(%e : tensor<1x32x16x128xf32>)
           {freqs = #rope.default<base = 500000.0>,
            token_dims = array<i64: 0, 2>} -> tensor<1x32x16x128xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Say why a rotation-shaped computation is not raised, as a remark">
  ];
  let dependentDialects = [
    "::mlir::rope::RopeDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeRaiseAttentionPass : Pass<"rope-raise-attention"> {
  let summary = "Raise attention written out in linalg to rope.attention";
  let description = [{
    Replaces a P·V contraction whose P is the softmax over the keys of
    scaled, masked Q·Kᵀ scores (in the forms `rope-raise` knows: its last
    step, run alone) by `rope.attention`. `rope-raise` runs it after raising
    the rotations; `rope-fuse-into-attention` runs it alone. C++:
    `populateRopeRaiseAttentionPatterns`, `raiseAttention`
    (`rope/Transforms/Raise/RaiseAttention.h`). Contract: docs/DESIGN.md,
    "Attention as an op".

    ```mlir
    %s = linalg.batch_matmul ins(%q, %kt ...)   // Q·Kᵀ, scaled
    %p = linalg.softmax dimension(2) ins(%s ...)
    %o = linalg.batch_matmul ins(%p, %v ...)
    // becomes
    %o = rope.attention ins(%q, %k, %v ...) scale(...) outs(%e ...)
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Say why a contraction fed by a softmax or an exp is not raised, "
           "as a remark">
  ];
  let dependentDialects = [
    "::mlir::rope::RopeDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeRaiseSoftmaxPass : Pass<"rope-raise-softmax"> {
  let summary = "Raise a softmax written out in linalg ops to linalg.softmax";
  let description = [{
    Replaces a softmax over one dim written as reductions and elementwise ops,
    `e = exp(x − max_d x)`, `e / sum_d e`, by `linalg.softmax dimension(d)`:
    the form `linalg.softmax`'s own decomposition produces (generic
    reductions, `exp(x − max)` in one generic) and the frontend form
    (`linalg.reduce`, `linalg.broadcast`, `linalg.sub`/`exp`/`div`, or
    generics doing the same), however the elementwise steps are split over
    ops. The match is strict: the max must be of the value it is subtracted
    from, the sum of the value that is divided, both over the same dim, from
    −inf (NaN for `maxnumf`, or the lowest float) and 0, and no intermediate
    may have users outside the softmax. Anything else is left alone; with
    `remarks`, a division by a row sum that is not raised says why.
    `rope-fuse-into-attention` raises first (with `whole-attention`), so that
    a decomposed softmax fuses too. C++: `populateRopeRaiseSoftmaxPatterns`
    (`rope/Transforms/Raise/RaiseSoftmax.h`).

    ```mlir
    %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%minf : tensor<4xf32>) dimensions = [1]
    %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
    %d = linalg.sub ins(%x, %mb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %p = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = linalg.reduce { arith.addf } ins(%p : tensor<4x8xf32>) outs(%zero : tensor<4xf32>) dimensions = [1]
    %sb = linalg.broadcast ins(%s : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
    %y = linalg.div ins(%p, %sb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes
    %y = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Say why a division by a row sum is not raised, as a remark">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// Attention: tiling and fusion (lib/Transforms/Attention)
//===----------------------------------------------------------------------===//

def RopeTileAttentionPass : Pass<"rope-tile-attention"> {
  let summary = "Tile rope.attention FlashAttention-style and fuse the "
                "rotations of Q and K into its loops";
  let description = [{
    Every `rope.attention` becomes the loop nest of FlashAttention-2, built
    by upstream scf tiling through the attention ops' `TilingInterface`
    (`tileAndFuseAttention`, `rope/Transforms/Attention/TileAttention.h`):

    - batch dims by 1 (a GQA group, a batch dim K and V do not have, stays
      whole: one rotation tile and one K/V tile serve all its heads) and the
      queries by `query-tile-size`, as one `scf.forall` (OpenMP threads under
      `rope-to-llvm-cpu{num-threads=N}`);
    - inside, the tile is one `rope.online_attention` step from
      (0, −inf, 0), tiled along the keys by `key-tile-size` (an `scf.for`
      carrying acc, max and sum), then normalized;
    - the `rope.apply` producing Q is fused into the query loop (Q rotated
      once per query tile), and the one producing K into the key loop as
      `fuse-key` says (`auto`: only when the queries are one tile, i.e.
      decode: each key rotated once, the rotated cache never written;
      prefill rotates K whole once instead); `fuse-rotations=false` fuses
      neither (what rope-to-llvm-cpu does for attention it finds unfused);
    - key tiles that no query of the tile can see (causal, sliding window,
      per-row positions, a float mask −inf on the whole tile) are skipped at
      run time (`populateSkipMaskedKeyTilesPatterns`);
    - `expand_shape` of a rotation (GQA's `[B, Hkv, G, S, D]` view of Q) is
      moved above it first, so that the rotation's tiles can be fused.

    The online steps are decomposed into linalg later
    (`rope-decompose-aggregates`).
  }];
  let options = [
    Option<"queryTileSize", "query-tile-size", "int64_t", /*default=*/"32",
           "Tile size of the query dim (0: whole)">,
    Option<"keyTileSize", "key-tile-size", "int64_t", /*default=*/"64",
           "Tile size of the key dim (0: whole)">,
    Option<"fuseKey", "fuse-key", "std::string", /*default=*/"\"auto\"",
           "Rotate K per key tile: always, never, or auto (only when the "
           "queries are one tile)">,
    Option<"fuseRotations", "fuse-rotations", "bool", /*default=*/"true",
           "Fuse the rope.apply producers of Q and K into the loops">,
    Option<"tileGroups", "tile-groups", "bool", /*default=*/"false",
           "Also tile the query heads of a GQA group by 1">,
    Option<"parallelLoops", "parallel-loops", "bool", /*default=*/"true",
           "The batch and query loops as one scf.forall">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeFuseIntoScoresPass : Pass<"rope-fuse-into-scores"> {
  let summary = "Fuse rope.apply into the tiles of an attention-score (Q·Kᵀ) "
                "contraction";
  let description = [{
    Tiles a contraction computing attention scores whose query and/or key
    operand is produced by `rope.apply` (batch dims by 1, queries by
    `query-tile-size`, keys by `key-tile-size` inside) and fuses the
    rotations into the loops: Q rotated once per query tile, K per key tile
    as `fuse-key` says. Attention that is whole is not its business
    (`rope-raise-attention`, then `rope-tile-attention`);
    `rope-fuse-into-attention` is the pipeline of all of them. C++:
    `populateRopeFuseIntoAttentionPatterns`, `fuseRopeIntoAttention`
    (`rope/Transforms/Attention/FuseIntoScores.h`). Contract: docs/DESIGN.md,
    "Fusing into attention".

    ```mlir
    %q = rope.apply ins(%x : tensor<1x8x512x64xf32>) ... {token_dims = array<i64: 0, 2>}
    %k = rope.apply ins(%y : tensor<1x8x512x64xf32>) ... {token_dims = array<i64: 0, 2>}
    %s = linalg.batch_matmul indexing_maps = [...] ins(%q, %k : ...) outs(%acc : ...)
    // becomes
    scf.forall (%b, %m) = (0, 0) to (1, 512) step (1, 32) shared_outs(...) {
      %qt = rope.apply ins(%x_tile : tensor<1x8x32x64xf32>) offset(%m ...)
      scf.for %n = ... step 64 {
        %kt = rope.apply ins(%y_tile : tensor<1x8x64x64xf32>) offset(%n ...)
        linalg.generic ... ins(%qt, %kt ...)
    ```
  }];
  let options = [
    Option<"queryTileSize", "query-tile-size", "int64_t", /*default=*/"32",
           "Tile size of the query (sequence) dim">,
    Option<"keyTileSize", "key-tile-size", "int64_t", /*default=*/"64",
           "Tile size of the key (sequence) dim">,
    Option<"fuseKey", "fuse-key", "std::string", /*default=*/"\"auto\"",
           "Fuse the key rotation into the key loop: always, never, or "
           "auto (only when the query dim is one tile)">,
    Option<"tileHeads", "tile-heads", "bool", /*default=*/"false",
           "Also tile the head dims by 1 (by default they stay whole in a "
           "tile, so cos/sin is computed once per token for all heads)">,
    Option<"parallelLoops", "parallel-loops", "bool", /*default=*/"true",
           "Make the loops over batch dims and query tiles one scf.forall "
           "(OpenMP threads under rope-to-llvm-cpu{num-threads=N}); the key "
           "loop stays an scf.for">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Say why a contraction fed by rope.apply is not fused, as a remark "
           "(-debug-only needs an LLVM built with assertions)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Legalize: numerics the LLVM lowering lacks (lib/Transforms/Legalize)
//===----------------------------------------------------------------------===//

def RopeApproximateTrigPass : Pass<"rope-approximate-trig"> {
  let summary = "Replace f32 math.sin/math.cos by vectorizable polynomials";
  let description = [{
    Rewrites `math.sin` and `math.cos` on `f32` (scalars and vectors) into
    upstream MLIR's polynomial approximations (range reduction by pi/2 and
    minimax polynomials: plain arithmetic that LLVM keeps in vector
    registers), instead of one libm call per lane. rope.apply's lowerings
    only take sin/cos of angles already reduced to [-pi, pi] in f64
    (`SEMANTICS.md` §5), where the approximation's error is a few f32 ulps;
    docs/PRECISION.md measures the result. f64 trig (f64 data) is left to
    libm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeExpandFloat8Pass : Pass<"rope-expand-f8"> {
  let summary = "Rounding from f32 to f8E4M3FN/f8E5M2 as integer arithmetic "
                "on the bits";
  let description = [{
    Rewrites `arith.truncf` from `f32` (scalars and vectors, default or
    `to_nearest_even` rounding) to `f8E4M3FN` or `f8E5M2` into integer
    arithmetic on the bits and an `arith.bitcast` from `i8`; MLIR 22 has no
    LLVM lowering of these truncations (the LLVM type converter maps fp8 types
    to `i8`, but `arith-to-llvm` leaves the truncation unconverted). The
    result is ml_dtypes' bit for bit, and APFloat's up to NaN payloads:
    round to nearest, ties to even; subnormals exact (steps of 2^-9 and
    2^-16); `f8E4M3FN`, which has no infinity: results above 448 after
    rounding, infinities and NaN give NaN (`0x7f` with the sign); `f8E5M2`:
    overflow and infinities give infinity (`0x7c` with the sign), any NaN
    the quiet NaN `0x7e` with the sign. Normal results round with an
    integer add of half an ulp; subnormal ones with one f32 addition of a
    power of two whose ulp is the fp8 subnormal step (exact under
    flush-to-zero too). Other truncations
    are left alone. `rope-to-llvm-cpu` and `rope-to-nvvm` run it before the
    conversion to LLVM. C++: `populateExpandFloat8TruncPatterns`
    (`rope/Transforms/Legalize/ExpandFloat8.h`).

    ```mlir
    %q = arith.truncf %y : vector<16xf32> to vector<16xf8E4M3FN>
    // becomes
    %bits = arith.bitcast %y : vector<16xf32> to vector<16xi32>
    ...
    %q = arith.bitcast %encoded : vector<16xi8> to vector<16xf8E4M3FN>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def RopeSplitComplexConstantsPass : Pass<"rope-split-complex-constants"> {
  let summary = "Split complex tensor constants into real and imaginary "
                "constants";
  let description = [{
    Replaces an `arith.constant` tensor of `complex<f32>` / `complex<f64>`
    elements (`dense` or `dense_resource`, as torch-mlir exports Meta's
    `freqs_cis`) by two real constants of its parts joined elementwise with
    `complex.create` in a `linalg.generic`. MLIR 22's memref-to-LLVM
    conversion has no global of complex elements, so without this a module
    that keeps such a table does not compile; `rope-to-llvm-cpu` runs it
    first.

    ```mlir
    %t = arith.constant dense<[(1.0, 0.0), (0.5, 0.5)]> : tensor<2xcomplex<f32>>
    // becomes
    %re = arith.constant dense<[1.0, 0.5]> : tensor<2xf32>
    %im = arith.constant dense<[0.0, 0.5]> : tensor<2xf32>
    %t = linalg.generic ... ins(%re, %im) ... { complex.create }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::complex::ComplexDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_TRANSFORMS_PASSES_TD
