// Device helpers of a user's project, imported by dequant.iris. The same
// header builds for the GPU (with HIP's own headers) and, through the
// runtime's empty __device__/__host__, for the CPU target.
#pragma once
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif
#include <cstdint>

// Affine dequantization of one 8-bit code.
__device__ inline float dequantize(int8_t q, float scale, float zero) {
  return (static_cast<float>(q) - zero) * scale;
}

__host__ __device__ inline int32_t saturate(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}
