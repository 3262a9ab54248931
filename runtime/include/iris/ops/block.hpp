// Cooperation of the threads of one program instance: a reduction of one
// value per thread, running something once per instance, and the exchange of
// tiles between the threads, through which the operations whose result
// elements need elements that other threads hold (broadcast_to, trans,
// reductions along an axis, dot) go.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "iris/device.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/tile.hpp"

namespace iris {

namespace detail {
// Synchronises the kThreads threads that run the program instance. On NVIDIA
// GPUs that is named barrier 1, which a kernel's copier warpgroup (the threads
// past kThreads that issue its TMA copies, ops/copy_box.hpp) never joins:
// barrier 0 (__syncthreads) would wait for it.
IRIS_HD inline void sync_instance() {
#if defined(__CUDA_ARCH__)
  asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
#elif defined(__HIP_DEVICE_COMPILE__)
  __syncthreads();
#endif
}
}  // namespace detail

#if IRIS_GPU
// Combines one partial value per thread into one value for the instance.
// (Host and device for the same reason as single().)
template <class R, class F>
IRIS_HD R block_reduce(R partial, F combine) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  (void)combine;
  return partial;  // host pass of a GPU compilation: never runs
#else
  struct alignas(16) Buffer {
    unsigned char bytes[kThreads * sizeof(R)];
  };
  __shared__ Buffer raw;
  R* buf = reinterpret_cast<R*>(raw.bytes);
  const int t = thread_index();
  buf[t] = partial;
  detail::sync_instance();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] = combine(buf[t], buf[t + s]);
    detail::sync_instance();
  }
  R result = buf[0];
  detail::sync_instance();
  return result;
#endif
}
#else
template <class R, class F>
R block_reduce(R partial, F) { return partial; }
#endif


// Runs f on one thread of the program instance and gives its result to all:
// scalar side effects (a store through a scalar pointer, an atomic, a signal)
// happen once per instance, after every thread's earlier accesses.
#if IRIS_GPU
// Host and device like the tile functions that return its result: their host
// pass must be able to deduce return types. Only the device pass synchronises.
template <class F>
IRIS_HD auto single(F f) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  return f();  // host pass of a GPU compilation: never runs
#else
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    detail::sync_instance();
    if (thread_index() == 0) f();
    detail::sync_instance();
  } else {
    struct alignas(16) Slot {
      unsigned char bytes[sizeof(R)];
    };
    __shared__ Slot slot;  // (alignas on the variable: hip-clang refuses it after __shared__)
    detail::sync_instance();
    if (thread_index() == 0) *reinterpret_cast<R*>(slot.bytes) = f();
    detail::sync_instance();
    R result = *reinterpret_cast<R*>(slot.bytes);
    detail::sync_instance();
    return result;
  }
#endif
}
#else
template <class F>
auto single(F f) { return f(); }
#endif

// ---------------------------------------------------------------- exchange
// exchange(body, xs...) stages tiles in memory that every thread of the
// instance reads: each thread writes its elements of each x at their flat
// index, the instance synchronises, every thread computes body(staged...) (a
// pointer to each x's elements in flat order), and the instance synchronises
// again, so that the next exchange may reuse the memory. Every thread of the
// instance calls it, the idle ones too, never under a condition that differs
// between them. generate<L>(value) makes the result: a tile of layout L whose
// element j of this thread is value(f, j), f its flat index.
//
// On the GPU the memory is static __shared__ memory, one area per total size
// of the staged tiles (exchanges of one size share it: the second
// synchronisation makes that safe), so a kernel pays once for every size it
// exchanges. It must fit in the 48 KiB that a kernel may hold statically. On
// the CPU, where one thread holds every element, it is a local array.
namespace detail {

inline constexpr std::size_t kStaticSharedBytes = 48 * 1024;

// Bytes that a tile takes in the staging area (16-byte aligned, so that the
// next one is).
template <class X>
inline constexpr std::size_t staged_bytes = (sizeof(typename X::value_type) * X::size + 15) / 16 * 16;

template <class... Xs>
IRIS_HD constexpr std::size_t staged_offset(std::size_t i) {
  const std::size_t bytes[] = {staged_bytes<Xs>...};
  std::size_t offset = 0;
  for (std::size_t k = 0; k < i; ++k) offset += bytes[k];
  return offset;
}

#if IRIS_GPU
template <std::size_t Bytes>
IRIS_HD unsigned char* shared_staging_area() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  struct alignas(16) Area {
    unsigned char bytes[Bytes];
  };
  __shared__ Area area;  // (alignas on the type: see single)
  return area.bytes;
#else
  return nullptr;  // host pass of a GPU compilation: never runs
#endif
}
#endif

template <class X>
IRIS_HD void stage(const X& x, typename X::value_type* staged) {
  using L = layout_of<X>;
  if (!L::active()) return;
  for (int j = 0; j < L::per_thread; ++j) staged[L::index(j)] = x[j];
}

template <std::size_t... I, class Body, class... Xs>
IRIS_HD auto exchange_staged(std::index_sequence<I...>, Body body, const Xs&... xs) {
  constexpr std::size_t bytes = (staged_bytes<Xs> + ...);
  static_assert(bytes <= kStaticSharedBytes,
                "tiles exchanged between threads (broadcast_to, trans, a reduction along an axis, dot) "
                "are staged in at most 48 KiB of static shared memory; use smaller tiles");
#if IRIS_GPU
  unsigned char* area = shared_staging_area<bytes>();
#else
  alignas(16) unsigned char area[bytes];
#endif
  (stage(xs, reinterpret_cast<typename Xs::value_type*>(area + staged_offset<Xs...>(I))), ...);
  sync_instance();
  auto result = body(reinterpret_cast<const typename Xs::value_type*>(area + staged_offset<Xs...>(I))...);
  sync_instance();
  return result;
}

template <class Body, class... Xs>
IRIS_HD auto exchange(Body body, const Xs&... xs) {
  return exchange_staged(std::index_sequence_for<Xs...>{}, body, xs...);
}

template <class L, class F>
IRIS_HD auto generate(F value) {
  using R = decltype(value(0, 0));
  Tile<R, L::size, L> out;
  const bool active = L::active();  // an idle thread's index is past the end of the tile
  // Unrolled: the compiler may give up on a layout whose index is costly
  // (FragmentRows), and the tile would go to local memory.
  IRIS_UNROLL
  for (int j = 0; j < L::per_thread; ++j) out.v[j] = active ? value(L::index(j), j) : R{};
  return out;
}

}  // namespace detail

}  // namespace iris
