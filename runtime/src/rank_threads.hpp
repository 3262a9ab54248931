// Iris runtime: run_threads's part that is the same on every backend (the CPU
// world and the GPU world's threads mode): its checks of the arguments, and
// one thread per rank running the body.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "iris/host.hpp"

namespace iris::detail {

inline void check_run_threads(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  if (ranks < 1) throw Error("iris: run_threads: need at least 1 rank, got " + std::to_string(ranks));
  if (heap_bytes == 0 || heap_bytes % 4096 != 0) {
    throw Error("iris: run_threads: heap size must be a positive multiple of 4096 bytes, got " +
                std::to_string(heap_bytes));
  }
  if (!body) throw Error("iris: run_threads: empty body");
}

// Runs world.run_rank(r, body) on a thread of its own for every rank and joins
// them. A thread that cannot be started aborts the world, which releases the
// ranks already started.
template <class World>
void run_rank_threads(World& world, int ranks, const std::function<void(Rank&)>& body) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  try {
    for (int r = 0; r < ranks; ++r) threads.emplace_back([&world, &body, r] { world.run_rank(r, body); });
  } catch (...) {
    world.abort(std::current_exception());
  }
  for (auto& t : threads) t.join();
}

}  // namespace iris::detail
