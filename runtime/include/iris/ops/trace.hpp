// Device traces (irisc --trace; docs/debugging.md, "Traces"). A traced kernel
// opens a TraceSpan before each statement worth seeing (a wait, a signal, a
// barrier, a remote store or atomic, a dot loop) and ends it after; a
// TraceScope spans a block (the kernel, an epilogue). Thread 0 of the program
// instance records the span into its rank's buffer, which exists only while
// the run records a trace (IRIS_TRACE): otherwise a span costs a clock read
// and a null test. The host merges the ranks' buffers into one Chrome /
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

// A span that starts when it is made and is recorded by end().
class TraceSpan {
 public:
  IRIS_HD explicit TraceSpan(const Program& program) : program_(program), start_(detail::trace_clock()) {}

  IRIS_HD void end(TraceKind kind, std::uint32_t file, int line, int peer = -1, std::int64_t value = 0) const {
    if (thread_index() != 0) return;
    TraceBuffer* buffer = detail::trace_buffer(program_.ctx);
    if (buffer == nullptr) return;
    const unsigned long long slot = atomic_add<Sem::relaxed, Scope::gpu>(&buffer->claimed, 1ull);
    if (slot >= buffer->capacity) return;  // full: the writer counts it as dropped
    buffer->events[slot] = TraceEvent{start_, detail::trace_clock(), value, file, line,
                                      program_.linear_id(), kind, static_cast<std::int16_t>(peer)};
  }

 private:
  const Program& program_;
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
