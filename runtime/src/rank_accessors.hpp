// Iris runtime: the Rank methods that only read the world, the same for every
// backend. Each backend's world source includes this once, after its World
// (which has size, heap_size, bases and context(r)), so these are ordinary
// out-of-line definitions of that backend's library.
#pragma once

#include <cstddef>

#include "iris/host.hpp"

namespace iris {

int Rank::world_size() const { return world_->size; }
std::size_t Rank::heap_size() const { return world_->heap_size; }
DeviceContext Rank::device_context() const { return world_->context(rank_); }
char* Rank::heap_base(int r) const { return world_->bases[static_cast<std::size_t>(r)]; }

}  // namespace iris
