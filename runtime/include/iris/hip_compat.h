// Iris runtime: makes the HIP headers of Debian/Ubuntu (HIP 5.2, package
// libamdhip64-dev) usable on the NVIDIA platform with CUDA 12 and 13.
//
// Force-included (nvcc `-include iris/hip_compat.h`) in front of every CUDA
// translation unit of the GPU build, before any HIP header. HIP 5.2's
// nvidia_detail/nvidia_hip_runtime_api.h wraps CUDA runtime functions in inline
// functions; some of the wrapped CUDA APIs were removed or changed later:
//
//   CUDA 12.0  texture references (texture<>, cudaBindTexture*, cudaUnbindTexture,
//              cudaGetTextureAlignmentOffset), cudaLaunchCooperativeKernelMultiDevice
//   CUDA 13.0  cudaDeviceProp::clockRate, memoryClockRate, computeMode,
//              kernelExecTimeoutEnabled, cooperativeMultiDeviceLaunch;
//              cudaDevAttrCooperativeMultiDeviceLaunch; cudaMemAdvise and
//              cudaMemPrefetchAsync take a cudaMemLocation instead of a device;
//              the graph dependency functions take edge data;
//              cudaStreamGetCaptureInfo_v2 is gone; cuCtxCreate takes parameters.
//
// This header restores just enough of the old API -- overloads and stubs with
// C++ linkage next to CUDA's extern "C" functions -- for the wrappers to compile.
// Removed features fail at run time with cudaErrorNotSupported; changed
// signatures forward to the new functions. Nothing here changes the behaviour of
// the CUDA functions that Iris uses (memory, streams, events, IPC, launch).
//
// It does nothing when not compiling for the NVIDIA platform (AMD's hip-clang
// uses its own headers, which need no help).
#pragma once

#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__)

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif

#include <cuda.h>
#include <cuda_runtime_api.h>

#if CUDART_VERSION >= 12000

// ---------------------------------------------------------------- CUDA 12.0
// Texture references: HIP's deprecated template wrappers only need the names.
template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct texture {};

// The removed functions: each takes any arguments and fails.
#define IRIS_HIP_COMPAT_REMOVED(name) \
  template <class... A>               \
  inline cudaError_t name(A&&...) {   \
    return cudaErrorNotSupported;     \
  }
IRIS_HIP_COMPAT_REMOVED(cudaBindTexture)
IRIS_HIP_COMPAT_REMOVED(cudaBindTexture2D)
IRIS_HIP_COMPAT_REMOVED(cudaBindTextureToArray)
IRIS_HIP_COMPAT_REMOVED(cudaUnbindTexture)
IRIS_HIP_COMPAT_REMOVED(cudaGetTextureAlignmentOffset)
IRIS_HIP_COMPAT_REMOVED(cudaLaunchCooperativeKernelMultiDevice)
#undef IRIS_HIP_COMPAT_REMOVED

#endif  // CUDART_VERSION >= 12000

#if CUDART_VERSION >= 13000

// ---------------------------------------------------------------- CUDA 13.0
// cudaDeviceProp lost fields that HIP copies into hipDeviceProp_t. Every later
// mention of cudaDeviceProp names a derived struct that has them back;
// cudaGetDeviceProperties fills them from the device attributes that remain
// (an exact match, so it wins over CUDA's function for the derived type).
struct iris_cudaDeviceProp : cudaDeviceProp {
  int clockRate = 0;
  int memoryClockRate = 0;
  int computeMode = 0;
  int kernelExecTimeoutEnabled = 0;
  int cooperativeMultiDeviceLaunch = 0;
};

inline cudaError_t cudaGetDeviceProperties(iris_cudaDeviceProp* prop, int device) {
  cudaError_t e = ::cudaGetDeviceProperties(static_cast<cudaDeviceProp*>(prop), device);
  if (e != cudaSuccess) return e;
  const struct {
    int* field;
    cudaDeviceAttr attr;
  } fields[] = {{&prop->clockRate, cudaDevAttrClockRate},
                {&prop->memoryClockRate, cudaDevAttrMemoryClockRate},
                {&prop->computeMode, cudaDevAttrComputeMode},
                {&prop->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout}};
  for (const auto& f : fields) {
    e = cudaDeviceGetAttribute(f.field, f.attr, device);
    if (e != cudaSuccess) return e;
  }
  prop->cooperativeMultiDeviceLaunch = 0;
  return cudaSuccess;
}

#define cudaDeviceProp iris_cudaDeviceProp

// Removed attribute (it was 96); asking for it fails with cudaErrorInvalidValue.
#define cudaDevAttrCooperativeMultiDeviceLaunch (static_cast<cudaDeviceAttr>(96))

// Managed memory hints take a location instead of a device ordinal.
namespace iris_hip_compat {
inline cudaMemLocation location_of(int device) {
  cudaMemLocation loc{};
  if (device == cudaCpuDeviceId) {
    loc.type = cudaMemLocationTypeHost;
    loc.id = 0;
  } else {
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
  }
  return loc;
}
}  // namespace iris_hip_compat

inline cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, int device) {
  return cudaMemAdvise(ptr, count, advice, iris_hip_compat::location_of(device));
}
inline cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, int device, cudaStream_t stream = 0) {
  return cudaMemPrefetchAsync(ptr, count, iris_hip_compat::location_of(device), 0u, stream);
}

// Graph dependencies gained per-edge data (nullptr: default edges).
inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                            const cudaGraphNode_t* to, size_t count) {
  return cudaGraphAddDependencies(graph, from, to, static_cast<const cudaGraphEdgeData*>(nullptr), count);
}
inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                               const cudaGraphNode_t* to, size_t count) {
  return cudaGraphRemoveDependencies(graph, from, to, static_cast<const cudaGraphEdgeData*>(nullptr), count);
}
inline cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                     size_t* count) {
  return cudaGraphGetEdges(graph, from, to, static_cast<cudaGraphEdgeData*>(nullptr), count);
}
inline cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* count) {
  return cudaGraphNodeGetDependencies(node, deps, static_cast<cudaGraphEdgeData*>(nullptr), count);
}
inline cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps, size_t* count) {
  return cudaGraphNodeGetDependentNodes(node, deps, static_cast<cudaGraphEdgeData*>(nullptr), count);
}
inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps, size_t count,
                                                       unsigned int flags = 0) {
  return cudaStreamUpdateCaptureDependencies(stream, deps, static_cast<const cudaGraphEdgeData*>(nullptr), count,
                                             flags);
}
inline cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                               unsigned long long* id = nullptr, cudaGraph_t* graph = nullptr,
                                               const cudaGraphNode_t** deps = nullptr, size_t* count = nullptr) {
  return cudaStreamGetCaptureInfo(stream, status, id, graph, deps, nullptr, count);
}

// cuCtxCreate (a macro for cuCtxCreate_v4) takes creation parameters first.
inline CUresult cuCtxCreate(CUcontext* ctx, unsigned int flags, CUdevice device) {
  return cuCtxCreate(ctx, static_cast<CUctxCreateParams*>(nullptr), flags, device);
}

#endif  // CUDART_VERSION >= 13000

#endif  // __CUDACC__ on the NVIDIA platform
