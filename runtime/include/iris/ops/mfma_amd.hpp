// Matrix cores of AMD GPUs for dot (ops/dot.hpp): v_mfma_f32_16x16x16f16 and
// v_mfma_f32_16x16x16bf16_1k (clang's __builtin_amdgcn_mfma_f32_16x16x16f16
// and _16x16x16bf16_1k), f32 accumulators and half or bfloat16 inputs, on
// gfx90a and gfx942 (CDNA 2 and 3; the gfx94x ISA calls the second
// v_mfma_f32_16x16x16_bf16), fed from shared memory by plain loads. Included
// by dot.hpp on AMD targets only. The AMD build compiles it for both
// architectures, and tests/amd checks that the emitted GEMMs contain v_mfma
// instructions; no AMD GPU has run it.
//
// The accumulator has layout MfmaAcc<M, N> (types/layout.hpp), whose element j
// of a thread is register j % 4 of instruction tile j / 4 of its wavefront:
// the instructions accumulate into the tile's registers. Each computes the
// transposed product of its 16 x 16 tile, b^T x a^T, so that a lane's four
// results are adjacent columns of one row (MfmaAcc's header says why and
// which). Mfma is the loop over K that ops/matrix_dot.hpp's entries run
// (staged_matrix_dot for register tiles, shared_matrix_dot for a pipelined K
// loop's stages; on AMD copy_async fills the stages with plain loads and
// stores).
//
// Only the device passes for gfx90a and gfx94x have the instructions
// (IRIS_MFMA); elsewhere (the host pass, other AMD architectures) dot takes
// its generic path, which serves every layout.
#pragma once

#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/matrix_dot.hpp"
#include "iris/types/layout.hpp"

#if defined(__HIP_DEVICE_COMPILE__) && \
    (defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
#define IRIS_MFMA 1
#else
#define IRIS_MFMA 0
#endif

namespace iris {
namespace detail {

// Whether dot(a, b, acc) takes MFMA here: on the device pass for gfx90a or
// gfx94x, half or bfloat16 inputs, a float accumulator of layout MfmaAcc and
// K a multiple of 16.
template <class T, class R, class LC, int K>
inline constexpr bool use_mfma_dot =
    IRIS_MFMA && is_mma_input<T> && std::is_same_v<R, float> && is_mfma_acc<LC> && K % 16 == 0;

#if IRIS_MFMA
// A lane's operand registers: 4 elements of 16 bits (2 VGPRs), and its 4 f32
// results.
using MfmaOperand = short __attribute__((ext_vector_type(4)));
using MfmaResult = float __attribute__((ext_vector_type(4)));

// d (16 x 16, f32) += x (16 x 16) x y (16 x 16) for one wavefront, in the
// operand and result registers of the CDNA ISA's 16x16x16 instructions.
template <class T>
__device__ __forceinline__ MfmaResult mfma_16x16x16(MfmaOperand x, MfmaOperand y, MfmaResult d) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x, y, d, 0, 0, 0);
  } else {
    static_assert(std::is_same_v<T, half>, "mfma_16x16x16 takes half or bfloat16");
    using Halves = _Float16 __attribute__((ext_vector_type(4)));
    return __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(Halves, x), __builtin_bit_cast(Halves, y), d,
                                                 0, 0, 0);
  }
}
#endif

// out (M, N), in MfmaAcc<M, N>, += a (M, K) x b (K, N), both in shared memory:
// a_at(r, c) and b_at(r, c) give the address of element (r, c), whose run of 4
// elements along the row from a multiple of 4 is contiguous there (8 bytes:
// one load of a's fragment). Each wavefront runs over K in steps of 16; a
// lane's fragment of b is a column, 4 loads of 16 bits.
struct Mfma {
#if IRIS_MFMA
  template <class T, int M, int K, int N, class Out, class AAt, class BAt>
  __device__ __forceinline__ static void accumulate(Out& out, AAt a_at, BAt b_at) {
    using G = typename layout_of<Out>::Grid;
    const int t = thread_index(), wave = t / 64, lane = t % 64;
    const int k_lane = G::fragment_k(lane);
#pragma unroll
    for (int k0 = 0; k0 < K; k0 += 16) {
      MfmaOperand af[G::MI], bf[G::NI];
#pragma unroll
      for (int mi = 0; mi < G::MI; ++mi)
        af[mi] = *reinterpret_cast<const MfmaOperand*>(a_at(G::a_row(wave, lane, mi), k0 + k_lane));
#pragma unroll
      for (int ni = 0; ni < G::NI; ++ni)
#pragma unroll
        for (int v = 0; v < 4; ++v)
          bf[ni][v] = __builtin_bit_cast(short, *b_at(k0 + k_lane + v, G::b_col(wave, lane, ni)));
#pragma unroll
      for (int mi = 0; mi < G::MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < G::NI; ++ni) {
          float* d = out.v + (mi * G::NI + ni) * 4;
          // b's fragment as the instruction's A operand: the result transposed.
          const MfmaResult r = mfma_16x16x16<T>(bf[ni], af[mi], MfmaResult{d[0], d[1], d[2], d[3]});
#pragma unroll
          for (int v = 0; v < 4; ++v) d[v] = r[v];
        }
    }
  }
#endif
};

}  // namespace detail
}  // namespace iris
