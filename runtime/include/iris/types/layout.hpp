// Layouts of tiles: which elements each thread of a program instance holds. A
// program instance runs on kThreads threads (a GPU thread block; on the CPU
// one thread that holds every element). A layout is part of a tile's type
// (types/tile.hpp), so that tiles laid out differently (tensor-core fragments,
// whose layout may depend on the element type) cannot be mixed by accident.
// The default layout, Blocked, is what every tile of generated code has.
//
// Tiles have one or two dimensions. Every layout numbers a tile's elements by
// their row-major flat index (f = r * cols + c; a 1-D tile is one row), and
// index(j) returns that flat index, so that operations that pair up elements
// (elementwise ones, loads, stores, atomics) never look at the shape: a 2-D
// tile is a 1-D tile of rows * cols elements whose type also carries the shape.
#pragma once

#include <concepts>

#include "iris/target.hpp"

#ifndef IRIS_THREADS
#define IRIS_THREADS 256
#endif

namespace iris {

#if IRIS_GPU
inline constexpr int kThreads = IRIS_THREADS;
// Host and device: the tile functions that use it are IRIS_HD (their host
// instantiations, which never run, see thread 0).
IRIS_HD inline int thread_index() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}
#else
inline constexpr int kThreads = 1;
inline int thread_index() { return 0; }
#endif

constexpr bool is_tile_size(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// What a layout of N elements tells: its shape (rank 1 or 2, rows and cols; a
// 1-D tile of N has rows 1 and cols N), how many elements each thread holds
// (per_thread), the flat index of this thread's element j (index), whether
// this thread holds any (active), and vec, a divisor of per_thread: each run of
// vec elements of a thread, from a multiple of vec on, is consecutive in the
// tile, so that a contiguous access can move it with one vector load or store
// (1 where no two are).
template <class L, int N>
concept LayoutOf = L::size == N && L::rows * L::cols == N && (L::rank == 1 || L::rank == 2) &&
                   (L::rank == 2 || L::rows == 1) && requires(int j) {
  { L::per_thread } -> std::convertible_to<int>;
  { L::vec } -> std::convertible_to<int>;
  { L::index(j) } -> std::same_as<int>;
  { L::active() } -> std::same_as<bool>;
};

// The blocked layout of a tile of shape Dims (Blocked<N>, Blocked<M, N>): a
// thread holds runs of `vec` consecutive elements (4 when the tile is large
// enough), so a contiguous access becomes 16-byte vector loads and stores for
// 32-bit types. It depends on the number of elements only, never on the
// element type, so tiles of different types line up element for element, nor
// on the shape, so that tiles of one size but different shapes do too:
// reshaping a tile, or giving it an axis of 1, is a change of its type alone.
template <int... Dims>
struct Blocked {
  static_assert(sizeof...(Dims) == 1 || sizeof...(Dims) == 2, "tiles have one or two dimensions");
  static_assert((is_tile_size(Dims) && ...), "tile dimensions are positive powers of two");
  static constexpr int rank = sizeof...(Dims);
  static constexpr int size = (Dims * ...);
  static constexpr int shape[rank] = {Dims...};
  static constexpr int cols = shape[rank - 1];
  static constexpr int rows = size / cols;
  static constexpr int per_thread = size >= kThreads ? size / kThreads : 1;
  static constexpr int vec = per_thread < 4 ? per_thread : 4;
  IRIS_HD static int index(int j) {
    return (j / vec) * (kThreads * vec) + thread_index() * vec + (j % vec);
  }
  // Small tiles leave threads beyond size idle.
  IRIS_HD static bool active() { return size >= kThreads || thread_index() < size; }
};

template <class L> inline constexpr bool is_blocked = false;
template <int... Dims> inline constexpr bool is_blocked<Blocked<Dims...>> = true;

}  // namespace iris
