// Tensor cores of NVIDIA GPUs for dot (ops/dot.hpp): mma.sync.m16n8k16 with
// f32 accumulators and half or bfloat16 inputs (sm_80 and later), fed from
// shared memory by ldmatrix. Included by dot.hpp on NVIDIA targets only.
//
// The accumulator has layout MmaAcc<M, N> (types/layout.hpp), whose element j
// of a thread is register j % 4 of mma tile j / 4 of its warp: the
// instructions accumulate into the tile's registers in place. MmaSync is the
// loop over K that ops/matrix_dot.hpp's entries run (staged_matrix_dot for
// register tiles, shared_matrix_dot for a pipelined K loop's stages).
//
// Only the device pass for sm_80 and later has the instructions
// (IRIS_MMA_SM80); elsewhere dot takes its generic path, which serves every
// layout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/matrix_dot.hpp"
#include "iris/types/layout.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define IRIS_MMA_SM80 1
#else
#define IRIS_MMA_SM80 0
#endif

namespace iris {
namespace detail {

#if IRIS_MMA_SM80
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8 x 8 matrices of 16-bit elements; lanes 8i to 8i + 7 give the row
// addresses of matrix i, register i receives it (row lane / 4, columns
// 2 * (lane % 4) and the next).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
// The same transposed: register i receives rows 2 * (lane % 4) and the next
// of matrix i, column lane / 4.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
// Two matrices transposed (lanes 0 to 15 give the addresses).
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(p)));
}

// d (16 x 8, f32) += a (16 x 16) x b (16 x 8) for one warp, in the fragments
// of the PTX ISA's m16n8k16 (.row.col).
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float* d, const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    static_assert(std::is_same_v<T, half>, "mma_m16n8k16 takes half or bfloat16");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
#endif

// Whether dot(a, b, acc) takes mma.sync here: on the device pass for sm_80 and
// later, half or bfloat16 inputs, a float accumulator of layout MmaAcc and K
// a multiple of 16.
template <class T, class R, class LC, int K>
inline constexpr bool use_mma_dot =
    IRIS_MMA_SM80 && is_mma_input<T> && std::is_same_v<R, float> && is_mma_acc<LC> && K % 16 == 0;

// out (M, N), in MmaAcc<M, N>, += a (M, K) x b (K, N), both in shared memory:
// a_at(r, c) and b_at(r, c) give the address of element (r, c), whose run of
// 8 elements along the row (one ldmatrix row) is contiguous there. Each warp
// runs over K in steps of 16 (A fragments: ldmatrix.x4; B fragments:
// ldmatrix.x4.trans, two n-tiles at once, from row-major b).
struct MmaSync {
#if IRIS_MMA_SM80
  template <class T, int M, int K, int N, class Out, class AAt, class BAt>
  __device__ __forceinline__ static void accumulate(Out& out, AAt a_at, BAt b_at) {
    using G = typename layout_of<Out>::Grid;
    const int t = thread_index(), warp = t / 32, lane = t % 32;
    const int wm = warp / G::WN, wn = warp % G::WN;
    // Lane l gives the address of row l % 16 and the 8 columns from
    // (l / 16) * 8 of a 16 x 16 block: of A (matrices: rows 0-7 and 8-15 of
    // k 0-7, then of k 8-15) and of B (k 0-7 and 8-15 of one n-tile, then of
    // the next; for the last odd n-tile, x2 from lanes 0-15).
    const int a_row = wm * G::TM + lane % 16, a_col = (lane / 16) * 8;
    const int b_row = lane % 16, b_col = wn * G::TN + (lane / 16) * 8;
#pragma unroll
    for (int k0 = 0; k0 < K; k0 += 16) {
      uint32_t af[G::MI][4];
      uint32_t bf[G::NI][2];
#pragma unroll
      for (int mi = 0; mi < G::MI; ++mi) ldmatrix_x4(af[mi], a_at(a_row + mi * 16, k0 + a_col));
#pragma unroll
      for (int ni = 0; ni < G::NI; ni += 2) {
        if (ni + 1 < G::NI) {
          uint32_t r[4];
          ldmatrix_x4_trans(r, b_at(k0 + b_row, b_col + ni * 8));
          bf[ni][0] = r[0];
          bf[ni][1] = r[1];
          bf[ni + 1][0] = r[2];
          bf[ni + 1][1] = r[3];
        } else {
          ldmatrix_x2_trans(bf[ni], b_at(k0 + b_row, wn * G::TN + ni * 8));
        }
      }
#pragma unroll
      for (int mi = 0; mi < G::MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < G::NI; ++ni) mma_m16n8k16<T>(out.v + (mi * G::NI + ni) * 4, af[mi], bf[ni]);
    }
  }
#endif
};

}  // namespace detail
}  // namespace iris
