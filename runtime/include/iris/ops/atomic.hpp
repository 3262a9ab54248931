// Atomics over scalars and tiles: read-modify-writes, compare-and-swap,
// atomic reads and writes.
#pragma once

#include <type_traits>

#include "iris/device.hpp"
#include "iris/ops/memory.hpp"

namespace iris {

// Checked builds, around each atomic element operation: what it orders, for the
// race detector. Only system scope orders ranks (on a GPU they are on different
// devices). A write reports its release half before it is made, a read its
// acquire half after.
template <Sem S, Scope Sc, class C>
IRIS_HD void before_atomic_write(const C& check, const void* p) {
  if constexpr (is_checked<C> && Sc == Scope::sys)
    detail::sync_atomic_write(check.program.ctx, p, S == Sem::release || S == Sem::acq_rel);
}
template <Sem S, Scope Sc, class C>
IRIS_HD void after_atomic_read(const C& check, const void* p) {
  if constexpr (is_checked<C> && Sc == Scope::sys)
    detail::sync_atomic_read(check.program.ctx, p, S == Sem::acquire || S == Sem::acq_rel);
}


template <AtomicOp Op, Sem S, Scope Sc, class T>
IRIS_HD T atomic_apply(T* p, T v) {
  if constexpr (Op == AtomicOp::add) return atomic_add<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::sub) return atomic_sub<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::and_) return atomic_and<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::or_) return atomic_or<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::xor_) return atomic_xor<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::min) return atomic_min<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::max) return atomic_max<S, Sc>(p, v);
  else return atomic_xchg<S, Sc>(p, v);
}

// One atomic per active, unmasked element: once per instance through a
// scalar pointer, per element of a pointer tile. `op(p, j)` makes element j's
// on p and returns the old value; the result collects them (T{} where nothing
// happened) in layout L, that of the operands (void for a scalar pointer).
// Checked builds check the access as A (remote: the far path of
// ops/transport.hpp) and tell the race detector what each one orders.
template <Sem S, Scope Sc, class L, Access A = Access::atomic, class P, class M, class C, class Op>
IRIS_HD auto atomic_each(const P& ptr, const M& mask, const C& check, Op op) {
  check_memory<A>(check, ptr, mask);
  const auto one = [&](auto* p, int j) {
    before_atomic_write<S, Sc>(check, p);
    const auto old = op(p, j);
    after_atomic_read<S, Sc>(check, p);
    return old;
  };
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    return single([&] { return mask_at(mask, 0) ? one(ptr, 0) : T{}; });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    Tile<T, P::size, L> old;
    const bool active = L::active();
    for (int j = 0; j < L::per_thread; ++j) old.v[j] = active && mask_at(mask, j) ? one(ptr[j], j) : T{};
    return old;
  }
}

// Read-modify-write; returns the old values.
template <AtomicOp Op, Sem S, Scope Sc, class P, class X, class M = NoMask, class C = Unchecked>
IRIS_HD auto atomic_rmw(const P& ptr, const X& value, const M& mask = {}, const C& check = {}) {
  return atomic_each<S, Sc, common_layout_t<P, X, M>>(ptr, mask, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    return atomic_apply<Op, S, Sc>(p, static_cast<T>(elem(value, j)));
  });
}

// Compare-and-swap: stores value where the element equals compare; returns
// the old values either way.
template <Sem S, Scope Sc, class P, class E, class X, class C = Unchecked>
IRIS_HD auto atomic_compare_exchange(const P& ptr, const E& compare, const X& value, const C& check = {}) {
  return atomic_each<S, Sc, common_layout_t<P, E, X>>(ptr, NoMask{}, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    return atomic_cas<S, Sc>(p, static_cast<T>(elem(compare, j)), static_cast<T>(elem(value, j)));
  });
}

template <Sem S, Scope Sc, class P, class C = Unchecked>
IRIS_HD auto atomic_read(const P& ptr, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  if constexpr (std::is_pointer_v<P>) {
    return single([&] {
      const auto value = atomic_load<S, Sc>(ptr);
      after_atomic_read<S, Sc>(check, ptr);
      return value;
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    Tile<T, P::size, layout_of<P>> out;
    const bool active = layout_of<P>::active();
    for (int j = 0; j < P::per_thread; ++j) {
      out.v[j] = T{};
      if (!active) continue;
      out.v[j] = atomic_load<S, Sc>(ptr[j]);
      after_atomic_read<S, Sc>(check, ptr[j]);
    }
    return out;
  }
}

template <Sem S, Scope Sc, class P, class X, class C = Unchecked>
IRIS_HD void atomic_write(const P& ptr, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    single([&] {
      before_atomic_write<S, Sc>(check, ptr);
      atomic_store<S, Sc>(ptr, static_cast<T>(value));
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    using L = common_layout_t<P, X>;
    if (!L::active()) return;
    for (int j = 0; j < L::per_thread; ++j) {
      before_atomic_write<S, Sc>(check, ptr[j]);
      atomic_store<S, Sc>(ptr[j], static_cast<T>(elem(value, j)));
    }
  }
}

}  // namespace iris
