// Iris runtime, GPU backend: the NVSHMEM host calls of run_mpi's nvshmem
// provider (world_gpu_mpi.cpp, built into iris_runtime_gpu_nvshmem), in a
// translation unit of their own that the host compiler builds: nvcc 13.0's
// front end stops with an internal error ("find_allocated_name_reference", in
// <bits/stl_construct.h>) when NVSHMEM's headers meet world_gpu_mpi.cpp's.
#pragma once

#include <cstddef>
#include <string>

namespace iris::detail::nvshmem {

// NVSHMEM's nvshmemx_uniqueid_t, as bytes that the Bootstrap can send.
struct UniqueId {
  alignas(8) unsigned char bytes[128];
};

// Rank 0's: the id the others start from. False where NVSHMEM cannot make one.
bool make_unique_id(UniqueId& id);
// Starts NVSHMEM as PE `rank` of `size` on the current GPU; "" or what failed.
std::string start(int rank, int size, const UniqueId& id);
// nvshmem_align, nvshmem_free, nvshmem_ptr, nvshmem_finalize.
void* align(std::size_t alignment, std::size_t bytes);
void free(void* p);
void* ptr(const void* p, int pe);
void finalize();
// Every put of the kernels launched so far on `stream` (a cudaStream_t) is
// complete, in the stream's order.
void quiet_on_stream(void* stream);

}  // namespace iris::detail::nvshmem
