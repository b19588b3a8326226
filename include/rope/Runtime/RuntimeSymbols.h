//===- RuntimeSymbols.h - What JIT-ed code calls at runtime -----*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowered code calls a few functions outside itself: `memrefCopy` (strided
// memref.copy), the OpenMP runtime (`__kmpc_*`, when num-threads != 1) and the
// C library. The upstream way to provide them, ExecutionEngine's
// `sharedLibPaths`, dlopens each library with RTLD_GLOBAL; Debian's
// libmlir_c_runner_utils.so depends on libMLIR.so and libLLVM.so, so the
// first kernel would put a whole LLVM into the host process's global symbol
// scope, where another LLVM (triton's, loaded later) binds to it and crashes.
// Here each symbol a module needs is resolved explicitly instead: our own
// implementations, and the OpenMP runtime loaded with RTLD_LOCAL.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_RUNTIMESYMBOLS_H
#define ROPE_RUNTIME_RUNTIMESYMBOLS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace mlir::rope {

/// Addresses of the functions among `declared` (the function declarations
/// of a module translated to LLVM IR) that this library provides:
/// `memrefCopy`, `malloc` (the C library's, with huge pages asked for large
/// blocks, which `free` releases as any other; a failure traps),
/// `ropeRuntimeTrap` and the OpenMP runtime's
/// entry points, loaded on first use from `openmpRuntimePath` with
/// RTLD_LOCAL. Other externals (the C library: free, memcpy, sinf, ...) are
/// left to the process. Fails with `error` set
/// when the OpenMP runtime is needed but cannot be loaded or lacks a symbol.
/// The f16/bf16 conversions code generation may call (`__truncsfbf2`, ...)
/// are always added: no declaration names them.
/// What a trap of compiled code reports (ropeRuntimeTrap's first argument,
/// invokeGuarded's result).
enum TrapKind : int {
  /// An allocation failed, or its byte size overflowed.
  kTrapOutOfMemory = 1,
  /// A runtime check (`rope-to-llvm-cpu{checked=true}`) failed.
  kTrapCheckFailed = 2,
};

/// The function compiled code calls to trap: `void (i32 kind, ptr message)`.
/// `malloc` traps too when it fails.
constexpr const char *kTrapFunctionName = "ropeRuntimeTrap";

/// Calls `function` (a packed wrapper: `void (void **arguments)`) so that a
/// trap in it returns here: 0 when it returned normally, else the trap's
/// kind with `message` set. A trap outside any guarded call (another
/// thread, code called directly) prints its message and aborts.
int invokeGuarded(void (*function)(void **), void **arguments,
                  std::string &message);

LogicalResult resolveRuntimeSymbols(ArrayRef<std::string> declared,
                                    const char *openmpRuntimePath,
                                    llvm::StringMap<void *> &symbols,
                                    std::string &error);

} // namespace mlir::rope

#endif // ROPE_RUNTIME_RUNTIMESYMBOLS_H
