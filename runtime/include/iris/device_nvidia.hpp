// Iris runtime: the GPU atomics and fences on NVIDIA GPUs: libcu++'s
// cuda::atomic_ref<T, scope>, which emits the PTX instruction with the
// requested order and scope (atom.add.acq_rel.sys, ld.acquire.gpu,
// st.release.cta, fence.acq_rel.sys, ...). Included by device_gpu.hpp, which
// holds what NVIDIA and AMD share (and declares detail::cas_update first);
// device_amd.hpp is the AMD counterpart.
#pragma once

#include <cuda/atomic>

#include <type_traits>

#include "iris/device_core.hpp"

namespace iris {

namespace detail {

template <Scope Sc>
inline constexpr cuda::thread_scope cu_scope = Sc == Scope::block ? cuda::thread_scope_block
                                               : Sc == Scope::gpu ? cuda::thread_scope_device
                                                                  : cuda::thread_scope_system;
template <class T, Scope Sc>
using Ref = cuda::atomic_ref<T, cu_scope<Sc>>;

// Sem -> libcu++'s order (what each access takes of it: device_core.hpp).
struct Order {
  static constexpr cuda::std::memory_order of(Sem s) {
    return s == Sem::relaxed   ? cuda::std::memory_order_relaxed
           : s == Sem::acquire ? cuda::std::memory_order_acquire
           : s == Sem::release ? cuda::std::memory_order_release
                               : cuda::std::memory_order_acq_rel;
  }
};

// The read-modify-writes (device_core.hpp names them): libcu++'s, but min and
// max of floating-point values, which have no instruction, through cas_update.
template <AtomicOp Op, Sem S, Scope Sc, class T>
IRIS_HD T rmw(T* p, T v) {
  if constexpr (min_or_max<Op> && !std::is_integral_v<T>) {
    return cas_update<S, Sc>(p, [v](T old) { return min_max<Op>(old, v); });
  } else {
    return rmw_on_ref<Op>(Ref<T, Sc>(*p), v, rmw_order<Order, S>);
  }
}

}  // namespace detail

template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_load(T* p) {
  static_assert(S != Sem::release, "atomic_load cannot have release semantics");
  return detail::Ref<T, Sc>(*p).load(detail::load_order<detail::Order, S>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD void atomic_store(T* p, std::type_identity_t<T> v) {
  static_assert(S != Sem::acquire, "atomic_store cannot have acquire semantics");
  detail::Ref<T, Sc>(*p).store(v, detail::store_order<detail::Order, S>);
}
// Compare-and-swap: stores `desired` if *p == expected; returns the old value either way.
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_cas(T* p, std::type_identity_t<T> expected, std::type_identity_t<T> desired) {
  detail::Ref<T, Sc>(*p).compare_exchange_strong(expected, desired, detail::rmw_order<detail::Order, S>,
                                                 detail::failure_order<detail::Order, S>);
  return expected;  // compare_exchange left the old value here
}

template <Sem S, Scope Sc>
IRIS_HD void fence() {
  if constexpr (S != Sem::relaxed) cuda::atomic_thread_fence(detail::rmw_order<detail::Order, S>, detail::cu_scope<Sc>);
}

}  // namespace iris
