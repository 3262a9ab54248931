// Copies of boxes: a pipelined K loop's copies whose tile is a box of a
// row-major matrix, rows row .. row + R - 1 and columns col .. col + C - 1,
// reading zero at rows >= rows or columns >= cols (the loads of tile_product,
// iris/gemm.iris). The compiler proves that form (pass_pipeline_loads.cpp) and,
// where every ring of the loop is filled by such copies, writes:
//
//   bind_box(uniform_runs, x_stages, base, rows, cols, ld);   before the loop
//   copy_async(x_stages[s], box_at(x_stages, s, row, col), ptrs, mask, ...);
//   wait_boxes<L - 1>(uniform_runs, phase, s, x_stages, ...); in wait_async's place
//
// On sm_90a, where the loop's copies are uniform (16-byte runs, a 16-byte
// aligned base: the Specialize flag, copy_async.hpp) and the element is 2
// bytes, the box comes by TMA: bind_box makes the matrix's tensor map (once
// per instance while the matrix stays the same) and initialises one barrier a
// stage; one thread issues each stage's boxes (a box per 128-byte panel of the
// SharedTile, whose swizzle is TMA's), and every thread waits on the stage's
// barrier, of parity `phase` (how many times the ring has gone round, mod 2).
// No thread computes a pointer or a mask, and the C++ compiler drops the
// copy_async arguments' arithmetic. Everywhere else the box is ignored:
// copy_async copies through the pointers as before, bind_box does nothing
// and wait_boxes is wait_async.
#pragma once

#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/copy_async.hpp"
#include "iris/types/shared.hpp"

#if IRIS_NVIDIA_GPU
#include "iris/ops/copy_box_nvidia.hpp"
#endif
#ifndef IRIS_TMA
#define IRIS_TMA 0
#endif

namespace iris {

template <class Ring>
struct BoxAt {
  const void* map;
  unsigned long long* barrier;
  int row, col;
};

namespace detail {

template <class T>
inline constexpr int tma_element_type = std::is_same_v<T, bfloat16> ? 10 : std::is_same_v<T, half> ? 6 : -1;

// Whether copies into SharedTile<T, R, C> go by TMA: a 2-byte element, boxes of
// at most 256 rows whose rows are whole swizzle lines (8 rows of 128-byte
// panels, 1024 bytes), uniform runs.
template <class T, int R, int C, class UniformRuns>
inline constexpr bool by_tma = IRIS_TMA && UniformRuns::value && tma_element_type<T> >= 0 && R <= 256 && R % 8 == 0 &&
                               SharedTile<T, R, C>::panel_row_bytes >= 32 &&
                               (sizeof(T) * R * C) % 1024 == 0;

template <class Ring, class UniformRuns>
struct RingByTma;
template <class T, int R, int C, int S, class UniformRuns>
struct RingByTma<SharedStages<T, R, C, S>, UniformRuns> : std::bool_constant<by_tma<T, R, C, UniformRuns>> {};

template <class... Args>
struct LastOf;
template <class A>
struct LastOf<A> {
  using type = A;
};
template <class A, class... Rest>
struct LastOf<A, Rest...> : LastOf<Rest...> {};

// At an instance's start and end (kernel_entry): no slot yet; the slot freed.
IRIS_HD inline void box_maps_begin() {
#if IRIS_TMA
  if (threadIdx.x == 0) box_map_cache().slot = -1;
#endif
}

IRIS_HD inline void box_maps_end() {
#if IRIS_TMA
  if (threadIdx.x == 0 && box_map_cache().slot >= 0) atomicExch(&box_slot_taken[box_map_cache().slot], 0u);
#endif
}

}  // namespace detail

// Before a pipelined loop whose copies into `ring` are boxes of the matrix at
// `base` (rows x cols, rows ld elements apart).
template <class UniformRuns, class T, int R, int C, int S>
IRIS_HD void bind_box(UniformRuns, const SharedStages<T, R, C, S>& ring, const T* base, int rows, int cols, int ld) {
  if constexpr (detail::by_tma<T, R, C, UniformRuns>) {
#if IRIS_TMA
    if (threadIdx.x < 32) {
      __syncwarp();
      detail::BoxMapCache& cache = detail::box_map_cache();
      if (cache.slot < 0) {
        int slot = 0;
        if (threadIdx.x == 0) {
          unsigned sm;
          asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
          slot = static_cast<int>(sm * 32 % detail::kBoxSlots);
          while (atomicCAS(&detail::box_slot_taken[slot], 0u, 1u) != 0u) slot = (slot + 1) % detail::kBoxSlots;
          cache.slot = slot;
          cache.next = 0;
          for (int e = 0; e < detail::kBoxMapsPerSlot; ++e) cache.base[e] = nullptr;
        }
        __syncwarp();
      }
      constexpr int panel = SharedTile<T, R, C>::panel;
      int entry = -1;
      for (int e = 0; e < detail::kBoxMapsPerSlot; ++e)
        if (cache.base[e] == base && cache.rows[e] == rows && cache.cols[e] == cols && cache.ld[e] == ld &&
            cache.box[e] == R * 1024 + panel)
          entry = e;
      __syncwarp();
      detail::TensorMap* map = nullptr;
      if (entry < 0) {
        entry = cache.next;
        map = &detail::box_map_pool[cache.slot * detail::kBoxMapsPerSlot + entry];
        constexpr int swizzle = SharedTile<T, R, C>::panel_row_bytes == 128  ? 3
                                : SharedTile<T, R, C>::panel_row_bytes == 64 ? 2
                                                                             : 1;
        detail::make_tensor_map<detail::tma_element_type<T>, swizzle>(map, cache.scratch, base, rows, cols, ld,
                                                                       sizeof(T), R, panel);
        if (threadIdx.x == 0) {
          cache.next = (entry + 1) % detail::kBoxMapsPerSlot;
          cache.base[entry] = base;
          cache.rows[entry] = rows;
          cache.cols[entry] = cols;
          cache.ld[entry] = ld;
          cache.box[entry] = R * 1024 + panel;
        }
        __syncwarp();
      } else {
        map = &detail::box_map_pool[cache.slot * detail::kBoxMapsPerSlot + entry];
      }
      ring.box_map = map;
    }
    if (threadIdx.x == 0) {
      for (int s = 0; s < S; ++s) detail::barrier_init(ring.barrier(s), 1);
      detail::barrier_init_fence();
    }
    detail::sync_instance();
#endif
  } else {
    (void)ring, (void)base, (void)rows, (void)cols, (void)ld;
  }
}

// Stage `stage` of `ring`, at (row, col) of the matrix bind_box named.
template <class T, int R, int C, int S>
IRIS_HD BoxAt<SharedStages<T, R, C, S>> box_at(const SharedStages<T, R, C, S>& ring, int stage, int row, int col) {
  return {ring.box_map, ring.barrier(stage), row, col};
}

// copy_async(dst, ptrs, mask, other, check, known..., uniform_runs) with the box
// that the same copy is: by TMA where it can (one thread issues it), else
// through the pointers.
template <class T, int R, int C, class Ring, class... Args>
IRIS_HD void copy_async(SharedTile<T, R, C> dst, const BoxAt<Ring>& box, const Args&... args) {
  using UniformRuns = typename detail::LastOf<Args...>::type;
  if constexpr (detail::by_tma<T, R, C, UniformRuns>) {
#if IRIS_TMA
    if (threadIdx.x == 0) {
      constexpr int panel = SharedTile<T, R, C>::panel;
      detail::barrier_expect_bytes(box.barrier, static_cast<unsigned>(sizeof(T) * R * C));
      const auto* map = static_cast<const detail::TensorMap*>(box.map);
      for (int p = 0; p < C / panel; ++p)
        detail::tma_load_2d(dst.base + p * R * panel, map, box.col + p * panel, box.row, box.barrier);
    }
#endif
  } else {
    (void)box;
    copy_async(dst, args...);
  }
}

// wait_async<Pending>() of a loop whose every ring's copies are boxes: where
// they came by TMA, waits until stage `stage` of each ring has landed (its
// barrier's phase of parity `phase`) and synchronises the instance, with no
// cp.async group to wait for and no proxy fence (TMA writes through the async
// proxy that wgmma reads).
template <int Pending, class UniformRuns, class... Rings>
IRIS_HD void wait_boxes(UniformRuns, int phase, int stage, const Rings&... rings) {
  (
      [&] {
        if constexpr (detail::RingByTma<Rings, UniformRuns>::value) {
#if IRIS_TMA
          detail::barrier_wait(rings.barrier(stage), static_cast<unsigned>(phase));
#endif
        } else {
          (void)rings, (void)phase, (void)stage;
        }
      }(),
      ...);
  if constexpr ((detail::RingByTma<Rings, UniformRuns>::value && ...)) {
    detail::sync_instance();
  } else {
    wait_async<Pending>();  // the rings whose copies went through the pointers
  }
}

}  // namespace iris
