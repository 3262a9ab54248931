// The remote accesses (iris/ops/transport.hpp) across nodes, and run_mpi's
// answers to bad input, on the CPU target under mpirun (tests/transport/CMakeLists.txt):
//
//   transport_test all           every remote access, on near and far ranks, with
//                                scalars and masked tiles, each result checked element
//                                by element against values computed here independently
//   transport_test hang          rank 0 waits for a flag nobody raises
//   transport_test mismatch      rank 0 calls a host barrier that the others never make
//   transport_test start         run_mpi only (the bad-input cases come from the environment)
//   transport_test heap_differs  rank 1 asks for a larger heap
//   transport_test handle        `all` in the third call of a world held open
//                                (WorldHandle), after a block the first call
//                                allocated and a failure every rank threw alike
//
// The program initialises MPI itself, so that after run_mpi it can count on how
// many ranks run_mpi failed: rank 0 prints "run_mpi failed on N of M ranks: ..."
// or "transport: N checks on M ranks, K wrong". The exit status is 0 when nothing failed.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "iris/host.hpp"
#include "iris/kernel.hpp"

using iris::Cmp;
using iris::Scope;
using iris::Sem;

namespace {

constexpr std::size_t kHeap = std::size_t{8} << 20;
constexpr int kTile = 16;      // masked tiles: runs of several elements with gaps
constexpr int kLong = 1 << 15;  // a tile put in one piece, past MPI's eager limits (64 KiB on TCP)
constexpr int kRounds = 20;    // messages around the ring
constexpr int kMessage = 1 << 16;  // elements of a message: past MPI's eager limits (64 KiB on TCP)

using Ints = iris::Tile<int, kTile>;
using Mask = iris::Tile<bool, kTile>;

// What the checks found, on this rank.
struct Tally {
  long checks = 0;
  long wrong = 0;
  void expect(bool ok, const char* what, int rank, int k) {
    ++checks;
    if (ok) return;
    if (++wrong <= 10) std::fprintf(stderr, "transport: rank %d: wrong %s (rank %d, element %d)\n", me, what, rank, k);
  }
  int me = 0;
};

// What rank s puts into row s on rank t, element k; and the masks of the puts and
// gets (runs of two and three elements with gaps between them).
int sent(int s, int t, int k) { return 100000 * (s + 1) + 1000 * (t + 1) + k; }
bool put_mask(int k) { return k % 5 != 2; }
bool get_mask(int k) { return k % 3 != 0; }
constexpr int kUnwritten = -1;  // what a row holds before the puts
constexpr int kOther = -7;      // `other` of the masked gets

Ints row_of(int s, int t) {
  Ints v;
  for (int k = 0; k < kTile; ++k) v.v[k] = sent(s, t, k);
  return v;
}
template <class F>
Mask mask_of(F f) {
  Mask m;
  for (int k = 0; k < kTile; ++k) m.v[k] = f(k);
  return m;
}

iris::Program program_of(const iris::Rank& r) { return iris::Program{r.device_context(), {0, 0, 0}, {1, 1, 1}}; }

// One device barrier, as a kernel of one program instance calls it.
void barrier_kernel(const iris::Program& p) {
  iris::launch(p.ctx, 1, [&](int, int) { iris::device_barrier(p); });
}

void check_node_team(const iris::Program& p, int n, int per_node, Tally& t) {
  const int me = p.ctx.rank, first = me / per_node * per_node;
  for (int o = 0; o < n; ++o) t.expect(iris::near(p, o) == (o / per_node == me / per_node), "near()", o, 0);
  t.expect(iris::node_rank(p) == me - first, "node_rank()", me, 0);
  t.expect(iris::node_size(p) == per_node, "node_size()", me, 0);
  t.expect(iris::node_peer(p, 1) == first + 1 % per_node, "node_peer(1)", me, 0);
  t.expect(iris::node_peer(p, -1) == first + per_node - 1, "node_peer(-1)", me, 0);
}

// Puts of masked tiles (contiguous and gathered) and scalars to every other
// rank, quiet, a device barrier; then every rank checks what arrived and gets
// back, masked, what it put.
void check_put_get(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int n = r.world_size(), me = r.rank();
  int* rows = r.allocate<int>(kTile * n);       // row s: rank s's contiguous put
  int* reversed = r.allocate<int>(kTile * n);   // row s: rank s's put through reversed pointers
  auto* scalars = r.allocate<std::uint64_t>(n); // element s: rank s's scalar put
  float* longs = r.allocate<float>(kLong * n);  // row s: rank s's long put
  for (int i = 0; i < kTile * n; ++i) rows[i] = reversed[i] = kUnwritten;
  r.barrier();
  iris::launch(p.ctx, 1, [&](int, int) {
    const Mask puts = mask_of(put_mask);
    iris::Tile<float, kLong> long_row;
    for (int to = 0; to < n; ++to) {
      if (to == me) continue;
      // Different data for every rank: the data of a put must stay what it was until the put completes.
      for (int k = 0; k < kLong; ++k) long_row.v[k] = static_cast<float>(sent(me, to, k));
      const iris::ContigPtrs<int, kTile> row{rows + kTile * me};
      iris::remote_store(p, iris::translate_to(p, row, to), row_of(me, to), puts);
      iris::Tile<int*, kTile> backwards;  // element k at row[kTile - 1 - k]: runs of one
      for (int k = 0; k < kTile; ++k) backwards.v[k] = reversed + kTile * me + kTile - 1 - k;
      iris::remote_store(p, iris::translate_to(p, backwards, to), row_of(me, to), puts);
      iris::remote_store(p, iris::translate_to(p, scalars + me, to), std::uint64_t(sent(me, to, 0)));
      const iris::ContigPtrs<float, kLong> long_ptrs{longs + kLong * me};
      iris::remote_store(p, iris::translate_to(p, long_ptrs, to), long_row);
    }
    iris::quiet(p);
  });
  barrier_kernel(p);
  for (int s = 0; s < n; ++s) {
    if (s == me) continue;
    for (int k = 0; k < kTile; ++k) {
      const int expected = put_mask(k) ? sent(s, me, k) : kUnwritten;
      t.expect(rows[kTile * s + k] == expected, "contiguous put", s, k);
      t.expect(reversed[kTile * s + kTile - 1 - k] == expected, "gathered put", s, k);
    }
    t.expect(scalars[s] == std::uint64_t(sent(s, me, 0)), "scalar put", s, 0);
    for (int k = 0; k < kLong; ++k)
      t.expect(longs[kLong * s + k] == static_cast<float>(sent(s, me, k)), "long put", s, k);
  }
  iris::launch(p.ctx, 1, [&](int, int) {
    const Mask gets = mask_of(get_mask);
    for (int from = 0; from < n; ++from) {
      if (from == me) continue;
      const iris::ContigPtrs<int, kTile> row{rows + kTile * me};
      const Ints got = iris::remote_load(p, iris::translate_to(p, row, from), gets, kOther);
      iris::Tile<int*, kTile> backwards;
      for (int k = 0; k < kTile; ++k) backwards.v[k] = reversed + kTile * me + kTile - 1 - k;
      const Ints got_back = iris::remote_load(p, iris::translate_to(p, backwards, from), gets, kOther);
      for (int k = 0; k < kTile; ++k) {
        const int expected = !get_mask(k) ? kOther : put_mask(k) ? sent(me, from, k) : kUnwritten;
        t.expect(got.v[k] == expected, "contiguous get", from, k);
        t.expect(got_back.v[k] == expected, "gathered get", from, k);
      }
      t.expect(iris::remote_load(p, iris::translate_to(p, scalars + me, from)) == std::uint64_t(sent(me, from, 0)),
               "scalar get", from, 0);
      const iris::ContigPtrs<float, kLong> long_ptrs{longs + kLong * me};
      const auto long_got = iris::remote_load(p, iris::translate_to(p, long_ptrs, from));
      for (int k = 0; k < kLong; ++k)
        t.expect(long_got.v[k] == static_cast<float>(sent(me, from, k)), "long get", from, k);
    }
  });
  r.barrier();
}

// A ring of put_signals: rank s sends round m's message to its right
// neighbour (near for some ranks, far for others) and raises the neighbour's
// flag to m (set); the neighbour waits for it, checks the message and
// acknowledges with an add on the sender's flag. A message is long, so that
// MPI sends its data apart from the flag's accumulate, which could overtake it.
int message(int s, int m, int k) { return sent(s, m, k % 1000) + 1000000 * (k / 1000); }

void check_put_signal_ring(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int n = r.world_size(), me = r.rank(), right = (me + 1) % n, left = (me + n - 1) % n;
  int* inbox = r.allocate<int>(kMessage);
  auto* full = r.allocate<std::uint64_t>(1);   // the round whose tile is in inbox
  auto* acked = r.allocate<std::uint64_t>(1);  // rounds the right neighbour has consumed
  r.barrier();
  iris::launch(p.ctx, 1, [&](int, int) {
    const iris::ContigPtrs<int, kMessage> box{inbox};
    iris::Tile<int, kMessage> out;
    for (int m = 1; m <= kRounds; ++m) {
      for (int k = 0; k < kMessage; ++k) out.v[k] = message(me, m, k);
      iris::wait_until<Sem::acquire, Scope::sys>(acked, Cmp::ge, std::uint64_t(m - 1));
      iris::remote_put_signal<false>(p, iris::translate_to(p, box, right), out, iris::NoMask{},
                                     iris::translate_to(p, full, right), std::uint64_t(m));
      iris::wait_until<Sem::acquire, Scope::sys>(full, Cmp::eq, std::uint64_t(m));
      for (int k = 0; k < kMessage; ++k) t.expect(inbox[k] == message(left, m, k), "put_signal data", left, k);
      iris::remote_raise_signal<true, Sem::release, Scope::sys>(p, iris::translate_to(p, acked, left), 1);
    }
  });
  r.barrier();
}

// Every rank's put_signal with add into one flag of every other rank.
void check_put_signal_gather(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int n = r.world_size(), me = r.rank();
  int* rows = r.allocate<int>(kTile * n);
  auto* arrived = r.allocate<std::uint32_t>(1);
  for (int i = 0; i < kTile * n; ++i) rows[i] = kUnwritten;
  r.barrier();
  iris::launch(p.ctx, 1, [&](int, int) {
    for (int to = 0; to < n; ++to) {
      if (to == me) continue;
      const iris::ContigPtrs<int, kTile> row{rows + kTile * me};
      iris::remote_put_signal<true>(p, iris::translate_to(p, row, to), row_of(me, to), mask_of(put_mask),
                                    iris::translate_to(p, arrived, to), 1);
    }
    iris::wait_until<Sem::acquire, Scope::sys>(arrived, Cmp::eq, std::uint32_t(n - 1));
    for (int s = 0; s < n; ++s) {
      if (s == me) continue;
      for (int k = 0; k < kTile; ++k)
        t.expect(rows[kTile * s + k] == (put_mask(k) ? sent(s, me, k) : kUnwritten), "put_signal(add) data", s, k);
    }
  });
  r.barrier();
}

// A release completes the rank's puts, a release to a near rank too: rank 0
// puts a long message to the first far rank, raises a flag of its node's next
// member with a plain release signal, and then spins without calling MPI until
// that member has got the message from the far rank (the other ranks wait in a
// host barrier, which lets MPI progress). A put that the release had left
// incomplete would not arrive: osc pt2pt sends the rest of a long put only
// when its origin calls MPI.
void check_release_completes_puts(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int me = r.rank(), far = p.ctx.node_first + p.ctx.node_size, reader = 1;
  int* message_box = r.allocate<int>(kMessage);
  auto* flag = r.allocate<std::uint32_t>(1);  // reader's: the message is on its way
  auto* got = r.allocate<std::uint32_t>(1);   // rank 0's: the reader has read it
  r.barrier();
  const bool two_nodes = p.ctx.node_first == 0 && p.ctx.node_size > 1 && far < r.world_size();
  iris::launch(p.ctx, 1, [&](int, int) {
    if (!two_nodes) return;
    const iris::ContigPtrs<int, kMessage> box{message_box};
    if (me == 0) {
      iris::Tile<int, kMessage> out;
      for (int k = 0; k < kMessage; ++k) out.v[k] = message(me, far, k);
      iris::remote_store(p, iris::translate_to(p, box, far), out);
      iris::raise_signal<false, Sem::release, Scope::sys>(iris::translate_to(p, flag, reader), std::uint32_t(1));
      while (std::atomic_ref<std::uint32_t>(*got).load(std::memory_order_acquire) == 0) {
      }
    } else if (me == reader) {
      iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, std::uint32_t(1));
      const auto message_got = iris::remote_load(p, iris::translate_to(p, box, far));
      for (int k = 0; k < kMessage; ++k)
        t.expect(message_got.v[k] == message(0, far, k), "put before a release", far, k);
      iris::raise_signal<false, Sem::release, Scope::sys>(iris::translate_to(p, got, 0), std::uint32_t(1));
    }
  });
  r.barrier();
}

// The atomics of every rank on the words of every rank (its own included),
// then the totals read back with atomic reads.
struct Words {
  std::int64_t sum;       // + (s + 1) from every rank s
  std::uint32_t down;     // 1000, - (s + 1) from every rank s
  std::uint64_t bits;     // | 1 << s
  std::uint64_t mask;     // 0xff, & ~(1 << s)
  std::uint64_t flips;    // ^ 1 << 2s
  std::int32_t highest;   // max(10 s - 5)
  float lowest;           // min(1.5 s - 2), from 100
  double total;           // + 0.25 (s + 1)
  std::int64_t swapped[8];  // element s: rank s's xchg of s + 100 (from -1)
  std::uint32_t owner;    // compare-and-swap 0 -> s + 1: the first rank
  float tag;              // compare-and-swap 1.5 -> 2.5 by one rank, 1.5 -> 3.5 by another after it
  std::int32_t written[8];  // element s: rank s's atomic write of 7 s
  std::uint64_t signals;  // raise_signal add 1 from every rank, then set to 99 by the rank after it
};

void check_atomics(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int n = r.world_size(), me = r.rank();
  auto* words = r.allocate<Words>(1);
  int* accumulated = r.allocate<int>(kTile);  // tile add, masked: element k gets s + 1 where k % 4 != s
  *words = Words{0, 1000, 0, 0xff, 0, -1000, 100.0f, 0.0, {}, 0, 1.5f, {}, 0};
  for (auto& x : words->swapped) x = -1;
  for (int k = 0; k < kTile; ++k) accumulated[k] = 0;
  r.barrier();
  constexpr Sem ar = Sem::acq_rel;
  constexpr Scope sys = Scope::sys;
  iris::launch(p.ctx, 1, [&](int, int) {
    for (int to = 0; to < n; ++to) {
      Words* w = iris::translate_to(p, words, to);
      const std::int64_t old_sum = iris::remote_atomic_rmw<iris::AtomicOp::add, ar, sys>(p, &w->sum, me + 1);
      t.expect(old_sum >= 0 && old_sum <= n * (n + 1) / 2 - (me + 1), "atomic add's old value", to, 0);
      iris::remote_atomic_rmw<iris::AtomicOp::sub, Sem::relaxed, sys>(p, &w->down, std::uint32_t(me + 1));
      iris::remote_atomic_rmw<iris::AtomicOp::or_, Sem::release, sys>(p, &w->bits, std::uint64_t(1) << me);
      iris::remote_atomic_rmw<iris::AtomicOp::and_, Sem::acquire, sys>(p, &w->mask, ~(std::uint64_t(1) << me));
      iris::remote_atomic_rmw<iris::AtomicOp::xor_, ar, sys>(p, &w->flips, std::uint64_t(1) << (2 * me));
      iris::remote_atomic_rmw<iris::AtomicOp::max, ar, sys>(p, &w->highest, 10 * me - 5);
      iris::remote_atomic_rmw<iris::AtomicOp::min, ar, sys>(p, &w->lowest, 1.5f * me - 2);
      iris::remote_atomic_rmw<iris::AtomicOp::add, ar, sys>(p, &w->total, 0.25 * (me + 1));
      t.expect(iris::remote_atomic_rmw<iris::AtomicOp::xchg, ar, sys>(p, &w->swapped[me], std::int64_t(me + 100)) == -1,
               "xchg's old value", to, me);
      const std::uint32_t owner =
          iris::remote_atomic_compare_exchange<ar, sys>(p, &w->owner, 0u, std::uint32_t(me + 1));
      t.expect(owner == 0 || (owner >= 1 && owner <= static_cast<std::uint32_t>(n) && owner != std::uint32_t(me + 1)),
               "compare-and-swap's old value", to, 0);
      iris::remote_atomic_write<Sem::release, sys>(p, &w->written[me], 7 * me);
      iris::remote_raise_signal<true, Sem::release, sys>(p, &w->signals, 1);
      // A masked tile of adds; the old values where the mask is off are zero.
      const Mask mine = mask_of([&](int k) { return k % 4 != me; });
      const iris::ContigPtrs<int, kTile> acc{accumulated};
      const Ints old = iris::remote_atomic_rmw<iris::AtomicOp::add, ar, sys>(p, iris::translate_to(p, acc, to),
                                                                             me + 1, mine);
      for (int k = 0; k < kTile; ++k) t.expect(mine.v[k] || old.v[k] == 0, "masked tile add's old value", to, k);
    }
  });
  barrier_kernel(p);
  iris::launch(p.ctx, 1, [&](int, int) {
    // The float compare-and-swaps, one rank after the other: the one after me succeeds, the next fails.
    const int after = (me + 1) % n, second = (me + 2) % n;
    Words* w = iris::translate_to(p, words, after);
    t.expect(iris::remote_atomic_compare_exchange<ar, sys>(p, &w->tag, 1.5f, 2.5f) == 1.5f, "float CAS that succeeds",
             after, 0);
    iris::device_barrier(p);
    w = iris::translate_to(p, words, second);
    t.expect(iris::remote_atomic_compare_exchange<ar, sys>(p, &w->tag, 1.5f, 3.5f) == 2.5f, "float CAS that fails",
             second, 0);
    w = iris::translate_to(p, words, after);
    iris::remote_raise_signal<false, Sem::release, sys>(p, &w->signals, 99 + me);
  });
  barrier_kernel(p);
  iris::launch(p.ctx, 1, [&](int, int) {
    for (int from = 0; from < n; ++from) {
      Words* w = iris::translate_to(p, words, from);
      const auto read = [&](auto* q) { return iris::remote_atomic_read<Sem::acquire, sys>(p, q); };
      t.expect(read(&w->sum) == n * (n + 1) / 2, "sum", from, 0);
      t.expect(read(&w->down) == std::uint32_t(1000 - n * (n + 1) / 2), "sub", from, 0);
      t.expect(read(&w->bits) == (std::uint64_t(1) << n) - 1, "or", from, 0);
      t.expect(read(&w->mask) == (0xffu & ~((1u << n) - 1)), "and", from, 0);
      std::uint64_t flips = 0;
      for (int s = 0; s < n; ++s) flips |= std::uint64_t(1) << (2 * s);
      t.expect(read(&w->flips) == flips, "xor", from, 0);
      t.expect(read(&w->highest) == 10 * (n - 1) - 5, "max", from, 0);
      t.expect(read(&w->lowest) == -2.0f, "min", from, 0);
      t.expect(read(&w->total) == 0.25 * n * (n + 1) / 2, "float add", from, 0);
      for (int s = 0; s < n; ++s) t.expect(read(&w->swapped[s]) == s + 100, "xchg", from, s);
      const std::uint32_t owner = read(&w->owner);
      t.expect(owner >= 1 && owner <= static_cast<std::uint32_t>(n), "compare-and-swap", from, 0);
      t.expect(read(&w->tag) == 2.5f, "float compare-and-swap", from, 0);
      for (int s = 0; s < n; ++s) t.expect(read(&w->written[s]) == 7 * s, "atomic write", from, s);
      t.expect(read(&w->signals) == std::uint64_t(99 + (from + n - 1) % n), "raise_signal set", from, 0);
      const iris::ContigPtrs<int, kTile> acc{accumulated};
      const Ints total = iris::remote_atomic_read<Sem::acquire, sys>(p, iris::translate_to(p, acc, from));
      for (int k = 0; k < kTile; ++k)
        t.expect(total.v[k] == n * (n + 1) / 2 - (k % 4 < n ? k % 4 + 1 : 0), "masked tile add", from, k);
    }
  });
  r.barrier();
}

// Checked builds: a plain load from a far rank is an error naming its .iris
// line (printed on stderr too), a remote load from the same place is not.
void check_checked_mode(iris::Rank& r, const iris::Program& p, Tally& t) {
  const int n = r.world_size(), me = r.rank();
  int* word = r.allocate<int>(1);
  *word = 1000 + me;
  const long offset = reinterpret_cast<char*>(word) - p.ctx.heap_bases[me];
  r.barrier();
  iris::launch(p.ctx, 1, [&](int, int) {
    const iris::Checked at{p, "far.iris", 9};
    for (int o = 0; o < n; ++o) {
      int* there = iris::translate_to(p, word, o, at);
      t.expect(iris::remote_load(p, there, iris::NoMask{}, iris::NoOther{}, at) == 1000 + o, "checked get", o, 0);
      std::string error;
      try {
        t.expect(iris::load(there, iris::NoMask{}, iris::NoOther{}, at) == 1000 + o, "checked load", o, 0);
      } catch (const iris::Error& e) {
        error = e.what();
      }
      const std::string far = "far.iris:9: error: access of 4 bytes at offset " + std::to_string(offset) + " of rank " +
                              std::to_string(o) + "'s heap: rank " + std::to_string(o) +
                              " is on another node, whose memory takes no loads and stores (reach it with put and "
                              "get, or guard the access with near(r)) (rank " + std::to_string(me) + ", program 0)";
      t.expect(error == (iris::near(p, o) ? "" : far), "checked load's error", o, 0);
    }
  });
  r.barrier();
}

void check_all(iris::Rank& r, Tally& t) {
  const iris::Program p = program_of(r);
  const int per_node = p.ctx.node_size;
  check_node_team(p, r.world_size(), per_node, t);
  check_put_get(r, p, t);
  check_put_signal_ring(r, p, t);
  check_put_signal_gather(r, p, t);
  check_release_completes_puts(r, p, t);
  check_atomics(r, p, t);
  check_checked_mode(r, p, t);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "all";
  Tally tally;
  tally.me = rank;
  std::string failure;
  try {
    if (mode == "all") {
      iris::run_mpi(kHeap, [&](iris::Rank& r) { check_all(r, tally); });
    } else if (mode == "hang") {
      iris::run_mpi(kHeap, [&](iris::Rank& r) {
        auto* flag = r.allocate<int>(1);
        if (r.rank() == 0) {
          iris::launch(r.device_context(), 1, [&](int, int) {
            iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1, "hang.iris", 7);
          });
        }
      });
    } else if (mode == "mismatch") {
      iris::run_mpi(kHeap, [&](iris::Rank& r) {
        if (r.rank() == 0) r.barrier();
      });
    } else if (mode == "handle") {
      iris::WorldHandle world(kHeap);
      int* kept = nullptr;
      world.run([&](iris::Rank& r) {
        kept = r.allocate<int>(1);
        *kept = 100 + r.rank();
      });
      bool thrown = false;
      try {
        world.run([](iris::Rank& r) { r.agree("the call of rank " + std::to_string(r.rank())); });
      } catch (const iris::Error&) {
        thrown = true;
      }
      tally.expect(thrown, "error of calls that differ", rank, 0);
      world.run([&](iris::Rank& r) {
        tally.expect(*kept == 100 + r.rank(), "block kept between calls", r.rank(), 0);
        r.free(kept);
        check_all(r, tally);
      });
      world.close();
    } else if (mode == "start") {
      iris::run_mpi(kHeap, [](iris::Rank&) {});
    } else if (mode == "heap_differs") {
      iris::run_mpi(kHeap + (rank == 1 ? 4096 : 0), [](iris::Rank&) {});
    } else {
      std::fprintf(stderr, "transport_test: unknown mode %s\n", mode.c_str());
      return 2;
    }
  } catch (const iris::Error& e) {
    failure = e.what();
  }
  int failed = failure.empty() ? 0 : 1, failed_ranks = 0;
  long counts[2] = {tally.checks, tally.wrong}, totals[2] = {};
  MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(counts, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (failed_ranks > 0) std::printf("run_mpi failed on %d of %d ranks: %s\n", failed_ranks, size, failure.c_str());
    else std::printf("transport: %ld checks on %d ranks, %ld wrong\n", totals[0], size, totals[1]);
  }
  MPI_Finalize();
  return failed_ranks > 0 || totals[1] > 0 ? 1 : 0;
}
