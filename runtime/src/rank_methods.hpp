// Iris runtime: the methods of Rank, the same for every backend. Each
// backend's world source includes this once, after its World, so these are
// ordinary out-of-line definitions of that backend's library. What differs
// between backends is what the World provides:
//   size, heap_size, bases, context(r)     the world's facts
//   collective(r, call)                     one host collective call of rank r
//   heap_changed(r)                         after an allocate or free of rank r
//                                           (a GPU republishes the allocation table)
//   before_barrier(r)                       what a host barrier waits for first (a
//                                           GPU: the rank's device work)
//   multiprocessor_count(r)                 rank r's device's
//   allocation_table(r)                     the live allocations as rank r's last
//                                           collective call left them
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collective.hpp"
#include "iris/checked.hpp"
#include "iris/host.hpp"

namespace iris {

int Rank::world_size() const { return world_->size; }
std::size_t Rank::heap_size() const { return world_->heap_size; }
DeviceContext Rank::device_context() const { return world_->context(rank_); }
char* Rank::heap_base(int r) const { return world_->bases[static_cast<std::size_t>(r)]; }

void* Rank::allocate(std::size_t bytes, std::size_t alignment) {
  const std::uint64_t offset = world_->collective(rank_, detail::CollectiveCall::allocate(bytes, alignment));
  world_->heap_changed(rank_);
  return heap_base(rank_) + offset;
}

void Rank::free(void* p) {
  world_->collective(rank_, detail::CollectiveCall::free(p, heap_base(rank_), world_->heap_size));
  world_->heap_changed(rank_);
}

void Rank::barrier() {
  world_->before_barrier(rank_);
  world_->collective(rank_, detail::CollectiveCall::barrier());
}

void Rank::agree(const std::string& call) { world_->collective(rank_, detail::CollectiveCall::agree(call)); }

std::uint64_t Rank::from_rank0(std::uint64_t value) {
  return world_->collective(rank_, detail::CollectiveCall::from_rank0(value));
}

// The table changes only in a collective call, which every rank must have
// entered: it stands still while this rank is outside one.
std::optional<Rank::Allocation> Rank::allocation_of(const void* p) const {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const auto base = reinterpret_cast<std::uintptr_t>(heap_base(rank_));
  if (address < base || address - base >= world_->heap_size) return std::nullopt;
  const AllocationTable& table = world_->allocation_table(rank_);
  if (table.count < 0) return std::nullopt;
  const std::uint64_t offset = address - base;
  const int block = detail::allocation_before(table, offset);
  if (block < 0 || offset >= table.end[block]) return Allocation{0, offset, 0};
  return Allocation{table.number[block], offset - table.begin[block], table.end[block] - table.begin[block]};
}

int Rank::multiprocessor_count() const { return world_->multiprocessor_count(rank_); }

std::uintptr_t Rank::heap_offset(const void* p, int to_rank) const {
  return detail::checked_heap_offset(p, to_rank, rank_, world_->size, heap_base(rank_), world_->heap_size);
}

}  // namespace iris
