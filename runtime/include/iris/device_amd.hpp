// Iris runtime: the GPU atomics and fences on AMD GPUs (hip-clang): the
// __hip_atomic_* builtins with __HIP_MEMORY_SCOPE_WORKGROUP/AGENT/SYSTEM for
// Scope::block/gpu/sys. Included by device_gpu.hpp, which holds what NVIDIA
// and AMD share (and declares detail::cas_update first); device_nvidia.hpp is
// the NVIDIA counterpart.
#pragma once

#include <hip/hip_runtime.h>

#include <type_traits>

#include "iris/device_core.hpp"

namespace iris {

namespace detail {

template <Scope Sc>
inline constexpr int hip_scope = Sc == Scope::block ? __HIP_MEMORY_SCOPE_WORKGROUP
                                 : Sc == Scope::gpu ? __HIP_MEMORY_SCOPE_AGENT
                                                    : __HIP_MEMORY_SCOPE_SYSTEM;
// Sem -> the builtins' order (what each access takes of it: device_core.hpp).
struct Order {
  static constexpr int of(Sem s) {
    return s == Sem::relaxed   ? __ATOMIC_RELAXED
           : s == Sem::acquire ? __ATOMIC_ACQUIRE
           : s == Sem::release ? __ATOMIC_RELEASE
                               : __ATOMIC_ACQ_REL;
  }
};

// The read-modify-writes (device_core.hpp names them): the builtins, but min and
// max of floating-point values, which have no instruction, through cas_update.
template <AtomicOp Op, Sem S, Scope Sc, class T>
IRIS_HD T rmw(T* p, T v) {
  constexpr int order = rmw_order<Order, S>, scope = hip_scope<Sc>;
  if constexpr (min_or_max<Op> && !std::is_integral_v<T>)
    return cas_update<S, Sc>(p, [v](T old) { return min_max<Op>(old, v); });
  else if constexpr (Op == AtomicOp::add) return __hip_atomic_fetch_add(p, v, order, scope);
  else if constexpr (Op == AtomicOp::sub) return __hip_atomic_fetch_add(p, static_cast<T>(-v), order, scope);
  else if constexpr (Op == AtomicOp::and_) return __hip_atomic_fetch_and(p, v, order, scope);
  else if constexpr (Op == AtomicOp::or_) return __hip_atomic_fetch_or(p, v, order, scope);
  else if constexpr (Op == AtomicOp::xor_) return __hip_atomic_fetch_xor(p, v, order, scope);
  else if constexpr (Op == AtomicOp::min) return __hip_atomic_fetch_min(p, v, order, scope);
  else if constexpr (Op == AtomicOp::max) return __hip_atomic_fetch_max(p, v, order, scope);
  else return __hip_atomic_exchange(p, v, order, scope);
}

}  // namespace detail

template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_load(T* p) {
  static_assert(S != Sem::release, "atomic_load cannot have release semantics");
  return __hip_atomic_load(p, detail::load_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD void atomic_store(T* p, std::type_identity_t<T> v) {
  static_assert(S != Sem::acquire, "atomic_store cannot have acquire semantics");
  __hip_atomic_store(p, v, detail::store_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_cas(T* p, std::type_identity_t<T> expected, std::type_identity_t<T> desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, detail::rmw_order<detail::Order, S>,
                                       detail::failure_order<detail::Order, S>, detail::hip_scope<Sc>);
  return expected;
}

template <Sem S, Scope Sc>
IRIS_HD void fence() {
  if constexpr (S != Sem::relaxed) {
#if IRIS_DEVICE_PASS
    if constexpr (Sc == Scope::block) __builtin_amdgcn_fence(detail::rmw_order<detail::Order, S>, "workgroup");
    else if constexpr (Sc == Scope::gpu) __builtin_amdgcn_fence(detail::rmw_order<detail::Order, S>, "agent");
    else __builtin_amdgcn_fence(detail::rmw_order<detail::Order, S>, "");
#else
    __atomic_thread_fence(detail::rmw_order<detail::Order, S>);
#endif
  }
}

}  // namespace iris
