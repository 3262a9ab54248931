// `p @ r`: the distance between the two heaps is computed once per pointer
// (or pointer tile) and added to each address. Checked builds check the rank,
// and that a scalar pointer lies in this rank's heap before it moves; a
// tile's elements are checked by the access that uses them, which knows the
// mask.
#pragma once

#include <cstddef>

#include "iris/device.hpp"
#include "iris/ops/elementwise.hpp"
#include "iris/types/checked.hpp"

namespace iris {

template <class C, class T>
IRIS_HD void check_translation(const C& check, const T* p, int to_rank) {
  if constexpr (is_checked<C>)
    detail::check_translate(check.program.ctx, p, to_rank, check.file, check.line,
                            check.program.linear_id());
}

template <class P, class C = Unchecked>
IRIS_HD auto translate_to(const Program& p, const P& ptr, int to_rank, const C& check = {}) {
  if constexpr (is_tile<P>) {
    // Only the rank: elements that the access masks off may point anywhere
    // (past the end of the heap, for one), and the access checks the bounds
    // of the elements it really touches, in the heap it touches.
    if constexpr (is_checked<C>)
      check_rank(check.program.ctx, to_rank, check.file, check.line, check.program.linear_id());
  } else {
    check_translation(check, ptr, to_rank);
  }
  std::ptrdiff_t delta = p.ctx.heap_bases[to_rank] - p.ctx.heap_bases[p.ctx.rank];
  auto shift = [delta](auto* q) {
    return reinterpret_cast<decltype(q)>(reinterpret_cast<char*>(q) + delta);
  };
  if constexpr (is_contig<P>) return P{shift(ptr.base)};
  else return zip(shift, ptr);
}

}  // namespace iris
