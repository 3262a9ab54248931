// Iris runtime: first-fit symmetric-heap allocator (see heap_allocator.hpp).
#include "heap_allocator.hpp"

#include <iterator>
#include <sstream>

#include "iris/host.hpp"

namespace iris::detail {
namespace {

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

}  // namespace

HeapAllocator::HeapAllocator(std::size_t heap_size) : heap_size_(heap_size) {
  if (heap_size_ > 0) free_.emplace(0, heap_size_);
}

std::size_t HeapAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw Error("iris: allocate(" + std::to_string(bytes) + " bytes): alignment " + std::to_string(alignment) +
                " is not a power of two");
  }
  if (alignment > kMaxAlignment) {
    throw Error("iris: allocate(" + std::to_string(bytes) + " bytes): alignment " + std::to_string(alignment) +
                " exceeds the largest supported alignment, " + std::to_string(kMaxAlignment));
  }
  if (alignment < kMinAlignment) alignment = kMinAlignment;

  if (bytes <= heap_size_) {  // also keeps round_up below from overflowing
    const std::size_t size = round_up(bytes == 0 ? 1 : bytes, kMinAlignment);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const std::size_t begin = it->first;
      const std::size_t end = it->first + it->second;
      const std::size_t start = round_up(begin, alignment);
      if (start >= end || end - start < size) continue;
      // Split: the aligned-away head and the unused tail stay free.
      free_.erase(it);
      if (start > begin) free_.emplace(begin, start - begin);
      if (start + size < end) free_.emplace(start + size, end - (start + size));
      used_.emplace(start, Block{size, bytes, ++allocations_made_});
      update_table();
      return start;
    }
  }
  std::ostringstream msg;
  msg << "iris: out of symmetric heap memory: cannot allocate " << bytes << " bytes (alignment " << alignment
      << "); heap size " << heap_size_ << " bytes, " << free_total() << " bytes free in total, largest free block "
      << largest_free() << " bytes";
  throw Error(msg.str());
}

void HeapAllocator::free(std::size_t offset) {
  const auto used = used_.find(offset);
  if (used == used_.end()) {
    throw Error("iris: free: heap offset " + std::to_string(offset) +
                " is not the start of an allocated block (freed twice, or not returned by allocate)");
  }
  std::size_t begin = offset;
  std::size_t size = used->second.size;
  used_.erase(used);
  update_table();
  // Coalesce with the free block right after and the one right before, if adjacent.
  auto next = free_.lower_bound(begin);
  if (next != free_.end() && begin + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    const auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      prev->second += size;
      return;
    }
  }
  free_.emplace(begin, size);
}

void HeapAllocator::update_table() {
  if (used_.size() > static_cast<std::size_t>(AllocationTable::kCapacity)) {
    table_.count = -1;
    return;
  }
  int i = 0;
  for (const auto& [offset, block] : used_) {
    table_.begin[i] = offset;
    table_.end[i] = offset + block.requested;
    table_.number[i] = block.number;
    ++i;
  }
  table_.count = i;
}

std::size_t HeapAllocator::free_total() const {
  std::size_t total = 0;
  for (const auto& [off, size] : free_) total += size;
  return total;
}

std::size_t HeapAllocator::largest_free() const {
  std::size_t largest = 0;
  for (const auto& [off, size] : free_) largest = size > largest ? size : largest;
  return largest;
}

}  // namespace iris::detail
