// Iris runtime, every backend: the host collective calls (allocate, free,
// barrier), which every rank must make in the same order with the same
// arguments. Each backend's world brings the ranks' calls together (threads
// of one process, or processes under MPI); what a call is, how the calls of
// the ranks are compared and how an agreed call changes the heap are the same
// everywhere and live here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "heap_allocator.hpp"

namespace iris::detail {

enum class CollectiveOp : std::uint64_t { allocate, free, barrier };

// Plain 64-bit fields: MPI ranks send it as words.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::barrier;
  std::uint64_t bytes = 0;        // allocate
  std::uint64_t alignment = 0;    // allocate
  std::uint64_t offset = 0;       // free: heap offset, kNullOffset or kOutsideHeap
  const void* pointer = nullptr;  // free: as passed (messages only; differs per rank, never sent)

  static constexpr std::uint64_t kNullOffset = UINT64_MAX;
  static constexpr std::uint64_t kOutsideHeap = UINT64_MAX - 1;

  static CollectiveCall allocate(std::size_t bytes, std::size_t alignment);
  // free(p) by a rank whose heap of heap_size bytes starts at base.
  static CollectiveCall free(const void* p, const char* base, std::size_t heap_size);
  static CollectiveCall barrier();

  bool same_as(const CollectiveCall& o) const {
    return op == o.op && bytes == o.bytes && alignment == o.alignment && offset == o.offset;
  }
  // "allocate(1024 bytes, alignment 256)", for messages.
  std::string describe() const;
};

// "collective call #N differs between ranks: rank 0 called ...; rank 2 called ..."
// for calls[r] of every rank, or "" if they agree.
std::string compare_calls(std::uint64_t seq, const std::vector<CollectiveCall>& calls);

// Applies an agreed call to the allocator; returns the offset (allocate) or throws.
std::uint64_t apply_call(HeapAllocator& allocator, const CollectiveCall& call);

// Rank::heap_offset: the offset of p in the heap of `rank` (heap_size bytes at
// base), after checking that to_rank names a rank of the world and p lies in
// that heap (iris::Error otherwise).
std::uintptr_t checked_heap_offset(const void* p, int to_rank, int rank, int world_size, const char* base,
                                   std::size_t heap_size);

}  // namespace iris::detail
