// Which target a file is being compiled for, and the function qualifiers
// that code shared by host and device needs. A GPU compiler (nvcc, hipcc,
// clang -x hip) selects the GPU target; any other compiler the CPU emulation.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define IRIS_GPU 1
#define IRIS_HD __host__ __device__
#define IRIS_DEVICE __device__
#else
#define IRIS_GPU 0
#define IRIS_HD
#define IRIS_DEVICE
#endif
