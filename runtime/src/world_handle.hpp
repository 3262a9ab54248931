// Iris runtime: the members of WorldHandle (host.hpp) that every backend
// has alike. Each backend's run_mpi file (world_cpu_mpi.cpp, world_gpu_mpi.cpp)
// defines WorldHandle::State, with its Bootstrap `boot`, made by
// State(heap_bytes, the program's bootstrap or null for MPI's), then includes this.
#pragma once

#include <memory>

#include "iris/host.hpp"
#include "mpi_start.hpp"

namespace iris {

WorldHandle::WorldHandle(std::size_t heap_bytes) {
  detail::check_run_mpi_heap(heap_bytes);
  state_ = std::make_unique<State>(heap_bytes, nullptr);
}

WorldHandle::WorldHandle(std::size_t heap_bytes, std::unique_ptr<Bootstrap> bootstrap) {
  detail::check_run_mpi_heap(heap_bytes);
  if (!bootstrap) throw Error("iris: WorldHandle: the bootstrap is null (leave it out to meet through MPI)");
  state_ = std::make_unique<State>(heap_bytes, std::move(bootstrap));
}

WorldHandle::~WorldHandle() = default;

int WorldHandle::rank() const { return state_->boot->rank(); }
int WorldHandle::world_size() const { return state_->boot->size(); }

}  // namespace iris
