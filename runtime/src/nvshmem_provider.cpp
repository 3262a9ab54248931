// The NVSHMEM host calls of run_mpi's nvshmem provider (nvshmem_provider.hpp).
#include "nvshmem_provider.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstring>

namespace iris::detail::nvshmem {

static_assert(sizeof(UniqueId) == sizeof(nvshmemx_uniqueid_t), "UniqueId must hold nvshmemx_uniqueid_t");

bool make_unique_id(UniqueId& id) {
  nvshmemx_uniqueid_t made = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (nvshmemx_get_uniqueid(&made) != 0) return false;
  std::memcpy(id.bytes, &made, sizeof made);
  return true;
}

std::string start(int rank, int size, const UniqueId& id) {
  nvshmemx_uniqueid_t given;
  std::memcpy(&given, id.bytes, sizeof given);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(rank, size, &given, &attr) != 0) {
    return "nvshmemx_set_attr_uniqueid_args failed";
  }
  if (const int status = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr); status != 0) {
    return "nvshmemx_init_attr returned " + std::to_string(status) + " (NVSHMEM_DEBUG=INFO says why)";
  }
  if (nvshmem_my_pe() != rank || nvshmem_n_pes() != size) {
    return "NVSHMEM numbers rank " + std::to_string(rank) + " of " + std::to_string(size) + " as PE " +
           std::to_string(nvshmem_my_pe()) + " of " + std::to_string(nvshmem_n_pes());
  }
  return "";
}

void* align(std::size_t alignment, std::size_t bytes) { return nvshmem_align(alignment, bytes); }
void free(void* p) { nvshmem_free(p); }
void* ptr(const void* p, int pe) { return nvshmem_ptr(p, pe); }
void finalize() { nvshmem_finalize(); }
void quiet_on_stream(void* stream) { nvshmemx_quiet_on_stream(static_cast<cudaStream_t>(stream)); }

}  // namespace iris::detail::nvshmem
