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
//   release_boxes(uniform_runs, s, x_stages, ...);  once the dots that read
//                                                   stage s are done
//   end_boxes(uniform_runs, x_stages, ...);         after the loop
//
// On sm_90a, in a kernel with a copier slice (the same loops with their
// copies only, as bind_copies, copy_box and end_copies, which irisc writes
// beside the program: pass_split_copier.cpp), where the loop's copies are
// uniform (16-byte runs, a 16-byte aligned base: the Specialize flag,
// copy_async.hpp) and the element is 2 bytes, the boxes come by TMA: the
// generated code calls the loop's body with CopierRuns (with_uniform_boxes),
// the copier warpgroup's first thread (past the program's kThreads threads,
// kernel_entry) issues each stage's boxes (a box per 128-byte panel of the
// SharedTile, whose swizzle is TMA's) once every warp of the program has
// released the stage's last ones (its `empty` barrier), and the program's
// threads wait for the stage to land (its `full` barrier). The copier runs
// ahead, into the next tile's first stages while the program still computes
// and stores this one, with no synchronisation of the program's threads. The
// barriers and their phases belong to the instance (BoxState, set up by
// kernel_entry), so that a loop run once per tile sets up nothing, and the
// copier finds the matrix's tensor map (made once per instance while the
// matrix stays the same). No thread of the program computes a pointer or a
// mask, and the C++ compiler drops the copy_async arguments' arithmetic.
// A kernel without a copier slice (one whose box loops run once an instance,
// or whose copies the copier cannot follow), or whose stages leave room for
// a second instance on the multiprocessor (runs_copier, launch_gpu.hpp: its
// slice is not run), gets std::true_type there: its
// thread 0 issues the boxes in copy_async, warp 0 finds the map in bind_box,
// and the program's threads synchronise at each wait_boxes, so that a copy
// waits for every warp to be done with its stage. Everywhere else the box is
// ignored: copy_async copies through the pointers as before, bind_box,
// release_boxes and copy_box do nothing, wait_boxes is wait_async and
// end_boxes wait_async<0>.
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
  // The tensor map where the copies go by TMA, and the ring's index and the
  // stage, whose barriers they wait for and complete.
  const void* map;
  int ring, stage;
  int row, col;
};

// The flag of a loop whose copies are uniform (copy_async.hpp) and whose
// boxes a copier issues: what with_uniform_boxes calls the loop's body with
// on sm_90a where the instance has a copier. Uniform, so that copies through
// the pointers take their uniform path.
struct CopierRuns : std::true_type {};

// The flag of every box loop of an instance whose launch found that all their
// copies may go by TMA (CopierBoxesProgram): a copier issues the boxes of the
// rings that go by TMA at this compilation (by_tma), whatever the runs, and
// the program copies any other ring through the pointers element by element,
// since nothing said that its runs are uniform.
struct CopierBoxes : std::false_type {};

namespace detail {

template <class T>
inline constexpr int tma_element_type = std::is_same_v<T, bfloat16> ? 10 : std::is_same_v<T, half> ? 6 : -1;

// Whether copies into SharedTile<T, R, C> go by TMA: uniform runs (a copier
// issues them where the flag is CopierRuns, the program's thread 0 where it
// is std::true_type), a 2-byte element, boxes of at most 256 rows whose rows
// are whole swizzle lines (8 rows of 128-byte panels, 1024 bytes).
template <class T, int R, int C, class UniformRuns>
inline constexpr bool by_tma = IRIS_TMA && (UniformRuns::value || std::is_same_v<UniformRuns, CopierBoxes>) &&
                               tma_element_type<T> >= 0 && R <= 256 && R % 8 == 0 &&
                               SharedTile<T, R, C>::panel_row_bytes >= 32 &&
                               (sizeof(T) * R * C) % 1024 == 0;

// Whether a copier warpgroup issues a loop's boxes (else the program's
// thread 0 does).
template <class UniformRuns>
inline constexpr bool copier_issues =
    std::is_same_v<UniformRuns, CopierRuns> || std::is_same_v<UniformRuns, CopierBoxes>;

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

#if IRIS_TMA
// Whether the instance has a copier warpgroup: kernel_entry launched it past
// the kThreads threads that run the program. Its first thread issues the
// copies.
__device__ inline bool has_copier() { return blockDim.x > kThreads; }
__device__ inline bool issues_copies() { return threadIdx.x == static_cast<unsigned>(kThreads); }
#endif

// Whether this thread runs the program, not the copier warpgroup.
IRIS_HD inline bool in_program() {
#if IRIS_TMA
  return threadIdx.x < static_cast<unsigned>(kThreads);
#else
  return true;
#endif
}

// At the start of an instance of a kernel with pipelined loops
// (kernel_entry), before its copier warpgroup and its program part: no slot
// of maps yet, and the barriers of every ring a loop may have, idle, each
// one's next phase of parity 0. A stage's full barrier completes on its
// copies' bytes and the arrival of the thread that issues them; its empty one
// on an arrival from each of the program's warps. Synchronises every thread
// of the instance (the copier's too), so that they see them initialised.
IRIS_HD inline void boxes_begin() {
#if IRIS_TMA
  BoxState& state = box_state();
  if (threadIdx.x < kThreads) state.full_phase[threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    state.slot = -1;
    state.empty_phase = 0;
    state.loops_done = 0;
    state.loops_awaited = 0;
    for (int ring = 0; ring < kBoxRings; ++ring) {
      state.ring_at[ring] = 0;
      state.ring_bytes[ring] = 0;
      for (int s = 0; s < kBoxStages; ++s) {
        barrier_init(&state.full[ring][s], 1);
        barrier_init(&state.empty[ring][s], kThreads / 32);
      }
    }
    barrier_init_fence();
  }
  __syncthreads();
#endif
}

// At its end: the slot freed.
IRIS_HD inline void boxes_end() {
#if IRIS_TMA
  if (threadIdx.x == 0 && box_state().slot >= 0) atomicExch(&box_slot_taken[box_state().slot], 0u);
#endif
}

#if IRIS_TMA
// The bit of stage `stage` of a loop's ring `ring` (the index bind_box gave
// it) in a word of phases (BoxState).
__device__ inline uint32_t stage_bit(int ring, int stage) { return 1u << (ring * kBoxStages + stage); }

// Waits for the phase of `barrier` that bit `bit` of `phases` names, and
// moves that bit on to the next.
__device__ inline void wait_phase(unsigned long long* barrier, uint32_t& phases, uint32_t bit) {
  barrier_wait(barrier, (phases & bit) ? 1u : 0u);
  phases ^= bit;
}

// For the copier, before the copies of a loop whose ring `index` covers other
// shared memory than the last loop's ring of that index: waits until the
// program's warps have released every stage that earlier loops filled (the
// same phases the next copies into them wait for, a stage never filled
// passing at once), since the new ring may overlap any of them. A loop run
// once per tile with the same rings waits for nothing here: its copies for
// the next tile go as soon as their own stages are free.
template <class Ring>
__device__ void settle_ring(BoxState& state, int index, const Ring& ring) {
  const uint32_t at = shared_address(ring.base);
  if (state.ring_at[index] == at && state.ring_bytes[index] == Ring::bytes) return;
  const uint32_t released = ~state.empty_phase;
  for (int r = 0; r < kBoxRings; ++r)
    for (int s = 0; s < kBoxStages; ++s) barrier_wait(&state.empty[r][s], (released & stage_bit(r, s)) ? 1u : 0u);
  state.ring_at[index] = at;
  state.ring_bytes[index] = Ring::bytes;
}

// Issues the TMA copies of `box` into `dst` (its stage): their bytes
// complete the stage's `full` barrier.
template <class T, int R, int C, class Ring>
__device__ void load_box(SharedTile<T, R, C> dst, const BoxAt<Ring>& box) {
  unsigned long long* full = &box_state().full[box.ring][box.stage];
  constexpr int panel = SharedTile<T, R, C>::panel;
  barrier_expect_bytes(full, static_cast<unsigned>(sizeof(T) * R * C));
  const auto* map = static_cast<const TensorMap*>(box.map);
  for (int p = 0; p < C / panel; ++p) tma_load_2d(dst.base + p * R * panel, map, box.col + p * panel, box.row, full);
}

// The copier's load_box, once every warp of the program has released the
// stage's last copies (the wait for the phase before the first, of parity 1,
// returns at once).
template <class T, int R, int C, class Ring>
__device__ void issue_box(SharedTile<T, R, C> dst, const BoxAt<Ring>& box) {
  BoxState& state = box_state();
  uint32_t phases = ~state.empty_phase;
  wait_phase(&state.empty[box.ring][box.stage], phases, stage_bit(box.ring, box.stage));
  state.empty_phase = ~phases;
  load_box(dst, box);
}

// In the warp whose thread `leader` issues the copies (the copier's first,
// or the program's thread 0): takes a slot of maps at the instance's first;
// returns the matrix's map, made where the slot has none for it (the map's
// fences make it ready for this warp's copies).
template <class T, int R, int C, int S>
__device__ const void* find_box_map(const SharedStages<T, R, C, S>&, const T* base, int rows, int cols, int ld,
                                    bool leader) {
  __syncwarp();
  BoxState& state = box_state();
  if (state.slot < 0) {
    if (leader) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      int slot = static_cast<int>(sm * 32 % kBoxSlots);
      while (atomicCAS(&box_slot_taken[slot], 0u, 1u) != 0u) slot = (slot + 1) % kBoxSlots;
      state.slot = slot;
      state.next = 0;
      for (int e = 0; e < kBoxMapsPerSlot; ++e) state.base[e] = nullptr;
    }
    __syncwarp();
  }
  constexpr int panel = SharedTile<T, R, C>::panel;
  TensorMap* maps = &box_map_pool[state.slot * kBoxMapsPerSlot];
  int entry = -1;
  for (int e = 0; e < kBoxMapsPerSlot; ++e)
    if (state.base[e] == base && state.rows[e] == rows && state.cols[e] == cols && state.ld[e] == ld &&
        state.box[e] == R * 1024 + panel)
      entry = e;
  __syncwarp();
  if (entry < 0) {
    entry = state.next;
    constexpr int swizzle = SharedTile<T, R, C>::panel_row_bytes == 128  ? 3
                            : SharedTile<T, R, C>::panel_row_bytes == 64 ? 2
                                                                         : 1;
    make_tensor_map<tma_element_type<T>, swizzle>(&maps[entry], state.scratch, base, rows, cols, ld, sizeof(T), R,
                                                  panel);
    if (leader) {
      state.next = (entry + 1) % kBoxMapsPerSlot;
      state.base[entry] = base;
      state.rows[entry] = rows;
      state.cols[entry] = cols;
      state.ld[entry] = ld;
      state.box[entry] = R * 1024 + panel;
    }
    __syncwarp();
  }
  return &maps[entry];
}
#endif

}  // namespace detail

// Before a pipelined loop whose copies into `ring`, its Index-th, are boxes
// of the matrix at `base` (rows x cols, rows ld elements apart): which of
// the instance's barriers (boxes_begin) the ring's stages take. Where the
// program's thread 0 issues the boxes (no copier), warp 0 finds the
// matrix's map, and the first ring's synchronises the program's threads;
// where a copier does, the copier slice's bind_copies finds it.
template <int Index, class UniformRuns, class T, int R, int C, int S>
IRIS_HD void bind_box(UniformRuns, const SharedStages<T, R, C, S>& ring, [[maybe_unused]] const T* base,
                      [[maybe_unused]] int rows, [[maybe_unused]] int cols, [[maybe_unused]] int ld) {
  static_assert(Index < detail::kBoxRings, "a loop's boxes have more rings than ops/copy_box.hpp keeps barriers for");
  ring.box_ring = Index;
#if IRIS_TMA
  if constexpr (detail::RingByTma<SharedStages<T, R, C, S>, UniformRuns>::value &&
                !detail::copier_issues<UniformRuns>) {
    if (threadIdx.x < 32) ring.box_map = detail::find_box_map(ring, base, rows, cols, ld, threadIdx.x == 0);
    // The loop's copies start once every thread is done with what came
    // before it (a tile's epilogue): issued earlier, while the other warps
    // still stored the last tile, they made a persistent GEMM 4-6% slower
    // (docs/performance.md).
    if constexpr (Index == 0) detail::sync_instance();
  }
  if constexpr (!detail::RingByTma<SharedStages<T, R, C, S>, UniformRuns>::value &&
                detail::copier_issues<UniformRuns>) {
    // The program fills this ring itself in a loop whose other rings a
    // copier fills: an earlier loop whose boxes all came by TMA ended
    // without synchronising (end_boxes), and a slower warp may still read
    // its rings, which may cover this one.
    detail::sync_instance();
  }
#endif
}

// bind_box in the copier slice: where the ring goes by TMA, the copier's warp
// settles the ring (settle_ring) and finds or makes the matrix's tensor map.
template <int Index, class UniformRuns, class T, int R, int C, int S>
IRIS_HD void bind_copies(UniformRuns, const SharedStages<T, R, C, S>& ring, [[maybe_unused]] const T* base,
                         [[maybe_unused]] int rows, [[maybe_unused]] int cols, [[maybe_unused]] int ld) {
  static_assert(Index < detail::kBoxRings, "a loop's boxes have more rings than ops/copy_box.hpp keeps barriers for");
  ring.box_ring = Index;
#if IRIS_TMA
  if constexpr (detail::RingByTma<SharedStages<T, R, C, S>, UniformRuns>::value) {
    if (detail::issues_copies()) detail::settle_ring(detail::box_state(), Index, ring);
    ring.box_map = detail::find_box_map(ring, base, rows, cols, ld, detail::issues_copies());
  }
#endif
}

// Stage `stage` of `ring`, at (row, col) of the matrix bind_box named.
template <class T, int R, int C, int S>
IRIS_HD BoxAt<SharedStages<T, R, C, S>> box_at(const SharedStages<T, R, C, S>& ring, int stage, int row, int col) {
  return {ring.box_map, ring.box_ring, stage, row, col};
}

// copy_async(dst, ptrs, mask, other, check, known..., uniform_runs) with the box
// that the same copy is, in the program: where it goes by TMA, thread 0
// issues it, or nothing where a copier does (copy_box); else the copy through
// the pointers.
template <class T, int R, int C, class Ring, class... Args>
IRIS_HD void copy_async(SharedTile<T, R, C> dst, const BoxAt<Ring>& box, const Args&... args) {
  using UniformRuns = typename detail::LastOf<Args...>::type;
  if constexpr (!detail::RingByTma<Ring, UniformRuns>::value) {
    (void)box;
    copy_async(dst, args...);
  } else if constexpr (!detail::copier_issues<UniformRuns>) {
#if IRIS_TMA
    if (threadIdx.x == 0) detail::load_box(dst, box);
#endif
  }
}

// The same copy in the copier slice: issued there where it goes by TMA;
// nothing where it does not (the program copies it through the pointers).
template <class T, int R, int C, class Ring, class UniformRuns>
IRIS_HD void copy_box([[maybe_unused]] SharedTile<T, R, C> dst, [[maybe_unused]] const BoxAt<Ring>& box, UniformRuns) {
  if constexpr (detail::RingByTma<Ring, UniformRuns>::value) {
#if IRIS_TMA
    if (detail::issues_copies()) detail::issue_box(dst, box);
#endif
  }
}

// wait_async<Pending>() of a loop whose every ring's copies are boxes: where
// they came by TMA, waits until stage `stage` of each ring has landed (the
// phase of its full barrier that this thread's bit names), with no cp.async
// group to wait for and no proxy fence (TMA writes through the async proxy
// that wgmma reads). Where a copier issues them, with no synchronisation of
// the instance either: release_boxes tells the copier when every warp is
// done with a stage. Where thread 0 does, the program's threads synchronise,
// so that its next copies, into the stage that the dots two iterations back
// read, wait for every warp.
template <int Pending, class UniformRuns, class... Rings>
IRIS_HD void wait_boxes(UniformRuns, [[maybe_unused]] int stage, [[maybe_unused]] const Rings&... rings) {
#if IRIS_TMA
  detail::BoxState& state = detail::box_state();
  uint32_t phases = state.full_phase[threadIdx.x];
  (
      [&] {
        if constexpr (detail::RingByTma<Rings, UniformRuns>::value)
          detail::wait_phase(&state.full[rings.box_ring][stage], phases, detail::stage_bit(rings.box_ring, stage));
      }(),
      ...);
  state.full_phase[threadIdx.x] = phases;
#endif
  if constexpr (!(detail::RingByTma<Rings, UniformRuns>::value && ...))
    wait_async<Pending>();  // the rings whose copies went through the pointers
  else if constexpr (!detail::copier_issues<UniformRuns>)
    detail::sync_instance();
}

// After the dots that read stage `stage` of a loop's rings are done (the
// wait_dots after the next iteration's dots, or the loop's last): this warp
// releases the stage, so that copies may fill it again (copy_async waits for
// every warp's release). Nothing where no copier issues the boxes.
template <class UniformRuns, class... Rings>
IRIS_HD void release_boxes(UniformRuns, [[maybe_unused]] int stage, [[maybe_unused]] const Rings&... rings) {
#if IRIS_TMA
  if constexpr (detail::copier_issues<UniformRuns> && (detail::RingByTma<Rings, UniformRuns>::value || ...)) {
    __syncwarp();
    if (threadIdx.x % 32 == 0) {
      detail::BoxState& state = detail::box_state();
      (
          [&] {
            if constexpr (detail::RingByTma<Rings, UniformRuns>::value)
              detail::barrier_arrive(&state.empty[rings.box_ring][stage]);
          }(),
          ...);
    }
  }
#endif
}

// After a pipelined loop (wait_async<0>'s place). Where a copier issued
// every ring's boxes: nothing, so that each warp goes on to its epilogue and
// its next tile at its own pace (the copier refills a stage only once every
// warp has released it, and a later loop that copies through pointers
// synchronises first: with_uniform_boxes). Else it synchronises the
// program's threads, after the copies that went through the pointers, and
// where some did and the kernel has a copier, tells it that the loop is over
// (end_copies): the copier, which skipped those copies, must not fill stages
// of a later loop that may overlap rings still being filled and read.
template <class UniformRuns, class... Rings>
IRIS_HD void end_boxes(UniformRuns, const Rings&...) {
  constexpr bool all_by_tma = (detail::RingByTma<Rings, UniformRuns>::value && ...);
  if constexpr (!(all_by_tma && detail::copier_issues<UniformRuns>)) wait_async<0>();
  if constexpr (!all_by_tma) {
#if IRIS_TMA
    if (detail::has_copier() && threadIdx.x == 0) {
      // The loop's copies wrote through the generic proxy; the copier's next
      // ones write through the async proxy.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __threadfence_block();
      volatile uint32_t& done = detail::box_state().loops_done;
      done = done + 1;
    }
#endif
  }
}

// The copier slice's end_boxes: where some ring's copies went through the
// pointers, waits until the program's threads are past the loop (a count,
// not a barrier, so that the program may end several such loops before the
// copier looks).
template <class UniformRuns, class... Rings>
IRIS_HD void end_copies(UniformRuns, const Rings&...) {
#if IRIS_TMA
  if constexpr (!(detail::RingByTma<Rings, UniformRuns>::value && ...)) {
    if (detail::issues_copies()) {
      detail::BoxState& state = detail::box_state();
      const uint32_t awaited = ++state.loops_awaited;
      while (*static_cast<volatile uint32_t*>(&state.loops_done) < awaited) __nanosleep(64);
      __threadfence_block();
    }
    __syncwarp();
  }
#endif
}

// The dispatch of a loop whose copies are boxes on its run-time condition
// (pass_pipeline_loads.cpp's Specialize): body(CopierRuns{}) where the runs
// are uniform and a copier issues the boxes by TMA (the program's type says
// so: CopierProgram, kernel_entry), body(std::true_type{}) where they are
// uniform and the loop copies them itself through the pointers, else
// body(std::false_type{}). Chosen at compile time, so that the program's
// function holds two versions of the loop, not three, which cost the
// copier's version registers. Always inlined, as the `if` it replaces was
// (hip-clang made a function of it, and of the loop).
template <class ProgramT, class Body>
IRIS_HD __forceinline__ void with_uniform_boxes(const ProgramT&, bool uniform, const Body& body) {
  if constexpr (ProgramT::boxes_hold) {
    // One version: the copier's, where the launch found that TMA may copy
    // every box (a second version cost the copier's 1.0-1.8%,
    // docs/performance.md).
    (void)uniform;
    body(CopierBoxes{});
  } else if constexpr (ProgramT::copier) {
    if (uniform) {
      body(CopierRuns{});
    } else {
      // An earlier loop whose boxes came by TMA ended without synchronising
      // (end_boxes): its rings may cover this loop's, which the program's
      // threads fill themselves, while a slower warp still reads them.
      if (detail::in_program()) detail::sync_instance();
      body(std::false_type{});
    }
  } else {
    if (uniform) body(std::true_type{});
    else body(std::false_type{});
  }
}

}  // namespace iris
