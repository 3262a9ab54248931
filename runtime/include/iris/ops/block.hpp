// Cooperation of the threads of one program instance: a reduction of one
// value per thread, and running something once per instance.
#pragma once

#include <type_traits>

#include "iris/device.hpp"
#include "iris/types/layout.hpp"

namespace iris {

#if IRIS_GPU
// Combines one partial value per thread into one value for the instance.
// (Host and device for the same reason as single().)
template <class R, class F>
IRIS_HD R block_reduce(R partial, F combine) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  (void)combine;
  return partial;  // host pass of a GPU compilation: never runs
#else
  struct alignas(16) Buffer {
    unsigned char bytes[kThreads * sizeof(R)];
  };
  __shared__ Buffer raw;
  R* buf = reinterpret_cast<R*>(raw.bytes);
  const int t = thread_index();
  buf[t] = partial;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] = combine(buf[t], buf[t + s]);
    __syncthreads();
  }
  R result = buf[0];
  __syncthreads();
  return result;
#endif
}
#else
template <class R, class F>
R block_reduce(R partial, F) { return partial; }
#endif


// Runs f on one thread of the program instance and gives its result to all:
// scalar side effects (a store through a scalar pointer, an atomic, a signal)
// happen once per instance, after every thread's earlier accesses.
#if IRIS_GPU
// Host and device like the tile functions that return its result: their host
// pass must be able to deduce return types. Only the device pass synchronises.
template <class F>
IRIS_HD auto single(F f) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  return f();  // host pass of a GPU compilation: never runs
#else
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    __syncthreads();
    if (thread_index() == 0) f();
    __syncthreads();
  } else {
    struct alignas(16) Slot {
      unsigned char bytes[sizeof(R)];
    };
    __shared__ Slot slot;  // (alignas on the variable: hip-clang refuses it after __shared__)
    __syncthreads();
    if (thread_index() == 0) *reinterpret_cast<R*>(slot.bytes) = f();
    __syncthreads();
    R result = *reinterpret_cast<R*>(slot.bytes);
    __syncthreads();
    return result;
  }
#endif
}
#else
template <class F>
auto single(F f) { return f(); }
#endif

}  // namespace iris
