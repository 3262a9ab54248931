// Hopper's warpgroup tensor-core instructions for dot of shared tiles
// (ops/dot.hpp): wgmma.mma_async, which reads both operands straight from
// shared memory through 64-bit descriptors, with f32 accumulators and half or
// bfloat16 inputs. Only the device pass for sm_90a has them
// (IRIS_WGMMA_SM90A); included by dot.hpp on NVIDIA targets.
//
// A warpgroup is 4 consecutive warps. For a (M, N) result with 16 rows per
// warp (MmaGrid's warpgroup_rows, types/layout.hpp), warpgroup g computes rows
// 64 g to 64 g + 63 with one m64nNk16 per step of 16 along K; its accumulator
// registers are MmaAcc's elements of the thread in order.
//
// The operands are SharedTiles (types/shared.hpp), whose panels of at most
// 128 bytes per row with their XOR swizzle are wgmma's canonical layouts:
//   a (M, K), K-major (row-major a): the descriptor starts at row 64 g,
//     column k; 8-row groups are 8 panel rows apart (the stride offset);
//   b (K, N), N-major (row-major b, "transposed" for wgmma): it starts at row
//     k; 8-row groups of K are 8 panel rows apart (the stride offset) and
//     panels of N are K panel rows apart (the leading offset).
// Rows 64 g and k (a multiple of 16) have swizzle 0, so their address is the
// unswizzled one that the descriptor wants; the hardware applies the XOR to
// the addresses it forms, which is why tiles start on 1024 bytes.
//
// The instructions are asynchronous: dot fences the accumulator registers
// (wgmma.fence), issues K / 16 of them and commits them as one group. A plain
// dot then waits for the group before it returns. A pipelined one
// (Pipelined{}, what a pipelined K loop's dot is) returns at once, its result
// still being written, so that the tensor cores work while the threads issue
// the next stages' copies and the next iteration's dot; the loop's wait_dots
// (ops/copy_async.hpp) waits for the group and settles the accumulators that
// it is given, before anything reads them or refills the stage. Groups into
// the same accumulators run in the order they were issued. Data that
// cp.async wrote must be made visible to wgmma's async proxy first:
// wait_async issues fence.proxy.async on sm_90.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/shared.hpp"
#include "iris/types/tile.hpp"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IRIS_WGMMA_SM90A 1
#else
#define IRIS_WGMMA_SM90A 0
#endif

namespace iris {
namespace detail {

// The swizzle mode of a descriptor for panel rows of this many bytes: 1, 2
// and 3 are the 128-, 64- and 32-byte patterns.
constexpr int wgmma_swizzle_mode(int panel_row_bytes) {
  return panel_row_bytes == 128 ? 1 : panel_row_bytes == 64 ? 2 : panel_row_bytes == 32 ? 3 : 0;
}

// Whether dot(a, b, acc) of shared tiles takes wgmma: sm_90a's device pass,
// half or bfloat16 into float, an accumulator in wgmma's grid, K a multiple
// of 16 and panel rows that a swizzle mode describes (a's K and b's N of at
// least 16 elements).
template <class T, class R, class LC, int K, int N>
inline constexpr bool use_wgmma_dot = [] {
  if constexpr (IRIS_WGMMA_SM90A && is_mma_input<T> && std::is_same_v<R, float> && is_mma_acc<LC>) {
    return LC::Grid::warpgroup_rows && K % 16 == 0 && wgmma_swizzle_mode(SharedTile<T, 64, K>::panel_row_bytes) &&
           wgmma_swizzle_mode(SharedTile<T, K, N>::panel_row_bytes);
  } else {
    return false;
  }
}();

#if IRIS_WGMMA_SM90A
// The descriptor of a matrix in shared memory at `start`, with leading and
// stride byte offsets and the swizzle mode of panel rows of Tile.
template <class Tile>
__device__ __forceinline__ uint64_t wgmma_descriptor(const void* start, uint32_t leading_bytes,
                                                     uint32_t stride_bytes) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(start));
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32 |
         static_cast<uint64_t>(wgmma_swizzle_mode(Tile::panel_row_bytes)) << 62;
}

// Keeps the C++ compiler from moving accesses of an accumulator register
// across the asynchronous instructions that write it.
__device__ __forceinline__ void wgmma_fence_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// The register lists of the accumulators: N / 2 of them for m64nNk16.
#define IRIS_WGMMA_REGS_32                                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define IRIS_WGMMA_REGS_64                                                                              \
  IRIS_WGMMA_REGS_32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define IRIS_WGMMA_REGS_128                                                                             \
  IRIS_WGMMA_REGS_64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
                     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "     \
                     "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
                     "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "       \
                     "%123, %124, %125, %126, %127"
#define IRIS_WGMMA_D8(i)                                                                                     \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define IRIS_WGMMA_D32(i) IRIS_WGMMA_D8(i), IRIS_WGMMA_D8(i + 8), IRIS_WGMMA_D8(i + 16), IRIS_WGMMA_D8(i + 24)
#define IRIS_WGMMA_D64(i) IRIS_WGMMA_D32(i), IRIS_WGMMA_D32(i + 32)
#define IRIS_WGMMA_D128 IRIS_WGMMA_D64(0), IRIS_WGMMA_D64(64)

// d += a x b: m64nNk16 with a K-major and b N-major (transposed), scale-d 1.
// REGS names d's registers; the descriptors follow them (operands DA and DB),
// then scale-d (SCALE).
#define IRIS_WGMMA_ASM(SHAPE, TYPE, REGS, DA, DB, SCALE, OPERANDS)                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" SCALE ", 0;\n"                                       \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" REGS "}, %" DA ", %" DB \
               ", p, 1, 1, 0, 1;\n}\n"                                                                    \
               : OPERANDS                                                                                 \
               : "l"(a), "l"(b), "r"(1))

template <class T, int N>
__device__ __forceinline__ void wgmma_m64k16(float* d, uint64_t a, uint64_t b) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k16 takes N = 64, 128 or 256");
  if constexpr (std::is_same_v<T, bfloat16>) {
    if constexpr (N == 64) IRIS_WGMMA_ASM("m64n64k16", "bf16", IRIS_WGMMA_REGS_32, "32", "33", "34", IRIS_WGMMA_D32(0));
    if constexpr (N == 128) IRIS_WGMMA_ASM("m64n128k16", "bf16", IRIS_WGMMA_REGS_64, "64", "65", "66", IRIS_WGMMA_D64(0));
    if constexpr (N == 256) IRIS_WGMMA_ASM("m64n256k16", "bf16", IRIS_WGMMA_REGS_128, "128", "129", "130", IRIS_WGMMA_D128);
  } else {
    static_assert(std::is_same_v<T, half>, "wgmma_m64k16 takes half or bfloat16");
    if constexpr (N == 64) IRIS_WGMMA_ASM("m64n64k16", "f16", IRIS_WGMMA_REGS_32, "32", "33", "34", IRIS_WGMMA_D32(0));
    if constexpr (N == 128) IRIS_WGMMA_ASM("m64n128k16", "f16", IRIS_WGMMA_REGS_64, "64", "65", "66", IRIS_WGMMA_D64(0));
    if constexpr (N == 256) IRIS_WGMMA_ASM("m64n256k16", "f16", IRIS_WGMMA_REGS_128, "128", "129", "130", IRIS_WGMMA_D128);
  }
}
#endif

#if IRIS_WGMMA_SM90A
// Waits until every wgmma group of this thread has completed.
// Waits until at most Pending of this warpgroup's committed groups are in flight.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
#endif

// out += a (M, K) x b (K, N), both in shared memory and visible to the async
// proxy, in out's registers (use_wgmma_dot holds). With InFlight, they are
// written until a later wgmma_wait lets no more than this group's elders run.
template <bool InFlight, class T, int M, int K, int N, class Out>
IRIS_HD void wgmma_accumulate(Out& out, SharedTile<T, M, K> a, SharedTile<T, K, N> b) {
#if IRIS_WGMMA_SM90A
  using L = layout_of<Out>;
  using A = SharedTile<T, M, K>;
  using B = SharedTile<T, K, N>;
  const int row = thread_index() / 128 * 64;
#pragma unroll
  for (int j = 0; j < L::per_thread; ++j) wgmma_fence_register(out.v[j]);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int k = 0; k < K; k += 16) {
    const uint64_t da = wgmma_descriptor<A>(a.at(row, k), 16, 8 * A::panel_row_bytes);
    const uint64_t db = wgmma_descriptor<B>(b.at(k, 0), K * B::panel_row_bytes, 8 * B::panel_row_bytes);
    wgmma_m64k16<T, N>(out.v, da, db);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  if constexpr (!InFlight) {
    wgmma_wait<0>();
#pragma unroll
    for (int j = 0; j < L::per_thread; ++j) wgmma_fence_register(out.v[j]);
  }
#else
  (void)out, (void)a, (void)b;
#endif
}

}  // namespace detail
}  // namespace iris
