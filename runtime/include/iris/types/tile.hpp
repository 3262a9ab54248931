// The tile-like values of the library, and what is known of them at compile
// time:
//   Tile<T, N, L>        a register tile
//   Range<T, N, L>       start + i (what arange and offsets built from it are),
//                        kept symbolic so that contiguity is known at compile time
//   ContigPtrs<T, N, L>  base + i: a pointer tile known to be contiguous
// and the traits the operations dispatch on. L, the layout (types/layout.hpp),
// is part of the type and defaults to Blocked<N>. A 2-D tile of shape (R, C)
// has N = R * C elements and a layout of that shape (Tile2<T, R, C> has
// Blocked<R, C>); i is an element's row-major flat index, r * C + c.
#pragma once

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
template <class X> inline constexpr bool is_tile = tile_traits<std::remove_cvref_t<X>>::is_tile;
template <class X> inline constexpr bool is_range = false;
template <class T, int N, class L> inline constexpr bool is_range<Range<T, N, L>> = true;
template <class X> inline constexpr bool is_contig = false;
template <class T, int N, class L> inline constexpr bool is_contig<ContigPtrs<T, N, L>> = true;
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

// Range and ContigPtrs know every element (at(f)); a Tile only its thread's.
template <class X> inline constexpr bool is_symbolic = is_range<X> || is_contig<X>;

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
