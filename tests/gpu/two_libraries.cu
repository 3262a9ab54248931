// Two shared libraries that hold the same kernel instantiation
// (library_gemm.cpp linked twice), loaded side by side with RTLD_LOCAL, as
// Python loads extension modules: each must make its own opt-in to the
// kernel's shared memory and ask its own function's attributes
// (iris/launch_gpu.hpp), though GCC makes a template's statics one object for
// the whole process. Each library's C = A x B is checked against the host's.
// Usage: iris_gpu_two_libraries LIBRARY_A LIBRARY_B. Exits 0 when both are
// right, 77 without a GPU, 1 otherwise.
#include <dlfcn.h>
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <cstdio>
#include <vector>

namespace {

using Gemm = int (*)(void*, void*, void*, int, int, int, int);
using GemmError = const char* (*)();

// bf16 of -1, 0 and 1, whose products' sums over K = 128 are exact in bf16.
uint16_t bf16_of(int v) { return v < 0 ? 0xBF80 : v > 0 ? 0x3F80 : 0; }
float float_of(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

bool check(hipError_t e, const char* what) {
  if (e != hipSuccess) std::fprintf(stderr, "two_libraries: %s: %s\n", what, hipGetErrorString(e));
  return e == hipSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LIBRARY_A LIBRARY_B\n", argv[0]);
    return 2;
  }
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) {
    std::fprintf(stderr, "two_libraries: no GPU, skipped\n");
    return 77;
  }
  constexpr int M = 256, N = 512, K = 128;
  std::vector<int> a(M * K), b(K * N);
  for (int i = 0; i < M * K; ++i) a[i] = i * 7 % 3 - 1;
  for (int i = 0; i < K * N; ++i) b[i] = i * 5 % 3 - 1;
  std::vector<uint16_t> a_bits(a.size()), b_bits(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) a_bits[i] = bf16_of(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) b_bits[i] = bf16_of(b[i]);
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  if (!check(hipMalloc(&da, a_bits.size() * 2), "hipMalloc") || !check(hipMalloc(&db, b_bits.size() * 2), "hipMalloc") ||
      !check(hipMalloc(&dc, std::size_t(M) * N * 2), "hipMalloc") ||
      !check(hipMemcpy(da, a_bits.data(), a_bits.size() * 2, hipMemcpyHostToDevice), "hipMemcpy") ||
      !check(hipMemcpy(db, b_bits.data(), b_bits.size() * 2, hipMemcpyHostToDevice), "hipMemcpy"))
    return 1;
  int failed = 0;
  for (int which = 1; which <= 2; ++which) {
    const char* path = argv[which];
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      std::fprintf(stderr, "two_libraries: %s\n", dlerror());
      return 1;
    }
    const auto gemm = reinterpret_cast<Gemm>(dlsym(library, "library_gemm"));
    const auto gemm_error = reinterpret_cast<GemmError>(dlsym(library, "library_gemm_error"));
    if (!gemm || !gemm_error) {
      std::fprintf(stderr, "two_libraries: %s lacks library_gemm\n", path);
      return 1;
    }
    std::vector<uint16_t> c(std::size_t(M) * N, 0xFFFF);  // NaN
    if (!check(hipMemcpy(dc, c.data(), c.size() * 2, hipMemcpyHostToDevice), "hipMemcpy")) return 1;
    if (gemm(da, db, dc, M, N, K, 3) != 0) {
      std::fprintf(stderr, "two_libraries: %s: %s\n", path, gemm_error());
      ++failed;
      continue;
    }
    if (!check(hipMemcpy(c.data(), dc, c.size() * 2, hipMemcpyDeviceToHost), "hipMemcpy")) return 1;
    int wrong = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int want = 0;
        for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
        const float got = float_of(c[std::size_t(i) * N + j]);
        if (got != static_cast<float>(want) && wrong++ < 5)
          std::fprintf(stderr, "two_libraries: %s: C[%d][%d] = %g, expected %d\n", path, i, j, got, want);
      }
    if (wrong) ++failed;
    std::printf("two_libraries: %s: %s\n", path, wrong ? "wrong" : "right");
  }
  return failed ? 1 : 0;
}
