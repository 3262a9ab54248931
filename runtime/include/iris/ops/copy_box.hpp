// Copies of boxes: a pipelined K loop's copies whose tile is a box of a
// row-major matrix, rows row .. row + R - 1 and columns col .. col + C - 1,
// reading zero at rows >= rows or columns >= cols (the loads of tile_product,
// iris/gemm.iris). The compiler proves that form (pass_pipeline_loads.cpp) and,
// where every ring of the loop is filled by such copies, writes:
//
//   bind_box<i>(uniform_runs, x_stages, base, rows, cols, ld); before the loop,
//                                                   for its i-th ring
//   copy_async(x_stages[s], box_at(x_stages, s, row, col), ptrs, mask, ...);
//   wait_boxes<L - 1>(uniform_runs, s, x_stages, ...); in wait_async's place
//
// On sm_90a, where the loop's copies are uniform (16-byte runs, a 16-byte
// aligned base: the Specialize flag, copy_async.hpp) and the element is 2
// bytes, the box comes by TMA: bind_box finds the matrix's tensor map (made
// once per instance while the matrix stays the same); one thread issues each
// stage's boxes (a box per 128-byte panel of the SharedTile, whose swizzle is
// TMA's), and every thread waits on the stage's barrier. The barriers and
// their phases belong to the instance (BoxState, set up by kernel_entry), so
// that a loop run once per tile sets up nothing: it synchronises once before
// its first copies (in its first ring's bind_box, where that ring goes by TMA).
// No thread computes a pointer or a mask, and the C++ compiler drops the
// copy_async arguments' arithmetic. Everywhere else the box is ignored:
// copy_async copies through the pointers as before, bind_box does nothing and
// wait_boxes is wait_async.
#pragma once

#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/box_limits.hpp"
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
  // The tensor map, and the stage's barrier, where the copies go by TMA.
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
struct RingByTma<SharedStages<T, R, C, S>, UniformRuns>
    : std::bool_constant<by_tma<T, R, C, UniformRuns> && S <= kBoxStages> {};

template <class... Args>
struct LastOf;
template <class A>
struct LastOf<A> {
  using type = A;
};
template <class A, class... Rest>
struct LastOf<A, Rest...> : LastOf<Rest...> {};

// At the start of an instance of a kernel with pipelined loops
// (kernel_entry): no slot of maps yet, and the barriers of every ring a loop
// may have, idle, each stage's next phase of parity 0. Synchronises the
// instance, so that every thread sees them initialised.
IRIS_HD inline void boxes_begin() {
#if IRIS_TMA
  BoxState& state = box_state();
  if (threadIdx.x == 0) {
    state.slot = -1;
    for (int ring = 0; ring < kBoxRings; ++ring)
      for (int s = 0; s < kBoxStages; ++s) {
        barrier_init(&state.barrier[ring][s], 1);
        state.parity[ring][s] = 0;
      }
    barrier_init_fence();
  }
  sync_instance();
#endif
}

// At its end: the slot freed.
IRIS_HD inline void boxes_end() {
#if IRIS_TMA
  if (threadIdx.x == 0 && box_state().slot >= 0) atomicExch(&box_slot_taken[box_state().slot], 0u);
#endif
}

#if IRIS_TMA
// The barrier of stage `stage` of a loop's ring `ring` (the index bind_box
// gave it), and the parity of that barrier's next phase.
__device__ inline unsigned long long* stage_barrier(int ring, int stage) { return &box_state().barrier[ring][stage]; }
__device__ inline unsigned char& stage_parity(int ring, int stage) { return box_state().parity[ring][stage]; }
#endif

}  // namespace detail

// Before a pipelined loop whose copies into `ring`, its Index-th, are boxes
// of the matrix at `base` (rows x cols, rows ld elements apart). Touches no
// barrier: those are the instance's (boxes_begin), idle between loops. The
// first ring's synchronises the instance where it goes by TMA (a loop whose
// first ring does not, but a later one does, starts its copies without).
template <int Index, class UniformRuns, class T, int R, int C, int S>
IRIS_HD void bind_box(UniformRuns, const SharedStages<T, R, C, S>& ring, const T* base, int rows, int cols, int ld) {
  static_assert(Index < detail::kBoxRings, "a loop's boxes have more rings than ops/copy_box.hpp keeps barriers for");
  ring.box_ring = Index;
  if constexpr (detail::RingByTma<SharedStages<T, R, C, S>, UniformRuns>::value) {
#if IRIS_TMA
    // Warp 0 only: its thread 0 issues the copies, and the map's fences
    // make it ready for this warp's.
    if (threadIdx.x < 32) {
      __syncwarp();
      detail::BoxState& state = detail::box_state();
      if (state.slot < 0) {
        if (threadIdx.x == 0) {
          unsigned sm;
          asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
          int slot = static_cast<int>(sm * 32 % detail::kBoxSlots);
          while (atomicCAS(&detail::box_slot_taken[slot], 0u, 1u) != 0u) slot = (slot + 1) % detail::kBoxSlots;
          state.slot = slot;
          state.next = 0;
          for (int e = 0; e < detail::kBoxMapsPerSlot; ++e) state.base[e] = nullptr;
        }
        __syncwarp();
      }
      constexpr int panel = SharedTile<T, R, C>::panel;
      detail::TensorMap* maps = &detail::box_map_pool[state.slot * detail::kBoxMapsPerSlot];
      int entry = -1;
      for (int e = 0; e < detail::kBoxMapsPerSlot; ++e)
        if (state.base[e] == base && state.rows[e] == rows && state.cols[e] == cols && state.ld[e] == ld &&
            state.box[e] == R * 1024 + panel)
          entry = e;
      __syncwarp();
      if (entry < 0) {
        entry = state.next;
        constexpr int swizzle = SharedTile<T, R, C>::panel_row_bytes == 128  ? 3
                                : SharedTile<T, R, C>::panel_row_bytes == 64 ? 2
                                                                             : 1;
        detail::make_tensor_map<detail::tma_element_type<T>, swizzle>(&maps[entry], state.scratch, base, rows, cols,
                                                                       ld, sizeof(T), R, panel);
        if (threadIdx.x == 0) {
          state.next = (entry + 1) % detail::kBoxMapsPerSlot;
          state.base[entry] = base;
          state.rows[entry] = rows;
          state.cols[entry] = cols;
          state.ld[entry] = ld;
          state.box[entry] = R * 1024 + panel;
        }
        __syncwarp();
      }
      ring.box_map = &maps[entry];
    }
    // The loop's copies start once every thread is done with what came
    // before it (a tile's epilogue): issued earlier, while the other warps
    // still stored the last tile, they made a persistent GEMM 4-6% slower
    // (docs/performance.md).
    if constexpr (Index == 0) detail::sync_instance();
#endif
  } else {
    (void)base, (void)rows, (void)cols, (void)ld;
  }
}

// Stage `stage` of `ring`, at (row, col) of the matrix bind_box named.
template <class T, int R, int C, int S>
IRIS_HD BoxAt<SharedStages<T, R, C, S>> box_at(const SharedStages<T, R, C, S>& ring, [[maybe_unused]] int stage, int row,
                                               int col) {
#if IRIS_TMA
  if constexpr (S <= detail::kBoxStages)
    return {ring.box_map, detail::stage_barrier(ring.box_ring, stage), row, col};
#endif
  return {ring.box_map, nullptr, row, col};
}

// copy_async(dst, ptrs, mask, other, check, known..., uniform_runs) with the box
// that the same copy is: by TMA where it can (one thread issues it), else
// through the pointers.
template <class T, int R, int C, class Ring, class... Args>
IRIS_HD void copy_async(SharedTile<T, R, C> dst, const BoxAt<Ring>& box, const Args&... args) {
  using UniformRuns = typename detail::LastOf<Args...>::type;
  if constexpr (detail::RingByTma<Ring, UniformRuns>::value) {
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
// barrier's phase of the parity BoxState keeps) and synchronises the
// instance, with no cp.async group to wait for and no proxy fence (TMA writes
// through the async proxy that wgmma reads). Thread 0 then flips the stage's
// parity: every thread has read it (before the synchronisation), and reads it
// next at the stage's next wait, after another (a ring has three stages at
// least, and a loop ends with wait_async<0>'s). Each stage's parity is a byte
// of its own, so that no thread reads what thread 0 writes meanwhile.
template <int Pending, class UniformRuns, class... Rings>
IRIS_HD void wait_boxes(UniformRuns, [[maybe_unused]] int stage, const Rings&... rings) {
  // visit(ring) for each ring whose copies went by TMA.
  [[maybe_unused]] const auto each_tma_ring = [&](auto visit) {
    (
        [&] {
          if constexpr (detail::RingByTma<Rings, UniformRuns>::value) visit(rings);
        }(),
        ...);
  };
#if IRIS_TMA
  each_tma_ring([&](const auto& ring) {
    detail::barrier_wait(detail::stage_barrier(ring.box_ring, stage), detail::stage_parity(ring.box_ring, stage));
  });
#endif
  if constexpr ((detail::RingByTma<Rings, UniformRuns>::value && ...)) {
    detail::sync_instance();
  } else {
    wait_async<Pending>();  // the rings whose copies went through the pointers
  }
#if IRIS_TMA
  if (threadIdx.x == 0) each_tma_ring([&](const auto& ring) { detail::stage_parity(ring.box_ring, stage) ^= 1; });
#endif
}

}  // namespace iris
