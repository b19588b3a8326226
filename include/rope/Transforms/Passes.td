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
    Recognizes RoPE that torch-mlir, StableHLO → linalg and ONNX → linalg write
    out in linalg on tensors and replaces it by `rope.apply` (its angle then in
    f64), folding a QK-norm before it, a quantization after it and a KV-cache
    insert into the op; then raises attention to `rope.attention`
    (`rope-raise-attention`). Only exact matches are raised; `remarks` says why
    the rest is not. C++: `populateRopeRaisePatterns`, `raiseRope`
    (`rope/Transforms/Raise/RopeRaise.h`).

    ```mlir
    // q * cos + cat(-q[..., 64:], q[..., :64]) * sin, cos/sin computed from
    // %pos and inv_freq = 500000^(-2i/128)
    // becomes
    %r = rope.apply ins(%q : tensor<1x32x16x128xf32>)
           positions(%pos : tensor<1x16xi64>) outs(%e : tensor<1x32x16x128xf32>)
           {freqs = #rope.default<base = 500000.0>,
            token_dims = array<i64: 0, 2>} -> tensor<1x32x16x128xf32>
    ```

    Contract: docs/PASSES.md, `rope-raise`.
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
    Replaces a P·V contraction whose P is the softmax over the keys of scaled,
    masked Q·Kᵀ scores by `rope.attention`: the last step of `rope-raise`, run
    alone (`rope-fuse-into-attention` runs it so). C++:
    `populateRopeRaiseAttentionPatterns`, `raiseAttention`
    (`rope/Transforms/Raise/RaiseAttention.h`).

    ```mlir
    %s = linalg.batch_matmul ins(%q, %kt ...)   // Q·Kᵀ, scaled
    %p = linalg.softmax dimension(2) ins(%s ...)
    %o = linalg.batch_matmul ins(%p, %v ...)
    // becomes
    %o = rope.attention ins(%q, %k, %v : ...) outs(%e : ...)
           attributes {indexing_maps = [...], scale = 0.125 : f64} -> ...
    ```

    Contract: docs/PASSES.md, `rope-raise-attention`.
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
    Replaces a softmax over one dim written out in linalg ops (`exp(x − max)`,
    divided by its sum) by `linalg.softmax`; strict, and with `remarks` a
    division by a row sum that is not raised says why. C++:
    `populateRopeRaiseSoftmaxPatterns` (`rope/Transforms/Raise/RaiseSoftmax.h`).

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

    Contract: docs/PASSES.md, `rope-raise-softmax`.
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
    Tiles every `rope.attention` into FlashAttention-2 loops with upstream scf
    tiling (batch dims and query tiles as one `scf.forall`, an `scf.for` over
    key tiles carrying the online softmax), fuses the `rope.apply` producing Q
    into the query loop and the one producing K into the key loop as `fuse-key`
    says, and skips key tiles no query of a tile sees. C++:
    `tileAndFuseAttention`, `tileAttention`
    (`rope/Transforms/Attention/TileAttention.h`).

    ```mlir
    %o = rope.attention ins(%q, %k, %v : tensor<1x2x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) ...
    // becomes
    scf.forall (%h, %m) = (0, 0) to (2, 128) step (1, 32) shared_outs(...) {
      %qt = rope.apply ins(%x_tile : tensor<1x1x8x32x64xf32>) offset(%m ...)
      %r:3 = scf.for %n = %c0 to %c128 step %c64 iter_args(%acc = ..., %max = ..., %sum = ...) {
        rope.online_attention ins(%qt, %k_tile, %v_tile ...) query_offset(%m) key_offset(%n) outs(%acc, %max, %sum ...)
      }
      // acc / sum
    }
    ```

    Contract: docs/PASSES.md, `rope-tile-attention`.
  }];
  let options = [
    Option<"queryTileSize", "query-tile-size", "int64_t", /*default=*/"32",
           "Tile size of the query dim (0: whole)">,
    Option<"keyTileSize", "key-tile-size", "int64_t", /*default=*/"64",
           "Tile size of the key dim (0: whole)">,
    Option<"decodeKeyTileSize", "decode-key-tile-size", "int64_t",
           /*default=*/"256",
           "Tile size of the key dim when the queries are one tile (a "
           "decode step: the key loop is the only loop, and longer runs of "
           "each head's K and V rows stream faster); 0: key-tile-size">,
    Option<"fuseKey", "fuse-key", "std::string", /*default=*/"\"auto\"",
           "Rotate K per key tile: always, never, or auto (only when the "
           "queries are one tile)">,
    Option<"fuseRotations", "fuse-rotations", "bool", /*default=*/"true",
           "Fuse the rope.apply producers of Q and K into the loops">,
    Option<"tileGroups", "tile-groups", "bool", /*default=*/"false",
           "Also tile the query heads of a GQA group by 1">,
    Option<"shareKeyRotation", "share-key-rotation", "bool",
           /*default=*/"false",
           "When K's rotation is fused and the queries are one tile "
           "(decode), keep K's head dims whole in a tile: cos/sin once per "
           "key for every head, fewer parallel tiles (one CPU thread)">,
    Option<"parallelLoops", "parallel-loops", "bool", /*default=*/"true",
           "The batch and query loops as one scf.forall">,
    Option<"peelKeyTiles", "peel-key-tiles", "bool", /*default=*/"false",
           "Peel the key loop's last, partial tile, so that every other key "
           "tile has a static extent (the CPU pipelines set it: packed "
           "K and V need static tiles)">,
    Option<"decodeKeySplits", "decode-key-splits", "int64_t",
           /*default=*/"0",
           "When the queries are one tile (a decode step), split the keys "
           "into at most this many blocks of whole key tiles, computed in "
           "parallel (an scf.forall: OpenMP threads) and merged after "
           "(split-K); 0 or 1: one key loop">
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
    operand is produced by `rope.apply` and fuses the rotations into the loops:
    Q rotated once per query tile, K per key tile as `fuse-key` says. Whole
    attention is `rope-raise-attention` and `rope-tile-attention`'s; the
    `rope-fuse-into-attention` pipeline runs `rope-raise-softmax`, those two and
    this pass. C++: `populateRopeFuseIntoAttentionPatterns`,
    `fuseRopeIntoAttention` (`rope/Transforms/Attention/FuseIntoScores.h`).

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

    Contract: docs/PASSES.md, `rope-fuse-into-scores`.
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

def RopeRotateKeysInScoresPass : Pass<"rope-rotate-keys-in-scores"> {
  let summary = "Rotate keys inside the Q·Kᵀ contraction of an online-softmax "
                "step instead of storing them rotated";
  let description = [{
    A `rope.online_attention` step whose keys are the result of a plain f32
    `rope.apply` (half layout, every channel rotated, more than one head row
    per token: a decode step's key tile of every KV head) is decomposed into
    linalg, and its scores contraction reads the un-rotated keys' two halves
    and a cos/sin table instead of the rotated keys, rotating each key
    element in its payload. The table is the rotation of (1, 0) by a
    `rope.apply` with the same attributes and positions and unit head dims,
    so frequencies, positions, magnitude and direction keep one meaning.
    `rope-vectorize-contractions` turns the payload into register tiles
    that rotate each key vector once and use it for every query row
    (docs/PERFORMANCE.md, "Decode: keys rotated inside Q·Kᵀ"). Run by
    `rope-to-llvm-cpu` (`rotate-keys-in-scores`, on by default). C++:
    `populateRotateKeysInScoresPatterns`
    (`rope/Transforms/Attention/RotateKeysInScores.h`).

    ```mlir
    %k = rope.apply ins(%key_tile : tensor<8x256x128xf32>) offset(%o : i64) ...
    %s = linalg.generic {..} ins(%q, %k : tensor<8x4x1x128xf32>, tensor<8x256x128xf32>) ...
    // becomes
    %t = rope.apply ins(%one_zero : tensor<1x256x128xf32>) offset(%o : i64) ...
    %s = linalg.generic {..} ins(%q0, %q1, %k0, %k1, %cos, %sin : ...) ... {
      // out + q0·(k0·c − k1·s) + q1·(k1·c + k0·s)
    ```

    Contract: docs/PASSES.md, `rope-rotate-keys-in-scores`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Legalize: numerics the LLVM lowering lacks (lib/Transforms/Legalize)
//===----------------------------------------------------------------------===//

def RopeApproximateTrigPass : Pass<"rope-approximate-trig"> {
  let summary = "Replace f32 math.sin/math.cos by vectorizable polynomials";
  let description = [{
    Rewrites `math.sin` and `math.cos` on `f32` scalars and vectors into
    upstream's polynomial approximations (plain arithmetic that stays in vector
    registers) instead of one libm call per lane; f64 is left to libm.

    ```mlir
    %s = math.sin %a : vector<16xf32>
    // becomes upstream's range reduction by pi/2 and minimax polynomials
    // (arith.mulf, arith.addf, math.fma, arith.select): no libm call
    ```

    Contract: docs/PASSES.md, `rope-approximate-trig`.
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
    Rewrites `arith.truncf` from `f32` to `f8E4M3FN` or `f8E5M2` (which MLIR 22
    cannot lower to LLVM) into integer arithmetic on the bits, bit for bit what
    ml_dtypes gives. `rope-to-llvm-cpu` and `rope-to-nvvm` run it. C++:
    `populateExpandFloat8TruncPatterns`
    (`rope/Transforms/Legalize/ExpandFloat8.h`).

    ```mlir
    %q = arith.truncf %y : vector<16xf32> to vector<16xf8E4M3FN>
    // becomes
    %bits = arith.bitcast %y : vector<16xf32> to vector<16xi32>
    ...
    %q = arith.bitcast %encoded : vector<16xi8> to vector<16xf8E4M3FN>
    ```

    Contract: docs/PASSES.md, `rope-expand-f8`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def RopeSplitComplexConstantsPass : Pass<"rope-split-complex-constants"> {
  let summary = "Split complex tensor constants into real and imaginary "
                "constants";
  let description = [{
    Replaces a tensor constant of complex elements (Meta's `freqs_cis`), which
    MLIR 22's LLVM lowering cannot hold, by two real constants joined with
    `complex.create`. `rope-to-llvm-cpu` runs it first.

    ```mlir
    %t = arith.constant dense<[(1.0, 0.0), (0.5, 0.5)]> : tensor<2xcomplex<f32>>
    // becomes
    %re = arith.constant dense<[1.0, 0.5]> : tensor<2xf32>
    %im = arith.constant dense<[0.0, 0.5]> : tensor<2xf32>
    %t = linalg.generic ... ins(%re, %im) ... { complex.create }
    ```

    Contract: docs/PASSES.md, `rope-split-complex-constants`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::complex::ComplexDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Guards: input IR that MLIR's own passes do not survive (lib/Transforms/Guards)
//===----------------------------------------------------------------------===//

def RopeCheckIRSafetyPass : Pass<"rope-check-ir-safety"> {
  let summary = "Refuse verified IR that MLIR 22's passes crash on or turn "
                "into IR that does not verify";
  let description = [{
    Runs `rope::checkIRSafety` (lib/Guards/IRGuards.cpp) on the operation and
    fails with its reason, naming the op and its location, when the IR holds
    what verifies but what MLIR 22's passes do not survive: a `tensor.dim` or
    `memref.dim` of a constant index outside the rank (constant as the
    canonicalizer's folding will make it, not only as spelled), a
    `tensor.cast` whose fold gives its consumer contradicting static sizes,
    negative tile sizes of a transform, an out-of-range constant
    `gpu.launch` size. Changes nothing.

    Every named pipeline of this project (`rope-optimize`,
    `rope-fuse-into-attention`, `rope-to-llvm-cpu`, `rope-to-nvvm`) runs it
    first, so `rope-opt` and `mlir-opt` with the plugin report such input
    as an error where the C API (`rope_mlir.jit`) and the fuzzer already
    refused it.

    ```mlir
    %c-1 = arith.constant -1 : index
    %d = tensor.dim %t, %c-1 : tensor<4xf32>
    // error: rope-check-ir-safety: a tensor.dim of dim -1 of a rank-1 value
    // at loc(...): a negative dim index (...)
    ```

    Contract: docs/PASSES.md, `rope-check-ir-safety`.
  }];
}

#endif // ROPE_TRANSFORMS_PASSES_TD
