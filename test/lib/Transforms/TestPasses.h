//===- TestPasses.h - Test-only rope passes ---------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TEST_TRANSFORMS_TESTPASSES_H
#define ROPE_TEST_TRANSFORMS_TESTPASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::rope::test {

#define GEN_PASS_DECL
#include "TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace mlir::rope::test

#endif // ROPE_TEST_TRANSFORMS_TESTPASSES_H
