//===- rope_baseline.cpp - Hand-written RoPE and copy peers for cpu_bench -===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The "hand-written C++ loop" peer of bench/cpu_bench.py and its STREAM-style
// copy ceiling. Compiled at bench time with
//   clang++-22 -O3 -march=native -fopenmp -shared -fPIC
// and loaded through ctypes, so both peers pay the same call overhead as the
// compiled `rope.apply` kernel they are compared with.
//
// RoPE here is what a careful engineer writes without intrinsics: cos/sin
// read from a precomputed [M, P/2] f32 cache gathered by position (the
// onnxruntime / vLLM form), x and y as [tokens, heads, D] with P = D, the
// head dim a template parameter for the common sizes so the inner loop has a
// constant trip count, `#pragma omp parallel for` over tokens when more than
// one thread is asked for. bf16 is carried as uint16 and converted by hand
// (round to nearest even), computing in f32 as SEMANTICS.md §5 asks.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

inline float bf16ToFloat(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even; NaN stays NaN (quieted) instead of rounding to inf.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

struct F32 {
  using T = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct BF16 {
  using T = uint16_t;
  static float load(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t store(float v) { return floatToBf16(v); }
};

/// One head: pairs (i, i + D/2).
template <typename E, int64_t D>
inline void rotateHalf(const typename E::T *__restrict x,
                       typename E::T *__restrict y, const float *__restrict c,
                       const float *__restrict s, int64_t d) {
  const int64_t h = (D > 0 ? D : d) / 2;
  for (int64_t i = 0; i < h; ++i) {
    float x1 = E::load(x[i]), x2 = E::load(x[i + h]);
    y[i] = E::store(x1 * c[i] - x2 * s[i]);
    y[i + h] = E::store(x2 * c[i] + x1 * s[i]);
  }
}

/// One head: pairs (2i, 2i + 1).
template <typename E, int64_t D>
inline void rotateInterleaved(const typename E::T *__restrict x,
                              typename E::T *__restrict y,
                              const float *__restrict c,
                              const float *__restrict s, int64_t d) {
  const int64_t h = (D > 0 ? D : d) / 2;
  for (int64_t i = 0; i < h; ++i) {
    float x1 = E::load(x[2 * i]), x2 = E::load(x[2 * i + 1]);
    y[2 * i] = E::store(x1 * c[i] - x2 * s[i]);
    y[2 * i + 1] = E::store(x2 * c[i] + x1 * s[i]);
  }
}

template <typename E, int64_t D, bool Interleaved>
void ropeTokens(const typename E::T *x, typename E::T *y, const int64_t *pos,
                const float *cosCache, const float *sinCache, int64_t tokens,
                int64_t heads, int64_t d, int threads) {
  const int64_t half = d / 2;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t t = 0; t < tokens; ++t) {
    const float *c = cosCache + pos[t] * half;
    const float *s = sinCache + pos[t] * half;
    for (int64_t hd = 0; hd < heads; ++hd) {
      const int64_t base = (t * heads + hd) * d;
      if constexpr (Interleaved)
        rotateInterleaved<E, D>(x + base, y + base, c, s, d);
      else
        rotateHalf<E, D>(x + base, y + base, c, s, d);
    }
  }
}

template <typename E, bool Interleaved>
void ropeDispatch(const void *x, void *y, const int64_t *pos, const float *c,
                  const float *s, int64_t tokens, int64_t heads, int64_t d,
                  int threads) {
  auto *xt = static_cast<const typename E::T *>(x);
  auto *yt = static_cast<typename E::T *>(y);
  switch (d) {
  case 64:
    return ropeTokens<E, 64, Interleaved>(xt, yt, pos, c, s, tokens, heads, d,
                                          threads);
  case 128:
    return ropeTokens<E, 128, Interleaved>(xt, yt, pos, c, s, tokens, heads, d,
                                           threads);
  default:
    return ropeTokens<E, 0, Interleaved>(xt, yt, pos, c, s, tokens, heads, d,
                                         threads);
  }
}

/// dst[0, n) = src[0, n) with ordinary vector loads and stores: no call to
/// memcpy (whose large-size path uses non-temporal stores that skip the
/// write-allocate read an elementwise op pays), no non-temporal stores.
__attribute__((no_builtin("memcpy"), noinline)) void
copyRange(const uint64_t *__restrict src, uint64_t *__restrict dst, int64_t n) {
#pragma clang loop vectorize(enable) interleave(enable)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

} // namespace

extern "C" {

/// y = RoPE(x) for x, y [tokens, heads, d] of f32 (bf16 = 0) or bf16 as
/// uint16 (bf16 = 1); pos [tokens] indexes the f32 caches [M, d/2].
/// Positions are trusted to lie in [0, M): the caller checks them.
void rope_baseline(const void *x, void *y, const int64_t *pos,
                   const float *cosCache, const float *sinCache, int64_t tokens,
                   int64_t heads, int64_t d, int interleaved, int bf16,
                   int threads) {
  if (bf16) {
    if (interleaved)
      ropeDispatch<BF16, true>(x, y, pos, cosCache, sinCache, tokens, heads, d,
                               threads);
    else
      ropeDispatch<BF16, false>(x, y, pos, cosCache, sinCache, tokens, heads, d,
                                threads);
  } else {
    if (interleaved)
      ropeDispatch<F32, true>(x, y, pos, cosCache, sinCache, tokens, heads, d,
                              threads);
    else
      ropeDispatch<F32, false>(x, y, pos, cosCache, sinCache, tokens, heads, d,
                               threads);
  }
}

/// STREAM-style copy of `bytes` bytes (a multiple of 8) from src to dst,
/// split statically over `threads` OpenMP threads; the bandwidth ceiling
/// for an out-of-place elementwise op that reads x and writes y once with
/// ordinary stores (so, like such an op, it pays the write-allocate read of
/// y). Each thread copies its range with copyRange, a vector loop: an
/// `omp parallel for` directly over b[i] = a[i] compiled to a scalar loop
/// that reloaded the captured pointers on every iteration (~8 bytes a cycle,
/// far below the memory system), which is no ceiling.
void copy_baseline(const void *src, void *dst, int64_t bytes, int threads) {
  const int64_t n = bytes / 8;
  const auto *a = static_cast<const uint64_t *>(src);
  auto *b = static_cast<uint64_t *>(dst);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num();
    const int64_t lo = n * part / parts, hi = n * (part + 1) / parts;
    copyRange(a + lo, b + lo, hi - lo);
  }
#else
  copyRange(a, b, n);
#endif
  for (int64_t i = n * 8; i < bytes; ++i)
    static_cast<char *>(dst)[i] = static_cast<const char *>(src)[i];
}

/// The memory traffic of a kernel that rewrites `rows` slices of
/// `sliceBytes` bytes (a multiple of 8), `strideBytes` apart, in place with
/// no arithmetic: each slice read and written back (XOR with `key`, which
/// the caller passes as 0: a store the compiler cannot drop). A strided
/// slice costs the cache lines it touches, not its bytes: MLA's rope
/// channels, the last 64 of each 192-channel head row of q.
void slices_in_place_baseline(void *base, int64_t rows, int64_t sliceBytes,
                              int64_t strideBytes, uint64_t key) {
  const int64_t words = sliceBytes / 8;
  for (int64_t r = 0; r < rows; ++r) {
    auto *p = reinterpret_cast<uint64_t *>(static_cast<char *>(base) +
                                           r * strideBytes);
#pragma clang loop vectorize(enable)
    for (int64_t i = 0; i < words; ++i)
      p[i] ^= key;
  }
}

/// Row r of `src` (`sliceBytes`, a multiple of 8, every `srcStride` bytes)
/// copied to row dstRows[r] of `dst` (every `dstStride` bytes; row r when
/// dstRows is null): the traffic of writing rows into a cache at slots.
void slices_copy_baseline(const void *src, void *dst, int64_t rows,
                          int64_t sliceBytes, int64_t srcStride,
                          int64_t dstStride, const int64_t *dstRows) {
  const int64_t words = sliceBytes / 8;
  for (int64_t r = 0; r < rows; ++r) {
    const auto *__restrict a = reinterpret_cast<const uint64_t *>(
        static_cast<const char *>(src) + r * srcStride);
    auto *__restrict b = reinterpret_cast<uint64_t *>(
        static_cast<char *>(dst) + (dstRows ? dstRows[r] : r) * dstStride);
#pragma clang loop vectorize(enable)
    for (int64_t i = 0; i < words; ++i)
      b[i] = a[i];
  }
}

/// How many threads an unqualified parallel region gets (1 without OpenMP).
int baseline_max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
}
