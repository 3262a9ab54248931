// The command line and helpers shared by the sample host programs: every
// sample takes --ranks, --size, --validate, --bench and --help, runs its ranks
// with sample::run (iris::run_threads, or iris::run_mpi in the MPI build of the
// GPU samples, IRIS_SAMPLE_MPI), and prints a bandwidth table with --bench.
//
// Heap memory is device memory on the GPU target, so host code never touches it
// directly: it fills and reads it with to_device / from_device / fill, which are
// plain copies on the CPU target.
#pragma once

#include <iris/kernel.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace sample {

struct Options {
  int ranks = 2;
  bool ranks_given = false;  // --ranks on the command line (MPI: must match mpirun -np)
  std::vector<std::size_t> sizes{1 << 20};  // elements
  bool validate = false;
  bool bench = false;
  int repeats = 5;
  std::size_t heap_bytes = std::size_t{1} << 30;
};

[[noreturn]] inline void usage(const char* program, const char* what, int status) {
  std::fprintf(status ? stderr : stdout,
               "%s\n\nUSAGE: %s [--ranks N] [--size ELEMENTS[,ELEMENTS...]] [--validate] [--bench]\n"
               "       [--repeats N] [--heap BYTES]\n\n"
#ifdef IRIS_SAMPLE_MPI
               "  --ranks N      ranks to expect (default: as many as mpirun started)\n"
#else
               "  --ranks N      ranks to run, as threads of this process (default 2)\n"
#endif
               "  --size LIST    elements per rank, comma-separated (default 1048576)\n"
               "  --validate     check every result against a host computation\n"
               "  --bench        print a table of size, time and bandwidth (median of --repeats)\n",
               what, program);
  std::exit(status);
}

inline Options parse(int argc, char** argv, const char* what) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0], what, 2);
      return argv[++i];
    };
    auto number = [&](const std::string& text) -> std::size_t {
      char* end = nullptr;
      unsigned long long v = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0') {
        std::fprintf(stderr, "%s: not a number: '%s'\n", argv[0], text.c_str());
        std::exit(2);
      }
      return static_cast<std::size_t>(v);
    };
    if (arg == "--help" || arg == "-h") usage(argv[0], what, 0);
    else if (arg == "--ranks") {
      o.ranks = static_cast<int>(number(value()));
      o.ranks_given = true;
    }
    else if (arg == "--validate") o.validate = true;
    else if (arg == "--bench") o.bench = true;
    else if (arg == "--repeats") o.repeats = static_cast<int>(number(value()));
    else if (arg == "--heap") o.heap_bytes = number(value());
    else if (arg == "--size") {
      o.sizes.clear();
      std::string list = value();
      for (std::size_t start = 0; start <= list.size();) {
        std::size_t comma = std::min(list.find(',', start), list.size());
        o.sizes.push_back(number(list.substr(start, comma - start)));
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr, "%s: unknown option '%s' (see --help)\n", argv[0], arg.c_str());
      std::exit(2);
    }
  }
  if (o.ranks < 1) {
    std::fprintf(stderr, "%s: --ranks must be at least 1\n", argv[0]);
    std::exit(2);
  }
  if (!o.validate && !o.bench) o.validate = true;
  return o;
}

// ------------------------------------------------------------ heap access
// Copies between host memory and a symmetric heap (the calling rank's, or another
// rank's through rank.translate). On the GPU the copies go through the rank's own
// stream (the one kernels launch on by default) and are complete on return.
#if IRIS_GPU
inline void gpu_check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("sample: ") + what + ": " + hipGetErrorString(e));
}
template <class T>
void to_device(T* dst, const T* src, std::size_t count) {
  if (count == 0) return;
  gpu_check(hipMemcpyAsync(dst, src, count * sizeof(T), hipMemcpyHostToDevice, hipStreamPerThread),
            "hipMemcpyAsync to the heap");
  gpu_check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
}
template <class T>
void from_device(T* dst, const T* src, std::size_t count) {
  if (count == 0) return;
  gpu_check(hipMemcpyAsync(dst, src, count * sizeof(T), hipMemcpyDeviceToHost, hipStreamPerThread),
            "hipMemcpyAsync from the heap");
  gpu_check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
}
#else
template <class T>
void to_device(T* dst, const T* src, std::size_t count) {
  std::copy(src, src + count, dst);
}
template <class T>
void from_device(T* dst, const T* src, std::size_t count) {
  std::copy(src, src + count, dst);
}
#endif

// Sets count elements of heap memory to value.
template <class T>
void fill(T* dst, T value, std::size_t count) {
  const std::vector<T> staging(count, value);
  to_device(dst, staging.data(), count);
}

// Heap memory read back into a host vector.
template <class T>
std::vector<T> read(const T* src, std::size_t count) {
  std::vector<T> out(count);
  from_device(out.data(), src, count);
  return out;
}

// -------------------------------------------------------------- running
// Runs body on every rank: as threads of this process (run_threads, --ranks N), or
// in the MPI build as this process's rank of the mpirun job (run_mpi). `errors`
// counts the mismatches found by this process; in the MPI build the process that
// hosts rank 0 gets the total of all ranks added to it. Returns whether this
// process should print the summary (it hosts rank 0).
inline bool run(Options& opt, std::atomic<std::size_t>& errors, const std::function<void(iris::Rank&)>& body) {
#ifdef IRIS_SAMPLE_MPI
  bool leader = false;
  iris::run_mpi(opt.heap_bytes, [&](iris::Rank& rank) {
    if (opt.ranks_given && opt.ranks != rank.world_size()) {
      throw iris::Error("--ranks " + std::to_string(opt.ranks) + " does not match the " +
                        std::to_string(rank.world_size()) + " processes that mpirun started");
    }
    opt.ranks = rank.world_size();
    leader = rank.rank() == 0;
    body(rank);
    // Everybody's error count, summed on rank 0 through its view of the heaps.
    auto* slot = rank.allocate<std::uint64_t>(1);
    const std::uint64_t mine = errors.load();
    to_device(slot, &mine, 1);
    rank.barrier();
    if (leader) {
      for (int r = 1; r < rank.world_size(); ++r) errors += read(rank.translate(slot, r), 1)[0];
    }
    rank.barrier();
    rank.free(slot);
  });
  return leader;
#else
  (void)errors;  // the threads share the counter already
  iris::run_threads(opt.ranks, opt.heap_bytes, body);
  return true;
#endif
}

// A value that depends on rank and index only, computed the same way by the
// validation: never zero, so unwritten outputs show.
inline float value_of(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * 1000003u % 997u) + static_cast<float>(i % 1013u) * 0.5f + 1.0f;
}

inline int blocks_for(std::size_t n, int block) {
  return static_cast<int>((n + static_cast<std::size_t>(block) - 1) / static_cast<std::size_t>(block));
}

// Median wall time of `repeats` runs of f, in seconds; ranks meet at a host
// barrier around each run so the time covers the slowest rank.
inline double median_seconds(iris::Rank& rank, int repeats, const std::function<void()>& f) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    rank.barrier();
    auto start = std::chrono::steady_clock::now();
    f();
    rank.barrier();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Counts mismatches on this rank and reports the first few.
struct Checker {
  int rank;
  std::size_t errors = 0;
  template <class T>
  void expect(const char* what, std::size_t index, T got, T want) {
    if (got == want) return;
    if (errors++ < 5)
      std::fprintf(stderr, "rank %d: %s[%zu] = %g, expected %g\n", rank, what, index,
                   static_cast<double>(got), static_cast<double>(want));
  }
};

}  // namespace sample
