// The .iris GEMM (bench/gemm.iris) as a shared library with C entry points, so
// that bench/gemm_bench.py runs it on torch's tensors and stream, beside
// torch.matmul (cuBLAS) and Triton, on the same inputs in the same process.
//
// A config is one instantiation of matmul's tile sizes and pipeline stages,
// named BMxBNxBK/S; the script times each and keeps the fastest per shape,
// as Triton's autotuner does. The kernel
// touches no symmetric heap, so it runs with an empty device context.
#include "gemm.iris.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

// Launches C = A x B of `dtype`'s elements (0: bf16, 1: f16).
using Launch = void (*)(void*, void*, void*, int, int, int, iris::Stream);
struct Config {
  int bm, bn, bk, stages;
  bool persistent;
  Launch launch[2];
};

// No heap and one rank: what a kernel that uses neither needs.
const iris::DeviceContext kNoHeap{nullptr, 0, 0, 1, 0, 1, nullptr, nullptr};

template <class T, int BM, int BN, int BK, int S>
void launch(void* a, void* b, void* c, int m, int n, int k, iris::Stream stream) {
  const int tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  iris_kernels::matmul<T, BM, BN, BK, 8, S>::launch({tiles}, kNoHeap, static_cast<T*>(a), static_cast<T*>(b),
                                                     static_cast<T*>(c), m, n, k, stream);
}

// The persistent kernel: one program per multiprocessor, each walking the tiles.
template <class T, int BM, int BN, int BK, int S>
void launch_persistent(void* a, void* b, void* c, int m, int n, int k, iris::Stream stream) {
  const int tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  int device = 0, multiprocessors = 1;
  if (hipGetDevice(&device) != hipSuccess ||
      hipDeviceGetAttribute(&multiprocessors, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess) {
    throw iris::Error("gemm_bench: the multiprocessor count of the current device is unknown");
  }
  iris_kernels::matmul_persistent<T, BM, BN, BK, 8, S>::launch({std::min(tiles, multiprocessors)}, kNoHeap,
                                                                static_cast<T*>(a), static_cast<T*>(b),
                                                                static_cast<T*>(c), m, n, k, stream);
}

template <int BM, int BN, int BK, int S>
constexpr Config config() {
  return {BM, BN, BK, S, false, {launch<iris::bfloat16, BM, BN, BK, S>, launch<iris::half, BM, BN, BK, S>}};
}

template <int BM, int BN, int BK, int S>
constexpr Config persistent_config() {
  return {BM,
          BN,
          BK,
          S,
          true,
          {launch_persistent<iris::bfloat16, BM, BN, BK, S>, launch_persistent<iris::half, BM, BN, BK, S>}};
}

// At most 227 KiB of shared memory: S * (BM + BN) * BK * 2 bytes.
constexpr Config kConfigs[] = {
    config<128, 128, 32, 4>(), config<128, 64, 32, 4>(),  config<128, 128, 64, 4>(),
    config<128, 64, 64, 4>(),  config<128, 256, 32, 4>(), config<128, 256, 64, 4>(),
    config<128, 256, 64, 3>(), config<128, 256, 32, 6>(), config<128, 128, 64, 5>(),
    persistent_config<128, 256, 64, 4>(), persistent_config<128, 256, 64, 3>(),
};

const std::vector<std::string> kNames = [] {
  std::vector<std::string> names;
  for (const Config& c : kConfigs)
    names.push_back(std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" + std::to_string(c.bk) + "/" +
                    std::to_string(c.stages) + (c.persistent ? "p" : ""));
  return names;
}();

std::string last_error;

}  // namespace

extern "C" {

int iris_gemm_configs() { return static_cast<int>(std::size(kConfigs)); }

const char* iris_gemm_config_name(int config) {
  return config >= 0 && config < iris_gemm_configs() ? kNames[config].c_str() : "";
}

// C = A x B for contiguous row-major matrices of bf16 (dtype 0) or f16
// (dtype 1) on the current device; 0 on success, else -1 and
// iris_gemm_error() says why.
int iris_gemm(int config, int dtype, void* a, void* b, void* c, int m, int n, int k, void* stream) {
  if (config < 0 || config >= iris_gemm_configs() || dtype < 0 || dtype > 1) {
    last_error = "no config " + std::to_string(config) + " for dtype " + std::to_string(dtype);
    return -1;
  }
  try {
    kConfigs[config].launch[dtype](a, b, c, m, n, k, static_cast<iris::Stream>(stream));
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
  return 0;
}

const char* iris_gemm_error() { return last_error.c_str(); }
}
