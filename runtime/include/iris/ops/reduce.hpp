// Reductions of a tile to one value for the program instance.
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

template <class X>
IRIS_HD auto sum(const X& x) {
  using R = typename X::value_type;
  return reduce(x, R{}, [](R a, R b) { return static_cast<R>(a + b); });
}
template <class X>
IRIS_HD auto max(const X& x) {
  using R = typename X::value_type;
  return reduce(x, std::numeric_limits<R>::lowest(), [](R a, R b) { return a < b ? b : a; });
}
template <class X>
IRIS_HD auto min(const X& x) {
  using R = typename X::value_type;
  return reduce(x, std::numeric_limits<R>::max(), [](R a, R b) { return b < a ? b : a; });
}

}  // namespace iris
