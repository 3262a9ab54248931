// Which target a file is being compiled for, and the function qualifiers
// that code shared by host and device needs (on the CPU target, HIP's too). A
// GPU compiler (nvcc, hipcc, clang -x hip) selects the GPU target; any other
// compiler the CPU emulation.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define IRIS_GPU 1
#define IRIS_HD __host__ __device__
#define IRIS_DEVICE __device__
// A kernel's run(), which only its __global__ entry calls (launch_gpu.hpp's
// kernel_entry): always inlined there. Left to nvcc, a large one (a fused
// kernel built with TRACE) stays out of line, and ptxas then serialises its
// wgmma instructions at the call (its warning C7510).
#define IRIS_KERNEL_RUN __device__ __forceinline__
#else
#define IRIS_GPU 0
#define IRIS_HD
#define IRIS_DEVICE
#define IRIS_KERNEL_RUN
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

// The GPU's vendor, from macros that are the same in the host and the device
// pass of one compilation (so that types chosen by it, such as DotLayout, agree
// between the passes): NVIDIA (nvcc) unless hip-clang (__HIP__) compiles for
// AMD. Both 0 on the CPU target.
// IRIS_AMD_GPU is the other GPU target, hip-clang's, whatever its device
// architecture (which differs between the device passes of one compilation).
#if IRIS_GPU && !defined(__HIP__) && !defined(__HIP_PLATFORM_AMD__)
#define IRIS_NVIDIA_GPU 1
#define IRIS_AMD_GPU 0
#elif IRIS_GPU
#define IRIS_NVIDIA_GPU 0
#define IRIS_AMD_GPU 1
#else
#define IRIS_NVIDIA_GPU 0
#define IRIS_AMD_GPU 0
#endif

// Whether remote accesses have a far path (ops/transport_far.hpp): the CPU
// target always (run_mpi's worlds of several nodes); NVIDIA GPUs when the
// kernels are built against NVSHMEM (IRIS_NVSHMEM=1, which the build sets with
// -rdc for targets that link Iris::runtime_gpu_nvshmem). Without it a GPU
// world is one node, and a `multinode` kernel refuses a world of several.
#ifndef IRIS_NVSHMEM
#define IRIS_NVSHMEM 0
#endif
#if !IRIS_GPU || (IRIS_NVIDIA_GPU && IRIS_NVSHMEM)
#define IRIS_FAR_PATH 1
#else
#define IRIS_FAR_PATH 0
#endif

// Unrolls the loop that follows on the GPU compilers (nvcc, hip-clang), where
// a register tile indexed by the loop variable must see compile-time indices:
// a run-time index puts the whole tile in local memory. Host compilers decide
// for themselves (a CPU tile may hold thousands of elements), and so does the
// host pass of a GPU compilation, whose host compiler does not know the pragma.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define IRIS_UNROLL _Pragma("unroll")
#else
#define IRIS_UNROLL
#endif
