// Hopper's tensor memory accelerator (TMA) for copy_box (ops/copy_box.hpp):
// tensor maps made on the device, mbarriers that count a stage's bytes, and
// cp.async.bulk.tensor. Included on NVIDIA targets only; only the device pass
// for sm_90a has the instructions (IRIS_TMA).
#pragma once

#include <cstdint>

#include "iris/ops/box_limits.hpp"
#include "iris/ops/mma_nvidia.hpp"  // shared_address
#include "iris/target.hpp"
#include "iris/types/layout.hpp"  // kThreads

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IRIS_TMA 1
#else
#define IRIS_TMA 0
#endif

namespace iris {
namespace detail {

// A tensor map (CUtensorMap): 128 opaque bytes, which the TMA unit reads from
// global memory.
struct alignas(128) TensorMap {
  unsigned char bytes[128];
};

// The tensor maps of the running program instances: slots of kBoxMapsPerSlot
// maps, each held by one instance from its first map to its end (the pool of
// this module's kernels; an instance takes one with an atomic and frees it
// when it ends: kernel_entry, launch_gpu.hpp). More slots than instances can
// be resident on a GPU at once, so that taking one never waits for long.
inline constexpr int kBoxSlots = 8192;
inline constexpr int kBoxMapsPerSlot = 4;
static __device__ TensorMap box_map_pool[kBoxSlots * kBoxMapsPerSlot];
static __device__ unsigned box_slot_taken[kBoxSlots];

#if IRIS_TMA
__device__ __forceinline__ void barrier_init(unsigned long long* barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}

// Makes the barriers' initialisation visible to the TMA unit.
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// This thread's arrival, and `bytes` more that copies must deliver before the
// barrier's phase completes.
__device__ __forceinline__ void barrier_expect_bytes(unsigned long long* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}

// This thread's arrival.
__device__ __forceinline__ void barrier_arrive(unsigned long long* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}

// Waits until the barrier's phase of parity `phase` has completed.
__device__ __forceinline__ void barrier_wait(unsigned long long* barrier, unsigned phase) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(phase)
        : "memory");
  } while (!done);
}

// The box at (column c0, row r0) of `map` into `dst`, counted by `barrier`.
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap* map, int c0, int r0,
                                            unsigned long long* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(r0), "r"(shared_address(barrier))
      : "memory");
}

// Writes into `map` (global memory) the tensor map of a row-major matrix of
// `rows` rows of `cols` elements, `ld` elements apart, read in boxes of
// box_rows x box_cols with the swizzle Swizzle (0: none, 1: 32 bytes, 2: 64, 3:
// 128) and zeros outside the matrix. Called by a whole warp: lane 0 sets the
// fields in `scratch` (128 bytes of shared memory), and the warp copies them
// out and fences, after which this warp's TMA copies may use the map.
// ElementType is PTX's numbering (6: f16, 10: bf16), not the driver's.
template <int ElementType, int Swizzle>
__device__ __forceinline__ void make_tensor_map(TensorMap* map, uint32_t* scratch, const void* base, int rows, int cols,
                                                int ld, int element_bytes, int box_rows, int box_cols) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  scratch[lane] = 0;
  __syncwarp();
  const uint32_t m = shared_address(scratch);
  if (lane == 0) {
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(m),
                 "l"(reinterpret_cast<uint64_t>(base))
                 : "memory");
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;" ::"r"(m) : "memory");  // rank - 1
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(m), "r"(box_cols) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(m), "r"(box_rows) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(m), "r"(cols) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(m), "r"(rows) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" ::"r"(m),
                 "l"(static_cast<uint64_t>(ld) * element_bytes)
                 : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;" ::"r"(m) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;" ::"r"(m) : "memory");
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %1;" ::"r"(m), "n"(ElementType)
                 : "memory");
    asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;" ::"r"(m) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %1;" ::"r"(m), "n"(Swizzle)
                 : "memory");
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;" ::"r"(m) : "memory");
  }
  __syncwarp();
  asm volatile(
      "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(m)
      : "memory");
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(reinterpret_cast<uint64_t>(map))
               : "memory");
}

// What a program instance keeps for its boxes, in static shared memory, set up
// once when the instance starts (boxes_begin) and kept across its loops, so
// that a K loop run once per tile pays nothing for it but a look-up:
// - the slot of tensor maps it holds and the matrices they describe (a map
//   costs a global write and two fences: 1.5-2.5% of a 4096^3 GEMM when made
//   for every tile, docs/performance.md), remade only when a matrix changes;
// - two barriers per stage of the ring that is the `ring`th of its loop,
//   shared by every loop (kBoxRings, kBoxStages: ops/box_limits.hpp): `full`
//   completes a phase when a stage's copies have landed, `empty` when every
//   warp is done reading what landed (release_boxes), so that the thread that
//   issues the copies waits for the slowest warp instead of every thread
//   waiting for every other at each K step;
// - the parity of the phase each thread waits for next, a bit per barrier:
//   full_phase, one word per thread of the program (each waits at its own
//   pace), and empty_phase, the issuing thread's. A loop releases every stage it fills
//   (its body is lets and dots only), so each stage's barriers alternate
//   between a fill and a release whatever the loops' trip counts; barriers
//   in dynamic shared memory would have to be set up again for every loop,
//   since another loop's rings may cover them.
struct BoxState {
  unsigned long long full[kBoxRings][kBoxStages];
  unsigned long long empty[kBoxRings][kBoxStages];
  uint32_t full_phase[kThreads];
  uint32_t empty_phase;
  // For a copier: where each ring index's stages were last (settle_ring), and
  // how many loops with copies through pointers the program has ended and the
  // copier has waited for (end_boxes, end_copies).
  uint32_t ring_at[kBoxRings], ring_bytes[kBoxRings];
  uint32_t loops_done, loops_awaited;
  int slot;  // -1: none yet
  int next;  // the entry to replace next
  const void* base[kBoxMapsPerSlot];
  int rows[kBoxMapsPerSlot], cols[kBoxMapsPerSlot], ld[kBoxMapsPerSlot], box[kBoxMapsPerSlot];
  alignas(128) uint32_t scratch[32];
};
static_assert(kBoxRings * kBoxStages <= 32, "a phase word keeps a bit per stage of every ring");

__device__ __forceinline__ BoxState& box_state() {
  __shared__ BoxState state;
  return state;
}
#endif

}  // namespace detail
}  // namespace iris
