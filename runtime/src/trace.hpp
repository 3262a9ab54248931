// Iris runtime: device traces on the host side (docs/debugging.md, "Traces"),
// the same for every backend:
//   * the settings: IRIS_TRACE (the file to write; unset: no trace) and
//     IRIS_TRACE_EVENTS (events kept per rank);
//   * the registry of traced .iris files (register_trace_file, which the
//     generated code calls), which names the events' files and kernels;
//   * host-memory buffers, one per rank (the CPU's ranks);
//   * the writer, which merges every rank's events into one Chrome / Perfetto
//     trace JSON: a process per rank, a track per program instance.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iris/types/trace.hpp"

namespace iris::detail {

// The host's steady clock in nanoseconds, which every rank's events are
// placed on (the CPU's trace clock is this one).
inline std::int64_t steady_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct TraceSettings {
  std::string path;
  std::size_t events_per_rank;
};
inline constexpr std::size_t kDefaultTraceEvents = std::size_t{1} << 20;
inline constexpr std::size_t kMaxTraceEvents = std::size_t{1} << 22;
// From the environment: nothing when IRIS_TRACE is unset or empty; throws
// iris::Error when IRIS_TRACE_EVENTS is not a positive integer.
std::optional<TraceSettings> trace_settings();

// What one rank recorded: its events, how many it dropped, and what to add to
// its clock to reach the common one (another host's, another GPU's).
struct RankTrace {
  int rank = 0;
  std::vector<TraceEvent> events;
  std::uint64_t dropped = 0;
  std::int64_t clock_offset = 0;
};
// The kept events and the dropped count of a buffer whose events are readable here.
RankTrace take_trace(int rank, const TraceBuffer& buffer);

// Writes the ranks' events as one trace; throws iris::Error when the file
// cannot be written. Prints a line saying so on stderr.
void write_trace(const std::string& path, std::vector<RankTrace> ranks);

// One buffer per rank in host memory (the CPU's ranks; run_mpi's process has
// one rank of them).
class HostTraceBuffers {
 public:
  HostTraceBuffers(int ranks, std::size_t events_per_rank);
  TraceBuffer* buffer(int rank) { return &buffers_[static_cast<std::size_t>(rank)]; }
  RankTrace take(int rank) const { return take_trace(rank, buffers_[static_cast<std::size_t>(rank)]); }

 private:
  std::vector<std::vector<TraceEvent>> storage_;
  std::vector<TraceBuffer> buffers_;
};

}  // namespace iris::detail
