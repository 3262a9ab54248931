// What a traced kernel records (irisc --trace; docs/debugging.md, "Traces"):
// one TraceEvent per span of a program instance, into its rank's TraceBuffer.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace iris {

// The kinds of span. A statement's kind is the spelling of its TIR operation
// (irisc's tir_ops.def, the operations with the trait Traced or
// TracedWhenRemote), which the compiler prints as TraceKind::<spelling>.
#define IRIS_TRACE_KINDS(X) \
  X(kernel)                 \
  X(dot_loop)               \
  X(epilogue)               \
  X(wait_until)             \
  X(signal)                 \
  X(put_signal)             \
  X(barrier)                \
  X(quiet)                  \
  X(store)                  \
  X(atomic_rmw)             \
  X(atomic_cas)             \
  X(atomic_store)
enum class TraceKind : std::uint16_t {
#define IRIS_TRACE_KIND(name) name,
  IRIS_TRACE_KINDS(IRIS_TRACE_KIND)
#undef IRIS_TRACE_KIND
};

// One span: [start, end] on the device's clock in nanoseconds (globaltimer on
// NVIDIA, the steady clock on the CPU), the .iris file (trace_file_id of its
// path) and line, the program instance (its linear id), and what the kind
// adds: the peer rank of a remote access (-1: none or unknown), the value a
// wait saw when it was satisfied, or the value a signal stored or added.
struct TraceEvent {
  std::uint64_t start;
  std::uint64_t end;
  std::int64_t value;
  std::uint32_t file;
  std::int32_t line;
  std::int32_t program;
  TraceKind kind;
  std::int16_t peer;
};

// A rank's events. Program instances claim slots a chunk at a time
// (ops/trace.hpp): `claimed` counts the slots handed out, of which the first
// `capacity` exist, and a slot that no span filled holds zeros (its end is 0).
// A span that finds no slot is counted in `dropped`, so a full buffer never
// overwrites what it holds.
struct TraceBuffer {
  TraceEvent* events;
  unsigned long long capacity;
  unsigned long long claimed;
  unsigned long long dropped;
};

// The id of a .iris file's path in its events (32-bit FNV-1a): the generated
// code computes it at compile time and registers the path under it.
constexpr std::uint32_t trace_file_id(const char* path) {
  std::uint32_t hash = 2166136261u;
  for (; *path != '\0'; ++path) hash = (hash ^ static_cast<unsigned char>(*path)) * 16777619u;
  return hash;
}

namespace detail {
// The name of the kernel defined at a line of a traced file, which its
// kernel span shows.
struct TraceKernelName {
  int line;
  const char* name;
};
// Host: the path of the file with trace_file_id(path) == id and its kernels,
// for the trace writer (the generated code registers each traced file once,
// at program start). Returns true.
bool register_trace_file(std::uint32_t id, const char* path, std::initializer_list<TraceKernelName> kernels);
}  // namespace detail

}  // namespace iris
