// Iris runtime: what a world of processes (one rank each) does through its
// Bootstrap (host.hpp), MPI's or the program's own: the start-up steps that
// every process takes together, its node team, barriers, and gathering at
// rank 0. A step that fails on one process fails on all, with a message naming
// the ranks, so that nobody waits in a collective for a process that has given
// up. Included by world_gpu_mpi.cpp, world_cpu_mpi.cpp and trace_processes.hpp.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "iris/host.hpp"

namespace iris::detail {

// Every process's `mine`, in rank order.
template <class T>
std::vector<T> allgather_values(Bootstrap& boot, const T& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> all(static_cast<std::size_t>(boot.size()));
  boot.allgather(&mine, all.data(), sizeof(T));
  return all;
}

// Returns once every process has called it.
inline void barrier(Bootstrap& boot) { allgather_values(boot, char{0}); }

// Every process reports whether its part of a start-up step failed (`failure`
// non-empty); if any did, every process throws, naming the failed ranks.
inline void agree_step(Bootstrap& boot, const std::string& step, const std::string& failure) {
  const std::vector<int> all = allgather_values(boot, failure.empty() ? 0 : 1);
  std::string failed;
  for (int r = 0; r < boot.size(); ++r) {
    if (all[static_cast<std::size_t>(r)] != 0) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  }
  if (failed.empty()) return;
  if (!failure.empty()) throw Error(failure + " (run_mpi: " + step + " failed on rank(s) " + failed + ")");
  throw Error("iris: run_mpi: " + step + " failed on rank(s) " + failed + " (see their messages)");
}

// Every rank must ask for the same heap size (throws on every rank otherwise).
inline void check_heap_sizes(Bootstrap& boot, std::size_t heap_bytes) {
  const std::vector<std::uint64_t> sizes = allgather_values(boot, static_cast<std::uint64_t>(heap_bytes));
  for (int r = 1; r < boot.size(); ++r) {
    if (sizes[static_cast<std::size_t>(r)] != sizes[0]) {
      throw Error("iris: run_mpi: the heap size differs between ranks: rank 0 asked for " + std::to_string(sizes[0]) +
                  " bytes, rank " + std::to_string(r) + " for " + std::to_string(sizes[static_cast<std::size_t>(r)]));
    }
  }
}

// A fixed-size text every process can send: a host's name, a clock's identity.
struct Name {
  char text[256] = {};
  Name() = default;
  explicit Name(const std::string& s) { s.copy(text, sizeof text - 1); }
  bool operator==(const Name& other) const { return std::strcmp(text, other.text) == 0; }
};

// This process's host, as MPI's shared-memory teams see it (its host name).
inline std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

// The ranks on this process's host, lowest first (this one among them).
inline std::vector<int> ranks_of_my_host(Bootstrap& boot) {
  const std::vector<Name> hosts = allgather_values(boot, Name(host_name()));
  std::vector<int> ranks;
  for (int r = 0; r < boot.size(); ++r) {
    if (hosts[static_cast<std::size_t>(r)] == hosts[static_cast<std::size_t>(boot.rank())]) ranks.push_back(r);
  }
  return ranks;
}

// Every process's `bytes` bytes at `data`, gathered at rank 0 (the others get
// empty vectors), in pieces of at most kPiece bytes per process and call, so
// that no allgather holds more than size() pieces.
inline std::vector<std::vector<char>> gather_at_rank0(Bootstrap& boot, const void* data, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  const auto size = static_cast<std::size_t>(boot.size());
  const std::vector<std::uint64_t> sizes = allgather_values(boot, static_cast<std::uint64_t>(bytes));
  const std::uint64_t longest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::vector<char>> gathered(size);
  if (boot.rank() == 0) {
    for (std::size_t r = 0; r < size; ++r) gathered[r].resize(sizes[r]);
  }
  const std::size_t most = std::min<std::uint64_t>(kPiece, longest);  // bytes per process and call
  std::vector<char> piece(most), all(most * size);
  for (std::uint64_t at = 0; at < longest; at += most) {
    const std::size_t n = std::min<std::uint64_t>(most, longest - at);
    const std::size_t mine = at < bytes ? std::min<std::uint64_t>(n, bytes - at) : 0;
    if (mine != 0) std::memcpy(piece.data(), static_cast<const char*>(data) + at, mine);
    boot.allgather(piece.data(), all.data(), n);
    if (boot.rank() != 0) continue;
    for (std::size_t r = 0; r < size; ++r) {
      if (at < sizes[r]) std::memcpy(gathered[r].data() + at, &all[r * n], std::min<std::uint64_t>(n, sizes[r] - at));
    }
  }
  return gathered;
}

}  // namespace iris::detail
