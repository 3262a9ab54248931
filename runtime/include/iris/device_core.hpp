// Iris runtime: the part of the device primitives that is the same on every
// target. The per-target files (device_cpu.hpp; device_gpu.hpp for NVIDIA and
// AMD) include it and add what the hardware decides: the atomic instructions
// (detail::rmw, atomic_load, atomic_store, atomic_cas), waits, fences, the
// device barrier and checked mode's reports.
//
//   * the memory model's enumerations (memory_model.hpp);
//   * translate: the address of an object on another rank's heap;
//   * what a memory order means for each kind of access (the halves of
//     acq_rel), stated once; each target maps a Sem to its own order (Order::of);
//   * compare: the comparisons of wait_until;
//   * the read-modify-writes by name (atomic_add ... atomic_xchg), each the
//     target's detail::rmw<Op>, and what the targets' rmw share: the member
//     functions of an atomic_ref, what min and max store;
//   * signals: a store or an add with the signal's order, over the target's
//     atomics.
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

// ------------------------------------------------------------------ far ranks
// What every target's remote accesses (ops/transport.hpp) know of a rank that
// is not in my node team: its heap is addressed in the range of far slots
// (DeviceContext::far_slots), which takes no loads and stores.

// The element types and operations of far atomics (sub is a sum of the negated
// value; replace writes, no_op reads).
enum class FarElement : std::uint8_t { i32, u32, i64, u64, f32, f64 };
enum class FarOp : std::uint8_t { sum, band, bor, bxor, min, max, replace, no_op };

// Whether every rank of ctx's world is near (one node: no transport).
IRIS_HD inline bool one_node(const DeviceContext& ctx) { return ctx.node_size == ctx.world_size; }

// The far rank whose slot holds p, or -1 (near, or outside every far slot).
IRIS_HD inline int far_rank_of(const DeviceContext& ctx, const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p), first = reinterpret_cast<std::uintptr_t>(ctx.far_slots);
  if (ctx.far_slots == nullptr || address < first) return -1;
  const std::uintptr_t r = (address - first) / ctx.slot_stride;
  if (r >= static_cast<std::uintptr_t>(ctx.world_size)) return -1;
  const int rank = static_cast<int>(r);
  return rank >= ctx.node_first && rank < ctx.node_first + ctx.node_size ? -1 : rank;
}

// The byte offset of p in the heap of `rank`, as every rank addresses it.
IRIS_HD inline std::uint64_t far_offset(const DeviceContext& ctx, int rank, const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(ctx.heap_bases[rank]);
}

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

// The read-modify-write Op on *p with order S at scope Sc; returns the old value
// (defined by the target, from the helpers below).
template <AtomicOp Op, Sem S, Scope Sc, class T>
IRIS_HD T rmw(T* p, T v);

template <AtomicOp Op>
inline constexpr bool bitwise = Op == AtomicOp::and_ || Op == AtomicOp::or_ || Op == AtomicOp::xor_;
template <AtomicOp Op>
inline constexpr bool min_or_max = Op == AtomicOp::min || Op == AtomicOp::max;

// Op through the member functions of an atomic_ref: std::atomic_ref's on the
// CPU, libcu++'s cuda::atomic_ref on NVIDIA (which has min and max too).
template <AtomicOp Op, class Ref, class T, class MemoryOrder>
IRIS_HD T rmw_on_ref(Ref ref, T v, MemoryOrder order) {
  if constexpr (Op == AtomicOp::add) return ref.fetch_add(v, order);  // floats too (C++20)
  else if constexpr (Op == AtomicOp::sub) return ref.fetch_sub(v, order);
  else if constexpr (Op == AtomicOp::and_) return ref.fetch_and(v, order);
  else if constexpr (Op == AtomicOp::or_) return ref.fetch_or(v, order);
  else if constexpr (Op == AtomicOp::xor_) return ref.fetch_xor(v, order);
  else if constexpr (Op == AtomicOp::min) return ref.fetch_min(v, order);
  else if constexpr (Op == AtomicOp::max) return ref.fetch_max(v, order);
  else return ref.exchange(v, order);
}

// What min and max store, for the targets' compare-and-swap loops where there is
// no instruction: v where it beats the old value (a NaN never does), else the old.
template <AtomicOp Op, class T>
IRIS_HD constexpr T min_max(T old, T v) {
  static_assert(min_or_max<Op>);
  const bool beats = Op == AtomicOp::min ? v < old : old < v;
  return beats ? v : old;
}

}  // namespace detail

// ------------------------------------------------------------------ atomics
// The read-modify-writes by name, the same on every target: each is the target's
// detail::rmw<Op>. All return the old value. T is a type the target's atomics
// support (irisc emits 32- and 64-bit integers and floating-point types); the
// bitwise operations need an integer type. p must be naturally aligned. T is
// deduced from the pointer alone (type_identity_t on the values), so
// atomic_add<...>(u64_ptr, 1) converts the 1 instead of failing to deduce.
#define IRIS_NAMED_RMW(name, op)                                                                             \
  template <Sem S, Scope Sc, class T>                                                                        \
  IRIS_HD T name(T* p, std::type_identity_t<T> v) {                                                          \
    static_assert(!detail::bitwise<AtomicOp::op> || std::is_integral_v<T>, #name " needs an integer type"); \
    return detail::rmw<AtomicOp::op, S, Sc>(p, v);                                                           \
  }
IRIS_NAMED_RMW(atomic_add, add)
IRIS_NAMED_RMW(atomic_sub, sub)
IRIS_NAMED_RMW(atomic_and, and_)
IRIS_NAMED_RMW(atomic_or, or_)
IRIS_NAMED_RMW(atomic_xor, xor_)
IRIS_NAMED_RMW(atomic_min, min)
IRIS_NAMED_RMW(atomic_max, max)
IRIS_NAMED_RMW(atomic_xchg, xchg)
#undef IRIS_NAMED_RMW

// The target's atomic store, which signal_set is made of (defined by the target).
template <Sem S, Scope Sc, class T>
IRIS_HD void atomic_store(T* p, std::type_identity_t<T> v);

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
