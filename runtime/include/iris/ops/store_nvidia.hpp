// Stores of dot's accumulator on NVIDIA GPUs: a tile of layout MmaAcc
// (types/layout.hpp) of 2-byte elements (half, bfloat16) through pointers
// that advance by one element along each row, whose pointers and mask
// generated code computes in FragmentRows<MmaAcc> (RowsOf, ops/memory.hpp):
// how it stores a GEMM's result.
//
// A fragment gives each lane pairs of adjacent elements, 8 columns apart, of
// rows 8 apart: stored as they are, each warp-wide store writes 4 bytes to 8
// rows, a quarter of each 32-byte sector it touches. Instead each warp passes
// 8 rows x 32 columns at a time through a little shared memory: lane l of a
// row's 4 lanes (a quad) holds pair l of the row's four 16-byte runs and
// comes out with run l whole, so that each store instruction writes 64
// contiguous bytes of each of 8 rows. FragmentRows gives each lane the
// pointer and the mask of the runs it comes out with, so that it needs no
// other lane's: a run that is aligned and wholly unmasked is one 16-byte
// store, any other goes element by element, and the result is the same as
// the element-wise store's. Only the warp synchronises: its fragments never
// leave it.
#pragma once

#include <cstdint>
#include <cstring>

#include "iris/target.hpp"
#include "iris/types/layout.hpp"

namespace iris {
namespace detail {

#if defined(__CUDA_ARCH__)
// value(j): element j of the thread's fragments (Acc); first(run): the
// pointer of the run (FragmentRows<Acc>'s elements 8 run to 8 run + 7) the
// thread writes at that step; whole(run): whether all of it is stored;
// on(run, k): whether its element k is.
template <class T, class Acc, class Value, class First, class Whole, class On>
__device__ void store_fragment_rows(Value value, First first, Whole whole, On on) {
  using G = typename Acc::Grid;
  constexpr int kWarps = kThreads / 32;
  // A warp's 8 rows of 4 runs (4 words each), rows padded to 20 words so
  // that the 8 rows' words of one run fall in distinct banks.
  constexpr int kRowWords = 20;
  __shared__ __align__(16) uint32_t words[kWarps][8 * kRowWords];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int row = lane / 4, l = lane % 4;
  uint32_t* my_words = words[warp];
  const auto bits_of = [](T v) {
    uint16_t b;
    std::memcpy(&b, &v, sizeof b);
    return static_cast<uint32_t>(b);
  };
  IRIS_UNROLL
  for (int mi = 0; mi < G::MI; ++mi) {
    IRIS_UNROLL
    for (int half = 0; half < 2; ++half) {
      IRIS_UNROLL
      for (int group = 0; group < G::NI / 4; ++group) {
        // Element j0 + 4 c: pair l of run c (mma tile 4 group + c).
        const int j0 = (mi * G::NI + 4 * group) * 4 + 2 * half;
        IRIS_UNROLL
        for (int c = 0; c < 4; ++c)
          my_words[row * kRowWords + c * 4 + l] = bits_of(value(j0 + 4 * c)) | bits_of(value(j0 + 4 * c + 1)) << 16;
        __syncwarp();
        const uint4 run = *reinterpret_cast<const uint4*>(&my_words[row * kRowWords + l * 4]);
        __syncwarp();
        const int step = (mi * 2 + half) * (G::NI / 4) + group;  // FragmentRows' order
        T* p = first(step);
        if (whole(step) && reinterpret_cast<uintptr_t>(p) % 16 == 0) {
          // (In PTX: nvcc splits a uint4 store through a pointer it cannot
          // see to be aligned into four.)
          asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(run.x), "r"(run.y), "r"(run.z),
                       "r"(run.w)
                       : "memory");
          continue;
        }
        const uint32_t pair_words[4] = {run.x, run.y, run.z, run.w};
        IRIS_UNROLL
        for (int k = 0; k < 8; ++k)
          if (on(step, k))
            reinterpret_cast<uint16_t*>(p)[k] = static_cast<uint16_t>(pair_words[k / 2] >> (16 * (k % 2)));
      }
    }
  }
}
#endif

}  // namespace detail
}  // namespace iris
