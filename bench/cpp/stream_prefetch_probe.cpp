//===- stream_prefetch_probe.cpp - Decode's K stream: prefetch hints ------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The probe behind rope-vectorize-contractions' prefetch-rows (issue 35,
// docs/PERFORMANCE.md, "Decode: the streamed rows prefetched"): a decode
// step's Q·Kᵀ in the dot form our register tiles use (four keys by four
// queries of one KV head, head_dim 128 f32, 16-lane FMAs), K of 8 heads ×
// L keys read once, with V read in between calls so that K is as warm as in
// a decode step. It prints GB/s of K for a software prefetch of the rows
// `distance` ahead with each x86 hint (T0: into L1; T1: L2; T2: L3), and a
// plain sum of K for scale. Then the rotation that a cache of keys stored
// before RoPE costs each step (the (hf) decode module): each key tile of 256
// keys × 8 heads rotated (rotate_half, cos/sin from a table) into a 1 MiB
// buffer, three heads' rows at a time as convert-rope-to-vector jams them,
// with and without an L2 prefetch of the rows ahead. Last, that rotation
// followed by Q·Kᵀ over each rotated tile (as the (hf) module runs now)
// against Q·Kᵀ with each key rotated in registers as it is loaded (the
// fusion not built: no tile written or read back). Not part of any test;
// x86 with AVX-512 only:
//
//   clang++-22 -O3 -march=native bench/cpp/stream_prefetch_probe.cpp \
//     -o /tmp/probe && /tmp/probe 4096
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

constexpr int kHeads = 8, kDim = 128, kRounds = 31;

double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

float sum(const float *x, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
  }
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

template <int Hint> void prefetchRows(const float *rows, const float *end) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < kDim; c += 16)
      if (rows + r * kDim + c < end)
        _mm_prefetch(reinterpret_cast<const char *>(rows + r * kDim + c), Hint);
}

/// Scores of 4 queries against 4 keys at a time, reduced by adding the 16
/// accumulators (the probe times the loads, not the reduction tree).
template <int Hint>
__attribute__((noinline)) void scores(const float *k, const float *q, float *s,
                                      int keys, int distance) {
  const float *end = k + size_t(kHeads) * keys * kDim;
  for (int h = 0; h < kHeads; ++h) {
    const float *kh = k + size_t(h) * keys * kDim, *qh = q + h * 4 * kDim;
    for (int j = 0; j < keys; j += 4) {
      const float *k0 = kh + size_t(j) * kDim;
      if (distance)
        prefetchRows<Hint>(k0 + size_t(distance) * kDim, end);
      __m512 acc[16];
      for (auto &a : acc)
        a = _mm512_setzero_ps();
      for (int d = 0; d < kDim; d += 16)
        for (int r = 0; r < 4; ++r) {
          __m512 kk = _mm512_loadu_ps(k0 + r * kDim + d);
          for (int t = 0; t < 4; ++t)
            acc[r * 4 + t] = _mm512_fmadd_ps(
                kk, _mm512_loadu_ps(qh + t * kDim + d), acc[r * 4 + t]);
        }
      __m512 total = acc[0];
      for (int i = 1; i < 16; ++i)
        total = _mm512_add_ps(total, acc[i]);
      _mm512_storeu_ps(s + (size_t(h) * keys + j) * 4, total);
    }
  }
}

/// The keys [first, first + 256) of K's 8 heads rotated into `out`
/// ([8][256][128]), 32 keys at a time, three heads' rows at a time, 8-lane
/// vectors (as rope-to-llvm-cpu's vector-bytes=32 lowers them); the rows
/// `distance` ahead prefetched into L2.
__attribute__((noinline)) void rotateTile(const float *k, const float *table,
                                          float *out, int keys, int first,
                                          int distance) {
  constexpr int kTile = 256, kChunk = 32, kJam = 3, kHalf = kDim / 2;
  const float *end = k + size_t(kHeads) * keys * kDim;
  const int t = first;
  {
    for (int c = 0; c < kTile; c += kChunk)
      for (int h0 = 0; h0 < kHeads; h0 += kJam)
        for (int j = 0; j < kChunk; ++j)
          for (int h = h0; h < std::min(h0 + kJam, kHeads); ++h) {
            const float *x = k + (size_t(h) * keys + t + c + j) * kDim;
            float *o = out + (size_t(h) * kTile + c + j) * kDim;
            const float *cs = table + (c + j) * kDim;
            if (distance && x + size_t(distance) * kDim < end)
              for (int l = 0; l < kDim; l += 16)
                _mm_prefetch(
                    reinterpret_cast<const char *>(x + distance * kDim + l),
                    _MM_HINT_T1);
            for (int i = 0; i < kHalf; i += 8) {
              __m256 a = _mm256_loadu_ps(x + i),
                     b = _mm256_loadu_ps(x + kHalf + i),
                     cos = _mm256_load_ps(cs + i),
                     sin = _mm256_load_ps(cs + kHalf + i);
              _mm256_store_ps(o + i,
                              _mm256_fnmadd_ps(b, sin, _mm256_mul_ps(a, cos)));
              _mm256_store_ps(o + kHalf + i,
                              _mm256_fmadd_ps(a, sin, _mm256_mul_ps(b, cos)));
            }
          }
  }
}

/// Every 256-key tile of K rotated into the same `out` (rotateTile).
void rotateTiles(const float *k, const float *table, float *out, int keys,
                 int distance) {
  for (int t = 0; t + 256 <= keys; t += 256)
    rotateTile(k, table, out, keys, t, distance);
}

/// Q·Kᵀ of the 4 queries of each KV head against K stored before RoPE, each
/// key's two halves rotated in registers by its cos/sin row (`table`, one
/// row per key of a 256-key tile) as they are loaded: the dot form with no
/// tile written. K's rows 32 ahead are prefetched into L2.
__attribute__((noinline)) void scoresRotated(const float *k, const float *q,
                                             const float *table, float *s,
                                             int keys) {
  constexpr int kHalf = kDim / 2;
  const float *end = k + size_t(kHeads) * keys * kDim;
  for (int h = 0; h < kHeads; ++h) {
    const float *kh = k + size_t(h) * keys * kDim, *qh = q + h * 4 * kDim;
    for (int j = 0; j < keys; j += 4) {
      const float *k0 = kh + size_t(j) * kDim;
      prefetchRows<_MM_HINT_T1>(k0 + 32 * kDim, end);
      __m512 acc[16];
      for (auto &a : acc)
        a = _mm512_setzero_ps();
      for (int d = 0; d < kHalf; d += 16)
        for (int r = 0; r < 4; ++r) {
          const float *cs = table + ((j + r) % 256) * kDim;
          __m512 a = _mm512_loadu_ps(k0 + r * kDim + d),
                 b = _mm512_loadu_ps(k0 + r * kDim + kHalf + d),
                 cos = _mm512_load_ps(cs + d),
                 sin = _mm512_load_ps(cs + kHalf + d);
          __m512 lo = _mm512_fnmadd_ps(b, sin, _mm512_mul_ps(a, cos));
          __m512 hi = _mm512_fmadd_ps(a, sin, _mm512_mul_ps(b, cos));
          for (int t = 0; t < 4; ++t) {
            acc[r * 4 + t] = _mm512_fmadd_ps(
                lo, _mm512_loadu_ps(qh + t * kDim + d), acc[r * 4 + t]);
            acc[r * 4 + t] = _mm512_fmadd_ps(
                hi, _mm512_loadu_ps(qh + t * kDim + kHalf + d), acc[r * 4 + t]);
          }
        }
      __m512 total = acc[0];
      for (int i = 1; i < 16; ++i)
        total = _mm512_add_ps(total, acc[i]);
      _mm512_storeu_ps(s + (size_t(h) * keys + j) * 4, total);
    }
  }
}

template <typename F> double medianSeconds(const float *v, size_t n, F f) {
  std::vector<double> t(kRounds);
  for (double &x : t) {
    volatile float sink = sum(v, n); // V between calls, as in decode
    (void)sink;
    double start = threadSeconds();
    f();
    x = threadSeconds() - start;
  }
  std::nth_element(t.begin(), t.begin() + kRounds / 2, t.end());
  return t[kRounds / 2];
}

} // namespace

int main(int argc, char **argv) {
  int keys = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (keys < 256 || keys % 256 != 0) {
    std::fprintf(stderr, "keys: a positive multiple of 256 (key tiles)\n");
    return 1;
  }
  size_t n = size_t(kHeads) * keys * kDim;
  std::vector<float> k(n), v(n), q(kHeads * 4 * kDim, 1.0f),
      s(size_t(kHeads) * keys * 4 + 16);
  float *rotated = static_cast<float *>(
      std::aligned_alloc(64, size_t(kHeads) * 256 * kDim * sizeof(float)));
  float *table =
      static_cast<float *>(std::aligned_alloc(64, 256 * kDim * sizeof(float)));
  std::fill(table, table + 256 * kDim, 0.5f);
  for (size_t i = 0; i < n; ++i) {
    k[i] = float(i % 7);
    v[i] = float(i % 5);
  }
  double bytes = double(n) * sizeof(float);
  double plain = medianSeconds(v.data(), n, [&] {
    volatile float sink = sum(k.data(), n);
    (void)sink;
  });
  std::printf("K %.1f MB; sum of K %.1f GB/s\n", bytes / 1e6,
              bytes / plain / 1e9);
  for (int distance : {0, 8, 16, 32, 64}) {
    double t0 = medianSeconds(v.data(), n, [&] {
      scores<_MM_HINT_T0>(k.data(), q.data(), s.data(), keys, distance);
    });
    double t1 = medianSeconds(v.data(), n, [&] {
      scores<_MM_HINT_T1>(k.data(), q.data(), s.data(), keys, distance);
    });
    double t2 = medianSeconds(v.data(), n, [&] {
      scores<_MM_HINT_T2>(k.data(), q.data(), s.data(), keys, distance);
    });
    std::printf("rows ahead %2d: T0 %.1f  T1 %.1f  T2 %.1f GB/s\n", distance,
                bytes / t0 / 1e9, bytes / t1 / 1e9, bytes / t2 / 1e9);
  }
  for (int distance : {0, 16, 32, 64}) {
    double t = medianSeconds(v.data(), n, [&] {
      rotateTiles(k.data(), table, rotated, keys, distance);
    });
    std::printf("rotation into 1 MiB tiles, rows ahead %2d (T1): K %.1f GB/s\n",
                distance, bytes / t / 1e9);
  }
  // The key side of a decode step of the (hf) module: as it runs now (each
  // 256-key tile rotated with the rows 16 ahead prefetched, then Q·Kᵀ over
  // the tile) and with the rotation in Q·Kᵀ's registers.
  double now = medianSeconds(v.data(), n, [&] {
    for (int t = 0; t < keys; t += 256) {
      rotateTile(k.data(), table, rotated, keys, t, 16);
      scores<_MM_HINT_T1>(rotated, q.data(), s.data(), 256, 0);
    }
  });
  double fused = medianSeconds(v.data(), n, [&] {
    scoresRotated(k.data(), q.data(), table, s.data(), keys);
  });
  std::printf("K side of a decode step: rotate each tile, then Q·Kᵀ %.3f ms; "
              "rotated in Q·Kᵀ's registers %.3f ms\n",
              now * 1e3, fused * 1e3);
  std::free(rotated);
  std::free(table);
  return 0;
}
