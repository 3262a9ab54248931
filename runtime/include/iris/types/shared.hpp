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
// ldmatrix row is still one contiguous access. The same layout is used on
// every target, so the CPU tests exercise it too.
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
  static constexpr int chunk = 16 / static_cast<int>(sizeof(T)) < C ? 16 / static_cast<int>(sizeof(T)) : C;
  static constexpr int chunks_per_row = C / chunk;
  // Rows that share one 128-byte line of banks (1 where a row fills it).
  static constexpr int rows_per_line = chunks_per_row >= 8 ? 1 : 8 / chunks_per_row;
  static constexpr int swizzle_span = chunks_per_row >= 8 ? 8 : chunks_per_row;

  T* base;

  IRIS_HD static constexpr int swizzle(int r) { return (r / rows_per_line) % swizzle_span; }
  // The position of element (r, c) in the tile's memory.
  IRIS_HD static constexpr int offset(int r, int c) {
    return r * C + ((c / chunk) ^ swizzle(r)) * chunk + c % chunk;
  }
  IRIS_HD T* at(int r, int c) const { return base + offset(r, c); }
};

template <class T, int R, int C, int Stages>
struct SharedStages {
  static_assert(Stages >= 2, "a pipelined loop has at least two stages");
  static constexpr int stages = Stages;
  // Rounded up so that the ring after this one starts on a 128-byte line.
  static constexpr std::size_t bytes = (sizeof(T) * R * C * Stages + 127) / 128 * 128;
  unsigned char* base;
  IRIS_HD SharedTile<T, R, C> operator[](int stage) const { return {reinterpret_cast<T*>(base) + stage * R * C}; }
  IRIS_HD unsigned char* end() const { return base + bytes; }
};

// The most dynamic shared memory a kernel may ask for: a Hopper GPU's opt-in
// limit per thread block (227 KiB), what the CPU reserves per rank thread.
inline constexpr std::size_t kMaxDynamicSharedBytes = 227 * 1024;

IRIS_HD inline unsigned char* dynamic_shared() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  extern __shared__ __align__(128) unsigned char iris_dynamic_shared[];
  return iris_dynamic_shared;
#elif IRIS_GPU
  return nullptr;  // host pass of a GPU compilation: never runs
#else
  alignas(128) static thread_local unsigned char area[kMaxDynamicSharedBytes];
  return area;
#endif
}

// The dynamic shared memory that Kernel declares (0 where it declares none).
template <class Kernel>
constexpr std::size_t dynamic_shared_bytes_of() {
  if constexpr (requires { Kernel::dynamic_shared_bytes; }) {
    static_assert(Kernel::dynamic_shared_bytes <= kMaxDynamicSharedBytes,
                  "the stages of the kernel's pipelined loops exceed 227 KiB of shared memory: use smaller tiles");
    return Kernel::dynamic_shared_bytes;
  } else {
    return 0;
  }
}

}  // namespace iris
