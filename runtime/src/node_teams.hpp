// Iris runtime: the settings and node teams of a world of processes, run_mpi's
// on either target. IRIS_TRANSPORT, IRIS_RANKS_PER_NODE and IRIS_HANG_TIMEOUT
// are read on every rank and must be rank 0's; the node teams are the hosts'
// ranks, cut by IRIS_RANKS_PER_NODE into fake nodes (how the tests reach far
// ranks without a second host). Included by world_cpu_mpi.cpp and
// world_gpu_mpi.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap_steps.hpp"
#include "hang_timeout.hpp"

namespace iris::detail {

// IRIS_TRANSPORT: what reaches far ranks (automatic: the target's default).
enum class Provider : std::uint64_t { automatic, ipc, mpi, nvshmem };

struct Settings {
  Provider provider = Provider::automatic;
  std::uint64_t ranks_per_node = 0;  // 0: a node is a host
  double hang_timeout = kDefaultHangTimeout;  // seconds

  // What every rank compares with rank 0's.
  static constexpr int kWords = 3;
  void to_words(std::uint64_t* words) const {
    words[0] = static_cast<std::uint64_t>(provider);
    words[1] = ranks_per_node;
    std::memcpy(&words[2], &hang_timeout, sizeof hang_timeout);
  }
};

// The settings from the environment; what is wrong with them goes to `failure`.
// `providers` lists the target's providers for the message about an unknown
// one ("the CPU target's providers: ipc, mpi"); each world refuses a known
// provider that its target lacks.
inline Settings read_settings(const std::string& providers, std::string& failure) {
  Settings s;
  const auto variable = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value == nullptr ? "" : value;
  };
  const std::string transport = variable("IRIS_TRANSPORT");
  if (transport == "ipc") s.provider = Provider::ipc;
  else if (transport == "mpi") s.provider = Provider::mpi;
  else if (transport == "nvshmem") s.provider = Provider::nvshmem;
  else if (!transport.empty()) failure = "iris: run_mpi: unknown IRIS_TRANSPORT=" + transport + " (" + providers + ")";
  const std::string per_node = variable("IRIS_RANKS_PER_NODE");
  if (!per_node.empty()) {
    char* end = nullptr;
    const long n = std::strtol(per_node.c_str(), &end, 10);
    if (*end == '\0' && n >= 1) s.ranks_per_node = static_cast<std::uint64_t>(n);
    else failure = "iris: run_mpi: IRIS_RANKS_PER_NODE must be a positive integer, got '" + per_node + "'";
  }
  s.hang_timeout = hang_timeout_setting("run_mpi", failure);
  return s;
}

// Throws on every rank unless every rank's settings are rank 0's.
inline void check_same_settings(Bootstrap& boot, const Settings& settings) {
  std::uint64_t mine[Settings::kWords];
  settings.to_words(mine);
  const int size = boot.size();
  std::vector<std::uint64_t> all(Settings::kWords * static_cast<std::size_t>(size));
  boot.allgather(mine, all.data(), sizeof mine);
  for (int r = 1; r < size; ++r) {
    if (!std::equal(all.begin(), all.begin() + Settings::kWords, all.begin() + Settings::kWords * r)) {
      throw Error("iris: run_mpi: IRIS_TRANSPORT, IRIS_RANKS_PER_NODE and IRIS_HANG_TIMEOUT must be the same on "
                  "every rank (mpirun -x NAME=value), but rank " + std::to_string(r) + "'s differ from rank 0's");
    }
  }
}

// My node team, ranks first .. first + size - 1, the world's number of nodes,
// and my index among the ranks of my host (which picks a GPU there).
struct NodeTeams {
  int first = 0;
  int size = 0;
  int nodes = 0;
  int host_rank = 0;
};

// The node teams: my host's ranks, cut by IRIS_RANKS_PER_NODE (per_node, 0 for
// none). A node's ranks must be consecutive and on one host; otherwise every
// rank throws.
inline NodeTeams form_node_teams(Bootstrap& boot, std::uint64_t per_node) {
  const int size = boot.size(), me = boot.rank();
  if (per_node != 0 && size % per_node != 0) {
    throw Error("iris: run_mpi: IRIS_RANKS_PER_NODE=" + std::to_string(per_node) + " does not divide the " +
                std::to_string(size) + " ranks of the world");
  }
  NodeTeams teams;
  std::vector<int> members;  // my node's ranks: my host's, cut by IRIS_RANKS_PER_NODE
  const std::vector<int> host_ranks = ranks_of_my_host(boot);
  teams.host_rank = static_cast<int>(std::find(host_ranks.begin(), host_ranks.end(), me) - host_ranks.begin());
  for (const int r : host_ranks) {
    if (per_node == 0 || static_cast<std::uint64_t>(r) / per_node == static_cast<std::uint64_t>(me) / per_node) {
      members.push_back(r);
    }
  }
  teams.size = static_cast<int>(members.size());
  teams.first = members[0];
  std::string listed, failure;
  for (int m : members) listed += (listed.empty() ? "" : ", ") + std::to_string(m);
  if (per_node != 0 && static_cast<std::uint64_t>(teams.size) != per_node) {
    failure = "iris: run_mpi: IRIS_RANKS_PER_NODE=" + std::to_string(per_node) + ", but the node of rank " +
              std::to_string(me) + " has ranks " + listed + " only: a node's ranks must run on one host";
  }
  for (int i = 0; i < teams.size; ++i) {
    if (members[static_cast<std::size_t>(i)] != teams.first + i) {
      failure = "iris: run_mpi: the ranks of a node must be consecutive, but rank " + std::to_string(me) +
                "'s node has ranks " + listed +
                " (start the ranks by slot, mpirun's default, or set IRIS_RANKS_PER_NODE)";
    }
  }
  agree_step(boot, "forming the node teams", failure);
  const std::vector<int> firsts = allgather_values(boot, teams.first);
  for (int r = 0; r < size; ++r) teams.nodes += firsts[static_cast<std::size_t>(r)] == r;
  return teams;
}

}  // namespace iris::detail
