// Iris runtime: a kernel's compile-time configuration chosen by measurement
// (what @triton.autotune does for Triton kernels), for the fused operations
// (iris::ops, automatic tiles) and for a user's own kernels:
//
//   using Tiles = iris::ConfigList<iris::Tiles<128, 256, 64>, iris::Tiles<64, 64, 32>>;
//   iris::autotune(rank, "gemm " + std::to_string(m) + "x" + ..., Tiles{}, [&](auto tiles) {
//     using S = decltype(tiles);
//     iris_kernels::gemm<S::m, S::n, S::k>::launch(grid_of(S{}), ctx, ...);
//   });
//
// The first call with a key runs every configuration (one warm-up and
// kTuneRepeats timed runs each, in the list's order, on `stream`), keeps the
// fastest by median time and launches it once more; later calls with the key
// launch the kept one at once, with no host rendezvous. Collective: every rank calls with the same key
// and list, runs every configuration the same number of times (so kernels
// whose ranks wait for each other tune as they run), and every rank takes
// rank 0's choice, so that all ranks run the same configuration. Choices live
// in memory for the process, and in the file that IRIS_TUNE_CACHE names, if
// set: read at the first call, a line "index<TAB>key" appended per new choice
// (by rank 0). A key should name everything the best configuration depends
// on (shape, element type, ranks); the GPU's name is added to it. The runs
// write the kernel's outputs, and tuning synchronises the stream and makes
// host barriers, so a stream capture cannot tune: call once before capturing.
#pragma once

#include "iris/host.hpp"
#include "iris/kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace iris {

// A list of compile-time configurations: each a type (for example
// iris::Tiles<128, 256, 64>) that autotune passes, as a value, to the launch.
template <class... Configs>
struct ConfigList {
  static constexpr int size = sizeof...(Configs);
};

// A config of tile sizes, the usual thing to tune: Tiles<M, N, K>::m, n, k.
template <int M, int N, int K>
struct Tiles {
  static constexpr int m = M, n = N, k = K;
};

// Timed runs per configuration (after one warm-up run).
inline constexpr int kTuneRepeats = 5;

namespace detail {

// Choices by key: those made in this process (by every rank at once), and
// those read from IRIS_TUNE_CACHE's file, which only rank 0 consults (so that
// every rank takes the same, whatever file it sees).
class TuneCache {
 public:
  static TuneCache& instance() {
    static TuneCache cache;
    return cache;
  }
  // The index chosen in this process for key, or -1.
  int made(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = made_.find(key);
    return it == made_.end() ? -1 : it->second;
  }
  // The index IRIS_TUNE_CACHE's file holds for key, or -1.
  int in_file(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    load();
    const auto it = file_.find(key);
    return it == file_.end() ? -1 : it->second;
  }
  // Every rank keeps the choice; rank 0 (`write`) appends a new one to the file.
  void keep(const std::string& key, int index, bool write) {
    std::lock_guard<std::mutex> lock(mutex_);
    made_.emplace(key, index);
    if (!write) return;
    load();
    if (!file_.emplace(key, index).second) return;
    if (const char* path = std::getenv("IRIS_TUNE_CACHE"); path && *path) {
      std::ofstream file(path, std::ios::app);
      file << index << '\t' << key << '\n';
      if (!file) throw Error(std::string("iris::autotune: cannot write the tuning cache IRIS_TUNE_CACHE=") + path);
    }
  }

 private:
  // Reads IRIS_TUNE_CACHE's file the first time the variable names it (again
  // where it names another file since: its choices join those read).
  void load() {
    const char* path = std::getenv("IRIS_TUNE_CACHE");
    if (!path || !*path || loaded_path_ == path) return;
    std::ifstream file(path);  // none yet: nothing kept
    std::map<std::string, int> read;
    std::string line;
    for (int number = 1; std::getline(file, line); ++number) {
      const std::size_t tab = line.find('\t');
      char* end = nullptr;
      const long index = tab == std::string::npos ? -1 : std::strtol(line.c_str(), &end, 10);
      if (tab == std::string::npos || end != line.c_str() + tab || index < 0) {
        throw Error(std::string("iris::autotune: ") + path + ":" + std::to_string(number) +
                    ": not a line of the tuning cache (\"index<TAB>key\"); delete the file to tune again");
      }
      read[line.substr(tab + 1)] = static_cast<int>(index);
    }
    file_.merge(read);
    loaded_path_ = path;
  }

  std::mutex mutex_;
  std::string loaded_path_;           // the file read last
  std::map<std::string, int> made_;   // chosen in this process
  std::map<std::string, int> file_;   // read from, or written to, the file
};

// The name of the calling rank's device, part of every key: read once per
// device (hipGetDeviceProperties takes about a millisecond, longer than the
// launches it would precede).
inline std::string tune_device_name() {
#if IRIS_GPU
  static std::mutex mutex;
  static std::map<int, std::string> names;
  int device = 0;
  if (hipGetDevice(&device) != hipSuccess) return "an unknown GPU";
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = names.try_emplace(device, "an unknown GPU");
  hipDeviceProp_t props{};
  if (fresh && hipGetDeviceProperties(&props, device) == hipSuccess) it->second = props.name;
  return it->second;
#else
  return "the CPU emulation";
#endif
}

// The median of run()'s times in milliseconds, after one warm-up run; run()
// launches on `stream` (on the CPU it has finished when it returns).
inline double median_ms(const std::function<void()>& run, [[maybe_unused]] Stream stream) {
  std::vector<double> ms;
#if IRIS_GPU
  if (stream == nullptr) stream = hipStreamPerThread;
  struct Events {  // destroyed however the runs end
    hipEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) (void)hipEventDestroy(start);
      if (stop) (void)hipEventDestroy(stop);
    }
  } events;
  hipEvent_t& start = events.start;
  hipEvent_t& stop = events.stop;
  if (hipEventCreate(&start) != hipSuccess || hipEventCreate(&stop) != hipSuccess) {
    throw Error("iris::autotune: creating timing events failed");
  }
  run();
  for (int i = 0; i < kTuneRepeats; ++i) {
    float elapsed = 0;
    if (hipEventRecord(start, stream) != hipSuccess) throw Error("iris::autotune: recording an event failed");
    run();
    if (hipEventRecord(stop, stream) != hipSuccess || hipEventSynchronize(stop) != hipSuccess ||
        hipEventElapsedTime(&elapsed, start, stop) != hipSuccess) {
      throw Error("iris::autotune: timing a configuration failed (a launch failed?)");
    }
    ms.push_back(elapsed);
  }
#else
  run();
  for (int i = 0; i < kTuneRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
#endif
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

template <class... Configs, class Launch>
void launch_config(int index, ConfigList<Configs...>, Launch& launch) {
  int i = 0;
  ((i++ == index ? (launch(Configs{}), true) : false) || ...);
}

}  // namespace detail

// Collective: the index of the fastest of `candidates` runs (run(i) launches
// candidate i on `stream`) under `key`, measured at the key's first call on
// every rank (rank 0's choice for all), kept after; a single candidate is
// taken without measuring. A candidate whose run throws iris::Error (one the
// call's arguments do not suit, say) is left out: the arguments must fail the
// same way on every rank, as the host libraries' checks do. Where every
// candidate throws, the first one's error is thrown.
inline int autotune_index(Rank& rank, const std::string& key, int candidates, const std::function<void(int)>& run,
                          Stream stream = {}) {
  if (candidates < 1) throw Error("iris::autotune: no configuration to choose from for \"" + key + "\"");
  const std::string full_key = key + " on " + detail::tune_device_name();
  detail::TuneCache& cache = detail::TuneCache::instance();
  // Chosen in this process: every rank chose it at the same call (a rank keeps
  // it only after the last rendezvous of that call), so every rank finds it.
  if (const int made = cache.made(full_key); made >= 0 && made < candidates) return made;
  // Else rank 0's file decides for every rank.
  const auto kept = static_cast<std::int64_t>(
      rank.from_rank0(static_cast<std::uint64_t>(rank.rank() == 0 ? cache.in_file(full_key) : -1)));
  if (kept >= candidates) {
    throw Error("iris::autotune: the tuning cache chose configuration " + std::to_string(kept) + " for \"" + full_key +
                "\", which has only " + std::to_string(candidates) + "; delete IRIS_TUNE_CACHE's file to tune again");
  }
  if (kept >= 0) {
    cache.keep(full_key, static_cast<int>(kept), false);
    return static_cast<int>(kept);
  }
  int fastest = -1;
  double best = 0;
  std::string first_error;
  for (int i = 0; i < candidates && candidates > 1; ++i) {
    try {
      const double ms = detail::median_ms([&] { run(i); }, stream);
      if (fastest < 0 || ms < best) fastest = i, best = ms;
    } catch (const Error& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  if (candidates == 1) fastest = 0;
  if (fastest < 0) throw Error(first_error);
  const int chosen = static_cast<int>(rank.from_rank0(static_cast<std::uint64_t>(fastest)));
  cache.keep(full_key, chosen, rank.rank() == 0);
  return chosen;
}

// Collective: launches the fastest of `configs` for `key` (launch(Config{})
// for one of them), choosing it by measurement at the key's first call.
template <class... Configs, class Launch>
void autotune(Rank& rank, const std::string& key, ConfigList<Configs...> configs, Launch&& launch, Stream stream = {}) {
  const int index = autotune_index(
      rank, key, sizeof...(Configs), [&](int i) { detail::launch_config(i, configs, launch); }, stream);
  detail::launch_config(index, configs, launch);
}

}  // namespace iris
