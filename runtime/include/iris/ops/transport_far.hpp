// The remote accesses of ops/transport.hpp in a world of several nodes, on
// every target that has a far path: the CPU's run_mpi (MPI RMA, device_cpu.hpp)
// and the GPU's NVSHMEM world (device_nvshmem.hpp). The far ranks' heaps have
// slots in one range that takes no loads and stores (DeviceContext::far_slots),
// so the rank of any element is known from its address: near elements take the
// plain access, far ones go to the target's transport, which supplies
//   far_put, far_get            bytes to or from a far rank's heap at an offset
//   far_fetch_op, far_compare_swap, far_accumulate   one element's atomics
//   far_complete_puts           this thread's puts are complete at their targets
// An element outside every heap is left to the plain access (checked builds
// have reported it).
//
// A tile's elements go to the transport in runs: consecutive active elements at
// consecutive addresses of one far rank make one put or get. Atomics go one
// element at a time. Their memory orders, on the far path: a release first
// completes the thread's puts and fences; an acquire fences after the
// operation, which has completed at its target when it returns. A scalar
// access happens once per program instance (single), after every thread's
// puts have completed where it releases.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/device.hpp"
#include "iris/ops/atomic.hpp"
#include "iris/ops/block.hpp"
#include "iris/ops/memory.hpp"

namespace iris::detail {

// Calls on_near(p, j) for each active, unmasked element j of the pointer tile
// whose address p is not in a far slot, and on_far(rank, first, j, count) for
// each run of such elements j .. j + count - 1 at consecutive addresses from
// `first` on, in the slot of one far rank.
template <class P, class M, class OnNear, class OnFar>
IRIS_HD void for_each_far_run(const DeviceContext& ctx, const P& ptr, const M& mask, OnNear on_near, OnFar on_far) {
  using L = common_layout_t<P, M>;
  using Pointer = typename P::value_type;
  if (!L::active()) return;
  int rank = -1, start = 0, count = 0;
  Pointer first = nullptr;
  std::uintptr_t slot_end = 0;  // of the run's rank
  const auto end_run = [&] {
    if (count > 0) on_far(rank, first, start, count);
    count = 0;
  };
  for (int j = 0; j < L::per_thread; ++j) {
    if (!mask_at(mask, j)) {
      end_run();
      continue;
    }
    const Pointer p = ptr[j];
    // The next element of the run, in the same slot: no need to find its rank.
    if (count > 0 && p == first + count && reinterpret_cast<std::uintptr_t>(p) < slot_end) {
      ++count;
      continue;
    }
    end_run();
    const int r = far_rank_of(ctx, p);
    if (r < 0) {
      on_near(p, j);
      continue;
    }
    rank = r, first = p, start = j, count = 1;
    slot_end = reinterpret_cast<std::uintptr_t>(ctx.heap_bases[r]) + ctx.heap_size;
  }
  end_run();
}

template <class P, class X, class M, class C>
IRIS_HD void far_store(const DeviceContext& ctx, const P& ptr, const X& value, const M& mask, const C& check) {
  check_memory<Access::remote>(check, ptr, mask);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    if (!mask_at(mask, 0)) return;
    single([&] {
      const T v = static_cast<T>(value);
      if (const int r = far_rank_of(ctx, ptr); r >= 0) far_put(ctx, r, far_offset(ctx, r, ptr), &v, sizeof v);
      else *ptr = v;
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    using L = common_layout_t<P, X, M>;
    // The elements as T, in order: the tile itself where it holds them so.
    const auto put_runs = [&](const T* values) {
      for_each_far_run(
          ctx, ptr, mask, [&](T* p, int j) { *p = values[j]; },
          [&](int r, T* first, int j, int count) {
            far_put(ctx, r, far_offset(ctx, r, first), &values[j], sizeof(T) * static_cast<std::size_t>(count));
          });
    };
    if constexpr (std::is_same_v<X, Tile<T, P::size, L>>) {
      put_runs(value.v);
    } else {
      T values[L::per_thread];
      for (int j = 0; j < L::per_thread; ++j) values[j] = static_cast<T>(elem(value, j));
      put_runs(values);
    }
  }
}

// A get sees the thread's own earlier puts: they are completed first.
template <class P, class M, class O, class C>
IRIS_HD auto far_load(const DeviceContext& ctx, const P& ptr, const M& mask, const O& other, const C& check) {
  check_memory<Access::remote>(check, ptr, mask);
  far_complete_puts();
  using T = pointee_t<P>;
  if constexpr (std::is_pointer_v<P>) {
    if (!mask_at(mask, 0)) return other_at<T>(other, 0);
    return single([&] {
      const int r = far_rank_of(ctx, ptr);
      if (r < 0) return static_cast<T>(*ptr);
      T v;
      far_get(ctx, r, far_offset(ctx, r, ptr), &v, sizeof v);
      return v;
    });
  } else {
    using L = common_layout_t<P, M, O>;
    Tile<T, P::size, L> out;
    if constexpr (!std::is_same_v<M, NoMask>)  // (without a mask every element is read)
      for (int j = 0; j < L::per_thread; ++j) out.v[j] = other_at<T>(other, j);
    for_each_far_run(
        ctx, ptr, mask, [&](const T* p, int j) { out.v[j] = *p; },
        [&](int r, const T* first, int j, int count) {
          far_get(ctx, r, far_offset(ctx, r, first), &out.v[j], sizeof(T) * static_cast<std::size_t>(count));
        });
    return out;
  }
}

template <class T>
IRIS_HD constexpr FarElement far_element() {
  static_assert((std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) || std::is_same_v<T, float> ||
                    std::is_same_v<T, double>,
                "atomics on far ranks: 32- and 64-bit integers, float and double");
  if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? FarElement::f32 : FarElement::f64;
  else if constexpr (std::is_signed_v<T>) return sizeof(T) == 4 ? FarElement::i32 : FarElement::i64;
  else return sizeof(T) == 4 ? FarElement::u32 : FarElement::u64;
}

template <AtomicOp Op>
IRIS_HD constexpr FarOp far_op() {
  if constexpr (Op == AtomicOp::add || Op == AtomicOp::sub) return FarOp::sum;
  else if constexpr (Op == AtomicOp::and_) return FarOp::band;
  else if constexpr (Op == AtomicOp::or_) return FarOp::bor;
  else if constexpr (Op == AtomicOp::xor_) return FarOp::bxor;
  else if constexpr (Op == AtomicOp::min) return FarOp::min;
  else if constexpr (Op == AtomicOp::max) return FarOp::max;
  else return FarOp::replace;  // xchg
}

// -v, wrapping for integers as the atomic subtraction does.
template <class T>
IRIS_HD T negated(T v) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(v));
  } else {
    return -v;
  }
}

// The halves of a memory order around a far atomic.
template <Sem S>
IRIS_HD void far_release() {
  if constexpr (store_half(S) == Sem::release) {
    far_complete_puts();
    fence<Sem::release, Scope::sys>();
  }
}
// The release's second half, on the thread that makes the far atomic after
// the others' first halves (single's barrier between them): its fence makes
// their writes visible before the atomic (cumulativity).
template <Sem S>
IRIS_HD void far_release_fence() {
  if constexpr (store_half(S) == Sem::release) fence<Sem::release, Scope::sys>();
}
template <Sem S>
IRIS_HD void far_acquire() {
  if constexpr (load_half(S) == Sem::acquire) fence<Sem::acquire, Scope::sys>();
}

template <AtomicOp Op, Sem S, class T>
IRIS_HD T far_rmw(const DeviceContext& ctx, int r, T* p, T v) {
  static_assert(!bitwise<Op> || std::is_integral_v<T>, "bitwise atomics need an integer type");
  const T operand = Op == AtomicOp::sub ? negated(v) : v;
  T old;
  far_release_fence<S>();
  far_fetch_op(ctx, r, far_offset(ctx, r, p), far_op<Op>(), far_element<T>(), &operand, &old);
  far_acquire<S>();
  return old;
}

template <AtomicOp Op, Sem S, Scope Sc, class P, class X, class M, class C>
IRIS_HD auto far_atomic_rmw(const DeviceContext& ctx, const P& ptr, const X& value, const M& mask, const C& check) {
  far_release<S>();
  return atomic_each<S, Sc, common_layout_t<P, X, M>, Access::remote>(ptr, mask, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    const T v = static_cast<T>(elem(value, j));
    const int r = far_rank_of(ctx, p);
    return r < 0 ? atomic_apply<Op, S, Sc>(p, v) : far_rmw<Op, S>(ctx, r, p, v);
  });
}

template <Sem S, Scope Sc, class P, class E, class X, class C>
IRIS_HD auto far_atomic_compare_exchange(const DeviceContext& ctx, const P& ptr, const E& compare, const X& value,
                                 const C& check) {
  far_release<S>();
  return atomic_each<S, Sc, common_layout_t<P, E, X>, Access::remote>(ptr, NoMask{}, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    const T expected = static_cast<T>(elem(compare, j)), desired = static_cast<T>(elem(value, j));
    const int r = far_rank_of(ctx, p);
    if (r < 0) return atomic_cas<S, Sc>(p, expected, desired);
    T old;
    far_release_fence<S>();
    far_compare_swap(ctx, r, far_offset(ctx, r, p), far_element<T>(), &expected, &desired, &old);
    far_acquire<S>();
    return old;
  });
}

template <Sem S, Scope Sc, class P, class C>
IRIS_HD auto far_atomic_read(const DeviceContext& ctx, const P& ptr, const C& check) {
  check_memory<Access::remote>(check, ptr);
  const auto one = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    T value;
    if (const int r = far_rank_of(ctx, p); r < 0) {
      value = atomic_load<S, Sc>(p);
    } else {
      const T ignored{};
      far_fetch_op(ctx, r, far_offset(ctx, r, p), FarOp::no_op, far_element<T>(), &ignored, &value);
      far_acquire<S>();
    }
    after_atomic_read<S, Sc>(check, p);
    return value;
  };
  if constexpr (std::is_pointer_v<P>) {
    return single([&] { return one(ptr); });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    Tile<T, P::size, layout_of<P>> out;
    const bool active = layout_of<P>::active();
    for (int j = 0; j < P::per_thread; ++j) out.v[j] = active ? one(ptr[j]) : T{};
    return out;
  }
}

// A write or a signal: `op` replace (a store) or sum (an add) of v. The caller
// has made the release's first half (far_release) on every thread.
template <Sem S, Scope Sc, class T>
IRIS_HD void far_write(const DeviceContext& ctx, T* p, FarOp op, T v) {
  static_assert(S != Sem::acquire, "atomic_store cannot have acquire semantics");
  const int r = far_rank_of(ctx, p);
  if (r < 0) {
    if (op == FarOp::sum) atomic_add<S, Sc>(p, v);
    else atomic_store<S, Sc>(p, v);
    return;
  }
  far_release_fence<S>();
  far_accumulate(ctx, r, far_offset(ctx, r, p), op, far_element<T>(), &v);
}

template <Sem S, Scope Sc, class P, class X, class C>
IRIS_HD void far_atomic_write(const DeviceContext& ctx, const P& ptr, const X& value, const C& check) {
  check_memory<Access::remote>(check, ptr);
  far_release<S>();
  const auto one = [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    before_atomic_write<S, Sc>(check, p);
    far_write<S, Sc>(ctx, p, FarOp::replace, static_cast<T>(elem(value, j)));
  };
  if constexpr (std::is_pointer_v<P>) {
    single([&] { one(ptr, 0); });
  } else {
    using L = common_layout_t<P, X>;
    if (!L::active()) return;
    for (int j = 0; j < L::per_thread; ++j) one(ptr[j], j);
  }
}

template <bool Add, Sem S, Scope Sc, class T, class X, class C>
IRIS_HD void far_raise_signal(const DeviceContext& ctx, T* ptr, const X& value, const C& check) {
  check_memory<Access::remote>(check, ptr);
  far_release<S>();
  single([&] {
    before_atomic_write<S, Sc>(check, ptr);
    far_write<S, Sc>(ctx, ptr, Add ? FarOp::sum : FarOp::replace, static_cast<T>(value));
  });
}

}  // namespace iris::detail
