// Reductions of a tile to one value for the program instance (sum(x), max(x),
// min(x), of a 1-D or 2-D tile), and of a 2-D tile along an axis (sum<Axis>(x)
// ...): Axis 1 combines each row, giving a 1-D tile of the rows, Axis 0 each
// column. A row or column is spread over threads on the GPU, so reductions
// along an axis go through the exchange (ops/block.hpp): the tile's size in
// shared memory, and every thread of the instance must call them.
#pragma once

#include <limits>

#include "iris/ops/block.hpp"
#include "iris/types/tile.hpp"

namespace iris {

template <class X, class F>
IRIS_HD auto reduce(const X& x, typename X::value_type identity, F combine) {
  using R = typename X::value_type;
  R acc = identity;
  if (layout_of<X>::active())
    for (int j = 0; j < X::per_thread; ++j) acc = combine(acc, x[j]);
  return block_reduce<R>(acc, combine);
}

// Each result element combines its row's or column's elements in order, from
// the first (no identity element: none is needed where every element counts).
template <int Axis, class X, class F>
IRIS_HD auto reduce_axis(const X& x, F combine) {
  static_assert(rank_of<X> == 2, "a reduction along an axis takes a 2-D tile");
  static_assert(Axis == 0 || Axis == 1, "the axis of a 2-D tile is 0 or 1");
  constexpr int R = rows_of<X>, C = cols_of<X>;
  using Out = Blocked<Axis == 1 ? R : C>;
  // Result element i combines x's flat indices i * step + k * stride, k < length.
  constexpr int length = Axis == 1 ? C : R;
  constexpr int stride = Axis == 1 ? 1 : C;
  constexpr int step = Axis == 1 ? C : 1;
  return detail::exchange(
      [&](const auto* staged) {
        return detail::generate<Out>([&](int i, int) {
          auto acc = staged[i * step];
          for (int k = 1; k < length; ++k) acc = combine(acc, staged[i * step + k * stride]);
          return acc;
        });
      },
      x);
}

// The combinations, named so that the whole-tile and axis reductions share them.
namespace detail {
template <class R>
struct Plus {
  IRIS_HD R operator()(R a, R b) const { return static_cast<R>(a + b); }
};
template <class R>
struct Larger {
  IRIS_HD R operator()(R a, R b) const { return a < b ? b : a; }
};
template <class R>
struct Smaller {
  IRIS_HD R operator()(R a, R b) const { return b < a ? b : a; }
};
}  // namespace detail

template <class X>
IRIS_HD auto sum(const X& x) {
  using R = typename X::value_type;
  return reduce(x, R{}, detail::Plus<R>{});
}
namespace detail {
// The identities of max and min: numeric_limits knows nothing of half and
// bfloat16 (it would give 0), whose infinities serve.
template <class R>
IRIS_HD R lowest_value() {
  if constexpr (std::numeric_limits<R>::is_specialized) return std::numeric_limits<R>::lowest();
  else return R(-__builtin_huge_valf());
}
template <class R>
IRIS_HD R highest_value() {
  if constexpr (std::numeric_limits<R>::is_specialized) return std::numeric_limits<R>::max();
  else return R(__builtin_huge_valf());
}
}  // namespace detail

template <class X>
IRIS_HD auto max(const X& x) {
  using R = typename X::value_type;
  return reduce(x, detail::lowest_value<R>(), detail::Larger<R>{});
}
template <class X>
IRIS_HD auto min(const X& x) {
  using R = typename X::value_type;
  return reduce(x, detail::highest_value<R>(), detail::Smaller<R>{});
}

template <int Axis, class X>
IRIS_HD auto sum(const X& x) { return reduce_axis<Axis>(x, detail::Plus<typename X::value_type>{}); }
template <int Axis, class X>
IRIS_HD auto max(const X& x) { return reduce_axis<Axis>(x, detail::Larger<typename X::value_type>{}); }
template <int Axis, class X>
IRIS_HD auto min(const X& x) { return reduce_axis<Axis>(x, detail::Smaller<typename X::value_type>{}); }

}  // namespace iris
