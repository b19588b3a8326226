//===- harness.cu - Check and time rope-mlir's GPU kernels ----------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Loads the PTX that bench/gpu/prepare.py generated with rope-opt
// --rope-to-nvvm (Debian's MLIR has no CUDA runtime wrappers, so this is the
// launcher), checks every kernel against a float64 reference on random inputs
// (SEMANTICS.md), and times it against a device-to-device copy of the same bytes
// with CUDA events (medians). Host code only: built with nvcc, linked with the
// driver API (-lcuda).
//
// usage: harness ARTIFACT_DIR [REPS]   (prints a markdown table)
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define CHECK_CU(call)                                                         \
  do {                                                                         \
    CUresult err_ = (call);                                                    \
    if (err_ != CUDA_SUCCESS) {                                                \
      const char *msg_ = nullptr;                                              \
      cuGetErrorString(err_, &msg_);                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #call, msg_ ? msg_ : "?");                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

struct Config {
  std::string name, kernel, dtype, layout, form;
  int64_t P, B, S, H, D, M;
  unsigned grid[3], block[3];
  std::vector<std::string> params;
};

std::vector<Config> readManifest(const std::string &dir) {
  std::ifstream in(dir + "/manifest.txt");
  std::vector<Config> configs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    Config c;
    std::string params;
    ss >> c.name >> c.kernel >> c.dtype >> c.layout >> c.P >> c.form >> c.B >>
        c.S >> c.H >> c.D >> c.M >> c.grid[0] >> c.grid[1] >> c.grid[2] >>
        c.block[0] >> c.block[1] >> c.block[2] >> params;
    std::stringstream ps(params);
    for (std::string p; std::getline(ps, p, ',');)
      c.params.push_back(p);
    configs.push_back(c);
  }
  return configs;
}

size_t elementBytes(const std::string &dtype) { return dtype == "f32" ? 4 : 2; }

// Rounds to the storage type and returns the stored bits and the value.
double store(const std::string &dtype, double v, void *dst, size_t i) {
  if (dtype == "f32") {
    float f = static_cast<float>(v);
    static_cast<float *>(dst)[i] = f;
    return f;
  }
  if (dtype == "f16") {
    __half h = __float2half_rn(static_cast<float>(v));
    static_cast<__half *>(dst)[i] = h;
    return __half2float(h);
  }
  __nv_bfloat16 h = __float2bfloat16_rn(static_cast<float>(v));
  static_cast<__nv_bfloat16 *>(dst)[i] = h;
  return __bfloat162float(h);
}

double load(const std::string &dtype, const void *src, size_t i) {
  if (dtype == "f32")
    return static_cast<const float *>(src)[i];
  if (dtype == "f16")
    return __half2float(static_cast<const __half *>(src)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16 *>(src)[i]);
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Result {
  double relErr, maxErr, kernelUs, copyUs;
  bool written;
};

Result runOne(const Config &c, const std::string &dir, CUstream stream,
              int reps, std::mt19937_64 &rng) {
  std::ifstream f(dir + "/" + c.name + ".ptx");
  std::string ptx((std::istreambuf_iterator<char>(f)),
                  std::istreambuf_iterator<char>());
  CUmodule module;
  CHECK_CU(cuModuleLoadData(&module, ptx.c_str()));
  CUfunction fn;
  CHECK_CU(cuModuleGetFunction(&fn, module, c.kernel.c_str()));

  const size_t n = c.B * c.S * c.H * c.D, tokens = c.B * c.S;
  const size_t eb = elementBytes(c.dtype), bytes = n * eb;
  const int64_t half = c.P / 2;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);

  // Inputs: x random, positions random (in the cache's range for caches, up
  // to 2^20 otherwise), caches of random angles, a random scalar offset.
  std::vector<char> x(bytes), y(bytes);
  std::vector<double> xv(n);
  for (size_t i = 0; i < n; ++i)
    xv[i] = store(c.dtype, unit(rng), x.data(), i);
  std::vector<int64_t> pos(tokens);
  int64_t maxPos = c.form == "cache" ? c.M : (int64_t{1} << 20);
  std::uniform_int_distribution<int64_t> posDist(0, maxPos - 1);
  for (auto &p : pos)
    p = posDist(rng);
  int64_t offset = posDist(rng);
  std::vector<float> cosCache, sinCache;
  if (c.form == "cache") {
    cosCache.resize(c.M * half);
    sinCache.resize(c.M * half);
    for (int64_t i = 0; i < c.M * half; ++i) {
      double a = 3.14159 * unit(rng);
      cosCache[i] = static_cast<float>(std::cos(a));
      sinCache[i] = static_cast<float>(std::sin(a));
    }
  }

  // Device buffers.
  CUdeviceptr dX, dY, dP = 0, dCos = 0, dSin = 0, dCopy;
  CHECK_CU(cuMemAlloc(&dX, bytes));
  CHECK_CU(cuMemAlloc(&dY, bytes));
  CHECK_CU(cuMemAlloc(&dCopy, bytes));
  CHECK_CU(cuMemcpyHtoD(dX, x.data(), bytes));
  CHECK_CU(cuMemsetD8(dY, 0xFF, bytes)); // poison: NaN in every dtype
  CHECK_CU(cuMemAlloc(&dP, tokens * sizeof(int64_t)));
  CHECK_CU(cuMemcpyHtoD(dP, pos.data(), tokens * sizeof(int64_t)));
  if (c.form == "cache") {
    CHECK_CU(cuMemAlloc(&dCos, cosCache.size() * 4));
    CHECK_CU(cuMemAlloc(&dSin, sinCache.size() * 4));
    CHECK_CU(cuMemcpyHtoD(dCos, cosCache.data(), cosCache.size() * 4));
    CHECK_CU(cuMemcpyHtoD(dSin, sinCache.data(), sinCache.size() * 4));
  }
  std::vector<void *> args;
  for (const std::string &p : c.params) {
    if (p == "x")
      args.push_back(&dX);
    else if (p == "init")
      args.push_back(&dY);
    else if (p == "p")
      args.push_back(&dP);
    else if (p == "cos")
      args.push_back(&dCos);
    else if (p == "sin")
      args.push_back(&dSin);
    else if (p == "o")
      args.push_back(&offset);
    else {
      std::fprintf(stderr, "%s: unknown parameter %s\n", c.name.c_str(),
                   p.c_str());
      std::exit(1);
    }
  }
  auto launch = [&] {
    CHECK_CU(cuLaunchKernel(fn, c.grid[0], c.grid[1], c.grid[2], c.block[0],
                            c.block[1], c.block[2], 0, stream, args.data(),
                            nullptr));
  };
  launch();
  CHECK_CU(cuStreamSynchronize(stream));
  CHECK_CU(cuMemcpyDtoH(y.data(), dY, bytes));

  // float64 reference (SEMANTICS.md §1, default frequencies).
  Result r{};
  double errSq = 0, refSq = 0;
  r.written = true;
  bool bhsd = c.form == "bhsd";
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t s = 0; s < c.S; ++s) {
      int64_t t = b * c.S + s;
      for (int64_t j = 0; j < half; ++j) {
        double cs, sn;
        if (c.form == "cache") {
          cs = cosCache[pos[t] * half + j];
          sn = sinCache[pos[t] * half + j];
        } else {
          double p = bhsd ? double(offset + s) : double(pos[t]);
          double theta = std::pow(10000.0, -2.0 * j / double(c.P));
          cs = std::cos(p * theta);
          sn = std::sin(p * theta);
        }
        for (int64_t h = 0; h < c.H; ++h) {
          size_t row = bhsd ? ((b * c.H + h) * c.S + s) * c.D
                            : ((b * c.S + s) * c.H + h) * c.D;
          size_t i1 = row + (c.layout == "half" ? j : 2 * j);
          size_t i2 = row + (c.layout == "half" ? j + half : 2 * j + 1);
          double y1 = xv[i1] * cs - xv[i2] * sn;
          double y2 = xv[i2] * cs + xv[i1] * sn;
          double o1 = load(c.dtype, y.data(), i1);
          double o2 = load(c.dtype, y.data(), i2);
          if (std::isnan(o1) || std::isnan(o2))
            r.written = false;
          errSq += (o1 - y1) * (o1 - y1) + (o2 - y2) * (o2 - y2);
          refSq += y1 * y1 + y2 * y2;
          r.maxErr =
              std::max({r.maxErr, std::fabs(o1 - y1), std::fabs(o2 - y2)});
        }
      }
    }
  // Pass-through channels of every row.
  for (size_t row = 0; row < n; row += c.D)
    for (int64_t ch = c.P; ch < c.D; ++ch)
      if (load(c.dtype, y.data(), row + ch) != xv[row + ch])
        r.written = false;
  r.relErr = std::sqrt(errSq / refSq);

  // Timing: warm up, then one event pair per repetition; medians.
  CUevent start, stop;
  CHECK_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  auto timeIt = [&](auto &&body) {
    for (int i = 0; i < 3; ++i)
      body();
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      CHECK_CU(cuEventRecord(start, stream));
      body();
      CHECK_CU(cuEventRecord(stop, stream));
      CHECK_CU(cuEventSynchronize(stop));
      float t = 0;
      CHECK_CU(cuEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    return median(ms) * 1e3;
  };
  r.kernelUs = timeIt(launch);
  r.copyUs =
      timeIt([&] { CHECK_CU(cuMemcpyDtoDAsync(dCopy, dX, bytes, stream)); });
  CHECK_CU(cuStreamSynchronize(stream));

  CHECK_CU(cuMemFree(dX));
  CHECK_CU(cuMemFree(dY));
  CHECK_CU(cuMemFree(dCopy));
  CHECK_CU(cuMemFree(dP));
  if (dCos) {
    CHECK_CU(cuMemFree(dCos));
    CHECK_CU(cuMemFree(dSin));
  }
  CHECK_CU(cuEventDestroy(start));
  CHECK_CU(cuEventDestroy(stop));
  CHECK_CU(cuModuleUnload(module));
  return r;
}

double tolerance(const std::string &dtype) {
  // Normwise: f32 per SEMANTICS.md §5 (1e-6); f16/bf16 are rounded once.
  return dtype == "f32" ? 1e-6 : dtype == "f16" ? 1e-3 : 8e-3;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT_DIR [REPS]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  int reps = argc > 2 ? std::atoi(argv[2]) : 50;
  CHECK_CU(cuInit(0));
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  char deviceName[256];
  CHECK_CU(cuDeviceGetName(deviceName, sizeof(deviceName), device));
  CUcontext context;
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  CUstream stream;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::mt19937_64 rng(20261129);

  std::printf("GPU: %s; %d repetitions, medians; copy = cuMemcpyDtoD of x "
              "(bytes read + written = 2 |x|)\n\n",
              deviceName, reps);
  std::printf("| kernel | dtype | layout | P/D | form | shape | rel. err "
              "(tol) | ok | rope µs | copy µs | rope GB/s | rope/copy |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const Config &c : readManifest(dir)) {
    Result r = runOne(c, dir, stream, reps, rng);
    bool ok = r.written && r.relErr <= tolerance(c.dtype);
    failures += !ok;
    double bytes = 2.0 * c.B * c.S * c.H * c.D * elementBytes(c.dtype);
    std::printf(
        "| %s | %s | %s | %lld/%lld | %s | %lldx%lldx%lldx%lld | "
        "%.2e (%.0e) | %s | %.1f | %.1f | %.0f | %.2f |\n",
        c.name.c_str(), c.dtype.c_str(), c.layout.c_str(), (long long)c.P,
        (long long)c.D, c.form.c_str(), (long long)c.B, (long long)c.S,
        (long long)c.H, (long long)c.D, r.relErr, tolerance(c.dtype),
        ok ? "yes" : (r.written ? "NO" : "NO (unwritten/NaN)"), r.kernelUs,
        r.copyUs, bytes / (r.kernelUs * 1e3), r.kernelUs / r.copyUs);
    std::fflush(stdout);
  }
  CHECK_CU(cuStreamDestroy(stream));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  std::printf("\n%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
