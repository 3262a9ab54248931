// Which target a file is being compiled for, and the function qualifiers
// that code shared by host and device needs (on the CPU target, HIP's too). A
// GPU compiler (nvcc, hipcc, clang -x hip) selects the GPU target; any other
// compiler the CPU emulation.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define IRIS_GPU 1
#define IRIS_HD __host__ __device__
#define IRIS_DEVICE __device__
#else
#define IRIS_GPU 0
#define IRIS_HD
#define IRIS_DEVICE
// HIP's qualifiers mean nothing on the CPU target: defined empty, a header of
// __device__ helpers that .iris code imports compiles with any C++ compiler.
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#endif
