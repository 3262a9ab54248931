// Tests of iris::autotune (<iris/autotune.hpp>) on the CPU emulation: every
// rank takes rank 0's choice, a key is measured once, and the choices persist
// through IRIS_TUNE_CACHE's file.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "iris/autotune.hpp"
#include "iris/launch_cpu.hpp"
#include "test_util.hpp"

namespace {
constexpr std::size_t kHeap = 1 << 20;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// A key no other test uses (the cache lives as long as the process).
std::string fresh_key(const char* what) {
  static std::atomic<int> count{0};
  return std::string("test_autotune ") + what + " " + std::to_string(count++);
}

// Points IRIS_TUNE_CACHE at `path` for the scope, and unsets it after.
struct TuneCacheFile {
  explicit TuneCacheFile(std::string p) : path(std::move(p)) { setenv("IRIS_TUNE_CACHE", path.c_str(), 1); }
  ~TuneCacheFile() {
    unsetenv("IRIS_TUNE_CACHE");
    std::remove(path.c_str());
  }
  std::string path;
};
}  // namespace

TEST_CASE("autotune: every rank takes rank 0's fastest configuration, measured once per key") {
  // Rank 0 finds configuration 2 fastest, the others configuration 0: every
  // rank must run 2, and a second call runs nothing but the choice.
  const std::string key = fresh_key("rank 0 decides");
  constexpr int ranks = 3;
  std::vector<int> first(ranks, -1), second(ranks, -1), runs(ranks, 0);
  iris::run_threads(ranks, kHeap, [&](iris::Rank& rank) {
    const int me = rank.rank();
    const auto run = [&](int i) {
      ++runs[me];
      sleep_ms((me == 0 ? i != 2 : i != 0) ? 20 : 0);
    };
    first[me] = iris::autotune_index(rank, key, 3, run);
    const int measured = runs[me];
    second[me] = iris::autotune_index(rank, key, 3, run);
    CHECK(runs[me] == measured);  // nothing runs at the second call
  });
  for (int r = 0; r < ranks; ++r) {
    CAPTURE(r);
    CHECK(first[r] == 2);
    CHECK(second[r] == 2);
    CHECK(runs[r] == 3 * (1 + iris::kTuneRepeats));  // each configuration: a warm-up and the timed runs
  }
}

TEST_CASE("autotune: launches the chosen configuration of a ConfigList") {
  const std::string key = fresh_key("config list");
  std::vector<int> launched;
  iris::run_threads(1, kHeap, [&](iris::Rank& rank) {
    using List = iris::ConfigList<iris::Tiles<64, 64, 32>, iris::Tiles<32, 64, 32>>;
    const auto launch = [&](auto tiles) {
      using S = decltype(tiles);
      launched.push_back(S::m);
      sleep_ms(S::m == 32 ? 0 : 20);
    };
    iris::autotune(rank, key, List{}, launch);
    launched.clear();
    iris::autotune(rank, key, List{}, launch);
  });
  CHECK(launched == std::vector<int>{32});
}

TEST_CASE("autotune: choices persist in IRIS_TUNE_CACHE's file, and a damaged file is reported") {
  const std::string path = "test_autotune_cache_" + std::to_string(::getpid()) + ".txt";
  const std::string key = fresh_key("persisted");
  {
    // A choice made in an earlier process: taken without running anything.
    std::ofstream(path) << "1\t" << key << " on the CPU emulation\n";
    TuneCacheFile cache(path);
    int runs = 0, chosen = -1;
    iris::run_threads(2, kHeap, [&](iris::Rank& rank) {
      const int index = iris::autotune_index(rank, key, 2, [&](int) { ++runs; });
      if (rank.rank() == 0) chosen = index;
    });
    CHECK(chosen == 1);
    CHECK(runs == 0);
    // A new choice is appended.
    const std::string other = fresh_key("appended");
    iris::run_threads(1, kHeap, [&](iris::Rank& rank) {
      iris::autotune_index(rank, other, 2, [&](int i) { sleep_ms(i == 1 ? 0 : 20); });
    });
    std::ifstream file(path);
    std::string first_line, second_line;
    std::getline(file, first_line);
    std::getline(file, second_line);
    CHECK(second_line == "1\t" + other + " on the CPU emulation");
  }
  {
    const std::string damaged = path + ".damaged";
    std::ofstream(damaged) << "0\tfine\nnot a choice\n";
    TuneCacheFile cache(damaged);
    const std::string damaged_key = fresh_key("damaged");
    std::string message;
    iris::run_threads(1, kHeap, [&](iris::Rank& rank) {
      message = error_of([&] { iris::autotune_index(rank, damaged_key, 2, [](int) {}); });
    });
    CHECK(contains(message, damaged + ":2: not a line of the tuning cache"));
  }
}

TEST_CASE("autotune: a kept choice past the list, and an empty list, are errors") {
  const std::string path = "test_autotune_range_" + std::to_string(::getpid()) + ".txt";
  const std::string key = fresh_key("out of range");
  std::ofstream(path) << "5\t" << key << " on the CPU emulation\n";
  TuneCacheFile cache(path);
  const std::string empty_key = fresh_key("empty");
  std::string past, empty;
  iris::run_threads(1, kHeap, [&](iris::Rank& rank) {
    past = error_of([&] { iris::autotune_index(rank, key, 2, [](int) {}); });
    empty = error_of([&] { iris::autotune_index(rank, empty_key, 0, [](int) {}); });
  });
  CHECK(contains(past, "chose configuration 5"));
  CHECK(contains(past, "which has only 2"));
  CHECK(contains(empty, "no configuration to choose from"));
}

TEST_CASE("autotune: a candidate that throws is left out; where all throw, the first error is thrown") {
  const std::string key = fresh_key("throwing"), all_key = fresh_key("all throw");
  int chosen = -1;
  std::string all_fail;
  iris::run_threads(2, kHeap, [&](iris::Rank& rank) {
    // Candidate 1 would be fastest but fails on every rank, as a bad argument would.
    const int index = iris::autotune_index(rank, key, 3, [&](int i) {
      if (i == 1) throw iris::Error("candidate 1 does not suit");
      sleep_ms(i == 2 ? 0 : 20);
    });
    if (rank.rank() == 0) chosen = index;
    const std::string message = error_of([&] {
      iris::autotune_index(rank, all_key, 2,
                           [](int i) { throw iris::Error("candidate " + std::to_string(i) + " does not suit"); });
    });
    if (rank.rank() == 0) all_fail = message;
  });
  CHECK(chosen == 2);
  CHECK(all_fail == "candidate 0 does not suit");
}
