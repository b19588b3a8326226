//===- RopeJit.cpp - In-process compilation of rope IR --------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/RopeJit.h"
#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Guards/InputGuards.h"
#include "rope/InitAllRope.h"
#include "rope/Interop/HuggingFace.h"
#include "rope/Runtime/RuntimeSymbols.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace mlir;

struct RopeJitModule {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ExecutionEngine> engine;
  /// The public functions' signatures (ropeJitFunctionType), recorded before
  /// lowering, by name.
  std::map<std::string, llvm::json::Object> signatures;
  /// The name each public function has in the compiled code
  /// (renameDefinitions), by its name in the source.
  std::map<std::string, std::string> compiledNames;
};

namespace {
constexpr const char *kDefaultPipeline =
    "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})";

/// Linux gives a process the AMX tile registers only once it asks
/// (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA); until then tdpbf16ps
/// faults. Asked for once, on hosts with AMX, so that code compiled with
/// `contraction-bf16-products=amx` runs. The kernel allocates the larger
/// register state only when a thread first uses the tiles.
void requestAmxTiles() {
#if defined(__linux__) && defined(__x86_64__)
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto amx = features.find("amx-tile");
  if (amx == features.end() || !amx->second)
    return;
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXFeatureXTileData = 18;
  (void)syscall(SYS_arch_prctl, kArchReqXcompPerm, kXFeatureXTileData);
#endif
}

void initializeOnce() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllPasses();
    rope::registerAllRopePasses();
    requestAmxTiles();
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
  if (out)
    std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void setError(char **error, const std::string &message) {
  if (error)
    *error = copyString(message);
}

/// Runs the body of a C API function: no C++ exception may cross the C
/// boundary (the caller is C or ctypes). MLIR and LLVM do not throw, but the
/// standard library under them can (std::bad_alloc, std::length_error);
/// such a failure becomes the function's error result instead of an abort.
template <typename Result, typename Body>
Result guarded(char **error, Result failed, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    setError(error, "out of memory");
  } catch (const std::exception &e) {
    setError(error, std::string("internal error: ") + e.what());
  } catch (...) {
    setError(error, "internal error: unknown exception");
  }
  return failed;
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

/// Gives every function and global the module defines a name no C symbol
/// can have (`rope.user.<name>`; a C identifier has no dot), and returns the
/// new names by old. Lowered code calls the C library by name (math-to-libm
/// declares `logf`, the memref lowering `malloc`): a definition of the
/// user's called `@logf` would otherwise be what every `math.log` calls.
std::map<std::string, std::string> renameDefinitions(ModuleOp module) {
  std::map<std::string, std::string> renamed;
  SymbolTable table(module);
  SmallVector<Operation *> definitions;
  for (Operation &op : module.getBody()->getOperations()) {
    auto symbol = dyn_cast<SymbolOpInterface>(&op);
    if (!symbol || symbol.isDeclaration())
      continue;
    if (isa<func::FuncOp, memref::GlobalOp, LLVM::LLVMFuncOp, LLVM::GlobalOp>(
            op))
      definitions.push_back(&op);
  }
  for (Operation *op : definitions) {
    std::string old = cast<SymbolOpInterface>(op).getName().str();
    std::string name = "rope.user." + old;
    for (int suffix = 1; table.lookup(name); ++suffix)
      name = "rope.user." + old + "." + std::to_string(suffix);
    if (failed(table.rename(op, StringAttr::get(module.getContext(), name))))
      continue; // keeps its name: still callable, only unprotected
    renamed[old] = name;
  }
  return renamed;
}

/// The passes running now, outermost first: what a crash report names.
class RunningPasses : public PassInstrumentation {
public:
  explicit RunningPasses(std::vector<std::string> &names) : names(names) {}
  void runBeforePass(Pass *pass, Operation *) override {
    names.push_back(pass->getArgument().empty() ? pass->getName().str()
                                                : pass->getArgument().str());
  }
  void runAfterPass(Pass *, Operation *) override { names.pop_back(); }
  void runAfterPassFailed(Pass *, Operation *) override { names.pop_back(); }

private:
  std::vector<std::string> &names;
};

/// Whether ROPE_JIT_CRASH_RECOVERY=0 asks that a crashing pass end the
/// process as it would in mlir-opt (for a debugger or a core file).
bool crashRecoveryDisabled() {
  const char *value = std::getenv("ROPE_JIT_CRASH_RECOVERY");
  return value && std::string_view(value) == "0";
}

/// Runs `body`; false when it crashed (a signal such as SIGSEGV, or SIGABRT
/// from an abort) and was abandoned at the crash, true when it returned. This
/// is the net under rope::checkIRSafety: that check refuses the verified IR on
/// which MLIR 22's passes are known to crash, and an upstream crash it does not
/// know yet must still not end the caller's process, which we run inside.
/// LLVM's signal handlers are installed only while some call runs here
/// (counted, for concurrent compiles), and hand a signal from elsewhere on to
/// the host's own.
bool runRecoveringFromCrashes(llvm::function_ref<void()> body) {
  if (crashRecoveryDisabled()) {
    body();
    return true;
  }
  // The handlers stay installed while any compile runs here, and go when
  // the last one leaves, by return or by exception (std::bad_alloc).
  struct Handlers {
    Handlers() {
      std::lock_guard<std::mutex> lock(mutex());
      if (running()++ == 0)
        llvm::CrashRecoveryContext::Enable();
    }
    ~Handlers() {
      std::lock_guard<std::mutex> lock(mutex());
      if (--running() == 0)
        llvm::CrashRecoveryContext::Disable();
    }
    static std::mutex &mutex() {
      static std::mutex instance;
      return instance;
    }
    static unsigned &running() {
      static unsigned count = 0;
      return count;
    }
  } handlers;
  llvm::CrashRecoveryContext recovery;
  return recovery.RunSafely(body);
}

/// Parses and lowers `source`; returns the module or null with `error` set.
/// `beforeLowering`, when given, sees the parsed and verified module first.
/// `crashed` is set when a pass crashed: the module and the pass manager are
/// then leaked, and the caller must leak `context` too (the crashed pass
/// left them half rewritten; nothing may walk or destroy them).
OwningOpRef<ModuleOp>
parseAndLower(MLIRContext *context, const char *source, const char *pipeline,
              std::string &error, bool &crashed,
              const std::function<void(ModuleOp)> &beforeLowering = nullptr) {
  crashed = false;
  if (!source) {
    error = "source is NULL";
    return nullptr;
  }
  // Text that crashes MLIR's parser (stack overflow on deep nesting, and a
  // few upstream bugs) must never reach it: we run inside the caller's
  // process.
  if (failed(rope::checkParserSafety(source, error)))
    return nullptr;
  DiagnosticCollector diagnostics(context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(context), "rope-input");
  if (!module) {
    error = diagnostics.take("failed to parse the module");
    return nullptr;
  }
  // Verified IR that MLIR's passes crash on (an upstream bug).
  if (failed(rope::checkIRSafety(*module, error)))
    return nullptr;
  std::string pipelineError;
  llvm::raw_string_ostream errorStream(pipelineError);
  FailureOr<OpPassManager> parsed =
      parsePassPipeline(pipeline ? pipeline : kDefaultPipeline, errorStream);
  if (failed(parsed)) {
    error = "invalid pass pipeline: " + pipelineError;
    return nullptr;
  }
  if (beforeLowering)
    beforeLowering(*module);
  // On the heap: after a crash the pass manager (its passes' state, its
  // analyses of the half-rewritten IR) is leaked with the module.
  auto pm = std::make_unique<PassManager>(context);
  static_cast<OpPassManager &>(*pm) = *parsed;
  std::vector<std::string> running;
  pm->addInstrumentation(std::make_unique<RunningPasses>(running));
  LogicalResult lowered = failure();
  if (!runRecoveringFromCrashes([&] { lowered = pm->run(*module); })) {
    crashed = true;
    (void)module.release();
    (void)pm.release();
    std::string passes;
    for (const std::string &name : running)
      passes += (passes.empty() ? "" : " > ") + name;
    error = "an MLIR pass crashed on this module (" +
            (passes.empty() ? std::string("outside any pass") : passes) +
            "): the compile was abandoned and its IR left alone; the "
            "input verifies but holds what MLIR 22 does not survive and "
            "rope-check-ir-safety does not refuse yet (docs/RELIABILITY.md, "
            "\"Crashes in MLIR's passes\")";
    std::string earlier = diagnostics.take("");
    if (!earlier.empty())
      error += "\n" + earlier;
    return nullptr;
  }
  if (failed(lowered)) {
    error = diagnostics.take("lowering failed");
    return nullptr;
  }
  return module;
}

/// One argument or result type of a signature: {"type": its text, "kind":
/// "tensor" (ranked; "element", "shape" with null for dynamic sizes),
/// "scalar" (integer, index or float; "element") or "other"}.
llvm::json::Value describeType(Type type) {
  auto text = [](auto printable) {
    std::string out;
    llvm::raw_string_ostream os(out);
    printable.print(os);
    return out;
  };
  llvm::json::Object object{{"type", text(type)}};
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    llvm::json::Array shape;
    for (int64_t size : tensor.getShape())
      shape.push_back(ShapedType::isDynamic(size) ? llvm::json::Value(nullptr)
                                                  : llvm::json::Value(size));
    object["kind"] = "tensor";
    object["element"] = text(tensor.getElementType());
    object["shape"] = std::move(shape);
  } else if (isa<IntegerType, IndexType, FloatType>(type)) {
    object["kind"] = "scalar";
    object["element"] = text(type);
  } else {
    object["kind"] = "other";
  }
  return object;
}

/// The signatures of `module`'s public func.func definitions, and with
/// `readOnlyArguments` their tensor arguments marked
/// `bufferization.writable = false` (where no such mark is present).
std::map<std::string, llvm::json::Object>
recordSignatures(ModuleOp module, bool readOnlyArguments) {
  std::map<std::string, llvm::json::Object> signatures;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isPrivate() || function.isExternal())
      continue;
    FunctionType type = function.getFunctionType();
    llvm::json::Array arguments, results;
    for (Type input : type.getInputs())
      arguments.push_back(describeType(input));
    for (Type output : type.getResults())
      results.push_back(describeType(output));
    signatures[function.getSymName().str()] =
        llvm::json::Object{{"name", function.getSymName().str()},
                           {"arguments", std::move(arguments)},
                           {"results", std::move(results)}};
    if (!readOnlyArguments)
      continue;
    StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
    for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(function.getArgument(i).getType()) &&
          !function.getArgAttr(i, writable))
        function.setArgAttr(i, writable,
                            BoolAttr::get(module.getContext(), false));
  }
  return signatures;
}

/// The name public function `name` has in the compiled code.
std::string compiledName(const RopeJitModule &module, const std::string &name) {
  auto found = module.compiledNames.find(name);
  return found == module.compiledNames.end() ? name : found->second;
}

RopeJitModule *compile(const char *source, const char *pipeline, int optLevel,
                       int flags, char **error) {
  initializeOnce();
  auto result = std::make_unique<RopeJitModule>();
  result->context = makeContext();
  // The attribute that marks arguments read-only belongs to it.
  result->context->getOrLoadDialect<bufferization::BufferizationDialect>();
  std::string message;
  bool readOnly = flags & ROPE_JIT_READ_ONLY_ARGUMENTS;
  bool crashed;
  OwningOpRef<ModuleOp> module =
      parseAndLower(result->context.get(), source, pipeline, message, crashed,
                    [&](ModuleOp m) {
                      result->signatures = recordSignatures(m, readOnly);
                      result->compiledNames = renameDefinitions(m);
                    });
  if (!module) {
    if (crashed)
      (void)result->context.release();
    setError(error, message);
    return nullptr;
  }
  // What the lowering made of each function's C interface, for callers to
  // check against the signature: its parameter count and whether it
  // returns a value (null: no wrapper).
  for (auto &[name, signature] : result->signatures) {
    auto wrapper = module->lookupSymbol<LLVM::LLVMFuncOp>(
        "_mlir_ciface_" + compiledName(*result, name));
    if (!wrapper) {
      signature["c_interface"] = nullptr;
      continue;
    }
    LLVM::LLVMFunctionType type = wrapper.getFunctionType();
    signature["c_interface"] = llvm::json::Object{
        {"parameters", static_cast<int64_t>(type.getNumParams())},
        {"returns_value", !isa<LLVM::LLVMVoidType>(type.getReturnType())}};
  }
  unsigned level = optLevel < 0 ? 0 : (optLevel > 3 ? 3 : optLevel);
  // The optimizer is given the host it compiles for (as the code generator
  // is, by ExecutionEngine): without a TargetMachine its cost model knows no
  // vector registers and no instruction costs, so it vectorizes nothing for
  // the host and unrolls by a count of IR instructions (a <64 x float> op
  // counting as one). Measured on the model zoo (issue 33): 3x the run time
  // and twice the compile time.
  auto targetBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!targetBuilder) {
    setError(error, llvm::toString(targetBuilder.takeError()));
    return nullptr;
  }
  targetBuilder->setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(level));
  auto targetMachine = targetBuilder->createTargetMachine();
  if (!targetMachine) {
    setError(error, llvm::toString(targetMachine.takeError()));
    return nullptr;
  }
  auto optimize =
      makeOptimizingTransformer(level, /*sizeLevel=*/0, targetMachine->get());
  // The functions the optimized LLVM module declares: what it will call at
  // run time (OpenMP entry points only appear in the translation to LLVM IR).
  std::vector<std::string> declared;
  auto transformer = [&](llvm::Module *llvmModule) -> llvm::Error {
    if (llvm::Error failure = optimize(llvmModule))
      return failure;
    for (llvm::Function &function : *llvmModule)
      if (function.isDeclaration() && !function.isIntrinsic())
        declared.push_back(function.getName().str());
    return llvm::Error::success();
  };
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(level);
  options.enableGDBNotificationListener = false;
  // ROPE_MLIR_PERF=1 names the compiled functions for Linux perf (a
  // jit-<pid>.dump for `perf inject --jit`; docs/PERFORMANCE.md, "Profiling
  // compiled code"): off by default, it writes a file per process.
  const char *perf = std::getenv("ROPE_MLIR_PERF");
  options.enablePerfNotificationListener =
      perf && std::string_view(perf) == "1";
  DiagnosticCollector diagnostics(result->context.get());
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    std::string text = llvm::toString(engine.takeError());
    setError(error, diagnostics.take("") + text);
    return nullptr;
  }
  // Runtime functions are resolved one by one, before any code is
  // materialized (RuntimeSymbols.h says why no library is loaded into the
  // global scope for them).
  llvm::StringMap<void *> runtimeSymbols;
  if (failed(rope::resolveRuntimeSymbols(declared, ROPE_MLIR_OPENMP_RUNTIME,
                                         runtimeSymbols, message))) {
    setError(error, message);
    return nullptr;
  }
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const auto &entry : runtimeSymbols)
      map[interner(entry.getKey())] = {
          llvm::orc::ExecutorAddr::fromPtr(entry.getValue()),
          llvm::JITSymbolFlags::Exported};
    return map;
  });
  (*engine)->initialize();
  // Materialize now, so that a symbol nobody provides is this call's error
  // rather than a missing function at lookup.
  for (auto function : module->getOps<LLVM::LLVMFuncOp>()) {
    if (function.isExternal() || function.isPrivate())
      continue;
    auto address = (*engine)->lookup(function.getSymName());
    if (!address) {
      setError(error, "cannot link @" + function.getSymName().str() + ": " +
                          llvm::toString(address.takeError()));
      return nullptr;
    }
  }
  result->engine = std::move(*engine);
  return result.release();
}
} // namespace

extern "C" RopeJitModule *ropeJitCompile(const char *source,
                                         const char *pipeline, int optLevel,
                                         char **error) {
  return guarded<RopeJitModule *>(error, nullptr, [&] {
    return compile(source, pipeline, optLevel, /*flags=*/0, error);
  });
}

extern "C" RopeJitModule *ropeJitCompileWithFlags(const char *source,
                                                  const char *pipeline,
                                                  int optLevel, int flags,
                                                  char **error) {
  return guarded<RopeJitModule *>(error, nullptr, [&] {
    if (flags & ~ROPE_JIT_READ_ONLY_ARGUMENTS) {
      setError(error, "unknown flags " + std::to_string(flags));
      return static_cast<RopeJitModule *>(nullptr);
    }
    return compile(source, pipeline, optLevel, flags, error);
  });
}

extern "C" char *ropeJitFunctionType(RopeJitModule *module, const char *name,
                                     char **error) {
  return guarded<char *>(error, nullptr, [&]() -> char * {
    if (!module || !name) {
      setError(error, module ? "name is NULL" : "module is NULL");
      return nullptr;
    }
    auto found = module->signatures.find(name);
    if (found == module->signatures.end()) {
      std::string names;
      for (const auto &entry : module->signatures)
        names += (names.empty() ? "@" : ", @") + entry.first;
      setError(error, "no public function @" + std::string(name) +
                          " in the module; it has " +
                          (names.empty() ? std::string("none") : names));
      return nullptr;
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(llvm::json::Object(found->second));
    return copyString(text);
  });
}

extern "C" char *ropeJitFunctionNames(RopeJitModule *module, char **error) {
  return guarded<char *>(error, nullptr, [&]() -> char * {
    if (!module) {
      setError(error, "module is NULL");
      return nullptr;
    }
    llvm::json::Array names;
    for (const auto &entry : module->signatures)
      names.push_back(entry.first);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(names));
    return copyString(text);
  });
}

extern "C" int ropeJitIsRegistered(const char *name) {
  if (!name)
    return 0;
  return guarded<int>(nullptr, 0, [&] {
    initializeOnce();
    return PassPipelineInfo::lookup(name) || PassInfo::lookup(name) ? 1 : 0;
  });
}

extern "C" int ropeJitHostHasFeature(const char *name) {
  if (!name)
    return 0;
  return guarded<int>(nullptr, 0, [&] {
    // The same detection as JITTargetMachineBuilder::detectHost(), which
    // the ExecutionEngine compiles for.
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto it = features.find(name);
    return it != features.end() && it->second ? 1 : 0;
  });
}

extern "C" void *ropeJitLookup(RopeJitModule *module, const char *name,
                               int raw) {
  if (!module || !module->engine || !name)
    return nullptr;
  return guarded<void *>(nullptr, nullptr, [&]() -> void * {
    std::string compiled = compiledName(*module, name);
    std::string symbol =
        raw ? compiled : std::string("_mlir_ciface_") + compiled;
    auto address = module->engine->lookup(symbol);
    if (!address) {
      llvm::consumeError(address.takeError());
      return nullptr;
    }
    return *address;
  });
}

extern "C" void *ropeJitLookupPacked(RopeJitModule *module, const char *name) {
  if (!module || !module->engine || !name)
    return nullptr;
  return guarded<void *>(nullptr, nullptr, [&]() -> void * {
    auto address = module->engine->lookupPacked("_mlir_ciface_" +
                                                compiledName(*module, name));
    if (!address) {
      llvm::consumeError(address.takeError());
      return nullptr;
    }
    return reinterpret_cast<void *>(*address);
  });
}

extern "C" int ropeJitInvoke(void *packed, void **arguments, char **error) {
  if (!packed) {
    setError(error, "function is NULL");
    return -1;
  }
  std::string message;
  int kind = rope::invokeGuarded(reinterpret_cast<void (*)(void **)>(packed),
                                 arguments, message);
  if (kind != 0)
    setError(error, message);
  return kind;
}

extern "C" char *ropeJitLower(const char *source, const char *pipeline,
                              char **error) {
  return guarded<char *>(error, nullptr, [&]() -> char * {
    initializeOnce();
    std::unique_ptr<MLIRContext> context = makeContext();
    std::string message;
    bool crashed;
    OwningOpRef<ModuleOp> module =
        parseAndLower(context.get(), source, pipeline, message, crashed);
    if (!module) {
      if (crashed)
        (void)context.release();
      setError(error, message);
      return nullptr;
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return copyString(text);
  });
}

extern "C" char *ropeJitScalingAttributes(const char *scalingJson, double base,
                                          int64_t headDim, int64_t *rotaryDim,
                                          double *magnitude, char **mrope,
                                          char **error) {
  return guarded<char *>(error, nullptr, [&]() -> char * {
    auto fail = [&](const std::string &message) -> char * {
      setError(error, message);
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
  });
}

extern "C" char *ropeJitCanonicalAttribute(const char *text, const char *kind,
                                           char **error) {
  return guarded<char *>(error, nullptr, [&]() -> char * {
    auto fail = [&](const std::string &message) -> char * {
      setError(error, message);
      return nullptr;
    };
    if (!text || !kind)
      return fail(text ? "kind is NULL" : "text is NULL");
    StringRef expected(kind);
    if (expected != "freqs" && expected != "layout" && expected != "mrope")
      return fail("kind must be 'freqs', 'layout' or 'mrope', got '" +
                  expected.str() + "'");
    DialectRegistry registry;
    rope::registerAllRopeDialects(registry);
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.getOrLoadDialect<rope::RopeDialect>();
    DiagnosticCollector diagnostics(&context);
    StringRef source(text);
    std::string unsafe;
    if (failed(rope::checkParserSafety(source, unsafe)))
      return fail(unsafe);
    // The whole text must be one attribute: parseAttribute stops after the
    // first, so text after it (", token_dims = ...") would otherwise be
    // pasted into the op's attribute dictionary by the caller.
    size_t consumed = 0;
    Attribute attr = parseAttribute(source, &context, Type(), &consumed);
    if (!attr) {
      std::string why = diagnostics.take("");
      return fail("'" + source.str() + "' is not an attribute" +
                  (why.empty() ? std::string() : ": " + why));
    }
    if (!source.drop_front(consumed).trim().empty())
      return fail("'" + source.str() + "' holds text after the attribute: '" +
                  source.drop_front(consumed).trim().str() + "'");
    bool matches = expected == "freqs" ? isa<rope::FrequencyAttrInterface>(attr)
                   : expected == "layout" ? isa<rope::LayoutAttr>(attr)
                                          : isa<rope::MRopeAttr>(attr);
    if (!matches)
      return fail("'" + source.str() + "' is not a " +
                  (expected == "freqs"
                       ? std::string("frequency attribute (#rope.default<...>, "
                                     "#rope.yarn<...>, ...)")
                   : expected == "layout"
                       ? std::string("layout attribute (#rope.layout<...>)")
                       : std::string("M-RoPE attribute (#rope.mrope<...>)")));
    FailureOr<std::string> printed = rope::printAttributeExactly(attr);
    if (failed(printed))
      return fail("'" + source.str() +
                  "' does not print in a form that parses back exactly");
    return copyString(*printed);
  });
}

extern "C" void ropeJitDestroy(RopeJitModule *module) { delete module; }

extern "C" void ropeJitFreeString(char *string) { std::free(string); }
