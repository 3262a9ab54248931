// Iris runtime: the part of the device primitives that is the same on every
// target. The per-target files (device_cpu.hpp; device_gpu.hpp for NVIDIA and
// AMD) include it and add what the hardware decides: the atomics, waits,
// fences, the device barrier and checked mode's reports.
//
//   * the memory model's enumerations (memory_model.hpp);
//   * translate: the address of an object on another rank's heap;
//   * what a memory order means for each kind of access (the halves of
//     acq_rel), stated once; each target maps a Sem to its own order (Order::of);
//   * compare: the comparisons of wait_until;
//   * signals: a store or an add with the signal's order, over the target's
//     atomics (declared here, defined by the target).
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/host.hpp"
#include "iris/memory_model.hpp"
#include "iris/target.hpp"

namespace iris {

// The address of *p on rank `to_rank`: heap_bases[to] + (p - heap_bases[me]).
// Integer arithmetic, so that it is defined for any T (void included) and any p;
// translate_checked (per target) is the variant that validates its arguments.
template <class T>
IRIS_HD T* translate(T* p, int to_rank, const DeviceContext& ctx) {
  const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) -
                             reinterpret_cast<std::uintptr_t>(ctx.heap_bases[ctx.rank]);
  return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(ctx.heap_bases[to_rank]) + off);
}

namespace detail {

// A read-modify-write takes its memory order as it is. A load cannot release
// and a store cannot acquire: acq_rel narrows to the half that applies (the
// meaningless orders are refused at compile time by the callers). A failed
// compare-exchange is a pure load: never release.
constexpr Sem load_half(Sem s) { return s == Sem::relaxed ? Sem::relaxed : Sem::acquire; }
constexpr Sem store_half(Sem s) { return s == Sem::relaxed ? Sem::relaxed : Sem::release; }
constexpr Sem failure_half(Sem s) { return s == Sem::relaxed || s == Sem::release ? Sem::relaxed : Sem::acquire; }

// The same in a target's own terms: Order::of maps a Sem to the target's order
// (std::memory_order, libcu++'s, or the __ATOMIC_* value of the builtins).
template <class Order, Sem S>
inline constexpr auto rmw_order = Order::of(S);
template <class Order, Sem S>
inline constexpr auto load_order = Order::of(load_half(S));
template <class Order, Sem S>
inline constexpr auto store_order = Order::of(store_half(S));
template <class Order, Sem S>
inline constexpr auto failure_order = Order::of(failure_half(S));

template <class T>
IRIS_HD constexpr bool compare(T a, Cmp op, T b) {
  switch (op) {
    case Cmp::eq: return a == b;
    case Cmp::ne: return a != b;
    case Cmp::lt: return a < b;
    case Cmp::le: return a <= b;
    case Cmp::gt: return a > b;
    case Cmp::ge: return a >= b;
  }
  return false;
}

}  // namespace detail

// The target's atomics that signals are made of (defined by the target).
template <Sem S, Scope Sc, class T>
IRIS_HD void atomic_store(T* p, std::type_identity_t<T> v);
template <Sem S, Scope Sc, class T>
IRIS_HD T atomic_add(T* p, std::type_identity_t<T> v);

// Raising a signal: a store (set) or an add with the signal's memory order.
template <Sem S, Scope Sc, class T>
IRIS_HD void signal_set(T* p, std::type_identity_t<T> v) {
  atomic_store<S, Sc>(p, v);
}
template <Sem S, Scope Sc, class T>
IRIS_HD void signal_add(T* p, std::type_identity_t<T> v) {
  atomic_add<S, Sc>(p, v);
}

}  // namespace iris
