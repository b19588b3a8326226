//===- TestPasses.td - Test-only rope passes ---------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TEST_PASSES_TD
#define ROPE_TEST_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestRopeFuseIntoAttentionPatternsPass
    : Pass<"test-rope-fuse-into-attention-patterns"> {
  let summary = "Apply populateRopeFuseIntoAttentionPatterns with "
                "applyPatternsGreedily";
  let description = [{
    Runs the patterns of `--rope-fuse-into-scores` (default options) under
    the default greedy driver, which revisits every op, the tiles included,
    until nothing changes; fails if that does not converge. The pass itself
    applies the patterns once per contraction (whole attention is raised to
    rope.attention and tiled before, by the rope-fuse-into-attention
    pipeline; these patterns do not do that).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TestRopeSwapCommutativeOperandsPass
    : Pass<"rope-test-swap-commutative-operands"> {
  let summary = "Swap the operands of commutative ops in linalg payloads and "
                "the inputs of commutative named linalg ops";
  let description = [{
    A semantics-preserving rewrite for the metamorphic tests of
    `--rope-raise` (scripts/metamorphic.py): in every linalg payload, the two
    operands of each commutative op (the `Commutative` trait: `arith.addf`,
    `mulf`, `maxnumf`, `minimumf`, `addi`, `andi`, ...) and of
    `arith.cmpf`/`arith.cmpi` (with the mirrored predicate) are swapped;
    `linalg.add`, `linalg.mul`, `linalg.max` and `linalg.min` get their two
    inputs swapped. With `permute-inputs`, every `linalg.generic` also gets
    its inputs in reverse order (indexing maps and block arguments with
    them). Canonicalization would undo some of this (it moves constants to
    the right): run it alone.
  }];
  let options = [
    Option<"permuteInputs", "permute-inputs", "bool", /*default=*/"false",
           "Also reverse the inputs of every linalg.generic">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

def TestRopeSplitGenericPass : Pass<"rope-test-split-generic"> {
  let summary = "Split each elementwise linalg.generic with two or more "
                "payload ops into two chained generics";
  let description = [{
    A semantics-preserving rewrite for the metamorphic tests of
    `--rope-raise` (scripts/metamorphic.py), the inverse of
    `linalg-fuse-elementwise-ops`: each `linalg.generic` whose loops are all
    parallel, whose first result's indexing map is a permutation and whose
    payload has at least two ops (besides the yield) becomes two generics
    over the same loops. The first computes the first half of the payload
    and yields every value of it that the second half uses (one
    intermediate tensor each, indexed like the first result, made with
    `tensor.empty`); the second reads the original inputs and those
    tensors and computes the rest. Index-typed values (`linalg.index` and
    what is computed from it) and constants are recomputed in the second
    rather than passed.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ROPE_TEST_PASSES_TD
