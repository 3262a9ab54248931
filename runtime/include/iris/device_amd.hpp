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
IRIS_HD T atomic_add(T* p, std::type_identity_t<T> v) {
  return __hip_atomic_fetch_add(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_sub(T* p, std::type_identity_t<T> v) {
  return __hip_atomic_fetch_add(p, static_cast<T>(-v), detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_and(T* p, std::type_identity_t<T> v) {
  static_assert(std::is_integral_v<T>, "atomic_and needs an integer type");
  return __hip_atomic_fetch_and(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_or(T* p, std::type_identity_t<T> v) {
  static_assert(std::is_integral_v<T>, "atomic_or needs an integer type");
  return __hip_atomic_fetch_or(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_xor(T* p, std::type_identity_t<T> v) {
  static_assert(std::is_integral_v<T>, "atomic_xor needs an integer type");
  return __hip_atomic_fetch_xor(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_min(T* p, std::type_identity_t<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return __hip_atomic_fetch_min(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
  } else {
    return detail::cas_update<S, Sc>(p, [v](T old) { return v < old ? v : old; });
  }
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_max(T* p, std::type_identity_t<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return __hip_atomic_fetch_max(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
  } else {
    return detail::cas_update<S, Sc>(p, [v](T old) { return old < v ? v : old; });
  }
}
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_xchg(T* p, std::type_identity_t<T> v) {
  return __hip_atomic_exchange(p, v, detail::rmw_order<detail::Order, S>, detail::hip_scope<Sc>);
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
