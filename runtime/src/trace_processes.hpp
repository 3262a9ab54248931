// Iris runtime: the trace of a world of processes (one rank each, run_mpi's or
// WorldHandle's), written by rank 0 from every rank's events (trace.hpp),
// gathered through the world's Bootstrap. Included by world_cpu_mpi.cpp and
// world_gpu_mpi.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bootstrap_steps.hpp"
#include "trace.hpp"

namespace iris::detail {

// What identifies the steady clock of this process: the boot of its kernel
// (processes of one host, containers too, share CLOCK_MONOTONIC); the host's
// name where the kernel does not say.
inline std::string clock_identity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (std::getline(boot, id) && !id.empty()) return "boot " + id;
  return "host " + host_name();
}

// What to add to each rank's clock `now` (the steady clock) to reach rank 0's
// (at rank 0; the others get zeros); `clock` names this rank's clock
// (clock_identity). A rank that reads rank 0's clock adds nothing: an estimate
// would only add its error, which a loaded machine makes larger than the time
// from a signal to the wait it ends. The ranks of other clocks read them
// between a barrier and an allgather, a few times, which rank 0 brackets by its
// own readings before the one and after the other; the reading of the shortest
// bracket is taken as read half-way (Cristian's algorithm, over collectives).
template <class Clock>
std::vector<std::int64_t> offsets_to_rank0(Bootstrap& boot, const std::string& clock, Clock now) {
  constexpr int kRounds = 8;
  const auto size = static_cast<std::size_t>(boot.size());
  const std::vector<Name> ids = allgather_values(boot, Name(clock));
  std::vector<std::int64_t> offsets(size, 0);
  bool all_share_rank0_clock = true;
  for (std::size_t r = 1; r < size; ++r) all_share_rank0_clock = all_share_rank0_clock && ids[r] == ids[0];
  if (all_share_rank0_clock) return offsets;  // every rank decides alike: they all have `ids`
  std::vector<std::int64_t> best_bracket(size, INT64_MAX);
  for (int i = 0; i < kRounds; ++i) {
    const std::int64_t before = now();
    barrier(boot);  // ends on rank r only after rank 0 has read `before`
    const std::vector<std::int64_t> theirs = allgather_values(boot, std::int64_t{now()});
    const std::int64_t after = now();  // after every rank has read its clock
    if (boot.rank() != 0) continue;  // only rank 0's brackets hold the other clocks
    for (std::size_t r = 1; r < size; ++r) {
      if (ids[r] == ids[0] || after - before >= best_bracket[r]) continue;
      best_bracket[r] = after - before;
      offsets[r] = before + (after - before) / 2 - theirs[r];
    }
  }
  return offsets;
}

// Collective: every rank passes its trace (its clock_offset: from its device
// clock to its host's steady clock); rank 0 writes them all to `path`.
inline void write_trace_of_processes(Bootstrap& boot, RankTrace mine, const std::string& path) {
  const std::vector<std::int64_t> offsets = offsets_to_rank0(boot, clock_identity(), steady_now);
  struct Header {
    std::uint64_t dropped;
    std::int64_t clock_offset;
  };
  const std::vector<Header> headers = allgather_values(boot, Header{mine.dropped, mine.clock_offset});
  std::vector<std::vector<char>> events =
      gather_at_rank0(boot, mine.events.data(), mine.events.size() * sizeof(TraceEvent));
  if (boot.rank() != 0) return;
  std::vector<RankTrace> ranks;
  for (std::size_t r = 0; r < headers.size(); ++r) {
    RankTrace& t = ranks.emplace_back();
    t.rank = static_cast<int>(r);
    t.dropped = headers[r].dropped;
    t.clock_offset = headers[r].clock_offset + offsets[r];
    t.events.resize(events[r].size() / sizeof(TraceEvent));
    std::memcpy(t.events.data(), events[r].data(), events[r].size());
    events[r] = {};
  }
  write_trace(path, std::move(ranks));
}

}  // namespace iris::detail
