// Device traces (irisc --trace; docs/debugging.md, "Traces"). A traced kernel
// opens a TraceSpan before each statement worth seeing (a wait, a signal, a
// barrier, a remote store or atomic, a dot loop) and ends it after; a
// TraceScope spans a block (an epilogue), and a TraceKernel the kernel's body.
// Thread 0 of the program instance records the span into its rank's buffer,
// which exists only while the run records a trace (IRIS_TRACE): otherwise a
// span costs thread 0 a load and a null test at each end. The host merges the
// ranks' buffers into one Chrome / Perfetto trace (runtime/src/trace.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "iris/device.hpp"
#include "iris/types/layout.hpp"
#include "iris/types/program.hpp"
#include "iris/types/tile.hpp"
#include "iris/types/trace.hpp"

namespace iris {

// The rank whose heap holds the element of `pointers` (a pointer, or the first
// element of this thread's tile of them), or -1 when none does.
template <class P>
IRIS_HD int trace_peer(const Program& program, const P& pointers) {
  const auto address = reinterpret_cast<std::uintptr_t>(elem(pointers, 0));
  for (int r = 0; r < program.ctx.world_size; ++r) {
    const auto base = reinterpret_cast<std::uintptr_t>(program.ctx.heap_bases[r]);
    if (address >= base && address - base < program.ctx.heap_size) return r;
  }
  return -1;
}

// What a waited-for flag holds now, as the span's value (the bits of a
// floating-point flag).
template <class T>
IRIS_HD std::int64_t trace_value(T* flag) {
  const T seen = atomic_load<Sem::relaxed, Scope::sys>(flag);
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(seen);
  } else {
    std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t> bits;
    std::memcpy(&bits, &seen, sizeof bits);
    return bits;
  }
}

// A span's optional arguments, which end() computes only where it records
// the span: its peer rank and its value.
struct NoPeer {
  IRIS_HD int operator()() const { return -1; }
};
struct NoValue {
  IRIS_HD std::int64_t operator()() const { return 0; }
};

namespace detail {
// What thread 0 of a program instance keeps while it records, out of
// registers: shared memory on the GPU, a thread-local variable on the CPU
// (whose program instances run one after another on their rank's thread).
// `File` and `Key` tell the variables apart. The wgmma GEMMs run at 255
// registers a thread, and an open span's start and buffer pointer kept in
// registers across a K loop made ptxas spill more in every thread, though
// only thread 0 records.
template <class T, std::uint32_t File, int Key>
IRIS_HD T& trace_local() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  __shared__ T value;
  return value;
#elif IRIS_GPU
  static T value;  // host pass of a GPU compilation: never runs
  return value;
#else
  static thread_local T value;
  return value;
#endif
}

// Where an open span keeps its start.
template <std::uint32_t File, int Span>
IRIS_HD std::uint64_t& trace_start() {
  return trace_local<std::uint64_t, File, Span>();
}

// The slots of its rank's buffer that a program instance has claimed and not
// yet filled, [next, end), and the spans it dropped for want of one. Thread 0
// claims a chunk with one atomic add on the rank's counter, 8 slots first and
// twice as many each time up to 64: an atomic at every span's end had thread 0
// wait for a round trip to a counter that every SM shares, while a chunk that
// grows wastes at most about as many slots as the instance fills.
struct TraceSlots {
  unsigned long long next, end, chunk, dropped;
};
inline constexpr unsigned long long kTraceFirstChunk = 8;
inline constexpr unsigned long long kTraceLastChunk = 64;
IRIS_HD inline TraceSlots& trace_slots() { return trace_local<TraceSlots, 0, -1>(); }

// Keeps `event` in the instance's next slot, or counts it as dropped when
// the buffer is full.
IRIS_HD inline void trace_keep(TraceBuffer& buffer, const TraceEvent& event) {
  TraceSlots& slots = trace_slots();
  if (slots.next == slots.end) {
    slots.next = atomic_add<Sem::relaxed, Scope::gpu>(&buffer.claimed, slots.chunk);
    slots.end = slots.next + slots.chunk;
    if (slots.chunk < kTraceLastChunk) slots.chunk *= 2;
  }
  const unsigned long long slot = slots.next++;
  if (slot < buffer.capacity) {
    buffer.events[slot] = event;
  } else {
    ++slots.dropped;
  }
}

// The buffer a thread records into: its rank's, for thread 0 of the program
// instance while the run records a trace; else null. Read at a span's start
// and again at its end (the host sets it before a kernel starts).
IRIS_HD inline TraceBuffer* trace_recorder(const Program& program) {
  return thread_index() == 0 ? trace_buffer(program.ctx) : nullptr;
}
}  // namespace detail

// A span that starts when it is made and is recorded by end(): span number
// `Span` of the .iris file `File` (trace_file_id), which names its start's
// word. Only thread 0 of the program instance records, and only while the run
// records a trace: the other threads, and every thread of a run without
// IRIS_TRACE, read no clock and compute no argument (end's peer and value are
// callables).
template <std::uint32_t File, int Span>
class TraceSpan {
 public:
  IRIS_HD explicit TraceSpan(const Program& program) : program_(program) {
    if (detail::trace_recorder(program) != nullptr) detail::trace_start<File, Span>() = detail::trace_clock();
  }
  template <class Peer = NoPeer, class Value = NoValue>
  IRIS_HD void end(TraceKind kind, int line, const Peer& peer = {}, const Value& value = {}) const {
    TraceBuffer* const buffer = detail::trace_recorder(program_);
    if (buffer == nullptr) return;
    detail::trace_keep(*buffer, TraceEvent{detail::trace_start<File, Span>(), detail::trace_clock(), value(), File, line,
                                           program_.linear_id(), kind, static_cast<std::int16_t>(peer())});
  }

 private:
  const Program& program_;
};

// A span over the rest of the enclosing block, recorded when it ends.
template <std::uint32_t File, int Span>
class TraceScope {
 public:
  IRIS_HD TraceScope(const Program& program, TraceKind kind, int line) : span_(program), kind_(kind), line_(line) {}
  IRIS_HD ~TraceScope() { span_.end(kind_, line_); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  TraceSpan<File, Span> span_;
  TraceKind kind_;
  int line_;
};

// The span of a kernel's body, which every other span of its program
// instance is inside: it starts the instance's claim on the buffer empty
// (shared memory starts undefined) and, when it ends, adds the spans the
// instance dropped to its rank's count.
template <std::uint32_t File, int Span>
class TraceKernel {
 public:
  IRIS_HD TraceKernel(const Program& program, int line) : program_(program), span_(program), line_(line) {
    if (detail::trace_recorder(program) != nullptr) detail::trace_slots() = {0, 0, detail::kTraceFirstChunk, 0};
  }
  IRIS_HD ~TraceKernel() {
    span_.end(TraceKind::kernel, line_);  // first: the kernel's own span may be dropped too
    TraceBuffer* const buffer = detail::trace_recorder(program_);
    if (buffer == nullptr) return;
    const unsigned long long dropped = detail::trace_slots().dropped;
    if (dropped != 0) atomic_add<Sem::relaxed, Scope::gpu>(&buffer->dropped, dropped);
  }
  TraceKernel(const TraceKernel&) = delete;
  TraceKernel& operator=(const TraceKernel&) = delete;

 private:
  const Program& program_;
  TraceSpan<File, Span> span_;
  int line_;
};

}  // namespace iris
