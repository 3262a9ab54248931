// dot(a, b, acc): the matrix product of 2-D tiles plus an accumulator,
// a (M, K) x b (K, N) + acc (M, N), computed in acc's element type:
//
//   a and b             acc and the result
//   half, bfloat16      float
//   float               float
//   int8_t              int32_t
//
// This implementation is correct on every target, not fast: the exchange
// (ops/block.hpp) stages a and b in shared memory (at most 48 KiB of static
// shared memory for the two) and each thread computes its own elements of the
// result with a loop over K. Tensor cores come later, behind the same call.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/ops/block.hpp"
#include "iris/types/tile.hpp"

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

}  // namespace detail

template <class A, class B, class C>
IRIS_HD auto dot(const A& a, const B& b, const C& acc) {
  static_assert(rank_of<A> == 2 && rank_of<B> == 2 && rank_of<C> == 2, "dot takes 2-D tiles");
  constexpr int M = rows_of<A>, K = cols_of<A>, N = cols_of<B>;
  static_assert(detail::dot_shapes_agree<M, K, rows_of<B>, N, rows_of<C>, cols_of<C>>());
  using T = typename A::value_type;
  using R = typename C::value_type;
  static_assert(std::is_same_v<T, typename B::value_type>, "dot: a and b must have the same element type");
  using Accumulator = typename detail::dot_accumulator<T>::type;
  static_assert(!std::is_void_v<Accumulator>, "dot: a and b must be half, bfloat16, float or int8_t tiles");
  static_assert(std::is_void_v<Accumulator> || std::is_same_v<R, Accumulator>,
                "dot: acc must be float for half, bfloat16 and float tiles, int32_t for int8_t tiles");
  static_assert(std::is_same_v<layout_of<C>, Blocked<M, N>>, "dot: acc must have the default layout, Blocked<M, N>");
  static_assert(detail::staged_bytes<A> + detail::staged_bytes<B> <= detail::kStaticSharedBytes,
                "dot stages a and b in at most 48 KiB of static shared memory: use smaller tiles "
                "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N elements)");
  return detail::exchange(
      [&](const T* sa, const T* sb) {
        return detail::generate<Blocked<M, N>>([&](int f, int j) {
          const int r = f / N, c = f % N;
          R sum = acc[j];
          for (int k = 0; k < K; ++k) sum += static_cast<R>(sa[r * K + k]) * static_cast<R>(sb[k * N + c]);
          return sum;
        });
      },
      a, b);
}

}  // namespace iris
