// dot(a, b, acc): the matrix product of 2-D tiles plus an accumulator,
// a (M, K) x b (K, N) + acc (M, N), computed in acc's element type and
// returned in acc's layout:
//
//   a and b             acc and the result
//   half, bfloat16      float
//   float               float
//   int8_t              int32_t
//
// Three implementations behind the one call:
//
//  * tensor cores (ops/mma_nvidia.hpp): on an NVIDIA GPU of sm_80 or later,
//    for half and bfloat16 inputs, K a multiple of 16 and an accumulator of
//    layout MmaAcc<M, N> -- what DotLayout<T, M, N> (types/layout.hpp) is
//    there, and what generated code creates its accumulators in. a and b are
//    staged in shared memory and every warp runs mma.sync over its part of
//    the result, in the accumulator's registers.
//  * matrix cores (ops/mfma_amd.hpp): on an AMD GPU of gfx90a or gfx94x, for
//    half and bfloat16 inputs, K a multiple of 16 and an accumulator of layout
//    MfmaAcc<M, N> -- DotLayout<T, M, N> there. The same frame
//    (ops/matrix_dot.hpp): a and b staged in shared memory, every wavefront
//    running MFMA instructions over its part of the result. Compiled for both
//    architectures and checked to emit v_mfma (tests/amd), not run.
//  * the generic path, everywhere else (the CPU, float and int8_t, a
//    Blocked accumulator, NVIDIA GPUs older than sm_80, AMD GPUs without
//    MFMA and the host pass of a GPU compilation): the exchange
//    (ops/block.hpp) stages a and b in shared memory and each thread computes
//    its own elements of the result, in acc's layout, with a loop over K.
//
// All stage a and b in at most 48 KiB of static shared memory.
//
// a and b may also be tiles in shared memory (SharedTile, types/shared.hpp:
// the stages of a pipelined K loop, filled by copy_async). Then nothing is
// staged and nothing synchronised (wait_async did), and dot reads them where
// they are: with Hopper's wgmma (ops/wgmma_nvidia.hpp) on sm_90a where the
// accumulator is in wgmma's grid, with shared_matrix_dot (ops/matrix_dot.hpp)
// where the register path would take the tensor cores or MFMA, element by
// element otherwise. A pipelined loop's dot, dot(a, b, acc, Pipelined{}), may
// return before wgmma has written its result: the loop's wait_dots(acc)
// completes it.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/block.hpp"
#include "iris/ops/matrix_dot.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/shared.hpp"
#include "iris/types/tile.hpp"

#if IRIS_NVIDIA_GPU
#include "iris/ops/mma_nvidia.hpp"
#include "iris/ops/wgmma_nvidia.hpp"
#elif IRIS_AMD_GPU
#include "iris/ops/mfma_amd.hpp"
#endif

namespace iris {

namespace detail {

// The accumulator type of a product of T (void: dot does not take T).
template <class T> struct dot_accumulator { using type = void; };
template <> struct dot_accumulator<half> { using type = float; };
template <> struct dot_accumulator<bfloat16> { using type = float; };
template <> struct dot_accumulator<float> { using type = float; };
template <> struct dot_accumulator<int8_t> { using type = int32_t; };

// A failed check names the shapes in its instantiation: a (AM, AK), b (BK, BN),
// acc (CM, CN).
template <int AM, int AK, int BK, int BN, int CM, int CN>
constexpr bool dot_shapes_agree() {
  static_assert(AK == BK, "dot(a, b, acc): a is (M, K), so b must be (K, N): a's columns and b's rows differ");
  static_assert(CM == AM && CN == BN, "dot(a, b, acc): acc must be (M, N): a's rows by b's columns");
  return true;
}

// The checks of dot on element types, shared by both entries.
template <class T, class R>
constexpr bool dot_types_agree() {
  using Accumulator = typename dot_accumulator<T>::type;
  static_assert(!std::is_void_v<Accumulator>, "dot: a and b must be half, bfloat16, float or int8_t tiles");
  static_assert(std::is_void_v<Accumulator> || std::is_same_v<R, Accumulator>,
                "dot: acc must be float for half, bfloat16 and float tiles, int32_t for int8_t tiles");
  return true;
}

// The generic path of both entries: acc + a x b, each thread computing its
// own elements in acc's layout with a loop over K, reading a and b through
// a_at(r, k) and b_at(k, c).
template <int K, int N, class C, class AAt, class BAt>
IRIS_HD auto dot_elements(const C& acc, AAt a_at, BAt b_at) {
  using R = typename C::value_type;
  return generate<layout_of<C>>([&](int f, int j) {
    const int r = flat_row<N>(f), c = flat_col<N>(f);
    R sum = acc[j];
    for (int k = 0; k < K; ++k) sum += static_cast<R>(a_at(r, k)) * static_cast<R>(b_at(k, c));
    return sum;
  });
}

}  // namespace detail

// What dot of shared tiles may leave unfinished: nothing (Settled), or, for
// a pipelined K loop's dot (Pipelined), the asynchronous tensor-core work of
// Hopper's wgmma, which the loop's wait_dots completes. Everywhere else
// both are the same.
struct Settled {};
struct Pipelined {};

template <class T, int M, int K, int N, class C, class Completion = Settled>
IRIS_HD auto dot(SharedTile<T, M, K> a, SharedTile<T, K, N> b, const C& acc, Completion = {}) {
  static_assert(rank_of<C> == 2, "dot takes 2-D tiles");
  static_assert(detail::dot_shapes_agree<M, K, K, N, rows_of<C>, cols_of<C>>());
  using R = typename C::value_type;
  static_assert(detail::dot_types_agree<T, R>());
#if IRIS_NVIDIA_GPU
  if constexpr (detail::use_wgmma_dot<T, R, layout_of<C>, K, N>) {
    auto out = detail::matrix_dot_result<M, N>(acc);
    detail::wgmma_accumulate<std::is_same_v<Completion, Pipelined>>(out, a, b);
    return out;
  } else if constexpr (detail::use_mma_dot<T, R, layout_of<C>, K>) {
    return detail::shared_matrix_dot<detail::MmaSync, T, M, K, N>(a, b, acc);
  } else
#elif IRIS_AMD_GPU
  if constexpr (detail::use_mfma_dot<T, R, layout_of<C>, K>) {
    return detail::shared_matrix_dot<detail::Mfma, T, M, K, N>(a, b, acc);
  } else
#endif
  {
    return detail::dot_elements<K, N>(acc, [&](int r, int k) { return *a.at(r, k); },
                                      [&](int k, int c) { return *b.at(k, c); });
  }
}

template <class A, class B, class C>
IRIS_HD auto dot(const A& a, const B& b, const C& acc) {
  static_assert(rank_of<A> == 2 && rank_of<B> == 2 && rank_of<C> == 2, "dot takes 2-D tiles");
  constexpr int M = rows_of<A>, K = cols_of<A>, N = cols_of<B>;
  static_assert(detail::dot_shapes_agree<M, K, rows_of<B>, N, rows_of<C>, cols_of<C>>());
  using T = typename A::value_type;
  using R = typename C::value_type;
  static_assert(std::is_same_v<T, typename B::value_type>, "dot: a and b must have the same element type");
  static_assert(detail::dot_types_agree<T, R>());
  static_assert(detail::staged_bytes<A> + detail::staged_bytes<B> <= detail::kStaticSharedBytes,
                "dot stages a and b in at most 48 KiB of static shared memory: use smaller tiles "
                "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N elements)");
#if IRIS_NVIDIA_GPU
  if constexpr (detail::use_mma_dot<T, R, layout_of<C>, K>) {
    return detail::staged_matrix_dot<detail::MmaSync, T, M, K, N>(a, b, acc);
  } else
#elif IRIS_AMD_GPU
  if constexpr (detail::use_mfma_dot<T, R, layout_of<C>, K>) {
    return detail::staged_matrix_dot<detail::Mfma, T, M, K, N>(a, b, acc);
  } else
#endif
  {
    return detail::exchange(
        [&](const T* sa, const T* sb) {
          return detail::dot_elements<K, N>(acc, [&](int r, int k) { return sa[r * K + k]; },
                                            [&](int k, int c) { return sb[k * N + c]; });
        },
        a, b);
  }
}

}  // namespace iris
