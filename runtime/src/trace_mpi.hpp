// Iris runtime: the trace of a run_mpi world (one process per rank), written
// by rank 0 from every rank's events (trace.hpp). Included by
// world_cpu_mpi.cpp and world_gpu_mpi.cpp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "mpi_start.hpp"
#include "trace.hpp"

namespace iris::detail {

// What identifies the steady clock of this process: the boot of its kernel
// (processes of one host, containers too, share CLOCK_MONOTONIC); the host's
// name where the kernel does not say.
inline std::string clock_identity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (std::getline(boot, id) && !id.empty()) return "boot " + id;
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  IRIS_MPI(MPI_Get_processor_name(name, &length));
  return "host " + std::string(name, static_cast<std::size_t>(length));
}

// What to add to this rank's steady clock to reach rank 0's. A rank that reads
// rank 0's clock (clock_identity) adds nothing: an estimate would only add its
// error, up to half a round trip, which a loaded machine makes larger than the
// time from a signal to the wait it ends. For the ranks of other hosts, rank 0
// asks for their time a few times and keeps the answer of the shortest round
// trip, assumed to be read half-way (Cristian's algorithm).
inline std::int64_t offset_to_rank0(MPI_Comm comm, int me, int size) {
  constexpr int kRounds = 8;
  constexpr int kIdentity = 128;
  char mine_id[kIdentity] = {};
  const std::string id = clock_identity();
  id.copy(mine_id, kIdentity - 1);
  std::vector<char> ids(static_cast<std::size_t>(size) * kIdentity);
  IRIS_MPI(MPI_Allgather(mine_id, kIdentity, MPI_CHAR, ids.data(), kIdentity, MPI_CHAR, comm));
  const auto shares_rank0_clock = [&](int r) {
    return std::string(&ids[static_cast<std::size_t>(r) * kIdentity]) == std::string(ids.data());
  };
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(size), 0);
  for (int r = 1; r < size; ++r) {
    if (shares_rank0_clock(r)) continue;
    if (me == 0) {
      std::int64_t best_trip = INT64_MAX;
      for (int i = 0; i < kRounds; ++i) {
        const std::int64_t sent = steady_now();
        std::int64_t theirs = 0;
        IRIS_MPI(MPI_Send(&sent, 1, MPI_INT64_T, r, 0, comm));
        IRIS_MPI(MPI_Recv(&theirs, 1, MPI_INT64_T, r, 0, comm, MPI_STATUS_IGNORE));
        const std::int64_t received = steady_now();
        if (received - sent < best_trip) {
          best_trip = received - sent;
          offsets[static_cast<std::size_t>(r)] = sent + (received - sent) / 2 - theirs;
        }
      }
    } else if (me == r) {
      for (int i = 0; i < kRounds; ++i) {
        std::int64_t asked = 0;
        IRIS_MPI(MPI_Recv(&asked, 1, MPI_INT64_T, 0, 0, comm, MPI_STATUS_IGNORE));
        const std::int64_t now = steady_now();
        IRIS_MPI(MPI_Send(&now, 1, MPI_INT64_T, 0, 0, comm));
      }
    }
  }
  std::int64_t mine = 0;
  IRIS_MPI(MPI_Scatter(offsets.data(), 1, MPI_INT64_T, &mine, 1, MPI_INT64_T, 0, comm));
  return mine;
}

// Collective: every rank passes its trace (its clock_offset: from its device
// clock to its host's steady clock); rank 0 writes them all to `path`.
inline void write_trace_mpi(MPI_Comm comm, RankTrace mine, const std::string& path) {
  int me = 0, size = 0;
  IRIS_MPI(MPI_Comm_rank(comm, &me));
  IRIS_MPI(MPI_Comm_size(comm, &size));
  mine.clock_offset += offset_to_rank0(comm, me, size);
  // Rank by rank, so that no count passes MPI's int (IRIS_TRACE_EVENTS is at most 2^22).
  const auto send_count = [&](std::size_t n) { return static_cast<int>(n * sizeof(TraceEvent)); };
  if (me != 0) {
    const std::int64_t header[3] = {static_cast<std::int64_t>(mine.events.size()),
                                    static_cast<std::int64_t>(mine.dropped), mine.clock_offset};
    IRIS_MPI(MPI_Send(header, 3, MPI_INT64_T, 0, 1, comm));
    IRIS_MPI(MPI_Send(mine.events.data(), send_count(mine.events.size()), MPI_BYTE, 0, 2, comm));
    return;
  }
  std::vector<RankTrace> ranks;
  ranks.push_back(std::move(mine));
  for (int r = 1; r < size; ++r) {
    std::int64_t header[3];
    IRIS_MPI(MPI_Recv(header, 3, MPI_INT64_T, r, 1, comm, MPI_STATUS_IGNORE));
    RankTrace& t = ranks.emplace_back();
    t.rank = r;
    t.events.resize(static_cast<std::size_t>(header[0]));
    t.dropped = static_cast<std::uint64_t>(header[1]);
    t.clock_offset = header[2];
    IRIS_MPI(MPI_Recv(t.events.data(), send_count(t.events.size()), MPI_BYTE, r, 2, comm, MPI_STATUS_IGNORE));
  }
  write_trace(path, std::move(ranks));
}

}  // namespace iris::detail
