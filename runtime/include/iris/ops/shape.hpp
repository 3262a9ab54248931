// Shape operations on 1-D and 2-D tiles: adding an axis, reshaping,
// broadcasting (NumPy's rule: a 1-D tile of N is (1, N), a dimension of 1
// stretches) and transposing.
//
// Blocked layouts place elements by flat index whatever the shape
// (types/layout.hpp), so expand_dims and reshape only change the type: the
// same elements stay in the same threads, and a Range or ContigPtrs stays one.
// broadcast_to, convert_layout (between layouts that place elements
// differently) and trans move elements: from a Range or ContigPtrs each
// thread computes its elements directly; a register tile's elements live in
// other threads' registers on the GPU and go through the exchange
// (ops/block.hpp), which costs the tile's size in shared memory and two
// synchronisations of the instance, so every thread of the instance must call
// them.
#pragma once

#include <type_traits>

#include "iris/ops/block.hpp"
#include "iris/types/tile.hpp"

namespace iris {

namespace detail {

// x as a tile of layout L: the same elements in the same threads, which is
// what two blocked layouts of one size agree on.
template <class L, class X>
IRIS_HD auto retype(const X& x) {
  static_assert(is_blocked<layout_of<X>>, "expand_dims and reshape take tiles of the default (blocked) layout");
  using T = typename X::value_type;
  if constexpr (is_range<X>) {
    return Range<T, L::size, L>{x.start};
  } else if constexpr (is_contig<X>) {
    return ContigPtrs<std::remove_pointer_t<T>, L::size, L>{x.base};
  } else {
    Tile<T, L::size, L> out;
    for (int j = 0; j < L::per_thread; ++j) out.v[j] = x.v[j];
    return out;
  }
}

// A tile of layout L whose element at flat index f is x's element at flat
// index source(f).
template <class L, class X, class Source>
IRIS_HD auto gather(const X& x, Source source) {
  if constexpr (is_symbolic<X>) {
    return generate<L>([&](int f, int) { return x.at(source(f)); });
  } else {
    return exchange([&](const auto* staged) { return generate<L>([&](int f, int) { return staged[source(f)]; }); },
                    x);
  }
}

}  // namespace detail

// A 1-D tile of N as (1, N) (Axis 0) or (N, 1) (Axis 1).
template <int Axis, class X>
IRIS_HD auto expand_dims(const X& x) {
  static_assert(rank_of<X> == 1, "expand_dims takes a 1-D tile");
  static_assert(Axis == 0 || Axis == 1, "expand_dims: the axis of a 1-D tile is 0 or 1");
  if constexpr (Axis == 0) return detail::retype<Blocked<1, X::size>>(x);
  else return detail::retype<Blocked<X::size, 1>>(x);
}

// The tile's elements, in row-major order, in a tile of shape Dims.
template <int... Dims, class X>
IRIS_HD auto reshape(const X& x) {
  static_assert(Blocked<Dims...>::size == X::size, "reshape: the new shape must have as many elements as the tile");
  return detail::retype<Blocked<Dims...>>(x);
}

// x, a tile of L's shape (a 1-D tile of N counting as (1, N)), in layout L
// (a layout class, types/layout.hpp): x itself where it already has layout L;
// a Range or ContigPtrs stays one (it is start + f or base + f in any
// layout); a register tile of a blocked layout to another blocked layout is a
// change of type (they place elements alike); any other register tile moves
// its elements through the exchange (ops/block.hpp), so every thread of the
// instance must call it. What generated code uses to bring a tile into dot's
// accumulator layout (convert_layout<DotLayout<T, M, N>>(x)) and back.
template <Layout L, class X>
IRIS_HD auto convert_layout(const X& x) {
  static_assert(is_tile<X>, "convert_layout<L> takes a tile; broadcast_to<L> makes one of a scalar");
  if constexpr (is_tile<X>) {
    static_assert(rows_of<X> == L::rows && cols_of<X> == L::cols,
                  "convert_layout<L>: the tile must have L's shape (a 1-D tile of N is (1, N))");
    using T = typename X::value_type;
    if constexpr (std::is_same_v<layout_of<X>, L>) {
      return x;
    } else if constexpr (is_range<X>) {
      return Range<T, L::size, L>{x.start};
    } else if constexpr (is_contig<X>) {
      return ContigPtrs<std::remove_pointer_t<T>, L::size, L>{x.base};
    } else if constexpr (is_blocked<layout_of<X>> && is_blocked<L>) {
      return detail::retype<L>(x);
    } else {
      return detail::gather<L>(x, [](int f) { return f; });
    }
  }
}

// x, of shape (R, C) ((1, C) for a 1-D tile), stretched to L's shape (M, N)
// in layout L: each of R and C is 1 or the target's. A scalar fills a
// register tile. Where x already has the target's shape, convert_layout<L>(x)
// (x itself where it has layout L too). Otherwise element (r, c) of the
// result is x's (R == 1 ? 0 : r, C == 1 ? 0 : c): computed by each thread
// from a Range or ContigPtrs, through the exchange from a register tile.
template <Layout L, class X>
IRIS_HD auto broadcast_to(const X& x) {
  constexpr int M = L::rows, N = L::cols;
  if constexpr (!is_tile<X>) {
    Tile<X, L::size, L> out;
    for (int j = 0; j < L::per_thread; ++j) out.v[j] = x;
    return out;
  } else {
    constexpr int R = rows_of<X>, C = cols_of<X>;
    static_assert((R == 1 || R == M) && (C == 1 || C == N),
                  "broadcast_to<M, N>: each dimension of the tile (a 1-D tile of N is (1, N)) must be 1 or the "
                  "target's");
    if constexpr (R == M && C == N) {
      return convert_layout<L>(x);
    } else {
      return detail::gather<L>(x, [](int f) { return (R == 1 ? 0 : flat_row<N>(f)) * C + (C == 1 ? 0 : flat_col<N>(f)); });
    }
  }
}

// broadcast_to in the default layout of (M, N): x itself where it already has
// that shape and layout, the same kind of tile from a 1-D tile of N to (1, N).
template <int M, int N, class X>
IRIS_HD auto broadcast_to(const X& x) {
  return broadcast_to<Blocked<M, N>>(x);
}

// The transpose of a 2-D tile (R, C): (C, R), element (c, r) = x's (r, c).
template <class X>
IRIS_HD auto trans(const X& x) {
  static_assert(rank_of<X> == 2, "trans takes a 2-D tile");
  constexpr int R = rows_of<X>, C = cols_of<X>;
  return detail::gather<Blocked<C, R>>(x, [](int f) { return flat_col<R>(f) * C + flat_row<R>(f); });
}

}  // namespace iris
