/*===- RopeJit.h - In-process compilation of rope IR (C API) ------*- C -*-===*\
|*                                                                            *|
|* Part of the rope-mlir project, under the Apache License v2.0 with LLVM     *|
|* Exceptions.                                                                *|
|* See LICENSE for license information.                                       *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* A small C API over mlir::ExecutionEngine so that callers without MLIR      *|
|* bindings (the Python package, through ctypes) can compile rope IR in       *|
|* process and call the generated `_mlir_ciface_` functions on their own      *|
|* buffers (memref descriptors), with no subprocess and no copies.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ROPE_RUNTIME_ROPEJIT_H
#define ROPE_RUNTIME_ROPEJIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled module. Owns its MLIR context and JIT-ed code.
typedef struct RopeJitModule RopeJitModule;

/// Parses `source` (rope IR on tensors, or any IR the `rope-to-llvm-cpu`
/// pipeline accepts), verifies it, lowers it with `pipeline` (NULL: the
/// default `rope-to-llvm-cpu{emit-c-interface=true}`) and JIT-compiles it at
/// LLVM `optLevel` (0-3). On failure returns NULL and, when `error` is not
/// NULL, stores a malloc'ed message (every diagnostic, with locations) that
/// the caller frees with ropeJitFreeString.
RopeJitModule *ropeJitCompile(const char *source, const char *pipeline,
                              int optLevel, char **error);

/// ropeJitCompileWithFlags: the compiled code never writes the caller's
/// buffers. Every tensor argument of the module's public functions is marked
/// `bufferization.writable = false` (unless it has that attribute already)
/// before lowering, so bufferization copies an argument that the function
/// would otherwise update in place.
#define ROPE_JIT_READ_ONLY_ARGUMENTS 1

/// ropeJitCompile with `flags`, a combination of ROPE_JIT_* flags (0 is
/// ropeJitCompile).
RopeJitModule *ropeJitCompileWithFlags(const char *source, const char *pipeline,
                                       int optLevel, int flags, char **error);

/// The signature of the public function `name` (a func.func definition of
/// the top-level module) as it was before lowering, as malloc'ed JSON text:
///   {"name": "f",
///    "arguments": [T...], "results": [T...],
///    "c_interface": {"parameters": N, "returns_value": true|false} | null}
/// where each T is {"type": "<MLIR type>", "kind": "tensor" | "scalar" |
/// "other"}, a ranked tensor adds "element" ("f32", "i1", ...) and "shape"
/// (sizes, null where dynamic), a scalar (integer, index or float) adds
/// "element". "c_interface" describes `_mlir_ciface_<name>` after lowering
/// (null when the pipeline emitted none). NULL with `*error` set (malloc'ed,
/// naming the functions the module has) when there is no such function.
char *ropeJitFunctionType(RopeJitModule *module, const char *name,
                          char **error);

/// The names of the public functions ropeJitFunctionType describes, as a
/// malloc'ed JSON array of strings; NULL with `*error` set on failure.
char *ropeJitFunctionNames(RopeJitModule *module, char **error);

/// Non-zero when `name` is a registered pass or pass pipeline (e.g.
/// "rope-optimize") of this library.
int ropeJitIsRegistered(const char *name);

/// Non-zero when the CPU this process runs on, as LLVM detects it for the
/// JIT's target machine, has the LLVM target feature `name` (e.g.
/// "avx512bf16"); 0 otherwise or when `name` is NULL.
int ropeJitHostHasFeature(const char *name);

/// Address of the C-interface wrapper `_mlir_ciface_<name>` (or of `name`
/// itself when `raw` is non-zero), NULL if absent. `name` is the function's
/// name in the source: the compiled code names the module's definitions so
/// that none can stand for a C library function its lowering calls.
void *ropeJitLookup(RopeJitModule *module, const char *name, int raw);

/// Address of the packed wrapper of `_mlir_ciface_<name>`
/// (`void (void **arguments)`: arguments[i] points to the i-th parameter's
/// value, one more slot for a returned value), for ropeJitInvoke; NULL if
/// absent.
void *ropeJitLookupPacked(RopeJitModule *module, const char *name);

/// Calls a packed wrapper (ropeJitLookupPacked) so that a failure inside the
/// compiled code comes back here instead of ending the process: returns 0
/// when the code returned normally, 1 when an allocation failed or its size
/// overflowed, 2 when a runtime check of `checked` code failed; for 1 and 2
/// `*error` is set (malloc'ed) to the message (for 2: the failed check and
/// the op's location). Blocks the code allocated before it stopped are not
/// freed. A failure on another thread (an OpenMP worker) still aborts:
/// `checked` code runs on one thread. -1: `packed` is NULL.
int ropeJitInvoke(void *packed, void **arguments, char **error);

/// Runs only the lowering and returns the resulting IR as a malloc'ed string
/// (for inspection), NULL with `error` set on failure.
char *ropeJitLower(const char *source, const char *pipeline, char **error);

/// Translates a Hugging Face `rope_scaling` dict, given as JSON text (NULL,
/// "null" or "{}" for none), for heads of `headDim` channels with RoPE base
/// `base` (rope::buildFrequencyAttrFromHF). `*rotaryDim` is the rotary
/// dimension, <= 0 to derive it as Hugging Face does; it is set to the one
/// used. Returns the `freqs` attribute's text (malloc'ed, e.g.
/// "#rope.yarn<...>"), sets `*magnitude` to the magnitude the op must state
/// and `*mrope` to the M-RoPE attribute's text (malloc'ed) or NULL. On
/// failure returns NULL and sets `*error` (malloc'ed) to the message. Free
/// every string with ropeJitFreeString.
char *ropeJitScalingAttributes(const char *scalingJson, double base,
                               int64_t headDim, int64_t *rotaryDim,
                               double *magnitude, char **mrope, char **error);

/// Parses `text` as exactly one attribute of `kind` ("freqs": a frequency
/// scheme such as #rope.default<...>; "layout": #rope.layout<...>; "mrope":
/// #rope.mrope<...>) and returns its printed form (malloc'ed). Text that is
/// not one whole attribute of that kind (trailing text, another kind, a
/// parse or verifier error) returns NULL with `*error` set. Callers that
/// build IR text from user-supplied attributes paste this result, never the
/// user's text.
char *ropeJitCanonicalAttribute(const char *text, const char *kind,
                                char **error);

void ropeJitDestroy(RopeJitModule *module);
void ropeJitFreeString(char *string);

#ifdef __cplusplus
}
#endif

#endif /* ROPE_RUNTIME_ROPEJIT_H */
