// Iris runtime: the members of MpiWorldHandle (host.hpp) that every backend
// has alike. Each backend's run_mpi file (world_cpu_mpi.cpp, world_gpu_mpi.cpp)
// defines MpiWorldHandle::State, with its MpiSession `mpi`, then includes this.
#pragma once

#include <memory>

#include "iris/host.hpp"
#include "mpi_start.hpp"

namespace iris {

MpiWorldHandle::MpiWorldHandle(std::size_t heap_bytes) {
  detail::check_run_mpi_heap(heap_bytes);
  state_ = std::make_unique<State>(heap_bytes);
}

MpiWorldHandle::~MpiWorldHandle() = default;

int MpiWorldHandle::rank() const { return state_->mpi.rank; }
int MpiWorldHandle::world_size() const { return state_->mpi.size; }

}  // namespace iris
