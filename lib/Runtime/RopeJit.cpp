//===- RopeJit.cpp - In-process compilation of rope IR --------------------===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/RopeJit.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/InitAllRope.h"
#include "rope/Interop/HuggingFace.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

using namespace mlir;

struct RopeJitModule {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ExecutionEngine> engine;
};

namespace {
constexpr const char *kDefaultPipeline =
    "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})";

void initializeOnce() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllPasses();
    rope::registerAllRopePasses();
  });
}

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  rope::registerAllRopeDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  // Compilation is small; keep the host process free of MLIR thread pools.
  context->disableMultithreading();
  return context;
}

char *copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

/// Collects every diagnostic reported while it is alive, with locations.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(messages);
          if (!messages.empty())
            os << "\n";
          os << diag.getLocation() << ": " << diag;
          for (Diagnostic &note : diag.getNotes()) {
            // The generic-form dump of the op adds nothing for a user.
            if (StringRef(note.str()).starts_with("see current operation"))
              continue;
            os << "\n  note: " << note.getLocation() << ": " << note;
          }
          return success();
        }) {}
  std::string take(const char *fallback) {
    return messages.empty() ? std::string(fallback) : messages;
  }

private:
  std::string messages;
  ScopedDiagnosticHandler handler;
};

/// Parses and lowers `source`; returns the module or null with `error` set.
OwningOpRef<ModuleOp> parseAndLower(MLIRContext *context, const char *source,
                                    const char *pipeline, std::string &error) {
  DiagnosticCollector diagnostics(context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(context), "rope-input");
  if (!module) {
    error = diagnostics.take("failed to parse the module");
    return nullptr;
  }
  std::string pipelineError;
  llvm::raw_string_ostream errorStream(pipelineError);
  FailureOr<OpPassManager> parsed =
      parsePassPipeline(pipeline ? pipeline : kDefaultPipeline, errorStream);
  if (failed(parsed)) {
    error = "invalid pass pipeline: " + pipelineError;
    return nullptr;
  }
  PassManager pm(context);
  static_cast<OpPassManager &>(pm) = *parsed;
  if (failed(pm.run(*module))) {
    error = diagnostics.take("lowering failed");
    return nullptr;
  }
  return module;
}
} // namespace

extern "C" RopeJitModule *ropeJitCompile(const char *source,
                                         const char *pipeline, int optLevel,
                                         char **error) {
  initializeOnce();
  auto result = std::make_unique<RopeJitModule>();
  result->context = makeContext();
  std::string message;
  OwningOpRef<ModuleOp> module =
      parseAndLower(result->context.get(), source, pipeline, message);
  if (!module) {
    if (error)
      *error = copyString(message);
    return nullptr;
  }
  unsigned level = optLevel < 0 ? 0 : (optLevel > 3 ? 3 : optLevel);
  auto transformer = makeOptimizingTransformer(level, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(level);
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  // memref.copy of strided buffers lowers to a call into the C runner utils;
  // multi-threaded kernels (num-threads != 1) call the OpenMP runtime.
  llvm::StringRef runtimeLibraries[] = {ROPE_MLIR_C_RUNNER_UTILS,
                                        ROPE_MLIR_OPENMP_RUNTIME};
  options.sharedLibPaths = runtimeLibraries;
  DiagnosticCollector diagnostics(result->context.get());
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    std::string text = llvm::toString(engine.takeError());
    if (error)
      *error = copyString(diagnostics.take("") + text);
    return nullptr;
  }
  result->engine = std::move(*engine);
  return result.release();
}

extern "C" void *ropeJitLookup(RopeJitModule *module, const char *name,
                               int raw) {
  if (!module || !module->engine)
    return nullptr;
  std::string symbol =
      raw ? std::string(name) : std::string("_mlir_ciface_") + name;
  auto address = module->engine->lookup(symbol);
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return *address;
}

extern "C" char *ropeJitLower(const char *source, const char *pipeline,
                              char **error) {
  initializeOnce();
  std::unique_ptr<MLIRContext> context = makeContext();
  std::string message;
  OwningOpRef<ModuleOp> module =
      parseAndLower(context.get(), source, pipeline, message);
  if (!module) {
    if (error)
      *error = copyString(message);
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return copyString(text);
}

extern "C" char *ropeJitScalingAttributes(const char *scalingJson, double base,
                                          int64_t headDim, int64_t *rotaryDim,
                                          double *magnitude, char **mrope,
                                          char **error) {
  auto fail = [&](const std::string &message) -> char * {
    if (error)
      *error = copyString(message);
    return nullptr;
  };
  if (mrope)
    *mrope = nullptr;
  llvm::json::Object empty;
  llvm::json::Value parsed = nullptr;
  const llvm::json::Object *scaling = &empty;
  if (scalingJson) {
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(scalingJson);
    if (!value)
      return fail("rope_scaling is not valid JSON: " +
                  llvm::toString(value.takeError()));
    parsed = std::move(*value);
    if (const llvm::json::Object *object = parsed.getAsObject())
      scaling = object;
    else if (parsed.kind() != llvm::json::Value::Null)
      return fail("rope_scaling must be a JSON object or null");
  }
  // Only attributes are built: the rope dialect alone suffices.
  DialectRegistry registry;
  rope::registerAllRopeDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.getOrLoadDialect<rope::RopeDialect>();
  std::string message;
  FailureOr<rope::HuggingFaceRope> result = rope::buildFrequencyAttrFromHF(
      &context, *scaling, base, headDim, rotaryDim ? *rotaryDim : 0, message);
  if (failed(result))
    return fail(message);
  if (rotaryDim)
    *rotaryDim = result->rotaryDim;
  if (magnitude)
    *magnitude = result->magnitude;
  FailureOr<std::string> freqs = rope::printAttributeExactly(result->freqs);
  if (failed(freqs))
    return fail("the frequency attribute does not print in a form that "
                "parses back exactly");
  if (mrope && result->mrope) {
    FailureOr<std::string> text = rope::printAttributeExactly(result->mrope);
    if (failed(text))
      return fail("the M-RoPE attribute does not print in a form that "
                  "parses back exactly");
    *mrope = copyString(*text);
  }
  return copyString(*freqs);
}

extern "C" void ropeJitDestroy(RopeJitModule *module) { delete module; }

extern "C" void ropeJitFreeString(char *string) { std::free(string); }
