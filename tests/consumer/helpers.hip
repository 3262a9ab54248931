// Device code the project already has: a HIP header of __device__ functions.
// It builds as HIP (nvcc, hipcc, clang -x hip) and, for the CPU target, as
// plain C++: the Iris runtime defines __device__ and __host__ there.
#pragma once

// a x + b for one element.
__device__ inline float affine(float x, float a, float b) { return a * x + b; }
