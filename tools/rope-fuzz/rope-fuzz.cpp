//===- rope-fuzz.cpp - libFuzzer harness for rope IR and its passes -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An input is one byte that chooses a target (kTargets) followed by text.
// For a pass or pipeline, the text is MLIR: checked for the known MLIR
// crashes (rope::checkParserSafety), parsed and verified with every dialect
// rope-opt registers, checked for verified IR that upstream passes crash on
// (rope::checkIRSafety), printed and parsed back when it holds rope IR, and
// run through the pass. A first line `//! <options>` replaces the pass's
// options (the options are user input too). The `transform-interpreter` target
// runs the input's own transform script (rope.apply's TilingInterface). For the
// Hugging Face target, the text is a configuration for the importer
// (buildFrequencyAttrFromHF), as JSON:
//   {"rope_scaling": {...}, "base": 10000, "head_dim": 128, "rotary_dim": 0}
// Diagnostics and errors are swallowed: invalid input is fine. A crash, a
// sanitizer report, a pass that succeeds but leaves invalid IR, or a printout
// that does not parse back is a finding (docs/RELIABILITY.md).
//
// A custom mutator (LLVMFuzzerCustomMutator) edits one integer of the text
// half of the time: the numbers the raise reads as indices and sizes
// (extract indices, slice offsets, map constants, dims) with edge values, the
// mutations of test/fuzz/mutate_frontend.py that byte-level mutation rarely
// makes without breaking the parse; otherwise libFuzzer's own mutations run.
//
// ROPE_FUZZ_VERBOSE=1 prints the target and the diagnostics of each input
// (for triage); ROPE_FUZZ_LIST_TARGETS=1 prints the targets, one per line in
// selector order, and exits (test/fuzz/make_corpus.py reads them).
//
//===----------------------------------------------------------------------===//

#include "rope/Guards/InputGuards.h"
#include "rope/InitAllRope.h"
#include "rope/Interop/HuggingFace.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// Not a pass: the text is a Hugging Face configuration for the importer.
constexpr StringLiteral kHuggingFaceTarget = "huggingface-rope-scaling";

/// What the first byte selects (modulo the count), as the inside of
/// `builtin.module(...)`: `rope-opt --pass-pipeline='builtin.module(<target>)'`
/// reproduces a run. Append new targets at the end: the seed corpus records
/// these indices.
constexpr StringLiteral kTargets[] = {
    "convert-rope-to-linalg",
    "convert-rope-to-vector",
    "convert-rope-to-gpu",
    "convert-rope-to-gpu{vectorize=false}",
    "rope-fuse-into-attention",
    "rope-fuse-into-attention{whole-attention=false fuse-key=always}",
    "rope-raise-softmax",
    "rope-decompose-aggregates",
    "rope-vectorize-contractions",
    "rope-vectorize-contractions{vector-bits=256 rows=2 vectors-per-row=1 "
    "columns=2}",
    "rope-vectorize-elementwise",
    "rope-vectorize-elementwise{max-lanes=2}",
    "rope-approximate-trig",
    "canonicalize",
    "rope-to-llvm-cpu",
    "rope-to-llvm-cpu{vectorize=false num-threads=2}",
    // No CUDA toolkit: PTX text only, libdevice not linked.
    "rope-to-nvvm{format=isa toolkit=/nonexistent}",
    kHuggingFaceTarget,
    // rope.apply's TilingInterface, driven by the input's transform script.
    "transform-interpreter",
    // Frontend IR raised to rope.apply (the seeds hold test/Frontends).
    "rope-raise{remarks=true}",
    "rope-optimize",
    "rope-split-complex-constants",
    // Software prefetch of strided rows (any vector loop on memrefs).
    "rope-prefetch-strided-rows",
    // Repeated stretches of a function body outlined once (any buffer code;
    // min-ops=1 so that the small seeds' repeats are outlined too).
    "rope-outline-repeats{min-ops=1}",
    // A decode step's rotated keys moved into the scores (online steps over
    // rope.apply results; any linalg contraction fed by one).
    "rope-rotate-keys-in-scores",
    // bf16 contractions on AMX tiles, and AMX/vdpbf16ps ops (the input's
    // own, or none) rewritten into plain vector ops.
    "rope-vectorize-contractions{bf16-products=amx}",
    "rope-emulate-bf16-products",
};
constexpr size_t kNumTargets = std::size(kTargets);

struct Harness {
  DialectRegistry registry;
  std::vector<OpPassManager> pipelines;
  bool verbose = false;
};

Harness *harness = nullptr;

[[noreturn]] void finding(StringRef target, const Twine &what) {
  llvm::errs() << "rope-fuzz: finding with " << target << ": " << what << "\n";
  std::abort();
}

/// Whether `module` prints to text that parses back (the custom printers and
/// parsers of the rope dialect agree). Only checked for IR with rope in it:
/// upstream printers are not ours to fuzz.
void checkRoundTrip(ModuleOp module, StringRef target) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module.print(os);
  if (!StringRef(printed).contains("rope."))
    return;
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(
      printed, ParserConfig(module.getContext()), "printed");
  if (!reparsed)
    finding(target, "the verified input prints to IR that does not parse "
                    "back:\n" +
                        printed);
}

/// Runs the Hugging Face importer on the configuration in `text`.
void runHuggingFace(StringRef text, MLIRContext &context) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return;
  }
  const llvm::json::Object *config = parsed->getAsObject();
  if (!config)
    return;
  llvm::json::Object none;
  const llvm::json::Object *scaling = config->getObject("rope_scaling");
  std::string error;
  FailureOr<rope::HuggingFaceRope> rope = rope::buildFrequencyAttrFromHF(
      &context, scaling ? *scaling : none,
      config->getNumber("base").value_or(10000.0),
      config->getInteger("head_dim").value_or(128),
      config->getInteger("rotary_dim").value_or(0), error);
  if (failed(rope)) {
    if (harness->verbose)
      llvm::errs() << "rope-fuzz: " << error << "\n";
    return;
  }
  // What the C API returns: the attributes' text, checked to parse back.
  (void)rope::printAttributeExactly(rope->freqs);
  if (rope->mrope)
    (void)rope::printAttributeExactly(rope->mrope);
}

/// The integer literals of MLIR text that stand for indices and sizes: digit
/// runs that are not part of a name (%c16, f32, d0, #map1), of a float
/// (1.0e+04) or of a string (hex blobs); a dim in `2x8x4` counts.
std::vector<std::pair<size_t, size_t>> integerLiterals(StringRef text) {
  std::vector<std::pair<size_t, size_t>> out;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\'))
      inString = !inString;
    if (inString || !llvm::isDigit(c))
      continue;
    size_t end = i;
    while (end < text.size() && llvm::isDigit(text[end]))
      ++end;
    char before = i ? text[i - 1] : ' ';
    char after = end < text.size() ? text[end] : ' ';
    bool dim = before == 'x' && i >= 2 && llvm::isDigit(text[i - 2]);
    bool name = llvm::isAlpha(before) || before == '_' || before == '%' ||
                before == '#' || before == '.' || before == '^' ||
                before == '@';
    if ((dim || !name) && after != '.' && after != 'e' && after != '_' &&
        !(llvm::isAlpha(after) && after != 'x'))
      out.emplace_back(i, end);
    i = end;
  }
  return out;
}

/// Replaces one integer literal of `text` with an edge value; false when
/// there is none.
bool mutateInteger(std::string &text, std::minstd_rand &rng) {
  std::vector<std::pair<size_t, size_t>> literals = integerLiterals(text);
  if (literals.empty())
    return false;
  auto [begin, end] = literals[rng() % literals.size()];
  // Another literal of the text: often a dim size, so size and size + 1.
  auto [ob, oe] = literals[rng() % literals.size()];
  int64_t other = 0;
  (void)StringRef(text).slice(ob, oe).getAsInteger(10, other);
  int64_t old = 0;
  (void)StringRef(text).slice(begin, end).getAsInteger(10, old);
  // Wrapping: the literals can be INT64_MAX (the harness is under UBSan).
  auto plus = [](int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  };
  const int64_t edges[] = {0,
                           1,
                           -1,
                           2,
                           other,
                           plus(other, 1),
                           plus(old, 1),
                           plus(old, -1),
                           plus(old, old),
                           64,
                           65,
                           int64_t(1) << 31,
                           (int64_t(1) << 31) - 1,
                           std::numeric_limits<int64_t>::max()};
  int64_t value = edges[rng() % std::size(edges)];
  text.replace(begin, end - begin, std::to_string(value));
  return true;
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::minstd_rand rng(seed);
  if (size > 1 && rng() % 2) {
    // The selector byte stays; the text gets one integer edited.
    std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
    if (mutateInteger(text, rng) && text.size() + 1 <= maxSize) {
      std::memcpy(data + 1, text.data(), text.size());
      return text.size() + 1;
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  registerAllPasses();
  rope::registerAllRopePasses();

  harness = new Harness;
  registerAllDialects(harness->registry);
  registerAllExtensions(harness->registry);
  registerAllToLLVMIRTranslations(harness->registry);
  rope::registerAllRopeDialects(harness->registry);
  const char *verbose = std::getenv("ROPE_FUZZ_VERBOSE");
  harness->verbose = verbose && StringRef(verbose) != "0";

  const char *list = std::getenv("ROPE_FUZZ_LIST_TARGETS");
  for (StringRef target : kTargets) {
    if (list)
      llvm::outs() << target << "\n";
    if (target == kHuggingFaceTarget) {
      harness->pipelines.emplace_back("builtin.module");
      continue;
    }
    std::string error;
    llvm::raw_string_ostream os(error);
    FailureOr<OpPassManager> pipeline =
        parsePassPipeline(("builtin.module(" + target + ")").str(), os);
    if (failed(pipeline)) {
      llvm::errs() << "rope-fuzz: cannot build " << target << ": " << error
                   << "\n";
      std::exit(1);
    }
    harness->pipelines.push_back(std::move(*pipeline));
  }
  if (list) {
    llvm::outs().flush();
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return -1;
  size_t index = data[0] % kNumTargets;
  StringRef target = kTargets[index];
  // A NUL-terminated copy: the MLIR lexer reads the byte past the end.
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (harness->verbose && target == kHuggingFaceTarget)
    llvm::errs() << "rope-fuzz: target " << index << ": " << target << "\n";
  else if (harness->verbose)
    llvm::errs() << "rope-fuzz: target " << index << ": rope-opt "
                 << "--pass-pipeline='builtin.module(" << target << ")'\n";

  if (target == kHuggingFaceTarget) {
    MLIRContext context(harness->registry, MLIRContext::Threading::DISABLED);
    ScopedDiagnosticHandler swallow(&context,
                                    [](Diagnostic &) { return success(); });
    runHuggingFace(text, context);
    return 0;
  }

  std::string reason;
  if (failed(rope::checkParserSafety(text, reason))) {
    if (harness->verbose)
      llvm::errs() << "rope-fuzz: rejected: " << reason << "\n";
    return -1;
  }

  MLIRContext context(harness->registry, MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler swallow(&context, [](Diagnostic &diag) {
    if (harness->verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });

  // Parsing verifies.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "input");
  if (!module)
    return 0;
  if (failed(rope::checkIRSafety(*module, reason))) {
    if (harness->verbose)
      llvm::errs() << "rope-fuzz: rejected: " << reason << "\n";
    return -1;
  }
  checkRoundTrip(*module, target);

  PassManager pm(&context);
  if (StringRef(text).starts_with("//!")) {
    StringRef options = StringRef(text).drop_front(3).split('\n').first;
    StringRef pass = target.split('{').first;
    // Never a CUDA toolkit: no ptxas runs, libdevice is not linked.
    StringRef last = pass == "rope-to-nvvm" ? " toolkit=/nonexistent" : "";
    std::string pipeline =
        ("builtin.module(" + pass + "{" + options + last + "})").str();
    if (harness->verbose)
      llvm::errs() << "rope-fuzz: with its options: rope-opt --pass-pipeline='"
                   << pipeline << "'\n";
    if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
      return 0;
  } else {
    static_cast<OpPassManager &>(pm) = harness->pipelines[index];
  }
  // The verifier runs once, below, so that a pass that reports success on
  // invalid IR is told apart from one that fails.
  pm.enableVerifier(false);
  if (failed(pm.run(*module)))
    return 0;
  if (failed(verify(*module)))
    finding(target, "the pass succeeded but left invalid IR");
  return 0;
}
