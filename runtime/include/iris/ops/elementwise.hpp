// Elementwise operations over tiles and scalars (a scalar is broadcast; the
// tiles must have the same layout, which the result keeps): conversion,
// creation, arithmetic, comparison, selection. Named functions (add, lt, ...)
// rather than operators, so that generated code says exactly what it does and
// overloads never surprise; add and sub keep Ranges and contiguous pointers
// symbolic where they can.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/types/tile.hpp"

namespace iris {

// Applies f elementwise over tiles and broadcast scalars; the result has the
// tiles' layout.
template <class F, class... Xs>
IRIS_HD auto zip(F f, const Xs&... xs) {
  if constexpr (!(is_tile<Xs> || ...)) {
    return f(xs...);
  } else {
    constexpr int N = std::max({size_of<Xs>()...});  // the checker made all tiles agree
    using L = common_layout_t<Xs...>;
    using R = decltype(f(elem(xs, 0)...));
    Tile<R, N, L> out;
    for (int j = 0; j < L::per_thread; ++j) out.v[j] = f(elem(xs, j)...);
    return out;
  }
}

// ------------------------------------------------------------ conversion
// `x as T`: a Range of integers stays a Range; a tile converts elementwise.
template <class T, class X>
IRIS_HD auto as(const X& x) {
  if constexpr (is_range<X> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return Range<T, X::size, layout_of<X>>{static_cast<T>(x.start)};
  } else if constexpr (is_contig<X>) {
    return x;
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    // Through float: a run-time integer or double then converts with the
    // GPU's instruction, not with the integer code numeric.hpp keeps for
    // literals (the same rounding either way).
    return zip([](auto e) { return static_cast<T>(static_cast<float>(e)); }, x);
  } else {
    return zip([](auto e) { return static_cast<T>(e); }, x);
  }
}

// ------------------------------------------------------------ creation
// Created tiles have the default layout of their shape, unless a layout is
// given (below): arange<N>(),
// full<T, N>(v), zeros<T, N>() are 1-D, arange<M, N>() etc. 2-D (row-major:
// arange<M, N>()'s element (r, c) is r * N + c).
template <int... Dims>
IRIS_HD Range<int32_t, Blocked<Dims...>::size, Blocked<Dims...>> arange() { return {0}; }

template <class T, int... Dims>
IRIS_HD Tile<T, Blocked<Dims...>::size, Blocked<Dims...>> full(T value) {
  Tile<T, Blocked<Dims...>::size, Blocked<Dims...>> t;
  for (int j = 0; j < t.per_thread; ++j) t.v[j] = value;
  return t;
}

template <class T, int... Dims>
IRIS_HD auto zeros() { return full<T, Dims...>(T{}); }

// The same in a given layout L (a layout class, types/layout.hpp), of L's
// shape: arange<L>() is Range<int32_t, L::size, L>{0} (element (r, c) is
// r * cols + c, whichever thread holds it), full<T, L>(v) and zeros<T, L>()
// register tiles. What generated code creates dot's accumulator with:
// zeros<float, DotLayout<T, M, N>>().
template <Layout L>
IRIS_HD Range<int32_t, L::size, L> arange() { return {0}; }

template <class T, Layout L>
IRIS_HD Tile<T, L::size, L> full(T value) {
  Tile<T, L::size, L> t;
  for (int j = 0; j < t.per_thread; ++j) t.v[j] = value;
  return t;
}

template <class T, Layout L>
IRIS_HD Tile<T, L::size, L> zeros() { return full<T, L>(T{}); }

// ------------------------------------------------------------ arithmetic
// add and sub keep Ranges and contiguous pointers symbolic where they can.
template <class A, class B>
IRIS_HD auto add(const A& a, const B& b) {
  if constexpr (is_range<A> && is_int_scalar<B>) {
    using T = std::common_type_t<typename A::value_type, B>;
    return Range<T, A::size, layout_of<A>>{static_cast<T>(a.start + b)};
  } else if constexpr (is_int_scalar<A> && is_range<B>) {
    return add(b, a);
  } else if constexpr (std::is_pointer_v<A> && is_range<B>) {
    return ContigPtrs<std::remove_pointer_t<A>, B::size, layout_of<B>>{a + b.start};
  } else if constexpr (is_range<A> && std::is_pointer_v<B>) {
    return add(b, a);
  } else if constexpr (is_contig<A> && is_int_scalar<B>) {
    return A{a.base + b};
  } else if constexpr (is_int_scalar<A> && is_contig<B>) {
    return B{b.base + a};
  } else {
    return zip([](auto x, auto y) { return x + y; }, a, b);
  }
}

template <class A, class B>
IRIS_HD auto sub(const A& a, const B& b) {
  if constexpr ((is_range<A> || is_contig<A>) && is_int_scalar<B>) {
    return add(a, -static_cast<std::make_signed_t<B>>(b));
  } else {
    return zip([](auto x, auto y) { return x - y; }, a, b);
  }
}

#define IRIS_ELEMENTWISE_BINARY(name, expr) \
  template <class A, class B>               \
  IRIS_HD auto name(const A& a, const B& b) { return zip([](auto x, auto y) { return expr; }, a, b); }
IRIS_ELEMENTWISE_BINARY(mul, x * y)
IRIS_ELEMENTWISE_BINARY(div, x / y)
IRIS_ELEMENTWISE_BINARY(mod, x % y)
IRIS_ELEMENTWISE_BINARY(bit_and, x & y)
IRIS_ELEMENTWISE_BINARY(bit_or, x | y)
IRIS_ELEMENTWISE_BINARY(bit_xor, x ^ y)
IRIS_ELEMENTWISE_BINARY(shl, x << y)
IRIS_ELEMENTWISE_BINARY(shr, x >> y)
IRIS_ELEMENTWISE_BINARY(lt, x < y)
IRIS_ELEMENTWISE_BINARY(le, x <= y)
IRIS_ELEMENTWISE_BINARY(gt, x > y)
IRIS_ELEMENTWISE_BINARY(ge, x >= y)
IRIS_ELEMENTWISE_BINARY(eq, x == y)
IRIS_ELEMENTWISE_BINARY(ne, x != y)
IRIS_ELEMENTWISE_BINARY(logical_and, x && y)
IRIS_ELEMENTWISE_BINARY(logical_or, x || y)
#undef IRIS_ELEMENTWISE_BINARY

template <class A> IRIS_HD auto neg(const A& a) { return zip([](auto x) { return -x; }, a); }
template <class A> IRIS_HD auto logical_not(const A& a) { return zip([](auto x) { return !x; }, a); }
template <class A> IRIS_HD auto bit_not(const A& a) { return zip([](auto x) { return ~x; }, a); }

template <class C, class A, class B>
IRIS_HD auto where(const C& c, const A& a, const B& b) {
  return zip([](auto cc, auto x, auto y) { return cc ? x : y; }, c, a, b);
}

// min(max(x, lo), hi), as .iris's clamp: hi wins where lo > hi, and a NaN x
// stays NaN. The compiler passes all three in the result's type.
template <class X, class Lo, class Hi>
IRIS_HD auto clamp(const X& x, const Lo& lo, const Hi& hi) {
  return zip(
      [](auto v, auto l, auto h) {
        const auto at_least_lo = v < l ? l : v;
        return h < at_least_lo ? h : at_least_lo;
      },
      x, lo, hi);
}

}  // namespace iris
