// Iris runtime, CPU backend: heap memory from anonymous private mappings.
//
// MAP_NORESERVE and untouched pages make the reservation lazy: a 1 GiB heap per rank
// costs address space only, and a page gets real memory (zeroed) when first written.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "heap_memory.hpp"
#include "iris/host.hpp"

namespace iris::detail {

HeapMemory::HeapMemory(std::size_t bytes) {
  if (bytes > SIZE_MAX - kBaseAlignment) {
    throw Error("iris: cannot reserve a symmetric heap of " + std::to_string(bytes) + " bytes: too large");
  }
  // Over-reserve by the base alignment and start the heap at the first aligned address.
  mapping_size_ = bytes + kBaseAlignment;
  void* m = mmap(nullptr, mapping_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) {
    const int err = errno;
    throw Error("iris: cannot reserve a symmetric heap of " + std::to_string(bytes) +
                " bytes: mmap failed: " + std::strerror(err));
  }
  mapping_ = m;
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = (addr + kBaseAlignment - 1) / kBaseAlignment * kBaseAlignment;
  base_ = static_cast<char*>(m) + (aligned - addr);
}

HeapMemory::HeapMemory(HeapMemory&& other) noexcept
    : mapping_(other.mapping_), mapping_size_(other.mapping_size_), base_(other.base_) {
  other.mapping_ = nullptr;
}

HeapMemory::~HeapMemory() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

}  // namespace iris::detail
