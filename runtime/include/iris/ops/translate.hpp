// `p @ r`: the distance between the two heaps is computed once per pointer
// (or pointer tile) and added to each address.
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
  if constexpr (is_contig<P>) {
    check_translation(check, ptr.base, to_rank);
  } else if constexpr (is_tile<P>) {
    for (int j = 0; j < P::per_thread; ++j) check_translation(check, ptr[j], to_rank);
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
