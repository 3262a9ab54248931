// The frame of dot on a GPU's matrix instructions (ops/dot.hpp), which the
// per-target files fill in: ops/mma_nvidia.hpp (mma.sync) and ops/mfma_amd.hpp
// (MFMA). Two entries:
//   staged_matrix_dot   register tiles a and b, staged row-major in static
//                       shared memory first;
//   shared_matrix_dot   a and b already in shared memory (a pipelined K loop's
//                       stages, types/shared.hpp).
// Both copy the accumulator into the result and hand it, with the addresses
// of a's and b's elements, to Instructions::accumulate<T, M, K, N>(out, a_at,
// b_at), the target's loop over K: a_at(r, c) and b_at(r, c) give the address
// of element (r, c), so that the padded staging area and the swizzled stages
// share one loop. accumulate exists in the device passes that have the
// instructions only; dot calls an entry there alone, so the other passes
// never instantiate one.
#pragma once

#include <cstddef>

#include "iris/ops/block.hpp"
#include "iris/ops/memory.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/shared.hpp"
#include "iris/types/tile.hpp"

namespace iris {
namespace detail {

// The shared memory of staged_matrix_dot for a (M, K) and b (K, N) of 16-bit
// elements: rows padded by 8 elements (16 bytes, so that the rows that one
// instruction reads at once fall in different banks) where the whole still
// fits the static limit.
template <int M, int K, int N>
struct MmaStaging {
  static constexpr int padded_bytes = (M * (K + 8) + K * (N + 8)) * 2;
  static constexpr int pad = padded_bytes <= static_cast<int>(kStaticSharedBytes) ? 8 : 0;
  static constexpr int a_stride = K + pad;  // elements from one row of a to the next
  static constexpr int b_stride = N + pad;
  static constexpr std::size_t bytes = static_cast<std::size_t>(M * a_stride + K * b_stride) * 2;
};

// Writes this thread's elements of x, a (Rows, Cols) tile, to s with rows
// Stride elements apart; runs of the layout's vec consecutive elements in one
// store where the layout keeps them aligned (Blocked and the accumulators of
// the matrix instructions do).
template <int Cols, int Stride, class X, class T>
IRIS_HD void stage_rows(const X& x, T* s) {
  using L = layout_of<X>;
  if (!L::active()) return;
  constexpr bool aligned_runs = is_blocked<L> || is_mma_acc<L> || is_mfma_acc<L>;
  constexpr int V = aligned_runs && Cols % L::vec == 0 && sizeof(T) * L::vec <= 16 ? L::vec : 1;
  for (int j = 0; j < L::per_thread; j += V) {
    const int f = L::index(j);
    T* at = s + flat_row<Cols>(f) * Stride + flat_col<Cols>(f);
    if constexpr (V > 1) {
      Chunk<T, V> run;
      for (int k = 0; k < V; ++k) run.x[k] = x[j + k];
      *reinterpret_cast<Chunk<T, V>*>(at) = run;
    } else {
      *at = x[j];
    }
  }
}

// The result tile of a matrix dot, acc's elements to start from.
template <int M, int N, class C>
IRIS_HD auto matrix_dot_result(const C& acc) {
  using L = layout_of<C>;
  Tile<float, M * N, L> out;
  for (int j = 0; j < L::per_thread; ++j) out.v[j] = acc[j];
  return out;
}

// dot of register tiles a (M, K) and b (K, N), of any layout (the default one,
// as loaded from memory, in practice): they are staged row-major in static
// shared memory (MmaStaging), the instance synchronises, accumulate runs, and
// the instance synchronises again, so that the next user of the memory may
// write it (the area is the exchange's for that size, ops/block.hpp).
template <class Instructions, class T, int M, int K, int N, class A, class B, class C>
IRIS_HD auto staged_matrix_dot(const A& a, const B& b, const C& acc) {
  auto out = matrix_dot_result<M, N>(acc);
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  using S = MmaStaging<M, K, N>;
  static_assert(S::bytes <= kStaticSharedBytes);
  unsigned char* area = shared_staging_area<S::bytes>();
  T* sa = reinterpret_cast<T*>(area);
  T* sb = sa + M * S::a_stride;
  stage_rows<K, S::a_stride>(a, sa);
  stage_rows<N, S::b_stride>(b, sb);
  sync_instance();
  Instructions::template accumulate<T, M, K, N>(
      out, [&](int r, int c) { return sa + r * S::a_stride + c; },
      [&](int r, int c) { return sb + r * S::b_stride + c; });
  sync_instance();
#else
  (void)a;
  (void)b;
#endif
  return out;
}

// dot of tiles already in shared memory (types/shared.hpp), which the caller
// has made visible to every thread (wait_async, ops/copy_async.hpp): no
// staging and no synchronisation.
template <class Instructions, class T, int M, int K, int N, class C>
IRIS_HD auto shared_matrix_dot(SharedTile<T, M, K> a, SharedTile<T, K, N> b, const C& acc) {
  auto out = matrix_dot_result<M, N>(acc);
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  Instructions::template accumulate<T, M, K, N>(
      out, [&](int r, int c) { return a.at(r, c); }, [&](int r, int c) { return b.at(r, c); });
#else
  (void)a;
  (void)b;
#endif
  return out;
}

}  // namespace detail
}  // namespace iris
