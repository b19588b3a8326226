//===- Passes.td - Rope conversion passes -------------------*- tablegen -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CONVERSION_PASSES_TD
#define ROPE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

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
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConvertRopeToVectorPass : Pass<"convert-rope-to-vector"> {
  let summary = "Lower rope.apply to a token-parallel loop of vector code";
  let description = [{
    Replaces every `rope.apply` by an `scf.forall` over its token dims whose
    body, once per token, computes the P/2 cos/sin values as vectors (the
    angle's f64 range reduction of `ROPE.md` §5 on vectors, or a gather of
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
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ROPE_CONVERSION_PASSES_TD
