// Tests of the remote accesses (iris/ops/transport.hpp) in a world of one node,
// run_threads: every rank is near, and each remote access does what the plain
// one does. (Far ranks: tests/transport, under mpirun.)
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "iris/device_cpu.hpp"
#include "iris/host.hpp"
#include "iris/kernel.hpp"
#include "iris/launch_cpu.hpp"
#include "iris/tile.hpp"
#include "test_util.hpp"

using iris::Cmp;
using iris::Scope;
using iris::Sem;

namespace {
constexpr std::size_t kHeap = 1 << 20;
constexpr int kTile = 8;
using Ints = iris::Tile<int, kTile>;
using Mask = iris::Tile<bool, kTile>;

iris::Program program_of(const iris::DeviceContext& ctx) { return iris::Program{ctx, {0, 0, 0}, {1, 1, 1}}; }

// Element k of the tile that `rank` sends: any value the receiver can recompute.
int sent(int rank, int k) { return 1000 * (rank + 1) + k; }
// Every other element, starting with the first.
bool even(int k) { return k % 2 == 0; }

Ints tile_of(int rank) {
  Ints t;
  for (int k = 0; k < kTile; ++k) t.v[k] = sent(rank, k);
  return t;
}
Mask even_mask() {
  Mask m;
  for (int k = 0; k < kTile; ++k) m.v[k] = even(k);
  return m;
}
}  // namespace

TEST_CASE("transport: a world of one node: every rank near, the team is the world") {
  iris::run_threads(4, kHeap, [](iris::Rank& r) {
    const iris::Program p = program_of(r.device_context());
    for (int o = 0; o < 4; ++o) CHECK(iris::near(p, o));
    CHECK_FALSE(iris::near(p, -1));
    CHECK_FALSE(iris::near(p, 4));
    CHECK(iris::node_rank(p) == r.rank());
    CHECK(iris::node_size(p) == 4);
    CHECK(iris::node_peer(p, 1) == 1);
    CHECK(iris::node_peer(p, 6) == 2);
    CHECK(iris::node_peer(p, -1) == 3);
  });
}

TEST_CASE("transport: the node team of a context in a world of several nodes") {
  // Rank 5 of 8 in nodes of 4 (ranks 4 .. 7); the heaps are not touched.
  char* bases[8] = {};
  const iris::DeviceContext ctx{bases, 4096, 5, 8, 4, 4, nullptr, nullptr};
  const iris::Program p = program_of(ctx);
  CHECK_FALSE(iris::near(p, 3));
  CHECK(iris::near(p, 4));
  CHECK(iris::near(p, 7));
  CHECK_FALSE(iris::near(p, 8));
  CHECK(iris::node_rank(p) == 1);
  CHECK(iris::node_size(p) == 4);
  CHECK(iris::node_peer(p, 0) == 4);
  CHECK(iris::node_peer(p, 3) == 7);
  CHECK(iris::node_peer(p, 4) == 4);
  CHECK(iris::node_peer(p, -2) == 6);
}

TEST_CASE("transport: put (masked tiles and scalars) and quiet, then get on the other rank") {
  constexpr int n = 3;
  std::vector<int> wrong(n, 0);
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const iris::Program p = program_of(r.device_context());
    const int me = r.rank(), right = (me + 1) % n, left = (me + n - 1) % n;
    int* inbox = r.allocate<int>(kTile + 1);  // the tile from the left, then a scalar
    for (int k = 0; k <= kTile; ++k) inbox[k] = -1;
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      const iris::ContigPtrs<int, kTile> mine{inbox};
      iris::remote_store(p, iris::translate_to(p, mine, right), tile_of(me), even_mask());
      iris::remote_store(p, iris::translate_to(p, inbox + kTile, right), sent(me, kTile));
      iris::quiet(p);
    });
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      // What I put on the right, read back masked with `other`; what the left put here.
      const iris::ContigPtrs<int, kTile> mine{inbox};
      const Ints got = iris::remote_load(p, iris::translate_to(p, mine, right), even_mask(), -7);
      for (int k = 0; k < kTile; ++k) wrong[me] += got.v[k] != (even(k) ? sent(me, k) : -7);
      wrong[me] += iris::remote_load(p, iris::translate_to(p, inbox + kTile, right)) != sent(me, kTile);
      for (int k = 0; k < kTile; ++k) wrong[me] += inbox[k] != (even(k) ? sent(left, k) : -1);
    });
  });
  for (int r = 0; r < n; ++r) CHECK(wrong[r] == 0);
}

TEST_CASE("transport: put_signal: the data is there when the flag is") {
  constexpr int n = 4;
  std::vector<int> wrong(n, 0);
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const iris::Program p = program_of(r.device_context());
    const int me = r.rank();
    int* rows = r.allocate<int>(kTile * n);  // row s: what rank s sent
    auto* arrived = r.allocate<std::uint64_t>(1);
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      for (int to = 0; to < n; ++to) {
        const iris::ContigPtrs<int, kTile> row{rows + kTile * me};
        iris::remote_put_signal<true>(p, iris::translate_to(p, row, to), tile_of(me), iris::NoMask{},
                                      iris::translate_to(p, arrived, to), 1);
      }
      iris::wait_until<Sem::acquire, Scope::sys>(arrived, Cmp::eq, std::uint64_t(n));
      for (int s = 0; s < n; ++s)
        for (int k = 0; k < kTile; ++k) wrong[me] += rows[kTile * s + k] != sent(s, k);
    });
  });
  for (int r = 0; r < n; ++r) CHECK(wrong[r] == 0);
}

TEST_CASE("transport: remote atomics and signals of another rank") {
  constexpr int n = 4;
  std::vector<int> wrong(n, 0);
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const iris::Program p = program_of(r.device_context());
    const int me = r.rank();
    auto* counter = r.allocate<std::int64_t>(1);
    auto* slots = r.allocate<int>(kTile);  // element s: claimed by rank s
    auto* word = r.allocate<std::uint32_t>(1);
    auto* flag = r.allocate<std::uint64_t>(1);
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      // Everybody adds to rank 0's counter; the old values are distinct multiples of 5.
      const std::int64_t old = iris::remote_atomic_rmw<iris::AtomicOp::add, Sem::acq_rel, Scope::sys>(
          p, iris::translate_to(p, counter, 0), 5);
      wrong[me] += old % 5 != 0 || old < 0 || old > 5 * (n - 1);
      // Element `me` of rank 1's slots, through a masked tile of max.
      Mask only_mine;
      for (int k = 0; k < kTile; ++k) only_mine.v[k] = k == me;
      const iris::ContigPtrs<int, kTile> all{slots};
      iris::remote_atomic_rmw<iris::AtomicOp::max, Sem::relaxed, Scope::sys>(p, iris::translate_to(p, all, 1),
                                                                             tile_of(me), only_mine);
      // Compare-and-swap: the first rank takes rank 2's word.
      iris::remote_atomic_compare_exchange<Sem::acq_rel, Scope::sys>(p, iris::translate_to(p, word, 2),
                                                                    std::uint32_t(0), std::uint32_t(me + 1));
      iris::remote_raise_signal<true, Sem::release, Scope::sys>(p, iris::translate_to(p, flag, 3), 1);
    });
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      wrong[me] += iris::remote_atomic_read<Sem::acquire, Scope::sys>(p, iris::translate_to(p, counter, 0)) != 5 * n;
      const std::uint32_t owner = iris::remote_atomic_read<Sem::acquire, Scope::sys>(p, iris::translate_to(p, word, 2));
      wrong[me] += owner < 1 || owner > static_cast<std::uint32_t>(n);
      wrong[me] += iris::remote_atomic_read<Sem::acquire, Scope::sys>(p, iris::translate_to(p, flag, 3)) != n;
      if (me == 1)
        for (int k = 0; k < kTile; ++k) wrong[me] += slots[k] != (k < n ? sent(k, k) : 0);
    });
    r.barrier();
    iris::launch(p.ctx, 1, [&](int, int) {
      if (me == 0) {
        iris::remote_atomic_write<Sem::release, Scope::sys>(p, iris::translate_to(p, counter, 3), std::int64_t(42));
        iris::remote_raise_signal<false, Sem::release, Scope::sys>(p, iris::translate_to(p, flag, 3), 7);
      }
      if (me == 3) {
        iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, std::uint64_t(7));
        wrong[me] += *counter != 42;
      }
    });
  });
  for (int r = 0; r < n; ++r) CHECK(wrong[r] == 0);
}

namespace {
// Kernel structs as irisc writes them: a node-local kernel, a multinode one,
// and one written by hand without the members.
int runs = 0;
struct NodeLocalKernel {
  static void run(const iris::Program&) { ++runs; }
  static constexpr bool iris_node_local = true;
  static constexpr const char* iris_kernel_name = "all_gather";
};
struct MultinodeKernel {
  static void run(const iris::Program&) { ++runs; }
  static constexpr bool iris_node_local = false;
  static constexpr const char* iris_kernel_name = "ring";
};
struct HandWrittenKernel {
  static void run(const iris::Program&) { ++runs; }
};
}  // namespace

TEST_CASE("transport: a node-local kernel launched in a world of several nodes is an error naming it") {
  char* bases[4] = {};
  const iris::DeviceContext two_nodes{bases, 4096, 3, 4, 2, 2, nullptr, nullptr};
  const iris::DeviceContext one_node{bases, 4096, 3, 4, 0, 4, nullptr, nullptr};
  runs = 0;
  CHECK(error_of([&] { iris::launch_kernel<NodeLocalKernel>(iris::Grid{2}, {}, two_nodes); }) ==
        "iris: kernel all_gather is node-local, but rank 3 runs in a world of several nodes (its node team is "
        "ranks 2 .. 3 of 4): declare it `multinode kernel` and reach far ranks with put and get, or run it on one "
        "node");
  CHECK(runs == 0);
  iris::launch_kernel<NodeLocalKernel>(iris::Grid{2}, {}, one_node);
  iris::launch_kernel<MultinodeKernel>(iris::Grid{2}, {}, two_nodes);
  iris::launch_kernel<HandWrittenKernel>(iris::Grid{2}, {}, two_nodes);
  CHECK(runs == 6);
}
