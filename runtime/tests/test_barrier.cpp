// Tests of the device-side barrier: nobody passes early, memory is ordered, it can be
// reused many times in a row, and mismatched program ids are reported.
#include <doctest/doctest.h>

#include <atomic>
#include <vector>

#include "iris/device_cpu.hpp"
#include "iris/host.hpp"
#include "iris/launch_cpu.hpp"

using iris::Scope;
using iris::Sem;

namespace {
constexpr std::size_t kHeap = 1 << 20;
}

TEST_CASE("device barrier: 1000 rounds, no rank passes early, writes are visible after it") {
  constexpr int grid = 10, rounds_per_program = 100;  // 1000 rounds in all
  for (int n : {1, 2, 4, 8}) {
    CAPTURE(n);
    std::vector<int> early(n, 0), stale(n, 0), rounds(n, 0);
    iris::run_threads(n, kHeap, [&](iris::Rank& r) {
      const iris::DeviceContext ctx = r.device_context();
      auto* arrivals = r.allocate<int>(1);  // used on rank 0: how many ranks reached the barrier so far
      int* cell = r.allocate<int>(1);       // this rank's round number, a plain int
      const int me = r.rank();
      iris::launch(ctx, grid, [&](int pid, int) {
        for (int i = 0; i < rounds_per_program; ++i) {
          const int round = pid * rounds_per_program + i + 1;
          *cell = round;
          iris::atomic_add<Sem::relaxed, Scope::sys>(iris::translate(arrivals, 0, ctx), 1);
          iris::barrier(ctx, pid);
          // Everybody has arrived `round` times: a rank that left early would see fewer.
          early[me] += iris::atomic_load<Sem::relaxed, Scope::sys>(iris::translate(arrivals, 0, ctx)) < round * n;
          for (int o = 0; o < n; ++o) stale[me] += *iris::translate(cell, o, ctx) != round;
          iris::barrier(ctx, pid);  // nobody writes round+1 before everybody has read
          rounds[me] += 1;
        }
      });
    });
    for (int r = 0; r < n; ++r) {
      CHECK(early[r] == 0);
      CHECK(stale[r] == 0);
      CHECK(rounds[r] == grid * rounds_per_program);
    }
  }
}

TEST_CASE("device barrier: ranks that finish right after it never see a false deadlock") {
  // The last rank through leaves at once and returns; the others must still get out.
  for (int i = 0; i < 200; ++i) {
    CHECK_NOTHROW(iris::run_threads(4, 4096, [](iris::Rank& r) {
      iris::launch(r.device_context(), 1, [&](int pid, int) { iris::barrier(r.device_context(), pid); });
    }));
  }
}

TEST_CASE("device barrier: program ids that do not match are an error, without hang") {
  // Rank 0 reaches its first barrier in program 1, rank 1 in program 0.
  CHECK_THROWS_WITH_AS(iris::run_threads(2, kHeap,
                                         [](iris::Rank& r) {
                                           const iris::DeviceContext ctx = r.device_context();
                                           iris::launch(ctx, 2, [&](int pid, int) {
                                             if (pid == (r.rank() == 0 ? 1 : 0)) iris::barrier(ctx, pid);
                                           });
                                         }),
                       doctest::Contains("device barrier #1 mismatch"), iris::Error);
}
