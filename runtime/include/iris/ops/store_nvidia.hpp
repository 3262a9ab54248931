// Stores of dot's accumulator on NVIDIA GPUs: a tile of layout MmaAcc
// (types/layout.hpp) of 2-byte elements (half, bfloat16) through pointers
// that advance by one element along each row (store with ContiguousRows,
// ops/memory.hpp), which is how generated code stores a GEMM's result.
//
// A fragment gives each lane pairs of adjacent elements, 8 columns apart, of
// rows 8 apart: stored as they are, each warp-wide store writes 4 bytes to 8
// rows, a quarter of each 32-byte sector it touches. Instead each warp passes
// 8 rows x 32 columns at a time through a little shared memory: lane l of a
// row's 4 lanes (a quad) holds pair l of the row's four 16-byte chunks and
// comes out with chunk l whole, so that each store instruction writes 64
// contiguous bytes of each of 8 rows. A chunk that is aligned and wholly
// unmasked is one 16-byte store; any other goes element by element, so the
// result is the same as the element-wise store's. Only the warp
// synchronises: its fragments never leave it.
//
// The pointer of chunk l is the lane's own first pointer of the group plus
// 6 l elements (its pair l sits 2 l columns into chunk 0, chunk l starts at
// column 8 l): what ContiguousRows allows.
#pragma once

#include <cstdint>
#include <cstring>

#include "iris/target.hpp"
#include "iris/types/layout.hpp"

namespace iris {
namespace detail {

// Whether a store through contiguous rows takes this path: on an NVIDIA
// GPU, fragments of 2-byte elements whose warps hold whole groups of 4 mma
// tiles along a row.
template <class T, class L>
inline constexpr bool stores_fragment_rows = [] {
  if constexpr (IRIS_NVIDIA_GPU && is_mma_acc<L>)
    return sizeof(T) == 2 && L::Grid::NI % 4 == 0;
  else
    return false;
}();

#if defined(__CUDA_ARCH__)
// first(j): element j's pointer; value(j): its value; on(j): whether it is
// stored (active and unmasked).
template <class T, class L, class First, class Value, class On>
__device__ void store_fragment_rows(First first, Value value, On on) {
  using G = typename L::Grid;
  constexpr int kWarps = kThreads / 32;
  // A warp's 8 rows of 4 chunks (4 words each), rows padded to 20 words so
  // that the 8 rows' words of one chunk fall in distinct banks.
  constexpr int kRowWords = 20;
  __shared__ __align__(16) uint32_t words[kWarps][8 * kRowWords];
  // Whether each pair's two elements are stored (bits 0 and 1), by row,
  // chunk and pair: a lane reads its chunk's 4 pairs as one word.
  __shared__ __align__(4) uint8_t stored[kWarps][8 * 16];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int row = lane / 4, l = lane % 4;
  uint32_t* my_words = words[warp];
  uint8_t* my_stored = stored[warp];
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
        // Element j0 + 4 c: pair l of chunk c (mma tile 4 group + c).
        const int j0 = (mi * G::NI + 4 * group) * 4 + 2 * half;
        IRIS_UNROLL
        for (int c = 0; c < 4; ++c) {
          const int j = j0 + 4 * c;
          my_words[row * kRowWords + c * 4 + l] = bits_of(value(j)) | bits_of(value(j + 1)) << 16;
          my_stored[row * 16 + c * 4 + l] = static_cast<uint8_t>(on(j) | on(j + 1) << 1);
        }
        __syncwarp();
        const uint4 chunk = *reinterpret_cast<const uint4*>(&my_words[row * kRowWords + l * 4]);
        const uint32_t pairs = *reinterpret_cast<const uint32_t*>(&my_stored[row * 16 + l * 4]);
        __syncwarp();
        T* p = first(j0) + 6 * l;
        if (pairs == 0x03030303u && reinterpret_cast<uintptr_t>(p) % 16 == 0) {
          // (In PTX: nvcc splits a uint4 store through a pointer it cannot
          // see to be aligned into four.)
          asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(chunk.x), "r"(chunk.y), "r"(chunk.z),
                       "r"(chunk.w)
                       : "memory");
          continue;
        }
        const uint32_t pair_words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
        IRIS_UNROLL
        for (int k = 0; k < 8; ++k)
          if (pairs >> (8 * (k / 2) + k % 2) & 1)
            reinterpret_cast<uint16_t*>(p)[k] = static_cast<uint16_t>(pair_words[k / 2] >> (16 * (k % 2)));
      }
    }
  }
}
#endif

}  // namespace detail
}  // namespace iris
