// A header of every kind of function a HIP project may hold, with the real
// HIP runtime headers: irisc-import-hip must list exactly the callable
// __device__ functions with their .iris types, give the reason for every
// other function at namespace scope outside system headers, and skip the rest.
// assorted.expected is the hand-written answer.
#pragma once
#include <hip/hip_runtime.h>
#include <cstdint>

// Callable: every scalar type, host-device, forceinline, constexpr, static,
// extern "C", unnamed parameters, no parameters, no result.
__device__ inline bool all_scalars(int8_t a, int16_t b, int32_t c, int64_t d, uint8_t e, uint16_t f,
                                   uint32_t g, uint64_t h, float i, double j) { return a + b + c + d + e + f + g + h + i + j > 0; }
__host__ __device__ inline long long_and_friends(long a, unsigned long long b, char c, short d) { return a + b + c + d; }
__device__ __forceinline__ float forced(float x) { return x; }
__device__ constexpr int constexpr_fn(const int x) { return x * 2; }
static __device__ float static_fn(float) { return 1.0f; }
extern "C" __device__ double c_linkage(double x);
__device__ inline void no_result(int) {}
__device__ inline unsigned no_params() { return 7u; }
__device__ float declared_twice(float x);
__device__ float declared_twice(float x) { return x; }

// Rejected, each with its reason.
__device__ inline float overloaded(float x) { return x; }
__device__ inline double overloaded(double x) { return x; }
template <class T> __device__ T templated(T x) { return x; }
inline int host_only(int x) { return x; }
__global__ void a_kernel(float* p) { *p = 0; }
struct Vec { float x, y; };
__device__ inline float by_struct(Vec v) { return v.x; }
__device__ inline Vec returns_struct(float x) { return {x, x}; }
__device__ inline float by_pointer(float* p) { return *p; }
__device__ inline float by_reference(const float& x) { return x; }
__device__ inline float vector_param(float4 v) { return v.x; }
__device__ inline __int128 wide(int x) { return x; }
__device__ inline int variadic(int n, ...) { return n; }
enum Color { Red };
__device__ inline int by_enum(Color c) { return c; }

// Not listed: not at namespace scope, or a member.
namespace helpers {
__device__ inline float in_namespace(float x) { return x; }
}
struct WithMethods {
  __device__ float method(float x) const { return x; }
  static __device__ float static_method(float x) { return x; }
};
