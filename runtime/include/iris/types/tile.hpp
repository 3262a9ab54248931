// The tile-like values of the library, and what is known of them at compile
// time:
//   Tile<T, N, L>        a register tile
//   Range<T, N, L>       start + i (what arange and offsets built from it are),
//                        kept symbolic so that contiguity is known at compile time
//   ContigPtrs<T, N, L>  base + i: a pointer tile known to be contiguous
//   Strided<T, N, L>     start + r * row_stride + c * col_stride (integers or
//                        pointers): 2-D offsets and the pointer tiles made of
//                        them, kept symbolic so that a row-major block of a
//                        matrix is found contiguous along its rows at run time
// and the traits the operations dispatch on. L, the layout (types/layout.hpp),
// is part of the type and defaults to Blocked<N>. A 2-D tile of shape (R, C)
// has N = R * C elements and a layout of that shape (Tile2<T, R, C> has
// Blocked<R, C>); i is an element's row-major flat index, r * C + c.
#pragma once

#include <cstddef>
#include <type_traits>

#include "iris/types/layout.hpp"

namespace iris {

template <class T, int N, LayoutOf<N> L = Blocked<N>>
struct Tile {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = L::per_thread;
  T v[per_thread];
  IRIS_HD T operator[](int j) const { return v[j]; }
  IRIS_HD T& operator[](int j) { return v[j]; }
};

template <class T, int N, LayoutOf<N> L = Blocked<N>>
struct Range {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = L::per_thread;
  T start;
  // The element at flat index f, whichever thread holds it.
  IRIS_HD T at(int f) const { return start + static_cast<T>(f); }
  IRIS_HD T operator[](int j) const { return at(L::index(j)); }
  IRIS_HD operator Tile<T, N, L>() const {
    Tile<T, N, L> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

template <class T, int N, LayoutOf<N> L = Blocked<N>>
struct ContigPtrs {
  using value_type = T*;
  static constexpr int size = N;
  static constexpr int per_thread = L::per_thread;
  T* base;
  // The element at flat index f, whichever thread holds it.
  IRIS_HD T* at(int f) const { return base + f; }
  IRIS_HD T* operator[](int j) const { return at(L::index(j)); }
  IRIS_HD operator Tile<T*, N, L>() const {
    Tile<T*, N, L> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

// The element at flat index f (row r = f / cols, column c = f % cols of L's
// shape; r is 0 in a 1-D layout) is start + r * row_stride + c * col_stride:
// integers (T an integer type; arithmetic in T, so modulo T's width like the
// register tile it stands for), or pointers (T a pointer type; start a pointer,
// the strides in elements, std::ptrdiff_t). What broadcast_to makes of a Range
// ((N) or (1, N): row_stride 0, col_stride 1; (M, 1): 1 and 0), mul by an
// integer scalar scales, and add and sub of scalars, pointers, Ranges,
// ContigPtrs and Strideds of one layout keep (ops/elementwise.hpp). The
// strides are run-time values: a load or store through a Strided pointer tile
// checks once whether col_stride is 1 (each row contiguous) and takes the
// vector path then (ops/memory.hpp).
template <class T, int N, LayoutOf<N> L = Blocked<N>>
struct Strided {
  static_assert(std::is_pointer_v<T> || (std::is_integral_v<T> && !std::is_same_v<T, bool>),
                "Strided holds integers or pointers");
  using value_type = T;
  using stride_type = std::conditional_t<std::is_pointer_v<T>, std::ptrdiff_t, T>;
  static constexpr int size = N;
  static constexpr int per_thread = L::per_thread;
  T start;
  stride_type row_stride;
  stride_type col_stride;
  // The element at flat index f, whichever thread holds it.
  IRIS_HD T at(int f) const {
    const int r = f / L::cols, c = f % L::cols;
    if constexpr (std::is_pointer_v<T>)
      return start + (static_cast<stride_type>(r) * row_stride + static_cast<stride_type>(c) * col_stride);
    else
      return static_cast<T>(start + static_cast<T>(r) * row_stride + static_cast<T>(c) * col_stride);
  }
  IRIS_HD T operator[](int j) const { return at(L::index(j)); }
  IRIS_HD operator Tile<T, N, L>() const {
    Tile<T, N, L> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

// A 2-D register tile of shape (M, N), in the default layout or in L (a
// dot's accumulator: DotLayout, types/layout.hpp).
template <class T, int M, int N, LayoutOf<M * N> L = Blocked<M, N>>
using Tile2 = Tile<T, M * N, L>;

// ---------------------------------------------------------------- traits
template <class X> struct tile_traits {
  static constexpr bool is_tile = false;
  using layout = void;
};
template <class T, int N, class L> struct tile_traits<Tile<T, N, L>> {
  static constexpr bool is_tile = true;
  using layout = L;
};
template <class T, int N, class L> struct tile_traits<Range<T, N, L>> {
  static constexpr bool is_tile = true;
  using layout = L;
};
template <class T, int N, class L> struct tile_traits<ContigPtrs<T, N, L>> {
  static constexpr bool is_tile = true;
  using layout = L;
};
template <class T, int N, class L> struct tile_traits<Strided<T, N, L>> {
  static constexpr bool is_tile = true;
  using layout = L;
};
template <class X> inline constexpr bool is_tile = tile_traits<std::remove_cvref_t<X>>::is_tile;
template <class X> inline constexpr bool is_range = false;
template <class T, int N, class L> inline constexpr bool is_range<Range<T, N, L>> = true;
template <class X> inline constexpr bool is_contig = false;
template <class T, int N, class L> inline constexpr bool is_contig<ContigPtrs<T, N, L>> = true;
template <class X> inline constexpr bool is_strided = false;
template <class T, int N, class L> inline constexpr bool is_strided<Strided<T, N, L>> = true;
template <class X> inline constexpr bool is_int_scalar = std::is_integral_v<X> && !std::is_same_v<X, bool>;

// The layout of a tile-like type, void for a scalar.
template <class X> using layout_of = typename tile_traits<std::remove_cvref_t<X>>::layout;

// The layout of the tiles among the operands of an operation that pairs their
// elements up by index (void where all are scalars, which are broadcast).
// Element j of two tiles is the same element of the tile only where their
// layouts agree, so they must.
template <class... Ls> struct first_layout { using type = void; };
template <class L, class... Ls> struct first_layout<L, Ls...> {
  using type = std::conditional_t<std::is_void_v<L>, typename first_layout<Ls...>::type, L>;
};
template <class... Xs> struct common_layout {
  using type = typename first_layout<layout_of<Xs>...>::type;
  static_assert(((std::is_void_v<layout_of<Xs>> || std::is_same_v<layout_of<Xs>, type>) && ...),
                "operands of an elementwise operation must have the same layout; convert one first");
};
template <class... Xs> using common_layout_t = typename common_layout<Xs...>::type;

// Range, ContigPtrs and Strided know every element (at(f)); a Tile only its
// thread's.
template <class X> inline constexpr bool is_symbolic = is_range<X> || is_contig<X> || is_strided<X>;

namespace detail {
// A Range, ContigPtrs or Strided as the Strided of the same elements: start +
// f is start + r * cols + c (row_stride cols, col_stride 1).
template <class X>
IRIS_HD auto as_strided(const X& x) {
  static_assert(is_symbolic<X>, "as_strided takes a Range, ContigPtrs or Strided");
  using L = layout_of<X>;
  using T = typename X::value_type;
  using S = typename Strided<T, X::size, L>::stride_type;
  if constexpr (is_strided<X>) return x;
  else if constexpr (is_range<X>) return Strided<T, X::size, L>{x.start, static_cast<S>(L::cols), S{1}};
  else return Strided<T, X::size, L>{x.base, S{L::cols}, S{1}};
}
}  // namespace detail

// The shape of a tile-like type (a 1-D tile of N is one row: 1, N).
template <class X> inline constexpr int rank_of = layout_of<X>::rank;
template <class X> inline constexpr int rows_of = layout_of<X>::rows;
template <class X> inline constexpr int cols_of = layout_of<X>::cols;

// The number of elements of a tile-like type, 0 for a scalar.
template <class X>
constexpr int size_of() {
  if constexpr (is_tile<X>) return std::remove_cvref_t<X>::size;
  else return 0;
}

// Element j of a tile, or the scalar itself (broadcasting).
template <class X>
IRIS_HD auto elem(const X& x, int j) {
  if constexpr (is_tile<X>) return x[j];
  else return x;
}

}  // namespace iris
