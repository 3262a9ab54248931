// Tests of run_threads, Rank, DeviceContext, translate and launch.
#include <doctest/doctest.h>
#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "iris/device_cpu.hpp"
#include "iris/host.hpp"
#include "iris/launch_cpu.hpp"

namespace {
constexpr std::size_t kHeap = 1 << 20;
}

TEST_CASE("run_threads: every rank runs once, with consistent world facts") {
  for (int n : {1, 2, 4, 8}) {
    CAPTURE(n);
    std::vector<int> runs(n, 0), sizes(n, 0), ctx_ok(n, 0);
    std::vector<std::size_t> heap_sizes(n, 0);
    std::vector<std::vector<std::uintptr_t>> bases(n);
    iris::run_threads(n, kHeap, [&](iris::Rank& r) {
      const int me = r.rank();
      runs[me] += 1;
      sizes[me] = r.world_size();
      heap_sizes[me] = r.heap_size();
      const iris::DeviceContext ctx = r.device_context();
      ctx_ok[me] = ctx.rank == me && ctx.world_size == n && ctx.heap_size == kHeap && ctx.barrier != nullptr;
      for (int o = 0; o < n; ++o) bases[me].push_back(reinterpret_cast<std::uintptr_t>(ctx.heap_bases[o]));
    });
    for (int r = 0; r < n; ++r) {
      CHECK(runs[r] == 1);
      CHECK(sizes[r] == n);
      CHECK(heap_sizes[r] == kHeap);
      CHECK(ctx_ok[r] == 1);
      CHECK(bases[r] == bases[0]);  // every rank sees the same table
    }
    // The heaps do not overlap.
    std::vector<std::uintptr_t> sorted = bases[0];
    std::sort(sorted.begin(), sorted.end());
    for (int i = 1; i < n; ++i) CHECK(sorted[i] - sorted[i - 1] >= kHeap);
  }
}

// A program instance on the CPU keeps its tiles on the stack: a fused kernel
// at 128×256 tiles in a checked build needs more than the 8 MiB a thread
// gets by default (it crashed there).
TEST_CASE("run_threads: each rank's thread has a stack for GPU-sized tiles") {
  std::vector<std::size_t> stack_bytes(2, 0);
  iris::run_threads(2, kHeap, [&](iris::Rank& r) {
    pthread_attr_t attributes;
    REQUIRE(pthread_getattr_np(pthread_self(), &attributes) == 0);
    pthread_attr_getstacksize(&attributes, &stack_bytes[static_cast<std::size_t>(r.rank())]);
    pthread_attr_destroy(&attributes);
  });
  for (std::size_t bytes : stack_bytes) CHECK(bytes >= (std::size_t{64} << 20));
}

TEST_CASE("translate: writes through translated pointers arrive at the owner") {
  for (int n : {1, 2, 4, 8}) {
    CAPTURE(n);
    std::vector<int> wrong(n, -1), host_same(n, 0);
    iris::run_threads(n, kHeap, [&](iris::Rank& r) {
      const int me = r.rank();
      const iris::DeviceContext ctx = r.device_context();
      int* slots = r.allocate<int>(n);  // slots[src] on rank `to` is written by src
      iris::launch(ctx, 1, [&](int, int) {
        for (int to = 0; to < n; ++to) *iris::translate(slots + me, to, ctx) = 100 * me + to;
      });
      r.barrier();
      int bad = 0;
      for (int src = 0; src < n; ++src) bad += slots[src] != 100 * src + me;
      wrong[me] = bad;
      // Host and device translation agree; translating to myself is the identity.
      bool same = iris::translate(slots, me, ctx) == slots;
      for (int to = 0; to < n; ++to) {
        same = same && r.translate(slots + 1, to) == iris::translate(slots + 1, to, ctx);
        const auto expected = reinterpret_cast<int*>(ctx.heap_bases[to] + (reinterpret_cast<char*>(slots + 1) -
                                                                           ctx.heap_bases[me]));
        same = same && r.translate(slots + 1, to) == expected;
      }
      host_same[me] = same;
    });
    for (int r = 0; r < n; ++r) {
      CHECK(wrong[r] == 0);
      CHECK(host_same[r] == 1);
    }
  }
}

TEST_CASE("Rank::translate refuses pointers outside the local heap and bad ranks") {
  iris::run_threads(2, kHeap, [&](iris::Rank& r) {
    int* p = r.allocate<int>(4);
    int local = 0;
    if (r.rank() == 0) {
      CHECK_THROWS_WITH_AS(r.translate(&local, 1), doctest::Contains("not inside the symmetric heap of rank 0"),
                           iris::Error);
      CHECK_THROWS_WITH_AS(r.translate(p, 2), doctest::Contains("rank 2 is out of range [0, 2)"), iris::Error);
      CHECK_THROWS_AS(r.translate(r.translate(p, 1), 0), iris::Error);  // rank 1's address is not mine
    }
  });
}

TEST_CASE("launch: program instances run in order on the rank's thread") {
  std::vector<std::vector<int>> order(3);
  std::vector<int> grids_ok(3, 1);
  iris::run_threads(3, kHeap, [&](iris::Rank& r) {
    const iris::DeviceContext ctx = r.device_context();
    iris::launch(ctx, 5, [&](int pid, int grid) {
      order[r.rank()].push_back(pid);
      grids_ok[r.rank()] &= grid == 5;
    });
    iris::launch(ctx, 0, [&](int, int) { order[r.rank()].push_back(-1); });  // no instances
  });
  for (int r = 0; r < 3; ++r) {
    CHECK(order[r] == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(grids_ok[r] == 1);
  }
  iris::run_threads(1, kHeap, [&](iris::Rank& r) {
    CHECK_THROWS_WITH_AS(iris::launch(r.device_context(), -1, [](int, int) {}),
                         doctest::Contains("grid must not be negative"), iris::Error);
  });
}

TEST_CASE("host barrier: every rank's writes before it are visible after it, many times") {
  constexpr int n = 4, rounds = 200;
  std::vector<int> bad(n, 0);
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const int me = r.rank();
    int* cell = r.allocate<int>(1);
    for (int i = 1; i <= rounds; ++i) {
      *cell = i * 10 + me;  // plain write, own heap
      r.barrier();
      for (int o = 0; o < n; ++o) bad[me] += *r.translate(cell, o) != i * 10 + o;
      r.barrier();  // nobody overwrites before everybody has read
    }
  });
  for (int r = 0; r < n; ++r) CHECK(bad[r] == 0);
}
