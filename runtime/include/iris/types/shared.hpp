// Tiles in shared memory: the stages through which a K loop's dot operands go
// from global memory to the tensor cores without passing through registers.
//
//   SharedTile<T, R, C>           a view of one (R, C) tile in shared memory
//   SharedStages<T, R, C, Stages> a view of a ring of Stages such tiles
//   dynamic_shared()              where a program instance's dynamic shared
//                                 memory starts
//
// Generated code carves a ring per operand of a pipelined dot out of the
// kernel's dynamic shared memory (x_stages{dynamic_shared()}, then
// y_stages{x_stages.end()}), fills stage s with copy_async
// (ops/copy_async.hpp) some iterations ahead and hands x_stages[s] to dot
// (ops/dot.hpp). The kernel says how much it needs (dynamic_shared_bytes, the
// most that one of its loops holds at once), and the launch reserves it: on
// the GPU as the launch's dynamic shared memory, which may exceed the 48 KiB
// of static shared memory (up to the device's opt-in limit, 227 KiB on a
// Hopper GPU); on the CPU, where a rank's instances run one after another on
// its thread, a buffer of that thread.
//
// Rows are swizzled: a tile is cut into 16-byte chunks, and chunk q of row r
// is stored at chunk q ^ swizzle(r) of its row. ldmatrix reads one chunk of 8
// consecutive rows at once; unswizzled, rows of 64 or more bytes would put
// those 8 chunks in the same banks (an 8-way conflict at 256-byte rows). The
// XOR spreads the 8 rows over the 8 distinct 16-byte bank groups of a
// 128-byte line, and keeps every chunk whole, so that a 16-byte copy or an
// ldmatrix row is still one contiguous access.
//
// Columns are cut into panels of at most 128 bytes, stored one after another
// (every row of the first panel, then of the next), so that a row of a panel
// never passes one 128-byte line. With that, the swizzle is the one that
// Hopper's wgmma reads from shared memory (ops/wgmma_nvidia.hpp): XOR the
// 16-byte chunk bits of an address with the bits above the 128-byte line,
// over 1024, 512 or 256 bytes for panel rows of 128, 64 or 32 bytes, once a
// tile starts on a multiple of 1024 bytes, which rings keep. The same layout
// is used on every target, so the CPU tests exercise it too; AMD's MFMA
// (ops/mfma_amd.hpp) reads 8-byte halves of chunks of a and single elements
// of b, which it serves as well.
#pragma once

#include <cstddef>
#include <type_traits>

#include "iris/target.hpp"

namespace iris {

template <class T, int R, int C>
struct SharedTile {
  using value_type = T;
  static constexpr int rows = R;
  static constexpr int cols = C;
  static constexpr int panel = 128 / static_cast<int>(sizeof(T)) < C ? 128 / static_cast<int>(sizeof(T)) : C;
  static constexpr int panel_row_bytes = panel * static_cast<int>(sizeof(T));
  static constexpr int chunk = 16 / static_cast<int>(sizeof(T)) < C ? 16 / static_cast<int>(sizeof(T)) : C;
  static constexpr int chunks_per_row = panel / chunk;  // of a panel: 8 at most
  // Rows of a panel that share one 128-byte line of banks.
  static constexpr int rows_per_line = 8 / chunks_per_row;

  T* base;

  IRIS_HD static constexpr int swizzle(int r) { return (r / rows_per_line) % chunks_per_row; }
  // The position of element (r, c) in the tile's memory.
  IRIS_HD static constexpr int offset(int r, int c) {
    return (c / panel) * (R * panel) + r * panel + (((c % panel) / chunk) ^ swizzle(r)) * chunk + c % chunk;
  }
  IRIS_HD T* at(int r, int c) const { return base + offset(r, c); }
};

template <class T, int R, int C, int Stages>
struct SharedStages {
  // irisc refuses a loop's stages below 3 where they are a constant; a generic
  // device function's `stages P` gets P from its callers, which only here, at
  // the instance, is a number (below 3 a dot's pipeline reads a stage before
  // it is copied).
  static_assert(Stages >= 3, "a loop's stages must be an integer of at least 3 (docs/language.md, 'stages'): "
                             "a compile-time argument of the function that holds the loop gave fewer");
  static constexpr int stages = Stages;
  // Rounded up so that the ring after this one starts on a 1024-byte boundary
  // too (a whole number of wgmma's largest swizzle pattern).
  static constexpr std::size_t bytes = (sizeof(T) * R * C * Stages + 1023) / 1024 * 1024;
  unsigned char* base;
  // What bind_box found for this ring's copies (ops/copy_box.hpp): the tensor
  // map, and which ring of its loop it is (that of the instance's barriers).
  mutable const void* box_map = nullptr;
  mutable int box_ring = 0;
  IRIS_HD SharedTile<T, R, C> operator[](int stage) const { return {reinterpret_cast<T*>(base) + stage * R * C}; }
  IRIS_HD unsigned char* end() const { return base + bytes; }
};

// The most dynamic shared memory a kernel may ask for: a Hopper GPU's opt-in
// limit per thread block (227 KiB), what the CPU reserves per rank thread.
inline constexpr std::size_t kMaxDynamicSharedBytes = 227 * 1024;

// Where the first ring starts: a multiple of this. A launch reserves that much
// more than the kernel declares, since static shared memory (dot's staging
// area, reductions) comes first in a GPU's shared memory and may end anywhere.
inline constexpr std::size_t kDynamicSharedAlignment = 1024;

IRIS_HD inline unsigned char* dynamic_shared() {
#if defined(__CUDA_ARCH__)
  extern __shared__ __align__(16) unsigned char iris_dynamic_shared[];
  const auto offset = static_cast<std::size_t>(__cvta_generic_to_shared(iris_dynamic_shared));
  return iris_dynamic_shared + (kDynamicSharedAlignment - offset % kDynamicSharedAlignment) % kDynamicSharedAlignment;
#elif defined(__HIP_DEVICE_COMPILE__)
  extern __shared__ __align__(1024) unsigned char iris_dynamic_shared[];
  return iris_dynamic_shared;
#elif IRIS_GPU
  return nullptr;  // host pass of a GPU compilation: never runs
#else
  alignas(kDynamicSharedAlignment) static thread_local unsigned char area[kMaxDynamicSharedBytes];
  return area;
#endif
}

// The dynamic shared memory that a launch of Kernel reserves: what it declares
// and the room to align it (0 where it declares none).
template <class Kernel>
constexpr std::size_t dynamic_shared_bytes_of() {
  if constexpr (requires { Kernel::dynamic_shared_bytes; }) {
    static_assert(Kernel::dynamic_shared_bytes + kDynamicSharedAlignment <= kMaxDynamicSharedBytes,
                  "the stages of the kernel's pipelined loops exceed 226 KiB of shared memory: use smaller tiles");
    return Kernel::dynamic_shared_bytes == 0 ? 0 : Kernel::dynamic_shared_bytes + kDynamicSharedAlignment;
  } else {
    return 0;
  }
}

}  // namespace iris
