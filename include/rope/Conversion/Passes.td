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

#endif // ROPE_CONVERSION_PASSES_TD
