// Loads and stores of scalars and tiles, with masks and `other`, and checked
// mode's checks in front of every access (the rules: iris/checked.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/device.hpp"
#include "iris/ops/block.hpp"
#include "iris/ops/store_nvidia.hpp"
#include "iris/types/checked.hpp"
#include "iris/types/tile.hpp"

namespace iris {

struct NoMask {};
struct NoOther {};

template <class M>
IRIS_HD bool mask_at(const M& mask, int j) {
  if constexpr (std::is_same_v<M, NoMask>) return true;
  else return elem(mask, j);
}
template <class T, class O>
IRIS_HD T other_at(const O& other, int j) {
  if constexpr (std::is_same_v<O, NoOther>) return T{};
  else return static_cast<T>(elem(other, j));
}

// The element type that a pointer or a pointer tile addresses.
template <class P>
struct pointee {
  using type = std::remove_cv_t<std::remove_pointer_t<typename P::value_type>>;
};
template <class T>
struct pointee<T*> {
  using type = std::remove_cv_t<T>;
};
template <class P>
using pointee_t = typename pointee<P>::type;

// Calls f(p) for every element pointer of this thread that the access touches.
// Whether p is a multiple of Bytes: what a pipelined loop checks of its
// copies' pointers before it takes their runs to be aligned (ops/copy_async.hpp).
template <int Bytes, class T>
IRIS_HD bool aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % Bytes == 0;
}

template <class P, class M, class F>
IRIS_HD void for_each_active(const P& ptr, const M& mask, F f) {
  if constexpr (std::is_pointer_v<P>) {
    if (mask_at(mask, 0)) f(ptr);
  } else {
    using L = common_layout_t<P, M>;
    if (!L::active()) return;
    for (int j = 0; j < L::per_thread; ++j)
      if (mask_at(mask, j)) f(ptr[j]);
  }
}

// How an operation touches memory. Remote accesses (ops/transport.hpp) may
// reach far ranks, which the others may not.
enum class Access { load, store, atomic, remote };

// The reductions of check_memory, as named types so that every access of every
// kernel shares one instantiation of block_reduce (each one reserves its own
// shared memory on the GPU).
struct LowerAddress {
  IRIS_HD std::uintptr_t operator()(std::uintptr_t a, std::uintptr_t b) const { return a < b ? a : b; }
};
struct HigherAddress {
  IRIS_HD std::uintptr_t operator()(std::uintptr_t a, std::uintptr_t b) const { return a < b ? b : a; }
};

// Checked builds, in front of every access: the bounds of the whole access (its
// lowest and highest active elements, over all threads of the instance; the rule
// is in iris/checked.hpp), on the CPU that it is near unless it is remote, then,
// for plain loads and stores, each element against the target's race detector
// (the CPU's; none on the GPU). Every thread of the
// instance calls it, before any early return. Unchecked builds compile it to
// nothing.
template <Access A, class C, class P, class M = NoMask>
IRIS_HD void check_memory(const C& check, const P& ptr, const M& mask = {}) {
  if constexpr (is_checked<C>) {
    std::uintptr_t lowest = UINTPTR_MAX, highest = 0;
    for_each_active(ptr, mask, [&](const auto* p) {
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      lowest = a < lowest ? a : lowest;
      highest = a > highest ? a : highest;
    });
    if constexpr (!std::is_pointer_v<P>) {
      lowest = block_reduce<std::uintptr_t>(lowest, LowerAddress{});
      highest = block_reduce<std::uintptr_t>(highest, HigherAddress{});
    }
    if (lowest > highest) return;  // no active element
    const Program& program = check.program;
    check_access(program.ctx, reinterpret_cast<const void*>(lowest), reinterpret_cast<const void*>(highest),
                 sizeof(pointee_t<P>), check.file, check.line, program.linear_id());
#if !IRIS_GPU
    // The CPU target's worlds of several nodes (the GPU's are one node).
    if constexpr (A != Access::remote)
      detail::check_near(program.ctx, reinterpret_cast<const void*>(lowest), sizeof(pointee_t<P>), check.file,
                         check.line, program.linear_id());
#endif
    if constexpr (A == Access::load || A == Access::store) {
      for_each_active(ptr, mask, [&](const auto* p) {
        detail::race_check(program.ctx, p, sizeof(pointee_t<P>), A == Access::store, check.file, check.line,
                           program.linear_id());
      });
    }
  }
}


// Bytes that one vector access moves: a thread's run of `vec` elements of
// layout L, when that is a size the hardware loads in one instruction.
template <class T, class L>
constexpr bool vector_access = sizeof(T) * L::vec <= 16 && is_tile_size(sizeof(T) * L::vec) && L::vec > 1;

template <class T, int V>
struct alignas(sizeof(T) * V) Chunk {
  T x[V];
};

// What the compiler has proved of an access's pointers: nothing, or that
// they advance by one element along each row (base + rows * ld + columns);
// and of its mask: nothing, or that along each row it holds on one run of
// consecutive columns (rows < M && cols < N). copy_async
// (ops/copy_async.hpp) takes both, store the first.
struct AnyPointers {};
struct ContiguousRows {};
struct AnyMask {};
struct RowIntervals {};

// The layout in which generated code computes the pointers and the mask of
// a store of dot's result (of layout L, 2-byte elements) through contiguous
// rows: on an NVIDIA GPU whose fragments the store passes through shared
// memory (ops/store_nvidia.hpp), the runs of rows each thread writes
// (FragmentRows<L>); L elsewhere.
template <class L>
struct rows_of_layout {
  using type = L;
};
template <class L>
  requires(IRIS_NVIDIA_GPU != 0 && is_mma_acc<L>)
struct rows_of_layout<L> {
  using type = std::conditional_t<L::Grid::NI % 4 == 0, FragmentRows<L>, L>;
};
template <class L>
using RowsOf = typename rows_of_layout<L>::type;

// A pointer tile's elements of this thread, in runs of its layout's `vec`
// consecutive elements where the tile is contiguous (single elements where it
// is not). A run that the hardware moves in one vector access (vector_access),
// aligned to its size and all of it active and unmasked, goes whole to
// `on_run(first, c)`: it starts at element c, whose address is `first`. The
// other elements go one at a time to `on_element(p, j, on)`: element j, at
// p, `on` telling whether it is active and unmasked. Load and store share it,
// so that both take the vector path under the same conditions.
//
// Known = ContiguousRows (the pointers advance by one element along each
// row) in a layout of row heads (RowHeads: dot's accumulator on an NVIDIA
// GPU) reads only the pointers of the rows' heads and places each run at its
// column after its head, so that the compiler computes one pointer a row, not
// one an element (128 of them a thread at 128 x 256).
template <class Known = AnyPointers, class P, class M, class OnRun, class OnElement>
IRIS_HD void for_each_run(const P& ptr, const M& mask, OnRun on_run, OnElement on_element) {
  using T = std::remove_pointer_t<typename P::value_type>;
  using L = common_layout_t<P, M>;
  constexpr bool along_rows = std::is_same_v<Known, ContiguousRows> && RowHeads<L>;
  constexpr bool vectors = (is_contig<P> || along_rows) && vector_access<T, L>;
  constexpr int V = is_contig<P> || along_rows ? L::vec : 1;
  const bool active = L::active();
  bool aligned = false;
  if constexpr (vectors && !along_rows)
    aligned = reinterpret_cast<uintptr_t>(ptr.base) % (sizeof(T) * V) == 0;
  // Unrolled (IRIS_UNROLL): the callers index register tiles by c + k.
  IRIS_UNROLL
  for (int c = 0; c < L::per_thread; c += V) {
    T* first = nullptr;
    if constexpr (along_rows) {
      T* const head = ptr[L::row_head(c)];
      first = head + L::column_after_head(c);
      // A run starts a multiple of V columns after its head: aligned where the head is.
      aligned = reinterpret_cast<uintptr_t>(head) % (sizeof(T) * V) == 0;
    }
    if constexpr (vectors) {
      bool all = active;
      IRIS_UNROLL
      for (int k = 0; k < V; ++k) all = all && mask_at(mask, c + k);
      if (aligned && all) {
        on_run(along_rows ? first : ptr[c], c);
        continue;
      }
    }
    IRIS_UNROLL
    for (int k = 0; k < V; ++k) on_element(along_rows ? first + k : ptr[c + k], c + k, active && mask_at(mask, c + k));
  }
}

template <class P, class M = NoMask, class O = NoOther, class C = Unchecked, class Known = AnyPointers>
IRIS_HD auto load(const P& ptr, const M& mask = {}, const O& other = {}, const C& check = {}, Known = {}) {
  check_memory<Access::load>(check, ptr, mask);
  using T = pointee_t<P>;
  if constexpr (std::is_pointer_v<P>) {
    if (!mask_at(mask, 0)) return other_at<T>(other, 0);
    return *ptr;
  } else {
    using L = common_layout_t<P, M, O>;
    Tile<T, P::size, L> out;
    for_each_run<Known>(
        ptr, mask,
        [&](const auto* first, int c) {
          constexpr int V = L::vec;
          const Chunk<T, V> values = *reinterpret_cast<const Chunk<T, V>*>(first);
          IRIS_UNROLL
          for (int k = 0; k < V; ++k) out.v[c + k] = values.x[k];
        },
        [&](const auto* p, int j, bool on) {
          out.v[j] = other_at<T>(other, j);
          if (on) out.v[j] = *p;
        });
    return out;
  }
}

// A store of dot's result (2-byte elements) whose pointers and mask are in
// RowsOf<its layout>, where that is FragmentRows (an NVIDIA GPU), goes out in
// 16-byte runs of rows (ops/store_nvidia.hpp), which its threads' pairs of
// adjacent elements, 8 rows apart, would not make: ContiguousRows lets each
// run's pointer be its first element's, and RowIntervals its mask be its
// ends'.
template <class P, class X, class M = NoMask, class C = Unchecked, class Known = AnyPointers,
          class KnownMask = AnyMask>
IRIS_HD void store(const P& ptr, const X& value, const M& mask = {}, const C& check = {}, Known = {}, KnownMask = {}) {
  check_memory<Access::store>(check, ptr, mask);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    single([&] {
      if (!mask_at(mask, 0)) return;
      *ptr = static_cast<T>(value);
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    if constexpr (is_fragment_rows<layout_of<P>>) {
      using Rows = common_layout_t<P, M>;
      static_assert(std::is_same_v<Rows, RowsOf<layout_of<X>>> && std::is_same_v<Known, ContiguousRows> &&
                        sizeof(T) == 2,
                    "store: pointers in FragmentRows store fragments of 2-byte elements through contiguous rows");
#if defined(__CUDA_ARCH__)
      constexpr int V = Rows::vec;
      detail::store_fragment_rows<T, layout_of<X>>(
          [&](int j) { return static_cast<T>(elem(value, j)); }, [&](int run) { return ptr[V * run]; },
          [&](int run) {
            if constexpr (std::is_same_v<KnownMask, RowIntervals>) {
              return mask_at(mask, V * run) && mask_at(mask, V * run + V - 1);
            } else {
              bool all = true;
              IRIS_UNROLL
              for (int k = 0; k < V; ++k) all = all && mask_at(mask, V * run + k);
              return all;
            }
          },
          [&](int run, int k) { return mask_at(mask, V * run + k); });
#endif
    } else {
      using L = common_layout_t<P, X, M>;
      for_each_run<Known>(
          ptr, mask,
          [&](auto* first, int c) {
            constexpr int V = L::vec;
            Chunk<T, V> values;
            IRIS_UNROLL
            for (int k = 0; k < V; ++k) values.x[k] = static_cast<T>(elem(value, c + k));
            *reinterpret_cast<Chunk<T, V>*>(first) = values;
          },
          [&](auto* p, int j, bool on) {
            if (on) *p = static_cast<T>(elem(value, j));
          });
    }
  }
}

}  // namespace iris
