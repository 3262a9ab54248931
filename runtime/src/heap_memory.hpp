// Iris runtime: where the bytes of a symmetric heap come from -- the one part of the
// host side that differs between backends (CPU: anonymous memory; HIP/CUDA: device
// memory whose handles are exchanged between ranks).
#pragma once

#include <cstddef>

namespace iris::detail {

// Owns the memory of one rank's heap. Move-only; unmaps in the destructor.
class HeapMemory {
 public:
  // Alignment of every heap base; allocations can be aligned up to this much.
  static constexpr std::size_t kBaseAlignment = std::size_t{2} << 20;

  // Reserves `bytes` bytes of zeroed memory, aligned to kBaseAlignment. Throws
  // iris::Error when the memory cannot be had.
  explicit HeapMemory(std::size_t bytes);
  ~HeapMemory();
  HeapMemory(HeapMemory&& other) noexcept;
  HeapMemory& operator=(HeapMemory&&) = delete;
  HeapMemory(const HeapMemory&) = delete;
  HeapMemory& operator=(const HeapMemory&) = delete;

  char* base() const { return base_; }

 private:
  void* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  char* base_ = nullptr;
};

}  // namespace iris::detail
