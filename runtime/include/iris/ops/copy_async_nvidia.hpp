// NVIDIA's asynchronous copies from global to shared memory (cp.async, sm_80
// and later) for copy_async (ops/copy_async.hpp). Included on NVIDIA targets
// only; only the device pass for sm_80 and later has the instructions
// (IRIS_CP_ASYNC).
#pragma once

#include <cstdint>

#include "iris/target.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define IRIS_CP_ASYNC 1
#else
#define IRIS_CP_ASYNC 0
#endif

namespace iris {
namespace detail {

#if IRIS_CP_ASYNC
// Copies Bytes (4, 8 or 16) from global `src` to shared `dst`, both aligned to
// Bytes, without waiting: the copy belongs to the thread's next group
// (cp_async_commit) and is done when cp_async_wait lets that group go. 16-byte
// copies bypass L1 (.cg), which the operands of a GEMM, read once per
// instance, do not need; smaller ones can only go through it (.ca).
template <int Bytes>
__device__ __forceinline__ void cp_async(void* dst, const void* src) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async moves 4, 8 or 16 bytes");
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared), "l"(src), "n"(Bytes) : "memory");
}

// A 16-byte cp.async that reads `bytes` (16 or 0) of src and zero-fills the
// rest: a masked-off run of a copy costs no branch and reads nothing.
__device__ __forceinline__ void cp_async_16_or_zeros(void* dst, const void* src, bool read) {
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(src), "r"(read ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most Pending of this thread's committed groups are in flight.
// On sm_90 and later it then makes what the thread copied visible to the
// async proxy, through which wgmma reads shared memory (ops/wgmma_nvidia.hpp).
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
#endif

}  // namespace detail
}  // namespace iris
