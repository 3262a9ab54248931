// Elementwise operations over tiles and scalars (a scalar is broadcast; the
// tiles must have the same layout, which the result keeps): conversion,
// creation, arithmetic, comparison, selection. Named functions (add, lt, ...)
// rather than operators, so that generated code says exactly what it does and
// overloads never surprise; add, sub and mul keep Ranges, contiguous pointers
// and Strided offsets and pointers symbolic where they can.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

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
namespace detail {
// Whether the elements of an integer tile of T (a Range or Strided, computed
// modulo T's width), computed in U instead, are the same values: where U is
// no wider than T (arithmetic modulo a power of two agrees), or T is a signed
// type of int's width or more (whose overflow is undefined: no wrapped value
// is owed). Sub-int and unsigned tiles widened stay register tiles.
template <class T, class U>
inline constexpr bool exact_in = sizeof(U) <= sizeof(T) || (std::is_signed_v<T> && sizeof(T) >= sizeof(int));
}  // namespace detail

// `x as T`: a Range or Strided of integers stays one where its elements are
// exact in T (detail::exact_in); a pointer tile stays itself; a tile converts
// elementwise.
template <class T, class X>
IRIS_HD auto as(const X& x) {
  if constexpr (is_range<X> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return Range<T, X::size, layout_of<X>>{static_cast<T>(x.start)};
  } else if constexpr (is_contig<X>) {
    return x;
  } else if constexpr (is_strided<X>) {
    if constexpr (std::is_pointer_v<typename X::value_type>)
      return x;
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && detail::exact_in<typename X::value_type, T>)
      return Strided<T, X::size, layout_of<X>>{static_cast<T>(x.start), static_cast<T>(x.row_stride),
                                               static_cast<T>(x.col_stride)};
    else
      return zip([](auto e) { return static_cast<T>(e); }, x);
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
// add and sub keep Ranges and contiguous pointers symbolic where they can, and
// Strided offsets and pointers (types/tile.hpp): where one operand is a
// Strided and the other a scalar (integer or pointer), a Range, a ContigPtrs
// or a Strided of the same layout, the sum adds starts and strides (a pointer
// start plus integer offsets in elements); mul scales a Strided or a Range of
// integers by an integer scalar. The result's element type is what the
// elementwise operation would give (C++'s promotions), and every other case,
// or one whose integer tiles would not be exact in it (detail::exact_in), is
// elementwise on registers.
namespace detail {

template <class X, bool = is_tile<X>> struct element_of { using type = X; };
template <class X> struct element_of<X, true> { using type = typename X::value_type; };
template <class X> using element_t = typename element_of<X>::type;

// Whether an integer tile's elements are exact in U (scalars always are).
template <class X, class U>
constexpr bool exact_operand() {
  if constexpr (is_tile<X>) return exact_in<element_t<X>, U>;
  else return true;
}

template <class X>
inline constexpr bool affine_operand = is_symbolic<X> || is_int_scalar<X> || std::is_pointer_v<X>;

// Whether a + b (a - b where Sub) stays a Strided: see above; at most one
// pointer, and for a - b only a.
template <class A, class B, bool Sub>
constexpr bool strided_sum() {
  if constexpr (!(is_strided<A> || is_strided<B>) || !affine_operand<A> || !affine_operand<B>) {
    return false;
  } else if constexpr (is_tile<A> && is_tile<B> && !std::is_same_v<layout_of<A>, layout_of<B>>) {
    return false;  // elementwise, which says that the layouts must agree
  } else {
    using TA = element_t<A>;
    using TB = element_t<B>;
    constexpr bool pa = std::is_pointer_v<TA>, pb = std::is_pointer_v<TB>;
    if constexpr (pa && pb) return false;
    else if constexpr (pb) return !Sub && exact_operand<A, std::ptrdiff_t>();
    else if constexpr (pa) return exact_operand<B, std::ptrdiff_t>();
    else return exact_operand<A, decltype(TA{} + TB{})>() && exact_operand<B, decltype(TA{} + TB{})>();
  }
}

// Start and strides of an operand, in V and S: a scalar is the same at every
// element (strides 0).
template <class V, class S>
struct AffineParts {
  V start;
  S row_stride, col_stride;
};
template <class V, class S, class X>
IRIS_HD AffineParts<V, S> affine_parts(const X& x) {
  if constexpr (is_tile<X>) {
    const auto s = as_strided(x);
    return {static_cast<V>(s.start), static_cast<S>(s.row_stride), static_cast<S>(s.col_stride)};
  } else {
    return {static_cast<V>(x), S{0}, S{0}};
  }
}

template <bool Sub, class A, class B>
IRIS_HD auto add_strided(const A& a, const B& b) {
  using L = common_layout_t<A, B>;
  using TA = element_t<A>;
  using TB = element_t<B>;
  if constexpr (std::is_pointer_v<TB>) {
    return add_strided<Sub>(b, a);  // (never for sub: strided_sum)
  } else {
    using U = std::conditional_t<std::is_pointer_v<TA>, TA, decltype(TA{} + TB{})>;
    using R = Strided<U, L::size, L>;
    using S = typename R::stride_type;
    const auto x = affine_parts<U, S>(a);
    const auto y = affine_parts<S, S>(b);
    if constexpr (Sub) {
      return R{static_cast<U>(x.start - y.start), static_cast<S>(x.row_stride - y.row_stride),
               static_cast<S>(x.col_stride - y.col_stride)};
    } else {
      return R{static_cast<U>(x.start + y.start), static_cast<S>(x.row_stride + y.row_stride),
               static_cast<S>(x.col_stride + y.col_stride)};
    }
  }
}

// Whether a * b stays a Strided: a a Strided or Range of integers, b an
// integer scalar.
template <class A, class B>
constexpr bool strided_product() {
  if constexpr ((is_strided<A> || is_range<A>) && is_int_scalar<B>) {
    using T = typename A::value_type;
    if constexpr (std::is_pointer_v<T>) return false;
    else return exact_in<T, decltype(T{} * B{})>;
  } else {
    return false;
  }
}

template <class A, class B>
IRIS_HD auto mul_strided(const A& a, const B& b) {
  using T = typename A::value_type;
  using U = decltype(T{} * B{});
  using L = layout_of<A>;
  const auto x = affine_parts<U, U>(a);
  const U s = static_cast<U>(b);
  return Strided<U, A::size, L>{static_cast<U>(x.start * s), static_cast<U>(x.row_stride * s),
                                static_cast<U>(x.col_stride * s)};
}

}  // namespace detail

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
  } else if constexpr (detail::strided_sum<A, B, false>()) {
    return detail::add_strided<false>(a, b);
  } else {
    return zip([](auto x, auto y) { return x + y; }, a, b);
  }
}

template <class A, class B>
IRIS_HD auto sub(const A& a, const B& b) {
  if constexpr ((is_range<A> || is_contig<A>) && is_int_scalar<B>) {
    return add(a, -static_cast<std::make_signed_t<B>>(b));
  } else if constexpr (detail::strided_sum<A, B, true>()) {
    return detail::add_strided<true>(a, b);
  } else {
    return zip([](auto x, auto y) { return x - y; }, a, b);
  }
}

template <class A, class B>
IRIS_HD auto mul(const A& a, const B& b) {
  if constexpr (detail::strided_product<A, B>()) {
    return detail::mul_strided(a, b);
  } else if constexpr (detail::strided_product<B, A>()) {
    return detail::mul_strided(b, a);
  } else {
    return zip([](auto x, auto y) { return x * y; }, a, b);
  }
}

#define IRIS_ELEMENTWISE_BINARY(name, expr) \
  template <class A, class B>               \
  IRIS_HD auto name(const A& a, const B& b) { return zip([](auto x, auto y) { return expr; }, a, b); }
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

}  // namespace iris
