// Iris runtime: the far path of NVIDIA GPU kernels built for NVSHMEM
// (IRIS_NVSHMEM=1, with -rdc and NVSHMEM's device library; the runtime's
// NVSHMEM world is run_mpi with IRIS_TRANSPORT=nvshmem, world_gpu_mpi.cpp).
// What ops/transport_far.hpp asks of a target, over NVSHMEM's device API:
//
//   far_put, far_get        value puts and gets (nvshmem_uint64_p, ..._g): a
//                           tile's run of elements lives in the thread's
//                           registers, which no network can read from or write
//                           to, so the bytes travel by value, 8 at a time where
//                           aligned; complete at far_complete_puts (quiet)
//   far_fetch_op ...        NVSHMEM's atomics on the bits of 32- and 64-bit
//                           integers (its uint32 and uint64 forms); min, max and
//                           every arithmetic on float and double are
//                           compare-and-swap loops on the bits, which NVSHMEM
//                           has no atomic for
//   far_complete_puts       nvshmem_quiet
//   far_barrier             the device barrier of a world of several nodes:
//                           NVSHMEM's atomics on rank 0's counters
//
// Every rank's heap lies in NVSHMEM's symmetric heap at the same offset from
// the world's start, so the symmetric address of an offset in rank r's heap is
// that offset in mine (heap_bases[rank]).
#pragma once

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "iris/device_core.hpp"

namespace iris::detail {

// The symmetric address of `offset` in every rank's heap.
template <class T = void>
IRIS_HD T* far_symmetric(const DeviceContext& ctx, std::uint64_t offset) {
  return reinterpret_cast<T*>(ctx.heap_bases[ctx.rank] + offset);
}

IRIS_HD inline void far_complete_puts() {
#if IRIS_DEVICE_PASS
  nvshmem_quiet();
#endif
}

#if IRIS_DEVICE_PASS
// Calls f(word, i) over bytes 0 .. bytes - 1 of two buffers, a and b, with word
// an unsigned integer of 8, 4, 2 or 1 bytes, the widest that both buffers'
// alignment at i allows; f moves bytes i .. i + sizeof word - 1.
template <class F>
__device__ void for_each_word(const unsigned char* a, const unsigned char* b, std::size_t bytes, F f) {
  for (std::size_t i = 0; i < bytes;) {
    const auto aligned = reinterpret_cast<std::uintptr_t>(a + i) | reinterpret_cast<std::uintptr_t>(b + i);
    const std::size_t left = bytes - i;
    if (left >= 8 && aligned % 8 == 0) f(std::uint64_t{}, i), i += 8;
    else if (left >= 4 && aligned % 4 == 0) f(std::uint32_t{}, i), i += 4;
    else if (left >= 2 && aligned % 2 == 0) f(std::uint16_t{}, i), i += 2;
    else f(std::uint8_t{}, i), i += 1;
  }
}
#endif

// Bytes by value, a word at a time (memcpy: the bytes are a tile's elements,
// of any type).
IRIS_HD inline void far_put(const DeviceContext& ctx, int rank, std::uint64_t offset, const void* from,
                            std::size_t bytes) {
#if IRIS_DEVICE_PASS
  auto* to = far_symmetric<unsigned char>(ctx, offset);
  const auto* src = static_cast<const unsigned char*>(from);
  for_each_word(to, src, bytes, [&](auto word, std::size_t i) {
    std::memcpy(&word, src + i, sizeof word);
    using W = decltype(word);
    if constexpr (sizeof(W) == 8) nvshmem_uint64_p(reinterpret_cast<W*>(to + i), word, rank);
    else if constexpr (sizeof(W) == 4) nvshmem_uint32_p(reinterpret_cast<W*>(to + i), word, rank);
    else if constexpr (sizeof(W) == 2) nvshmem_uint16_p(reinterpret_cast<W*>(to + i), word, rank);
    else nvshmem_uint8_p(to + i, word, rank);
  });
#else
  (void)ctx, (void)rank, (void)offset, (void)from, (void)bytes;
#endif
}

IRIS_HD inline void far_get(const DeviceContext& ctx, int rank, std::uint64_t offset, void* to, std::size_t bytes) {
#if IRIS_DEVICE_PASS
  const auto* from = far_symmetric<const unsigned char>(ctx, offset);
  auto* dst = static_cast<unsigned char*>(to);
  for_each_word(from, dst, bytes, [&](auto word, std::size_t i) {
    using W = decltype(word);
    if constexpr (sizeof(W) == 8) word = nvshmem_uint64_g(reinterpret_cast<const W*>(from + i), rank);
    else if constexpr (sizeof(W) == 4) word = nvshmem_uint32_g(reinterpret_cast<const W*>(from + i), rank);
    else if constexpr (sizeof(W) == 2) word = nvshmem_uint16_g(reinterpret_cast<const W*>(from + i), rank);
    else word = nvshmem_uint8_g(from + i, rank);
    std::memcpy(dst + i, &word, sizeof word);
  });
#else
  (void)ctx, (void)rank, (void)offset, (void)to, (void)bytes;
#endif
}

#if IRIS_DEVICE_PASS
// NVSHMEM's atomics on the bits of an element, an unsigned integer of 32 or
// 64 bits (its uint32 and uint64 forms: NVSHMEM 3.4 has no device body for
// nvshmem_int64_atomic_fetch_add, and two's complement adds, swaps and ands the
// bits of a signed integer as those of an unsigned one).
#define IRIS_NVSHMEM_ATOMICS(NAME, TYPE)                                                                    \
  __device__ inline TYPE native_fetch_op(FarOp op, TYPE* p, TYPE v, int pe) {                                 \
    switch (op) {                                                                                           \
      case FarOp::sum: return nvshmem_##NAME##_atomic_fetch_add(p, v, pe);                                  \
      case FarOp::band: return nvshmem_##NAME##_atomic_fetch_and(p, v, pe);                                 \
      case FarOp::bor: return nvshmem_##NAME##_atomic_fetch_or(p, v, pe);                                   \
      case FarOp::bxor: return nvshmem_##NAME##_atomic_fetch_xor(p, v, pe);                                 \
      case FarOp::replace: return nvshmem_##NAME##_atomic_swap(p, v, pe);                                   \
      default: return nvshmem_##NAME##_atomic_fetch(p, pe);                                                 \
    }                                                                                                       \
  }                                                                                                         \
  __device__ inline TYPE native_compare_swap(TYPE* p, TYPE compare, TYPE v, int pe) {                         \
    return nvshmem_##NAME##_atomic_compare_swap(p, compare, v, pe);                                         \
  }                                                                                                         \
  __device__ inline void native_add(TYPE* p, TYPE v, int pe) { nvshmem_##NAME##_atomic_add(p, v, pe); }      \
  __device__ inline void native_set(TYPE* p, TYPE v, int pe) { nvshmem_##NAME##_atomic_set(p, v, pe); }
IRIS_NVSHMEM_ATOMICS(uint32, std::uint32_t)
IRIS_NVSHMEM_ATOMICS(uint64, std::uint64_t)
#undef IRIS_NVSHMEM_ATOMICS

// `op` of old and v, for the operations that NVSHMEM has no atomic for.
template <class T>
__device__ T far_combine(FarOp op, T old, T v) {
  switch (op) {
    case FarOp::sum: return old + v;
    case FarOp::min: return v < old ? v : old;
    case FarOp::max: return v > old ? v : old;
    case FarOp::replace: return v;
    default: return old;
  }
}

// Whether NVSHMEM has op as an atomic for T's bits: every integer operation
// but min and max (which compare as T), and for floats replace and no_op.
template <class T>
__device__ bool native_for(FarOp op) {
  if (op == FarOp::replace || op == FarOp::no_op) return true;
  return std::is_integral_v<T> && op != FarOp::min && op != FarOp::max;
}

// One element's fetch-and-op on T's bits (Bits): NVSHMEM's own where it has
// one, else a compare-and-swap loop.
template <class T, class Bits>
__device__ T far_fetch_op_of(FarOp op, Bits* p, T v, int pe) {
  if (native_for<T>(op)) return __builtin_bit_cast(T, native_fetch_op(op, p, __builtin_bit_cast(Bits, v), pe));
  Bits old = native_fetch_op(FarOp::no_op, p, Bits{}, pe);
  for (;;) {
    const Bits next = __builtin_bit_cast(Bits, far_combine(op, __builtin_bit_cast(T, old), v));
    const Bits seen = native_compare_swap(p, old, next, pe);
    if (seen == old) return __builtin_bit_cast(T, old);
    old = seen;
  }
}

// Calls f with the element type of `type`, T, and its bits, an unsigned integer of T's size.
template <class F>
__device__ void far_typed(FarElement type, F f) {
  switch (type) {
    case FarElement::i32: return f(std::int32_t{}, std::uint32_t{});
    case FarElement::u32: return f(std::uint32_t{}, std::uint32_t{});
    case FarElement::i64: return f(std::int64_t{}, std::uint64_t{});
    case FarElement::u64: return f(std::uint64_t{}, std::uint64_t{});
    case FarElement::f32: return f(float{}, std::uint32_t{});
    case FarElement::f64: return f(double{}, std::uint64_t{});
  }
}
#endif

IRIS_HD inline void far_fetch_op(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op, FarElement type,
                                 const void* value, void* old) {
#if IRIS_DEVICE_PASS
  far_typed(type, [&](auto t, auto bits) {
    using T = decltype(t);
    T v, result;
    std::memcpy(&v, value, sizeof v);
    result = far_fetch_op_of<T>(op, far_symmetric<decltype(bits)>(ctx, offset), v, rank);
    std::memcpy(old, &result, sizeof result);
  });
#else
  (void)ctx, (void)rank, (void)offset, (void)op, (void)type, (void)value, (void)old;
#endif
}

// Floats compared bit for bit, as on the CPU's far path.
IRIS_HD inline void far_compare_swap(const DeviceContext& ctx, int rank, std::uint64_t offset, FarElement type,
                                     const void* compare, const void* value, void* old) {
#if IRIS_DEVICE_PASS
  far_typed(type, [&](auto, auto bits) {
    using Bits = decltype(bits);
    Bits c, v;
    std::memcpy(&c, compare, sizeof c);
    std::memcpy(&v, value, sizeof v);
    const Bits seen = native_compare_swap(far_symmetric<Bits>(ctx, offset), c, v, rank);
    std::memcpy(old, &seen, sizeof seen);
  });
#else
  (void)ctx, (void)rank, (void)offset, (void)type, (void)compare, (void)value, (void)old;
#endif
}

// A write (replace) or an add (sum) that fetches nothing: NVSHMEM's set and
// add where it has them; a float's add is the compare-and-swap loop.
IRIS_HD inline void far_accumulate(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op,
                                   FarElement type, const void* value) {
#if IRIS_DEVICE_PASS
  far_typed(type, [&](auto t, auto bits) {
    using T = decltype(t);
    using Bits = decltype(bits);
    Bits* p = far_symmetric<Bits>(ctx, offset);
    T v;
    std::memcpy(&v, value, sizeof v);
    if (op == FarOp::replace) return native_set(p, __builtin_bit_cast(Bits, v), rank);
    if (op == FarOp::sum && std::is_integral_v<T>) return native_add(p, __builtin_bit_cast(Bits, v), rank);
    (void)far_fetch_op_of<T>(op, p, v, rank);
  });
#else
  (void)ctx, (void)rank, (void)offset, (void)op, (void)type, (void)value;
#endif
}

// The device barrier of a world of several nodes: the counter protocol of
// barrier() (device_gpu.hpp) over NVSHMEM's atomics, for every rank, rank 0's
// node included: over a network, NVSHMEM's atomics (the NIC's, or a proxy's)
// are not atomic with the GPU's own on the same word. The block's puts
// complete first, so that the barrier orders them too.
IRIS_HD inline void far_barrier(const DeviceContext& ctx, unsigned long long* counter_on_rank0) {
#if IRIS_DEVICE_PASS
  auto* counter = far_symmetric<std::uint64_t>(ctx, far_offset(ctx, 0, counter_on_rank0));
  const auto world = static_cast<std::uint64_t>(ctx.world_size);
  nvshmem_quiet();
  const std::uint64_t old = nvshmem_uint64_atomic_fetch_add(counter, 1, 0);
  const std::uint64_t target = (old / world + 1) * world;
  while (nvshmem_uint64_atomic_fetch(counter, 0) < target) __nanosleep(256);
  __threadfence_system();
#else
  (void)ctx, (void)counter_on_rank0;
#endif
}

}  // namespace iris::detail
