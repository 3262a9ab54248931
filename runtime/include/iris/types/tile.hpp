// The tile-like values of the library, and what is known of them at compile
// time:
//   Tile<T, N>        a register tile
//   Range<T, N>       start + i (what arange and offsets built from it are),
//                     kept symbolic so that contiguity is known at compile time
//   ContigPtrs<T, N>  base + i: a pointer tile known to be contiguous
// and the traits the operations dispatch on.
#pragma once

#include <type_traits>

#include "iris/types/layout.hpp"

namespace iris {

template <class T, int N>
struct Tile {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T v[per_thread];
  IRIS_HD T operator[](int j) const { return v[j]; }
  IRIS_HD T& operator[](int j) { return v[j]; }
};

template <class T, int N>
struct Range {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T start;
  IRIS_HD T operator[](int j) const { return start + static_cast<T>(Layout<N>::index(j)); }
  IRIS_HD operator Tile<T, N>() const {
    Tile<T, N> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

template <class T, int N>
struct ContigPtrs {
  using value_type = T*;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T* base;
  IRIS_HD T* operator[](int j) const { return base + Layout<N>::index(j); }
  IRIS_HD operator Tile<T*, N>() const {
    Tile<T*, N> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

// ---------------------------------------------------------------- traits
template <class X> struct tile_traits { static constexpr bool is_tile = false; };
template <class T, int N> struct tile_traits<Tile<T, N>> { static constexpr bool is_tile = true; };
template <class T, int N> struct tile_traits<Range<T, N>> { static constexpr bool is_tile = true; };
template <class T, int N> struct tile_traits<ContigPtrs<T, N>> { static constexpr bool is_tile = true; };
template <class X> inline constexpr bool is_tile = tile_traits<std::remove_cvref_t<X>>::is_tile;
template <class X> inline constexpr bool is_range = false;
template <class T, int N> inline constexpr bool is_range<Range<T, N>> = true;
template <class X> inline constexpr bool is_contig = false;
template <class T, int N> inline constexpr bool is_contig<ContigPtrs<T, N>> = true;
template <class X> inline constexpr bool is_int_scalar = std::is_integral_v<X> && !std::is_same_v<X, bool>;

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
