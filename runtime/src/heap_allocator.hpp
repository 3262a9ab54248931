// Iris runtime: the symmetric-heap allocator (backend independent, host side).
//
// It manages *offsets* into a heap of fixed size, not addresses: the world keeps one
// allocator for all ranks and every collective allocate/free is applied to it once,
// so every rank gets the same offset by construction.
//
// Policy: first fit over a free list ordered by offset, splitting the chosen block
// and coalescing freed blocks with free neighbours. Block sizes and offsets are
// multiples of 256 (kMinAlignment). Not thread-safe: the world calls it under its lock.
//
// It also keeps the table of live blocks that checked mode bounds accesses by
// (iris/checked.hpp): offsets, the sizes asked for (not the rounded ones, so that
// the padding counts as outside) and each block's ordinal number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "iris/checked.hpp"

namespace iris::detail {

class HeapAllocator {
 public:
  static constexpr std::size_t kMinAlignment = 256;
  // Heap bases are aligned to this, so larger alignments could not be honoured on
  // every rank at once.
  static constexpr std::size_t kMaxAlignment = std::size_t{2} << 20;

  explicit HeapAllocator(std::size_t heap_size);

  // Returns the offset of a new block of at least `bytes` bytes (0 bytes still gives a
  // distinct block). `alignment` must be a power of two <= kMaxAlignment; it is raised
  // to kMinAlignment. Throws iris::Error (with heap size, free total, largest free
  // block) when no free block fits.
  std::size_t allocate(std::size_t bytes, std::size_t alignment);
  // `offset` must be the start of a block returned by allocate; throws iris::Error otherwise.
  void free(std::size_t offset);

  std::size_t heap_size() const { return heap_size_; }
  std::size_t free_total() const;
  std::size_t largest_free() const;
  std::size_t allocated_blocks() const { return used_.size(); }
  // The live blocks, as checked mode reads them; changes with every allocate and free.
  const AllocationTable& table() const { return table_; }

 private:
  struct Block {
    std::size_t size;       // rounded up
    std::size_t requested;  // as asked for
    std::uint64_t number;   // ordinal of the allocate call that made it
  };
  void update_table();

  std::size_t heap_size_;
  std::map<std::size_t, std::size_t> free_;  // offset -> size; disjoint and never adjacent
  std::map<std::size_t, Block> used_;        // offset -> live block
  std::uint64_t allocations_made_ = 0;
  AllocationTable table_{};
};

}  // namespace iris::detail
