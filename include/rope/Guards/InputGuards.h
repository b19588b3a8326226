//===- InputGuards.h - Reject text that crashes the MLIR parser -*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's parser crashes, instead of reporting a diagnostic, on a few kinds
// of malformed text, its transform interpreter on one script, and its
// canonicalizer on one kind of verified IR (upstream bugs, listed with
// reproducers in docs/RELIABILITY.md). Callers that parse text they did not
// write (the C API in lib/Runtime/RopeJit.cpp, the fuzzer in tools/rope-fuzz)
// check the text here first, and the parsed IR before its passes, and turn a
// would-be crash into an error message.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_RUNTIME_INPUTGUARDS_H
#define ROPE_RUNTIME_INPUTGUARDS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::rope {

/// The deepest nesting checkParserSafety accepts by default. The recursive
/// descent parser uses up to ~3 KB of stack per level (an 8 MB stack
/// overflows between 3000 and 10000 nested regions); 256 levels stay under
/// 1 MB and far above what real IR nests.
constexpr unsigned kMaxParserNesting = 256;

/// Checks `source`, MLIR text about to be parsed, for the inputs known to
/// crash MLIR 22:
///  - nesting deeper than `maxNesting`: brackets `( [ { <` together with runs
///    of unary minus (the parser recurses on each and overflows the stack);
///  - a dense array of `index` elements, `array<index: ...>` (also through a
///    type alias): Parser::parseDenseArrayAttr asks index for a bit width;
///  - a malformed `dimensions = [...]` / `permutation = [...]` in the custom
///    form of linalg.broadcast, linalg.transpose and linalg.reduce: their
///    parser stores the null attribute of a failed parse;
///  - a `tensor.concat` whose `dim` is not a non-negative integer (custom or
///    generic form): its verifier indexes the shapes with a negative dim;
///  - `transform.structured.tile_using_forall` with every tile size 0 (not a
///    parser crash: the transform interpreter dereferences the loop it did
///    not create).
/// Comments and string literals are skipped. On failure, `reason` says what
/// was found and where (line:column). The check is conservative: it may
/// reject valid but unusual text (a dimension list written in hex), never a
/// plain valid one.
LogicalResult checkParserSafety(StringRef source, std::string &reason,
                                unsigned maxNesting = kMaxParserNesting);

/// Checks `root`, parsed and verified IR about to run through passes, for
/// what verifies but crashes MLIR 22's passes or makes them build IR that
/// does not verify: a `tensor.dim` / `memref.dim` whose index is a negative
/// constant (undefined behaviour; the canonicalizer crashes on it), a
/// `tensor.cast` whose fold gives its consumer contradicting static sizes,
/// negative tile sizes of a transform, a constant `gpu.launch` size outside
/// (0, 2^31) (docs/RELIABILITY.md). On failure, `reason` says which op and
/// where. The pass `rope-check-ir-safety` runs it first in every named
/// pipeline.
LogicalResult checkIRSafety(Operation *root, std::string &reason);

} // namespace mlir::rope

#endif // ROPE_RUNTIME_INPUTGUARDS_H
