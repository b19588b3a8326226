//===- InitAllRope.h - Register everything rope-mlir provides ---*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_INITALLROPE_H
#define ROPE_INITALLROPE_H

namespace mlir {
class DialectRegistry;
namespace rope {

/// Adds the rope dialect to `registry`.
void registerAllRopeDialects(DialectRegistry &registry);

/// Registers the rope passes and the named pipelines.
void registerAllRopePasses();

} // namespace rope
} // namespace mlir

#endif // ROPE_INITALLROPE_H
