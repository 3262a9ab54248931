// Asynchronous copies of tiles from global memory into shared-memory stages
// (types/shared.hpp): how a pipelined K loop feeds dot. Generated code, for a
// ring of S stages filled L = S - 2 iterations ahead, issues the first L
// stages' copies before the loop, and in each iteration
//
//   wait_async<L - 1>();              this iteration's stage has arrived,
//                                     and every thread is past the last
//                                     iteration's wait_dots
//   acc = dot(x_stages[i % S], y_stages[i % S], acc, Pipelined{});
//   wait_dots<1>(acc);                the last iteration's dot is done
//   copy_async(x_stages[(i + L) % S], ptrs, mask, other);  ...
//   commit_async();                   the copies of one iteration: one group
//
// so that L stages are in flight while the tensor cores work on the rest,
// and the tensor cores go from one iteration's dot to the next while the
// threads issue the copies. The stage refilled was read by the dots of
// iteration i - 2, which every thread has waited for.
//
//   copy_async(dst, ptrs, mask, other, check)
//       element (r, c) of the pointer tile ptrs (masked off: `other`) to
//       element (r, c) of dst. On an NVIDIA GPU of sm_80 or later, each run of
//       a thread's consecutive elements (the layout's vec) that is contiguous
//       in memory, aligned and wholly unmasked goes with one cp.async of 4, 8
//       or 16 bytes (ops/copy_async_nvidia.hpp); the rest, and every element
//       on other targets, is loaded and stored at once.
//   copy_async(dst, ptrs, mask, other, check, ContiguousRows{})
//       the same, where the compiler has proved that ptrs advances by one
//       element along each row (base + rows * ld + columns): a run's pointer
//       is its first element's plus its place, so no other element of ptrs
//       is read, and the C++ compiler drops their arithmetic.
//   copy_async(dst, ptrs, mask, other, check, known, RowIntervals{})
//       the same, where the compiler has proved that along each row the mask
//       holds on one run of consecutive columns (rows < M && cols < K): a
//       run of the copy is wholly unmasked where its first and last elements
//       are, so no other element of the mask is read on the cp.async path.
//   copy_async(dst, ptrs, mask, other, check, ContiguousRows{}, known_mask, std::true_type{})
//       the same, where the compiler has also checked, before the loop, that
//       every run of 16 bytes is aligned and wholly masked on or off (K a
//       multiple of 8 for bf16 tiles): a run takes one cp.async where its
//       first element is unmasked and is `other` where it is not. Nothing
//       else is tested, and there is no element-by-element path, whose
//       per-element masks and pointers would hold registers across the loop.
//       With std::false_type, what the compiler could not check, it is the
//       call without it: generated code instantiates the loop with both
//       (a Specialize statement, docs/architecture.md).
//   commit_async()    closes this thread's group of copies;
//   wait_async<N>()   waits until at most N of this thread's groups are in
//                     flight, then synchronises the instance: what every
//                     thread copied before is visible to all, and every
//                     thread has finished reading what it read before.
//   wait_dots<N>(acc...)
//                     waits until at most N of this thread's pipelined dots
//                     (dot(..., Pipelined{}), ops/dot.hpp) are in flight and
//                     settles the accumulators acc... that they write:
//                     Hopper's wgmma may still be writing them, and reading
//                     the stages they read. Elsewhere dots finish before
//                     they return, and it does nothing.
//
// Checked mode checks the copy's source like a load's.
#pragma once

#include <cstring>
#include <type_traits>

#include "iris/ops/block.hpp"
#include "iris/ops/memory.hpp"
#include "iris/types/shared.hpp"
#include "iris/types/tile.hpp"

#if IRIS_NVIDIA_GPU
#include "iris/ops/copy_async_nvidia.hpp"
#include "iris/ops/wgmma_nvidia.hpp"
#endif
#ifndef IRIS_WGMMA_SM90A
#define IRIS_WGMMA_SM90A 0
#endif
#ifndef IRIS_CP_ASYNC
#define IRIS_CP_ASYNC 0
#endif

namespace iris {

namespace detail {

// The elements of a run: 16 bytes (one cp.async) where the layout's vec of T
// makes them, or 4 or 8.
template <class T, class L>
constexpr int run_bytes = static_cast<int>(sizeof(T)) * L::vec;

// Whether runs of the layout's vec go with one cp.async: on sm_80 and later,
// runs in one row of 4, 8 or 16 bytes.
template <class T, class L, int C>
constexpr bool runs_by_cp_async =
    IRIS_CP_ASYNC && C % L::vec == 0 && (run_bytes<T, L> == 4 || run_bytes<T, L> == 8 || run_bytes<T, L> == 16);

// Where a thread's runs of the copy layout land in a shared tile. With
// `threads` threads copying runs of `vec` elements, a thread's run i is
// threads * vec elements after its run 0 in the tile's flat order: a whole
// number of rows when C divides that, and when those rows are also a whole
// number of swizzle periods (rows_per_line * chunks_per_row rows), run i
// lands a fixed distance after run 0 in the swizzled tile as well.
// run_stride_in_tile is that distance in elements, or 0 where the runs do
// not fall so. With it a thread computes one swizzled offset per copy instead
// of one per run: in a persistent kernel's K loop the compiler left the
// per-run offsets (an XOR, masks and shifts each, the same every iteration)
// inside the loop, 41% more instructions than the same loop in a kernel of
// one tile.
template <class T, int R, int C>
constexpr int run_stride_in_tile(int threads, int vec) {
  using Tile = SharedTile<T, R, C>;
  const int step = threads * vec;
  const int period = Tile::rows_per_line * Tile::chunks_per_row;
  return step % C == 0 && (step / C) % period == 0 ? step / C * Tile::panel : 0;
}

// The stride for this target's threads where the pointers are in the copy
// layout (whose runs are spread so), 0 for any other layout.
template <class T, int R, int C, class L>
constexpr int run_stride() {
  if constexpr (std::is_same_v<L, CopyLayout<T, R, C>>)
    return run_stride_in_tile<T, R, C>(kThreads, L::vec);
  else
    return 0;
}

// The shared-memory address of the run at the thread's element j0 (a
// multiple of vec), from run 0's where run_stride allows.
template <class L, class T, int R, int C>
IRIS_HD T* run_in_tile(SharedTile<T, R, C> dst, T* first_run, int j0) {
  if constexpr (constexpr int stride = run_stride<T, R, C, L>(); stride != 0) {
    return first_run + j0 / L::vec * stride;
  } else {
    const int f = L::index(j0);
    return dst.at(flat_row<C>(f), flat_col<C>(f));
  }
}

// Whether every bit of v is zero: the value a zero-filling copy leaves.
template <class T>
IRIS_HD bool bits_are_zero(const T& v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  for (unsigned char b : bytes)
    if (b) return false;
  return true;
}

// copy_async's general path: each run that is contiguous, aligned and
// unmasked by one cp.async, the rest element by element.
template <class Known, class KnownMask, class T, int R, int C, class P, class M, class O>
IRIS_HD void copy_runs(SharedTile<T, R, C> dst, const P& ptr, const M& mask, const O& other) {
  using L = common_layout_t<P, M, O>;
  constexpr bool rows = std::is_same_v<Known, ContiguousRows>;
  constexpr int V = L::vec;
  [[maybe_unused]] constexpr int bytes = run_bytes<T, L>;
  constexpr bool async = runs_by_cp_async<T, L, C>;
  // Runs of V elements stay within a row (C % V == 0), so that contiguous
  // rows make each run contiguous.
  constexpr int step = (async || rows) && C % V == 0 ? V : 1;
  [[maybe_unused]] T* const first_run = dst.at(flat_row<C>(L::index(0)), flat_col<C>(L::index(0)));
  IRIS_UNROLL
  for (int j0 = 0; j0 < L::per_thread; j0 += step) {
    const T* first = ptr[j0];
    if constexpr (async) {
#if IRIS_CP_ASYNC
      // A run lies in one row: with RowIntervals its ends decide for it.
      constexpr bool intervals = std::is_same_v<KnownMask, RowIntervals>;
      bool whole = reinterpret_cast<uintptr_t>(first) % bytes == 0 &&
                   (!intervals || (mask_at(mask, j0) && mask_at(mask, j0 + V - 1)));
      IRIS_UNROLL
      for (int k = 0; k < V; ++k)
        whole = whole && (intervals || mask_at(mask, j0 + k)) && (rows || ptr[j0 + k] == first + k);
      if (whole) {
        cp_async<bytes>(run_in_tile<L>(dst, first_run, j0), first);
        continue;
      }
#endif
    }
    IRIS_UNROLL
    for (int k = 0; k < step; ++k) {
      const int j = j0 + k, f = L::index(j);
      const T* p = rows ? first + k : ptr[j];
      *dst.at(flat_row<C>(f), flat_col<C>(f)) = mask_at(mask, j) ? *p : other_at<T>(other, j);
    }
  }
}

// copy_async's path for runs of 16 bytes known to be aligned and wholly
// masked on or off: the first element's mask decides for the run. A run is
// one 16-byte chunk of the shared tile; a masked-off one is zero-filled by
// the copy where `other` is zero (the usual case, which the compiler sees),
// and written whole otherwise.
template <class T, int R, int C, class P, class M, class O>
IRIS_HD void copy_uniform_runs(SharedTile<T, R, C> dst, const P& ptr, const M& mask, const O& other) {
#if IRIS_CP_ASYNC
  using L = common_layout_t<P, M, O>;
  T* const first_run = dst.at(flat_row<C>(L::index(0)), flat_col<C>(L::index(0)));
  IRIS_UNROLL
  for (int j0 = 0; j0 < L::per_thread; j0 += L::vec) {
    T* chunk = run_in_tile<L>(dst, first_run, j0);
    const bool on = mask_at(mask, j0);
    T fill[L::vec];
    bool zeros = true;
    IRIS_UNROLL
    for (int k = 0; k < L::vec; ++k) {
      fill[k] = other_at<T>(other, j0 + k);
      zeros = zeros && bits_are_zero(fill[k]);
    }
    if (on || zeros) {
      cp_async_16_or_zeros(chunk, ptr[j0], on);
    } else {
      uint4 run;
      std::memcpy(&run, fill, sizeof run);
      *reinterpret_cast<uint4*>(chunk) = run;
    }
  }
#else
  (void)dst, (void)ptr, (void)mask, (void)other;
#endif
}

}  // namespace detail

template <class T, int R, int C, class P, class M = NoMask, class O = NoOther, class K = Unchecked,
          class Known = AnyPointers, class KnownMask = AnyMask, class UniformRuns = std::false_type>
IRIS_HD void copy_async(SharedTile<T, R, C> dst, const P& ptr, const M& mask = {}, const O& other = {},
                        const K& check = {}, Known = {}, KnownMask = {}, UniformRuns = {}) {
  static_assert(std::is_same_v<pointee_t<P>, T>, "copy_async: the pointers must address the stage's element type");
  using L = common_layout_t<P, M, O>;
  static_assert(L::rows == R && L::cols == C, "copy_async: the pointer tile must have the stage's shape");
  check_memory<Access::load>(check, ptr, mask);
  if (!L::active()) return;
  if constexpr (UniformRuns::value && std::is_same_v<Known, ContiguousRows> && detail::runs_by_cp_async<T, L, C> &&
                detail::run_bytes<T, L> == 16) {
    detail::copy_uniform_runs(dst, ptr, mask, other);
  } else {
    detail::copy_runs<Known, KnownMask>(dst, ptr, mask, other);
  }
}

IRIS_HD inline void commit_async() {
#if IRIS_CP_ASYNC
  detail::cp_async_commit();
#endif
}

template <int Pending>
IRIS_HD void wait_async() {
#if IRIS_CP_ASYNC
  detail::cp_async_wait<Pending>();
#endif
  detail::sync_instance();
}

template <int Pending, class... Accumulators>
IRIS_HD void wait_dots(Accumulators&... accumulators) {
#if IRIS_WGMMA_SM90A
  detail::wgmma_wait<Pending>();
  (
      [&] {
        IRIS_UNROLL
        for (int j = 0; j < layout_of<Accumulators>::per_thread; ++j) detail::wgmma_fence_register(accumulators.v[j]);
      }(),
      ...);
#else
  ((void)accumulators, ...);
#endif
}

}  // namespace iris
