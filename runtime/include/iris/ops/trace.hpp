// Device traces (irisc --trace; docs/debugging.md, "Traces"). A traced kernel
// opens a TraceSpan before each statement worth seeing (a wait, a signal, a
// barrier, a remote store or atomic, a dot loop) and ends it after; a
// TraceScope spans a block (the kernel, an epilogue). Thread 0 of the program
// instance records the span into its rank's buffer, which exists only while
// the run records a trace (IRIS_TRACE): otherwise a span costs thread 0 a
// load and a null test at each end. The host merges the ranks' buffers into one Chrome /
// Perfetto trace (runtime/src/trace.cpp).
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
// Where an open span keeps its start: a word of shared memory per span of the
// kernel on the GPU, a thread-local word on the CPU (whose program instances
// run one after another on their rank's thread). Not in the span: the wgmma
// GEMMs run at 255 registers a thread, and a start and a buffer pointer kept
// in registers across a K loop made ptxas spill more in every thread, though
// only thread 0 records.
template <std::uint32_t File, int Span>
IRIS_HD std::uint64_t& trace_start() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  __shared__ std::uint64_t start;
  return start;
#elif IRIS_GPU
  static std::uint64_t start;  // host pass of a GPU compilation: never runs
  return start;
#else
  static thread_local std::uint64_t start;
  return start;
#endif
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
    const unsigned long long slot = atomic_add<Sem::relaxed, Scope::gpu>(&buffer->claimed, 1ull);
    if (slot >= buffer->capacity) return;  // full: the writer counts it as dropped
    buffer->events[slot] = TraceEvent{detail::trace_start<File, Span>(), detail::trace_clock(), value(), File, line,
                                      program_.linear_id(), kind, static_cast<std::int16_t>(peer())};
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

}  // namespace iris
