// Synchronisation: waits, signals, fences and the device barrier.
#pragma once

#include <type_traits>

#include "iris/device.hpp"
#include "iris/ops/atomic.hpp"

namespace iris {

// irisc passes the wait's .iris location in both builds (Checked, or
// UncheckedAt), for the CPU emulation's deadlock report; checked builds' waits
// also report a hang on the GPU (wait_until_checked).
template <Sem S, Scope Sc, class T, class X, class C = Unchecked>
IRIS_HD void wait(T* ptr, Cmp op, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  single([&] {
    if constexpr (std::is_same_v<C, Unchecked>) {
      wait_until<S, Sc>(ptr, op, static_cast<T>(value));
    } else if constexpr (is_checked<C>) {
      wait_until_checked<S, Sc>(check.program.ctx, ptr, op, static_cast<T>(value), check.file, check.line,
                                check.program.linear_id());
    } else {
      wait_until<S, Sc>(ptr, op, static_cast<T>(value), check.file, check.line);
    }
    after_atomic_read<S, Sc>(check, ptr);
  });
}

template <bool Add, Sem S, Scope Sc, class T, class X, class C = Unchecked>
IRIS_HD void raise_signal(T* ptr, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  single([&] {
    before_atomic_write<S, Sc>(check, ptr);
    if constexpr (Add) signal_add<S, Sc>(ptr, static_cast<T>(value));
    else signal_set<S, Sc>(ptr, static_cast<T>(value));
  });
}

template <Sem S, Scope Sc, class C = Unchecked>
IRIS_HD void memory_fence(const C& check = {}) {
#if IRIS_FAR_PATH
  // A release at system scope completes every thread's puts to far ranks first,
  // as quiet() does (without a world at hand: with none pending it is a fence).
  if constexpr (Sc == Scope::sys && detail::store_half(S) == Sem::release) detail::far_complete_puts();
#endif
  single([&] {
    fence<S, Sc>();
    if constexpr (is_checked<C> && Sc == Scope::sys)
      detail::sync_fence(check.program.ctx, S == Sem::acquire || S == Sem::acq_rel,
                         S == Sem::release || S == Sem::acq_rel);
  });
}

// Checked builds' barriers report a hang on the GPU, like their waits.
template <class C = Unchecked>
IRIS_HD void device_barrier(const Program& p, const C& check = {}) {
#if IRIS_FAR_PATH
  // Every thread's puts to far ranks complete before the instance arrives.
  if (!detail::one_node(p.ctx)) detail::far_complete_puts();
#endif
  single([&] {
    if constexpr (is_checked<C>) barrier_checked(p.ctx, p.linear_id(), check.file, check.line);
    else barrier(p.ctx, p.linear_id());
  });
}

}  // namespace iris
