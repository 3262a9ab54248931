// Iris runtime: device-side primitives for the GPU target (nvcc, or clang/hipcc
// for AMD). Same names and template signatures as device_cpu.hpp; kernels are
// written against the names. Everything here is meant for device code; the
// functions are declared __host__ __device__ (IRIS_HD) only because the tile library's
// IRIS_HD templates call them and nvcc compiles their bodies in its host pass too (to
// deduce return types). Device-only instructions sit behind IRIS_DEVICE_PASS; the
// host versions are never called.
//
//   * atomics and fences, one file per vendor: device_nvidia.hpp (libcu++'s
//     cuda::atomic_ref) and device_amd.hpp (the __hip_atomic_* builtins).
//     Scope::block / gpu / sys map to the thread block / the device / the system
//     (every GPU and the host). Remote heaps live on other GPUs, so operations on
//     translated pointers need Scope::sys to be ordered with respect to other ranks.
//   * wait_until spins with acquire (or relaxed) loads, backing off with __nanosleep
//     on NVIDIA and s_sleep on AMD. It cannot detect deadlocks or failed ranks the
//     way the CPU target does; in unchecked builds a kernel that waits for something
//     that never comes hangs (gpu-check.sh runs every sample under a timeout). In
//     checked builds (wait_until_checked) a wait that spins past IRIS_HANG_TIMEOUT
//     reports a hang like a checked-mode violation (below), and every long wait of
//     the rank says where it is, for that report.
//   * barrier(ctx, program_id): see "Device barrier" below.
//   * checked mode: a violation is written to the rank's report buffer (host memory,
//     read by the host runtime when it sees the kernel fail), printed with printf as
//     "file:line: error: ... (rank R, program P)", and the kernel is stopped with a
//     trap. The host then reports the failed kernel as an iris::Error that carries
//     the message.
#pragma once

#include "iris/hip_compat.h"  // before any HIP header (also force-included by the build)

#include <hip/hip_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "iris/checked.hpp"
#include "iris/device_core.hpp"
#include "iris/host.hpp"
#include "iris/target.hpp"
#include "iris/types/trace.hpp"

// True in the device compilation pass (nvcc's __CUDA_ARCH__, hip-clang's
// __HIP_DEVICE_COMPILE__), false in the host pass of the same file.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define IRIS_DEVICE_PASS 1
#else
#define IRIS_DEVICE_PASS 0
#endif

#if IRIS_FAR_PATH
#include "iris/device_nvshmem.hpp"  // the far path: kernels built for NVSHMEM
#endif

namespace iris {

namespace detail {

// ------------------------------------------------------------------ runtime area
// Every rank's heap is followed, past its heap_size bytes of user memory, by a
// runtime area of the same layout on every rank (DeviceContext::barrier points to
// the rank's own). The allocator never hands it out and checked mode treats it as
// outside the heap.

// Number of barrier counters: program instances p and p + kBarrierSlots share one,
// so they must not be inside barrier() at the same time (a grid with more than
// kBarrierSlots instances that all call barrier() must not have two such instances
// of one rank waiting at once).
inline constexpr int kBarrierSlots = 65536;

// Where checked mode leaves its message: host memory mapped into the device
// address space, so that the host can still read it after the kernel trapped.
struct ErrorReport {
  static constexpr int kCapacity = 1024;
  volatile unsigned int length;  // written last; 0: no report
  char text[kCapacity];
};

}  // namespace detail

// The runtime area (the backend's definition of the opaque BarrierState).
struct BarrierState {
  detail::ErrorReport* report;  // this rank's report buffer (host-mapped)
  unsigned int report_claimed;  // the first failing thread takes it (atomic)
  TraceBuffer* trace;           // this rank's trace buffer (device memory) while the run records one, else null
  // Checked builds' waits: after how long a wait is a hang (IRIS_HANG_TIMEOUT),
  // and where this rank waits for long, which the hang report of any rank
  // names (host-mapped; the first long waiter takes it).
  unsigned long long hang_timeout_ns;
  detail::ErrorReport* waiting;
  unsigned int waiting_claimed;
  unsigned int reserved[3];
  // The live allocations, for checked mode: a copy of the host's table, updated in
  // the rank's stream order after every allocate and free.
  AllocationTable allocations;
  // arrivals[s] on rank 0 counts the arrivals at barriers of the program instances
  // with id % kBarrierSlots == s, of every rank, since the world started.
  alignas(256) unsigned long long arrivals[detail::kBarrierSlots];
};

namespace detail {
inline constexpr std::size_t kRuntimeAreaBytes = (sizeof(BarrierState) + 4095) / 4096 * 4096;
}  // namespace detail

// ------------------------------------------------------------------ internals

namespace detail {

// Backoff for spin loops: a few busy rounds, then sleeps growing to about 1 us.
class Backoff {
 public:
  IRIS_HD void pause() {
    if (rounds_ < 16) {
      ++rounds_;
      return;
    }
#if IRIS_DEVICE_PASS && defined(__HIP_PLATFORM_AMD__)
    __builtin_amdgcn_s_sleep(8);
#elif IRIS_DEVICE_PASS
    __nanosleep(sleep_ns_);
    if (sleep_ns_ < 1024) sleep_ns_ *= 2;
#endif
  }

 private:
  unsigned int rounds_ = 0;
  [[maybe_unused]] unsigned int sleep_ns_ = 32;  // (NVIDIA only)
};

// The clock of trace spans, in nanoseconds: NVIDIA's globaltimer (one clock
// for the GPUs of a host), AMD's 100 MHz real-time counter.
IRIS_HD inline std::uint64_t trace_clock() {
#if IRIS_DEVICE_PASS && defined(__HIP_PLATFORM_AMD__)
  return __builtin_amdgcn_s_memrealtime() * 10;
#elif IRIS_DEVICE_PASS
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
#else
  return 0;
#endif
}

// Compare-and-swap of T, for the read-modify-writes without an instruction
// (min/max of floating-point values). Always stores, like the instruction would.
template <Sem S, Scope Sc, class T, class F>
IRIS_HD T cas_update(T* p, F next);

}  // namespace detail
}  // namespace iris

// ------------------------------------------------------------------ atomics
// Each vendor's file: detail::rmw (the read-modify-writes that device_core.hpp
// names), atomic_load/store/cas and fence. T is a 32- or 64-bit integer or
// floating-point type (irisc only emits those); p must be naturally aligned.
#if defined(__HIP_PLATFORM_AMD__)
#include "iris/device_amd.hpp"
#else
#include "iris/device_nvidia.hpp"
#endif

namespace iris {
namespace detail {
template <Sem S, Scope Sc, class T, class F>
IRIS_HD T cas_update(T* p, F next) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  T old = atomic_load<Sem::relaxed, Sc>(p);
  for (;;) {
    const T seen = atomic_cas<S, Sc>(p, old, next(old));
    // The swap happened if the bits are unchanged (compare bits: a NaN never equals itself).
    Bits a, b;
    std::memcpy(&a, &seen, sizeof a);
    std::memcpy(&b, &old, sizeof b);
    if (a == b) return old;
    old = seen;
  }
}
}  // namespace detail

namespace detail {
// The buffer of the context's rank while the run records a trace, else null.
IRIS_HD inline TraceBuffer* trace_buffer(const DeviceContext& ctx) { return ctx.barrier->trace; }
}  // namespace detail

// ------------------------------------------------------------------ signals

// Spins until `*p op value` holds; every read has semantics S (acquire to see what
// the signalling rank wrote before its release). The wait's .iris location, which
// the CPU target names in a deadlock report, is not used here: an unchecked wait
// costs its loads and nothing more. wait_until_checked (below) watches the clock.
template <Sem S, Scope Sc, class T>
IRIS_HD void wait_until(T* p, Cmp op, std::type_identity_t<T> value, const char* /*file*/ = nullptr,
                        int /*line*/ = 0) {
  static_assert(S != Sem::release, "wait_until cannot have release semantics");
  detail::Backoff backoff;
  while (!detail::compare(atomic_load<S, Sc>(p), op, static_cast<T>(value))) backoff.pause();
}

// ------------------------------------------------------------------ barrier
//
// Device barrier across all ranks for the program instances with id `program_id`
// (one thread of the instance calls it; the tile library wraps it in single()).
// Rank 0's runtime area holds a counter per program id (modulo kBarrierSlots) that
// only ever grows: it starts at 0 with the world, and every rank adds 1 per barrier.
// Rank i's k-th barrier for that id adds with a release RMW at system scope and
// gets the old value `old`; the arrivals of the k-th barrier are the values
// (k-1)*world .. k*world-1 (nobody can add for barrier k+1 before the counter has
// reached k*world), so old / world + 1 == k, and the instance waits with acquire
// loads until the counter reaches k * world. No reset, no generation word, no state
// kept between calls: reusable any number of times, in one kernel or across kernels.
// The acquire of the final count synchronises with every rank's release (an RMW
// chain is one release sequence), so the barrier orders memory like a release by
// every rank followed by an acquire by every rank.
namespace detail {
// A rank's arrival at a barrier of a world of several ranks: the counter, and
// the count that means every rank has arrived.
struct BarrierArrival {
  unsigned long long* counter;
  unsigned long long target;
};
// The counter of program_id's barriers, on rank 0.
IRIS_HD inline unsigned long long* barrier_counter(const DeviceContext& ctx, int program_id) {
  const unsigned slot = static_cast<unsigned>(program_id) % static_cast<unsigned>(kBarrierSlots);
  return translate(&ctx.barrier->arrivals[slot], 0, ctx);
}
IRIS_HD inline BarrierArrival barrier_arrive(const DeviceContext& ctx, int program_id) {
  unsigned long long* counter = barrier_counter(ctx, program_id);
  const auto world = static_cast<unsigned long long>(ctx.world_size);
  // Make the writes of the whole block (ordered before this thread by the
  // __syncthreads in single()) visible at system scope before arriving.
  fence<Sem::acq_rel, Scope::sys>();
  const unsigned long long old = atomic_add<Sem::release, Scope::sys>(counter, 1ull);
  return {counter, (old / world + 1) * world};
}
}  // namespace detail

IRIS_HD inline void barrier(const DeviceContext& ctx, int program_id) {
  if (ctx.world_size == 1) {
    fence<Sem::acq_rel, Scope::sys>();
    return;
  }
#if IRIS_FAR_PATH
  // Several nodes: the same protocol over the transport's atomics, on every rank.
  if (!detail::one_node(ctx)) return detail::far_barrier(ctx, detail::barrier_counter(ctx, program_id));
#endif
  const detail::BarrierArrival arrival = detail::barrier_arrive(ctx, program_id);
  detail::Backoff backoff;
  while (atomic_load<Sem::acquire, Scope::sys>(arrival.counter) < arrival.target) backoff.pause();
}

// ------------------------------------------------------------------ checked mode
// A violation writes "file:line: error: ... (rank R, program P)" to the rank's report
// buffer (the host reads it when the kernel fails), prints it, and traps.

namespace detail {

// Writes `text` into a host-mapped report buffer so that the host sees the
// whole text once it sees its length (the checked-mode report, where a rank
// waits).
IRIS_HD inline void publish(ErrorReport* out, const Text& text) {
  for (int i = 0; i <= text.len; ++i) out->text[i] = text.buf[i];
  fence<Sem::acq_rel, Scope::sys>();
  out->length = static_cast<unsigned>(text.len);
  fence<Sem::acq_rel, Scope::sys>();
}

// Reports a checked-mode violation and stops the kernel. Only the first failing
// thread of a rank writes and prints its message; every failing thread traps.
// The failure paths are out of line so that the message buffers do not weigh on
// the stack frame of every checked access.
[[noreturn]] __noinline__ IRIS_HD inline void report(const DeviceContext& ctx, const char* file, int line,
                                                         int program_id, const Text& what) {
  Text msg;
  msg.add(file).add(":").add(static_cast<long long>(line)).add(": error: ").add(what.buf);
  msg.add(" (rank ").add(static_cast<long long>(ctx.rank)).add(", program ").add(static_cast<long long>(program_id));
  msg.add(")");
  BarrierState* area = ctx.barrier;
  if (area != nullptr) {
    // report_claimed: 0 free, 1 being written, 2 written. A trap ends every thread
    // of the GPU at once, so the threads that lose the claim wait (a bounded time)
    // for the winner to finish its report before they trap.
    if (atomic_cas<Sem::acquire, Scope::gpu>(&area->report_claimed, 0u, 1u) == 0u) {
      if (area->report != nullptr) publish(area->report, msg);
      printf("%s\n", msg.buf);
      atomic_store<Sem::release, Scope::gpu>(&area->report_claimed, 2u);
    } else {
      Backoff backoff;
      for (int i = 0; i < 100000 && atomic_load<Sem::acquire, Scope::gpu>(&area->report_claimed) != 2u; ++i) {
        backoff.pause();
      }
    }
  }
#if IRIS_DEVICE_PASS && defined(__HIP_PLATFORM_AMD__)
  __builtin_trap();
#elif IRIS_DEVICE_PASS
  __trap();
  __builtin_unreachable();
#else
  std::abort();
#endif
}

[[noreturn]] __noinline__ IRIS_HD inline void bad_rank(const DeviceContext& ctx, int r, const char* file,
                                                           int line, int program_id) {
  Text what;
  describe_bad_rank(ctx, r, what);
  report(ctx, file, line, program_id, what);
}

[[noreturn]] __noinline__ IRIS_HD inline void bad_access(const DeviceContext& ctx, std::uintptr_t lowest,
                                                             std::uintptr_t highest, std::size_t bytes,
                                                             const char* file, int line, int program_id) {
  Text what;
  describe_access(ctx, classify_access(ctx, lowest, highest, bytes), lowest, highest, bytes, what);
  report(ctx, file, line, program_id, what);
}

[[noreturn]] __noinline__ IRIS_HD inline void bad_translate(const DeviceContext& ctx, const void* p,
                                                                int to_rank, const char* file, int line,
                                                                int program_id) {
  Text what;
  describe_bad_translate(p, to_rank, what);
  report(ctx, file, line, program_id, what);
}

// A value in a report: integers as they are, floating-point values by their
// integer part (device code has no printf of its own into a buffer).
template <class T>
IRIS_HD void add_value(Text& text, T v) {
  if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) text.add_unsigned(v);
  else text.add(static_cast<long long>(v));
}

// Checked builds: a wait that has spun for longer than the world's hang
// timeout. The report says what it waits for, where the flag is and what it
// holds; the host adds where the other ranks of the process wait.
template <class T>
[[noreturn]] __noinline__ IRIS_HD void hang(const DeviceContext& ctx, const T* p, Cmp op, T value, T seen,
                                            unsigned long long waited_ns, const char* file, int line,
                                            int program_id) {
  Text what;
  what.add("hang in wait_until(*").add_pointer(p).add(" ").add(cmp_text(op)).add(" ");
  add_value(what, value);
  what.add("): the condition is still false after ").add_unsigned(waited_ns / 1000000000ull);
  what.add(" s (IRIS_HANG_TIMEOUT); the flag, ");
  describe_flag(ctx, p, what);
  what.add(", holds ");
  add_value(what, seen);
  report(ctx, file, line, program_id, what);
}

// Checked builds: a device barrier that has waited for longer than the
// world's hang timeout, with `arrived` of the world's ranks there.
[[noreturn]] __noinline__ IRIS_HD inline void barrier_hang(const DeviceContext& ctx, unsigned long long arrived,
                                                           unsigned long long waited_ns, const char* file, int line,
                                                           int program_id) {
  Text what;
  what.add("hang in barrier(): ").add_unsigned(arrived).add(" of ").add(static_cast<long long>(ctx.world_size));
  what.add(" ranks have arrived after ").add_unsigned(waited_ns / 1000000000ull).add(" s (IRIS_HANG_TIMEOUT)");
  report(ctx, file, line, program_id, what);
}

// Says, in the rank's host-mapped `waiting` buffer, that this program instance
// waits in `what` (wait_until, barrier) at file:line; true if it took the
// buffer (then it clears it after).
__noinline__ IRIS_HD inline bool announce_wait(const DeviceContext& ctx, const char* what, const char* file,
                                                int line, int program_id) {
  BarrierState* area = ctx.barrier;
  if (area->waiting == nullptr || atomic_cas<Sem::acquire, Scope::gpu>(&area->waiting_claimed, 0u, 1u) != 0u) {
    return false;
  }
  Text where;
  where.add(what).add(" at ").add(file).add(":").add(static_cast<long long>(line));
  where.add(" (program ").add(static_cast<long long>(program_id)).add(")");
  publish(area->waiting, where);
  return true;
}
IRIS_HD inline void withdraw_wait(const DeviceContext& ctx) {
  ctx.barrier->waiting->length = 0;
  atomic_store<Sem::release, Scope::gpu>(&ctx.barrier->waiting_claimed, 0u);
}

// The spin of checked builds' waits: polls `done` with backoff and reads the
// clock now and then. After a millisecond it says where it waits (for the
// reports of other ranks' hangs); after the world's hang timeout
// (IRIS_HANG_TIMEOUT, default 10 s) it calls hang(waited ns), which reports
// with the .iris location and stops the kernel.
template <class Done, class Hang>
IRIS_HD void spin_checked(const DeviceContext& ctx, const char* what, const char* file, int line, int program_id,
                          Done done, Hang hang) {
  constexpr unsigned long long kAnnounceAfterNs = 1000000;
  Backoff backoff;
  const unsigned long long start = trace_clock();
  bool announced = false, tried = false;
  for (unsigned round = 1; !done(); ++round) {
    backoff.pause();
    if (round % 64 != 0) continue;
    const unsigned long long waited = trace_clock() - start;
    if (!tried && waited > kAnnounceAfterNs) {
      tried = true;
      announced = announce_wait(ctx, what, file, line, program_id);
    }
    const unsigned long long limit = ctx.barrier->hang_timeout_ns;  // 0: the world set none
    if (limit != 0 && waited > limit) hang(waited);
  }
  if (announced) withdraw_wait(ctx);
}

}  // namespace detail

// wait_until in checked builds: the same spin, which reports a hang
// (detail::spin_checked).
template <Sem S, Scope Sc, class T>
IRIS_HD void wait_until_checked(const DeviceContext& ctx, T* p, Cmp op, std::type_identity_t<T> value,
                                const char* file, int line, int program_id) {
  static_assert(S != Sem::release, "wait_until cannot have release semantics");
  T seen{};
  detail::spin_checked(
      ctx, "wait_until", file, line, program_id,
      [&] {
        seen = atomic_load<S, Sc>(p);
        return detail::compare(seen, op, static_cast<T>(value));
      },
      [&](unsigned long long waited) {
        detail::hang(ctx, p, op, static_cast<T>(value), seen, waited, file, line, program_id);
      });
}

// barrier in checked builds: the same arrival, then a wait that reports a hang
// with the number of ranks that have arrived (detail::spin_checked).
IRIS_HD inline void barrier_checked(const DeviceContext& ctx, int program_id, const char* file, int line) {
  if (ctx.world_size == 1 || (IRIS_FAR_PATH && !detail::one_node(ctx))) {  // (several nodes: unchecked)
    barrier(ctx, program_id);
    return;
  }
  const detail::BarrierArrival arrival = detail::barrier_arrive(ctx, program_id);
  unsigned long long count = 0;
  detail::spin_checked(
      ctx, "barrier", file, line, program_id,
      [&] {
        count = atomic_load<Sem::acquire, Scope::sys>(arrival.counter);
        return count >= arrival.target;
      },
      [&](unsigned long long waited) {
        const auto world = static_cast<unsigned long long>(ctx.world_size);
        detail::barrier_hang(ctx, count - (arrival.target - world), waited, file, line, program_id);
      });
}

// r must be in [0, world_size); returns r.
IRIS_HD inline int check_rank(const DeviceContext& ctx, int r, const char* file, int line, int program_id) {
  if (r < 0 || r >= ctx.world_size) detail::bad_rank(ctx, r, file, line, program_id);
  return r;
}

// An access whose lowest and highest active elements, of `bytes` bytes each, are at
// `lowest` and `highest`: all of it must lie inside one rank's heap, and inside the
// live allocation that holds `lowest` (rules in iris/checked.hpp).
IRIS_HD inline void check_access(const DeviceContext& ctx, const void* lowest, const void* highest,
                                 std::size_t bytes, const char* file, int line, int program_id) {
  const auto lo = reinterpret_cast<std::uintptr_t>(lowest);
  const auto hi = reinterpret_cast<std::uintptr_t>(highest);
  if (detail::classify_access(ctx, lo, hi, bytes).kind != detail::AccessFault::none) {
    detail::bad_access(ctx, lo, hi, bytes, file, line, program_id);
  }
}

namespace detail {
// Checked mode's race detector exists on the CPU target only (its shadow memory
// and clocks would cost a GPU kernel far more than checking is worth): here the
// hooks that the tile library calls compile to nothing.
IRIS_HD inline void race_check(const DeviceContext&, const void*, std::size_t, bool, const char*, int, int) {}
IRIS_HD inline void sync_atomic_write(const DeviceContext&, const void*, bool) {}
IRIS_HD inline void sync_atomic_read(const DeviceContext&, const void*, bool) {}
IRIS_HD inline void sync_fence(const DeviceContext&, bool, bool) {}

// Checked-mode helper behind translate_checked.
IRIS_HD inline void check_translate(const DeviceContext& ctx, const void* p, int to_rank, const char* file,
                                        int line, int program_id) {
  check_rank(ctx, to_rank, file, line, program_id);
  if (!in_heap(ctx, ctx.rank, reinterpret_cast<std::uintptr_t>(p), 1)) {
    bad_translate(ctx, p, to_rank, file, line, program_id);
  }
}
}  // namespace detail

// translate() after checking that p lies inside this rank's heap and to_rank is valid.
template <class T>
IRIS_HD T* translate_checked(T* p, int to_rank, const DeviceContext& ctx, const char* file, int line,
                                 int program_id) {
  detail::check_translate(ctx, p, to_rank, file, line, program_id);
  return translate(p, to_rank, ctx);
}

}  // namespace iris
