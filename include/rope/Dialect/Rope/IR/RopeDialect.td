//===- RopeDialect.td - Rope dialect definition ------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD
#define ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD

include "mlir/IR/OpBase.td"

def Rope_Dialect : Dialect {
  let name = "rope";
  let cppNamespace = "::mlir::rope";
  let summary = "Rotary Position Embedding as a first-class operation";
  let description = [{
    The `rope` dialect states Rotary Position Embedding (RoPE) exactly, so that
    compilers can reason about it (fold it, fuse it into attention, keep it
    accurate at long positions) instead of seeing a bag of slices, negations,
    concatenations, multiplications and additions.

    The semantics contract is `SEMANTICS.md`: a pair of channels `(x1, x2)` of the
    head dimension is rotated by the angle `pos * theta_i`; the layout decides
    which channels form a pair, the frequency attribute decides `theta_i`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    // The runtime checks (RuntimeVerifiableOpInterface) create cf.assert,
    // and upstream's pass loads no dialect for them.
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Rope_Op<string mnemonic, list<Trait> traits = []>
    : Op<Rope_Dialect, mnemonic, traits>;

#endif // ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD
