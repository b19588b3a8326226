//===- Passes.td - Rope transformation passes ---------------*- tablegen -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TRANSFORMS_PASSES_TD
#define ROPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeApproximateTrigPass : Pass<"rope-approximate-trig"> {
  let summary = "Replace f32 math.sin/math.cos by vectorizable polynomials";
  let description = [{
    Rewrites `math.sin` and `math.cos` on `f32` (scalars and vectors) into
    upstream MLIR's polynomial approximations (range reduction by pi/2 and
    minimax polynomials: plain arithmetic that LLVM keeps in vector
    registers), instead of one libm call per lane. rope.apply's lowerings
    only take sin/cos of angles already reduced to [-pi, pi] in f64
    (`ROPE.md` §5), where the approximation's error is a few f32 ulps;
    docs/PRECISION.md measures the result. f64 trig (f64 data) is left to
    libm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ROPE_TRANSFORMS_PASSES_TD
