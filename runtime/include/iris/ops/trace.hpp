// Device traces (irisc --trace; docs/debugging.md, "Traces"). A traced kernel
// opens a TraceSpan before each statement worth seeing (a wait, a signal, a
// barrier, a remote store or atomic, a dot loop) and ends it after; a
// TraceScope spans a block (the kernel, an epilogue). Thread 0 of the program
// instance records the span into its rank's buffer, which exists only while
// the run records a trace (IRIS_TRACE): otherwise a span costs thread 0 a
// load and a null test. The host merges the ranks' buffers into one Chrome /
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

// A span that starts when it is made and is recorded by end(). Only thread 0
// of the program instance records, and only while the run records a trace:
// the other threads, and every thread of a run without IRIS_TRACE, read no
// clock and compute no argument (end's peer and value are callables).
class TraceSpan {
 public:
  IRIS_HD explicit TraceSpan(const Program& program)
      : program_(program),
        buffer_(thread_index() == 0 ? detail::trace_buffer(program.ctx) : nullptr),
        start_(buffer_ != nullptr ? detail::trace_clock() : 0) {}
  template <class Peer = NoPeer, class Value = NoValue>
  IRIS_HD void end(TraceKind kind, std::uint32_t file, int line, const Peer& peer = {}, const Value& value = {}) const {
    if (buffer_ == nullptr) return;
    const unsigned long long slot = atomic_add<Sem::relaxed, Scope::gpu>(&buffer_->claimed, 1ull);
    if (slot >= buffer_->capacity) return;  // full: the writer counts it as dropped
    buffer_->events[slot] = TraceEvent{start_, detail::trace_clock(), value(), file, line,
                                       program_.linear_id(), kind, static_cast<std::int16_t>(peer())};
  }

 private:
  const Program& program_;
  TraceBuffer* buffer_;
  std::uint64_t start_;
};

// A span over the rest of the enclosing block, recorded when it ends.
class TraceScope {
 public:
  IRIS_HD TraceScope(const Program& program, TraceKind kind, std::uint32_t file, int line)
      : span_(program), kind_(kind), file_(file), line_(line) {}
  IRIS_HD ~TraceScope() { span_.end(kind_, file_, line_); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  TraceSpan span_;
  TraceKind kind_;
  std::uint32_t file_;
  int line_;
};

}  // namespace iris
