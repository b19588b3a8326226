//===- RuntimeSymbols.cpp - What JIT-ed rope code calls at run time -------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/RuntimeSymbols.h"

#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <sys/mman.h>

using namespace mlir;

// libgcc's half-precision conversions (GCC 12 and later).
extern "C" _Float16 __truncsfhf2(float);
extern "C" _Float16 __truncdfhf2(double);
extern "C" float __extendhfsf2(_Float16);

namespace {
/// The memref descriptor `{allocated, aligned, offset, sizes[r], strides[r]}`
/// as the LLVM lowering lays it out, behind an unranked memref.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct StridedView {
  char *base;
  const int64_t *sizes;
  const int64_t *strides;
};

StridedView viewOf(const UnrankedMemRef &memref, int64_t elemSize) {
  auto *fields = static_cast<char *>(memref.descriptor);
  char *aligned;
  std::memcpy(&aligned, fields + sizeof(void *), sizeof(void *));
  int64_t offset;
  std::memcpy(&offset, fields + 2 * sizeof(void *), sizeof(int64_t));
  auto *sizes =
      reinterpret_cast<const int64_t *>(fields + 2 * sizeof(void *) + 8);
  return {aligned + offset * elemSize, sizes, sizes + memref.rank};
}

/// `memref.copy` between two memrefs of the same shape and any strides (the
/// lowering calls it when either side is not contiguous). Same contract as
/// upstream's CRunnerUtils `memrefCopy`, written here so that no library has
/// to be loaded for it.
extern "C" void ropeRuntimeMemrefCopy(int64_t elemSize, UnrankedMemRef *src,
                                      UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  StridedView from = viewOf(*src, elemSize);
  StridedView to = viewOf(*dst, elemSize);
  for (int64_t d = 0; d < rank; ++d)
    if (from.sizes[d] == 0)
      return;
  if (rank == 0) {
    std::memcpy(to.base, from.base, elemSize);
    return;
  }
  // Rows along the innermost dim; contiguous rows are one memcpy.
  int64_t inner = rank - 1;
  bool contiguousRows = from.strides[inner] == 1 && to.strides[inner] == 1;
  if (rank > 64)
    return; // No lowering produces such ranks; refuse rather than overrun.
  int64_t index[64] = {0};
  while (true) {
    int64_t fromOffset = 0, toOffset = 0;
    for (int64_t d = 0; d < inner; ++d) {
      fromOffset += index[d] * from.strides[d];
      toOffset += index[d] * to.strides[d];
    }
    char *source = from.base + fromOffset * elemSize;
    char *target = to.base + toOffset * elemSize;
    if (contiguousRows) {
      std::memmove(target, source, from.sizes[inner] * elemSize);
    } else {
      for (int64_t i = 0; i < from.sizes[inner]; ++i)
        std::memmove(target + i * to.strides[inner] * elemSize,
                     source + i * from.strides[inner] * elemSize, elemSize);
    }
    int64_t d = inner - 1;
    while (d >= 0 && ++index[d] == from.sizes[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}
/// f32 -> bf16, rounding to nearest even; NaN stays a (quiet) NaN.
uint16_t roundToBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

__bf16 fromBits(uint16_t bits) {
  __bf16 out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

/// The bf16 truncations LLVM calls where the target has no instruction for
/// them (compiler-rt's names; Debian 12's libgcc predates them, and upstream
/// gets them from libmlir_float16_utils.so, which we do not load).
extern "C" __bf16 ropeRuntimeTruncSFBF2(float value) {
  return fromBits(roundToBF16Bits(value));
}

/// f64 -> bf16 bits: round to float by rounding to odd, then to bf16 by
/// rounding to nearest even. That is the correctly rounded double, with no
/// double-rounding error (the float keeps 16 bits more than bf16).
uint16_t roundToBF16Bits(double value) {
  if (std::isnan(value))
    return std::signbit(value) ? 0xffc0u : 0x7fc0u;
  float rounded = static_cast<float>(value);
  if (static_cast<double>(rounded) != value) {
    float truncated = std::fabs(static_cast<double>(rounded)) > std::fabs(value)
                          ? std::nextafter(rounded, 0.0f)
                          : rounded;
    uint32_t bits;
    std::memcpy(&bits, &truncated, sizeof(bits));
    bits |= 1u;
    std::memcpy(&rounded, &bits, sizeof(bits));
  }
  return roundToBF16Bits(rounded);
}

// A __bf16 value is only ever made from its bits here, once, at the return:
// a bf16 phi or select would itself be legalized through a call to
// __truncsfbf2 on targets without bf16 instructions.
extern "C" __bf16 ropeRuntimeTruncDFBF2(double value) {
  return fromBits(roundToBF16Bits(value));
}
/// The JIT-ed code's `malloc`: the C library's, plus transparent huge pages
/// asked for on the whole 2 MiB pages of a large block. A fresh block of
/// many MiB (a [1, 32, 4096, 128] f32 result is 64 MiB: always a new mmap in
/// glibc) otherwise takes one page fault per 4 KiB on first touch, which
/// cost more than the kernel writing it (docs/PERFORMANCE.md, "Numbers from
/// code comments"); numpy asks the same for its large arrays. The
/// block is the C library's: `free` (the code's own, or a caller's that
/// adopted a result) releases it.
/// The guard of the innermost guarded call on this thread (invokeGuarded),
/// and what the trap that ended it said.
thread_local std::jmp_buf *activeGuard = nullptr;
thread_local char trapMessage[2048];

/// What compiled code calls when it cannot go on: an allocation failed or
/// overflowed, or a runtime check of `checked` code failed. Under a guarded
/// call it returns to that call's caller with `kind` (longjmp: the frames
/// in between are JIT-ed code, which holds no destructors; blocks it had
/// allocated are lost). Anywhere else (a thread of an OpenMP team, code
/// called without a guard) there is no caller to return to, and continuing
/// would read or write out of bounds: the message goes to stderr and the
/// process aborts.
extern "C" void ropeRuntimeTrap(int32_t kind, const char *message) {
  if (!message)
    message = "(no message)";
  if (activeGuard) {
    std::snprintf(trapMessage, sizeof(trapMessage), "%s", message);
    std::longjmp(*activeGuard, kind > 0 ? kind : rope::kTrapCheckFailed);
  }
  std::fprintf(stderr, "rope-mlir: %s\n", message);
  std::fflush(stderr);
  std::abort();
}

extern "C" void *ropeRuntimeMalloc(size_t size) {
  void *block = std::malloc(size);
  if (!block && size) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "out of memory: the compiled code could not allocate %zu "
                  "bytes",
                  size);
    ropeRuntimeTrap(rope::kTrapOutOfMemory, message);
  }
  constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
  if (block && size >= 2 * kHugePage) {
    uintptr_t begin =
        (reinterpret_cast<uintptr_t>(block) + kHugePage - 1) & ~(kHugePage - 1);
    uintptr_t end =
        (reinterpret_cast<uintptr_t>(block) + size) & ~(kHugePage - 1);
    if (end > begin)
      (void)madvise(reinterpret_cast<void *>(begin), end - begin,
                    MADV_HUGEPAGE); // a hint: failure changes nothing
  }
  return block;
}
} // namespace

LogicalResult mlir::rope::resolveRuntimeSymbols(
    ArrayRef<std::string> declared, const char *openmpRuntimePath,
    llvm::StringMap<void *> &symbols, std::string &error) {
  // The OpenMP runtime stays loaded for the life of the process (its threads
  // outlive any one module), in local scope: its symbols reach only the
  // modules that ask for them.
  static std::once_flag loadOnce;
  static void *openmp = nullptr;
  static std::string openmpError;

  // Conversions LLVM's code generator calls where the target has no
  // instruction for them. They appear in no declaration (instruction
  // selection introduces them), so they are always provided: f16 from the
  // libgcc this library links, bf16 from here.
  symbols["__truncsfbf2"] = reinterpret_cast<void *>(&ropeRuntimeTruncSFBF2);
  symbols["__truncdfbf2"] = reinterpret_cast<void *>(&ropeRuntimeTruncDFBF2);
  symbols["__truncsfhf2"] = reinterpret_cast<void *>(&__truncsfhf2);
  symbols["__truncdfhf2"] = reinterpret_cast<void *>(&__truncdfhf2);
  symbols["__extendhfsf2"] = reinterpret_cast<void *>(&__extendhfsf2);
  for (StringRef name : declared) {
    if (name == "memrefCopy") {
      symbols[name] = reinterpret_cast<void *>(&ropeRuntimeMemrefCopy);
      continue;
    }
    if (name == "malloc") {
      symbols[name] = reinterpret_cast<void *>(&ropeRuntimeMalloc);
      continue;
    }
    if (name == kTrapFunctionName) {
      symbols[name] = reinterpret_cast<void *>(&ropeRuntimeTrap);
      continue;
    }
    if (!name.starts_with("__kmpc_") && !name.starts_with("omp_"))
      continue;
    std::call_once(loadOnce, [&] {
      openmp = dlopen(openmpRuntimePath, RTLD_NOW | RTLD_LOCAL);
      if (!openmp)
        openmpError = dlerror();
    });
    if (!openmp) {
      error = "cannot load the OpenMP runtime " +
              std::string(openmpRuntimePath) + ": " + openmpError;
      return failure();
    }
    void *address = dlsym(openmp, name.str().c_str());
    if (!address) {
      error = "the OpenMP runtime " + std::string(openmpRuntimePath) +
              " has no symbol " + name.str();
      return failure();
    }
    symbols[name] = address;
  }
  return success();
}

int mlir::rope::invokeGuarded(void (*function)(void **), void **arguments,
                              std::string &message) {
  std::jmp_buf guard;
  std::jmp_buf *enclosing = activeGuard;
  // Nothing with a destructor lives in this frame across the setjmp.
  int kind = setjmp(guard);
  if (kind == 0) {
    activeGuard = &guard;
    function(arguments);
    activeGuard = enclosing;
    return 0;
  }
  activeGuard = enclosing;
  message = trapMessage;
  return kind;
}
