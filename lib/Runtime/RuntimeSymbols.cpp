//===- RuntimeSymbols.cpp - What JIT-ed rope code calls at run time -------===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/RuntimeSymbols.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

using namespace mlir;

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

  for (StringRef name : declared) {
    if (name == "memrefCopy") {
      symbols[name] = reinterpret_cast<void *>(&ropeRuntimeMemrefCopy);
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
