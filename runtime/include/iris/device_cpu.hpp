// Iris runtime: device-side primitives for the CPU target.
//
// These are the functions that irisc-emitted kernels call. A GPU version with the same
// names and signatures lives in device_gpu.hpp; kernels are written against the
// names, not against the CPU implementation.
//
// On the CPU a rank is a host thread and a "device" pointer is an ordinary pointer
// into some rank's heap, so:
//   * atomics are std::atomic_ref on that memory with the memory order mapped from Sem;
//     Scope only matters on a GPU (on the CPU every scope is system scope);
//   * blocking operations (wait_until, barrier) spin with a backoff and, now and then,
//     look at the shared world: they throw when another rank has failed (abort flag)
//     and when they can prove that they will never be released (see docs/runtime.md,
//     "Hang detection"), so a broken kernel ends in an iris::Error instead of a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include "iris/checked.hpp"
#include "iris/device_core.hpp"
#include "iris/host.hpp"
#include "iris/types/trace.hpp"

namespace iris {

// ------------------------------------------------------------------ internals

namespace detail {

// Sem -> std::memory_order (what each access takes of it: device_core.hpp).
struct Order {
  static constexpr std::memory_order of(Sem s) {
    switch (s) {
      case Sem::relaxed: return std::memory_order_relaxed;
      case Sem::acquire: return std::memory_order_acquire;
      case Sem::release: return std::memory_order_release;
      case Sem::acq_rel: return std::memory_order_acq_rel;
    }
    return std::memory_order_seq_cst;
  }
};

// Puts to far ranks (ops/transport.hpp) are not complete when they return: the
// transport of a world of several nodes (run_mpi) completes them at the rank's
// next quiet, barrier or release. tls_unfinished_puts is the transport that
// holds puts of the calling thread (null: none); complete_puts() completes them.
class Transport;
extern thread_local Transport* tls_unfinished_puts;
void complete_puts();
// The calling thread's puts are complete at their targets (the far path's hook,
// ops/transport_far.hpp).
inline void far_complete_puts() {
  if (tls_unfinished_puts != nullptr) complete_puts();
}

// What every release does first on the CPU, where every scope is system scope:
// the rank's puts to far ranks complete, so that a rank that acquires what the
// release wrote finds their data too.
template <Sem S>
void before_release() {
  if constexpr (store_half(S) == Sem::release) far_complete_puts();
}

// Read-modify-write through a compare-exchange loop, for the operations that
// std::atomic_ref lacks (min, max). Always stores (possibly the old value), so the
// operation is a real RMW with ordering S, like the GPU instruction.
template <Sem S, class T, class F>
T cas_update(T* p, F next) {
  std::atomic_ref<T> ref(*p);
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, next(old), rmw_order<Order, S>, std::memory_order_relaxed)) {
  }
  return old;
}

// The read-modify-writes (device_core.hpp names them): std::atomic_ref's own,
// but min and max, which it lacks, through cas_update.
template <AtomicOp Op, Sem S, Scope Sc, class T>
T rmw(T* p, T v) {
  before_release<S>();
  if constexpr (min_or_max<Op>) {
    return cas_update<S>(p, [v](T old) { return min_max<Op>(old, v); });
  } else {
    return rmw_on_ref<Op>(std::atomic_ref<T>(*p), v, rmw_order<Order, S>);
  }
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Backoff for spin loops: a short busy spin (cheap hand-off between running threads),
// then yield (ranks may outnumber cores), then short sleeps for long waits. pause()
// returns true every few rounds once spinning is over: time for the slow checks.
class Backoff {
 public:
  bool pause() {
    ++rounds_;
    if (rounds_ < 64) {
      cpu_relax();
      return false;
    }
    if (rounds_ < 20000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return rounds_ % 16 == 0;
  }

 private:
  std::uint64_t rounds_ = 0;
};

// Marks the calling rank as blocked in wait_until for as long as it lives (the hang
// detector of the other ranks reads it), at the wait's .iris file and line (null
// and 0 when the caller named none), which the deadlock report names. No-op on a
// thread that is not a rank.
class WaitScope {
 public:
  WaitScope(const char* file, int line);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;
};

// The slow check of a wait_until loop, called after each re-read of the condition
// that found it false: throws if the world was aborted; returns true if no other
// rank can write memory any more (each returned, blocked in a host collective or
// device barrier that needs this rank first, or in wait_until with a condition
// that stays false). The caller then re-reads its condition once more and, if it
// still fails, calls wait_deadlock.
bool wait_poll();
// `value` is what the wait waits for, `seen` what the flag holds now.
[[noreturn]] void wait_deadlock(const void* p, Cmp op, const std::string& value, const std::string& seen);

// Tells the hang detector and error messages which program instance runs (launch).
void begin_program(const DeviceContext& ctx, int program_id);
void end_program() noexcept;

// Checked mode's race detector (src/race_detector.hpp): a plain load or store of
// one element by the calling rank, checked before it is made (throws like the
// other checks when it races); and the ordering that atomics and fences at system
// scope create (a write is reported before it is made, a read after).
void race_check(const DeviceContext& ctx, const void* p, std::size_t bytes, bool store, const char* file, int line,
                int program_id);
void sync_atomic_write(const DeviceContext& ctx, const void* p, bool release);
void sync_atomic_read(const DeviceContext& ctx, const void* p, bool acquire);
void sync_fence(const DeviceContext& ctx, bool acquire, bool release);

// ------------------------------------------------------------------ traces
// The clock of trace spans: the host's steady clock, in nanoseconds (one clock
// for every process of a host; run_mpi aligns those of several hosts). The
// runtime places every target's events on it (src/trace.hpp's steady_now).
inline std::uint64_t trace_clock() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
// The buffer of the context's rank while the run records a trace, else null.
TraceBuffer* trace_buffer(const DeviceContext& ctx);

// ------------------------------------------------------------------ far memory
// What the remote accesses (ops/transport_far.hpp) do with the heap of a far
// rank, at a byte offset in it: the transport of the context's world (run_mpi's,
// MPI RMA) moves the bytes. A put is complete at the rank's next quiet, barrier
// or release (tls_unfinished_puts); the others are complete when they return.
//
// In a world of several nodes every rank's heap has a slot in one range of this
// process's address space (DeviceContext::far_slots): near slots hold the team's
// shared memory, far slots nothing (a load faults).

void far_put(const DeviceContext& ctx, int rank, std::uint64_t offset, const void* from, std::size_t bytes);
void far_get(const DeviceContext& ctx, int rank, std::uint64_t offset, void* to, std::size_t bytes);
// *old = the element's value before; the element becomes `op` of it and *value.
void far_fetch_op(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op, FarElement type,
                  const void* value, void* old);
// *old = the element's value before; it becomes *value where it was *compare (bit for bit).
void far_compare_swap(const DeviceContext& ctx, int rank, std::uint64_t offset, FarElement type, const void* compare,
                      const void* value, void* old);
void far_accumulate(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op, FarElement type,
                    const void* value);

// Checked mode, in front of every access but the remote ones (ops/transport.hpp):
// the access's lowest active element at p (of `bytes` bytes) is not in a far
// rank's heap, which takes no loads and stores.
void check_near(const DeviceContext& ctx, const void* p, std::size_t bytes, const char* file, int line,
                int program_id);

// Checked-mode helper behind translate_checked.
void check_translate(const DeviceContext& ctx, const void* p, int to_rank, const char* file, int line,
                     int program_id);

}  // namespace detail

// ------------------------------------------------------------------ atomics
// The read-modify-writes by name are device_core.hpp's, over detail::rmw above.
// All return the old value. T must be a type std::atomic_ref supports; p must be
// suitably aligned (natural alignment).

// Compare-and-swap: stores `desired` if *p == expected; returns the old value either way.
template <Sem S, Scope Sc, class T>
T atomic_cas(T* p, std::type_identity_t<T> expected, std::type_identity_t<T> desired) {
  detail::before_release<S>();
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, detail::rmw_order<detail::Order, S>,
                                                 detail::failure_order<detail::Order, S>);
  return expected;  // on failure compare_exchange stored the old value here; on success it was equal
}
template <Sem S, Scope Sc, class T>
T atomic_load(T* p) {
  static_assert(S != Sem::release, "atomic_load cannot have release semantics");
  return std::atomic_ref<T>(*p).load(detail::load_order<detail::Order, S>);
}
template <Sem S, Scope Sc, class T>
void atomic_store(T* p, std::type_identity_t<T> v) {
  static_assert(S != Sem::acquire, "atomic_store cannot have acquire semantics");
  detail::before_release<S>();
  std::atomic_ref<T>(*p).store(v, detail::store_order<detail::Order, S>);
}

// ------------------------------------------------------------------ signals

// Spins until `*p op value` holds; every read has semantics S (acquire to see what the
// signalling rank wrote before its release). Throws iris::Error if another rank failed
// or if it can never be satisfied (every other rank has returned or is blocked); the
// report names `file`:`line`, the wait's .iris location, when given.
template <Sem S, Scope Sc, class T>
void wait_until(T* p, Cmp op, std::type_identity_t<T> value, const char* file = nullptr, int line = 0) {
  static_assert(S != Sem::release, "wait_until cannot have release semantics");
  if (detail::compare(atomic_load<S, Sc>(p), op, value)) return;
  detail::WaitScope blocked(file, line);
  detail::Backoff backoff;
  while (!detail::compare(atomic_load<S, Sc>(p), op, value)) {
    if (backoff.pause() && detail::wait_poll() && !detail::compare(atomic_load<S, Sc>(p), op, value)) {
      std::string shown = "?", seen = "?";
      if constexpr (std::is_arithmetic_v<T>) {
        shown = std::to_string(value);
        seen = std::to_string(atomic_load<Sem::relaxed, Sc>(p));
      }
      detail::wait_deadlock(p, op, shown, seen);
    }
  }
}

// wait_until in checked builds. On the CPU the hang detector watches every
// wait already, checked or not.
template <Sem S, Scope Sc, class T>
void wait_until_checked(const DeviceContext&, T* p, Cmp op, std::type_identity_t<T> value, const char* file,
                        int line, int /*program_id*/) {
  wait_until<S, Sc>(p, op, value, file, line);
}

template <Sem S, Scope Sc>
void fence() {
  detail::before_release<S>();
  if constexpr (S != Sem::relaxed) std::atomic_thread_fence(detail::rmw_order<detail::Order, S>);
}

// ------------------------------------------------------------------ barrier

// Device-side barrier across all ranks for program instance `program_id`. Program
// instances of one rank run in order on its thread, so the k-th barrier of every rank
// must come from the same program_id (checked: a mismatch is an iris::Error). Orders
// memory like a release by every rank followed by an acquire by every rank. Reusable.
void barrier(const DeviceContext& ctx, int program_id);
// barrier in checked builds. On the CPU the hang detector watches every
// barrier already, checked or not.
inline void barrier_checked(const DeviceContext& ctx, int program_id, const char* /*file*/, int /*line*/) {
  barrier(ctx, program_id);
}

// ------------------------------------------------------------------ checked mode
// Emitted in checked builds in front of every heap access / rank use / translation.
// A violation prints "file:line: error: ... (rank R, program P)" to stderr and
// throws iris::Error with the same text (run_threads propagates it, releasing the
// other ranks). The rules are in iris/checked.hpp.

// An access whose lowest and highest active elements, of `bytes` bytes each, are at
// `lowest` and `highest`: all of it must lie inside one rank's heap, and inside the
// live allocation that holds `lowest` (when the context has an allocation table).
void check_access(const DeviceContext& ctx, const void* lowest, const void* highest, std::size_t bytes,
                  const char* file, int line, int program_id);
// r must be in [0, world_size); returns r.
int check_rank(const DeviceContext& ctx, int r, const char* file, int line, int program_id);
// translate() after checking that p lies inside this rank's heap and to_rank is valid.
template <class T>
T* translate_checked(T* p, int to_rank, const DeviceContext& ctx, const char* file, int line, int program_id) {
  detail::check_translate(ctx, p, to_rank, file, line, program_id);
  return translate(p, to_rank, ctx);
}

}  // namespace iris
