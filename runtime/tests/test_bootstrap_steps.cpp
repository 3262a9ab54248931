// Tests of what a world of processes does through its Bootstrap
// (src/bootstrap_steps.hpp, src/trace_processes.hpp), with the processes
// played by threads of this one that meet through shared memory: the clock
// offsets the trace writer measures, gathering at rank 0 in pieces, and a
// start-up step that fails on one rank.
#include <doctest/doctest.h>

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_steps.hpp"
#include "test_util.hpp"
#include "trace.hpp"
#include "trace_processes.hpp"

namespace {

// Where the threads meet: each allgather is three rounds of a barrier.
struct Meeting {
  explicit Meeting(int ranks) : size(ranks), sync(ranks) {}
  const int size;
  std::barrier<> sync;
  std::vector<char> buffer;
};

// Rank `rank` of a world of threads.
class ThreadBootstrap final : public iris::Bootstrap {
 public:
  ThreadBootstrap(Meeting& meeting, int rank) : meeting_(meeting), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return meeting_.size; }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    meeting_.sync.arrive_and_wait();  // everybody has read the previous call's buffer
    if (rank_ == 0) meeting_.buffer.assign(bytes * static_cast<std::size_t>(meeting_.size), 0);
    meeting_.sync.arrive_and_wait();
    std::memcpy(meeting_.buffer.data() + bytes * static_cast<std::size_t>(rank_), mine, bytes);
    meeting_.sync.arrive_and_wait();
    std::memcpy(all, meeting_.buffer.data(), meeting_.buffer.size());
  }

 private:
  Meeting& meeting_;
  const int rank_;
};

// Runs body(bootstrap) on `ranks` threads and joins them.
template <class Body>
void on_threads(int ranks, Body body) {
  Meeting meeting(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&meeting, r, &body] {
      ThreadBootstrap boot(meeting, r);
      body(boot);
    });
  }
  for (std::thread& t : threads) t.join();
}

constexpr std::int64_t kSecond = 1'000'000'000;  // steady_now() counts nanoseconds

}  // namespace

TEST_CASE("offsets_to_rank0: each clock against rank 0's, and none where a rank reads rank 0's clock") {
  // Rank r's clock runs r seconds ahead of the steady clock; ranks 0 and 1
  // share one clock, as the processes of one host do.
  constexpr int kRanks = 4;
  std::vector<std::vector<std::int64_t>> offsets(kRanks);
  on_threads(kRanks, [&](iris::Bootstrap& boot) {
    const int r = boot.rank();
    const std::string clock = r <= 1 ? "host a" : "host " + std::to_string(r);
    const std::int64_t ahead = r <= 1 ? 0 : r * kSecond;
    offsets[static_cast<std::size_t>(r)] =
        iris::detail::offsets_to_rank0(boot, clock, [ahead] { return iris::detail::steady_now() + ahead; });
  });
  const std::vector<std::int64_t>& at_rank0 = offsets[0];
  REQUIRE(at_rank0.size() == kRanks);
  CHECK(at_rank0[0] == 0);
  CHECK(at_rank0[1] == 0);
  for (int r = 2; r < kRanks; ++r) {
    // Within a tenth of a second of the true offset (the bracket is a few
    // barriers of threads; a loaded machine stretches it).
    const std::int64_t error = at_rank0[static_cast<std::size_t>(r)] + r * kSecond;
    CHECK_MESSAGE(std::abs(error) < kSecond / 10, "rank ", r, ": offset ", at_rank0[static_cast<std::size_t>(r)]);
  }
  for (int r = 1; r < kRanks; ++r) CHECK(offsets[static_cast<std::size_t>(r)] == std::vector<std::int64_t>(kRanks, 0));
}

TEST_CASE("gather_at_rank0: every rank's bytes, of different lengths and in several pieces, at rank 0 only") {
  constexpr int kRanks = 3;
  // Rank r sends r * 1.3 MiB + 7 bytes: rank 0 fewer than a piece, rank 2 three pieces.
  const auto length = [](int r) { return static_cast<std::size_t>(r) * 1363149 + 7; };
  const auto byte = [](int r, std::size_t i) { return static_cast<char>((31 * r + static_cast<int>(i % 997)) % 251); };
  std::vector<std::vector<std::vector<char>>> gathered(kRanks);
  on_threads(kRanks, [&](iris::Bootstrap& boot) {
    const int r = boot.rank();
    std::vector<char> mine(length(r));
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = byte(r, i);
    gathered[static_cast<std::size_t>(r)] = iris::detail::gather_at_rank0(boot, mine.data(), mine.size());
  });
  REQUIRE(gathered[0].size() == kRanks);
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<char>& got = gathered[0][static_cast<std::size_t>(r)];
    REQUIRE(got.size() == length(r));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != byte(r, i);
    CHECK_MESSAGE(wrong == 0, "rank ", r, "'s bytes: ", wrong, " wrong");
  }
  for (int r = 1; r < kRanks; ++r) {
    for (const std::vector<char>& part : gathered[static_cast<std::size_t>(r)]) CHECK(part.empty());
  }
}

TEST_CASE("agree_step: a step that fails on one rank fails on every rank, naming it") {
  constexpr int kRanks = 3;
  std::vector<std::string> errors(kRanks);
  on_threads(kRanks, [&](iris::Bootstrap& boot) {
    const int r = boot.rank();
    errors[static_cast<std::size_t>(r)] = error_of([&] {
      iris::detail::agree_step(boot, "opening the heaps", r == 1 ? "iris: rank 1 cannot open its heap" : "");
    });
  });
  CHECK(errors[1] == "iris: rank 1 cannot open its heap (run_mpi: opening the heaps failed on rank(s) 1)");
  CHECK(errors[0] == "iris: run_mpi: opening the heaps failed on rank(s) 1 (see their messages)");
  CHECK(errors[2] == errors[0]);
}
