// A shared library holding one kernel instantiation, which
// tests/gpu/two_libraries.cu loads twice under two names: bench/gemm.iris's
// persistent GEMM at 128x256x64, whose pipelined loops need more than the
// 48 KiB of shared memory a launch gets without an opt-in, and whose launch
// picks one of two images (iris/launch_gpu.hpp).
#include "gemm.iris.hpp"

#include <exception>
#include <string>

namespace {
const iris::DeviceContext kNoHeap{nullptr, 0, 0, 1, 0, 1, nullptr, nullptr};
std::string last_error;
}  // namespace

extern "C" {

// C = A x B for contiguous row-major bf16 matrices on the current device, with
// `programs` instances; 0 once it has finished, else -1 and
// library_gemm_error() says why.
int library_gemm(void* a, void* b, void* c, int m, int n, int k, int programs) {
  using T = iris::bfloat16;
  try {
    iris_kernels::matmul_persistent<T, 128, 256, 64, 8, 4>::launch({programs}, kNoHeap, static_cast<T*>(a),
                                                                   static_cast<T*>(b), static_cast<T*>(c), m, n, k);
    const hipError_t e = hipStreamSynchronize(hipStreamPerThread);
    if (e != hipSuccess) throw iris::Error(std::string("library_gemm: ") + hipGetErrorString(e));
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
  return 0;
}

const char* library_gemm_error() { return last_error.c_str(); }
}
