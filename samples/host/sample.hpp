// The command line and helpers shared by the sample host programs: every
// sample takes --ranks, --size, --validate, --bench, --repeats and --help (and
// may add modes, named as positional arguments, and integer options of its own
// through a Spec), runs its ranks with sample::run (iris::run_threads, or
// iris::run_mpi in the MPI build of the GPU samples, IRIS_SAMPLE_MPI), and prints
// a bandwidth table with --bench.
//
// Heap memory is device memory on the GPU target, so host code never touches it
// directly: it fills and reads it with to_device / from_device / fill, which are
// plain copies on the CPU target.
#pragma once

#include <iris/kernel.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace sample {

// What a sample adds to the common command line: modes (parts of the sample,
// named as positional arguments; none named: every mode runs) and integer
// options of its own (--rounds N, --stress K).
struct Mode {
  std::string name;
  std::string help;
};
struct IntOption {
  std::string name;  // with the dashes: "--rounds"
  std::string arg;   // what the value is, for --help: "N"
  std::string help;
  long long value;   // the default, replaced by the command line's value
  bool given = false;
};
struct Spec {
  std::vector<Mode> modes;
  std::vector<IntOption> options;
  // --size's and --bench's meaning, for --help, where a sample gives them
  // another (the GEMM samples: square shapes, and TFLOP/s).
  std::string size_arg = "ELEMENTS[,ELEMENTS...]";
  std::string size_help = "elements per rank, comma-separated (default 1048576)";
  std::string bench_help = "print a table of size, time and bandwidth (median of --repeats)";
};

struct Options {
  int ranks = 2;
  bool ranks_given = false;  // --ranks on the command line (MPI: must match mpirun -np)
  std::vector<std::size_t> sizes{1 << 20};  // elements
  bool validate = false;
  bool bench = false;
  int repeats = 5;
  std::size_t heap_bytes = std::size_t{1} << 30;
  std::vector<std::string> modes;  // the modes to run, in the sample's order
  std::vector<IntOption> options;  // the sample's own options, with their values

  bool runs(const std::string& mode) const {
    return std::find(modes.begin(), modes.end(), mode) != modes.end();
  }
  const IntOption& option(const std::string& name) const {
    for (const IntOption& o : options)
      if (o.name == name) return o;
    std::fprintf(stderr, "sample: no option %s\n", name.c_str());
    std::abort();
  }
  long long value(const std::string& name) const { return option(name).value; }
  bool given(const std::string& name) const { return option(name).given; }
};

[[noreturn]] inline void usage(const char* program, const char* what, int status, const Spec& spec = {}) {
  FILE* out = status ? stderr : stdout;
  std::fprintf(out, "%s\n\nUSAGE: %s%s [--ranks N] [--size %s] [--validate] [--bench]\n"
               "       [--repeats N] [--heap BYTES]",
               what, program, spec.modes.empty() ? "" : " [MODE...]", spec.size_arg.c_str());
  for (const IntOption& o : spec.options) std::fprintf(out, " [%s %s]", o.name.c_str(), o.arg.c_str());
  std::fprintf(out, "\n\n");
  if (!spec.modes.empty()) {
    std::fprintf(out, "MODES (default: all of them, in this order):\n");
    int width = 0;
    for (const Mode& m : spec.modes) width = std::max(width, static_cast<int>(m.name.size()));
    for (const Mode& m : spec.modes) std::fprintf(out, "  %-*s  %s\n", width, m.name.c_str(), m.help.c_str());
    std::fprintf(out, "\n");
  }
  std::fprintf(out,
#ifdef IRIS_SAMPLE_MPI
               "  --ranks N      ranks to expect (default: as many as mpirun started)\n"
#else
               "  --ranks N      ranks to run, as threads of this process (default 2)\n"
#endif
               "  --size LIST    %s\n"
               "  --validate     check every result against a host computation (default without --bench)\n"
               "  --bench        %s\n"
               "  --repeats N    timed runs per size with --bench (default 5)\n"
               "  --heap BYTES   symmetric heap per rank (default 1073741824)\n",
               spec.size_help.c_str(), spec.bench_help.c_str());
  for (const IntOption& o : spec.options) {
    const std::string flag = o.name + " " + o.arg;
    std::fprintf(out, "  %-14s %s (default %lld)\n", flag.c_str(), o.help.c_str(), o.value);
  }
  std::exit(status);
}

inline Options parse(int argc, char** argv, const char* what, const Spec& spec = {}) {
  Options o;
  o.options = spec.options;
  std::vector<bool> named(spec.modes.size(), false);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0], what, 2, spec);
      return argv[++i];
    };
    auto number = [&](const std::string& text) -> std::size_t {
      char* end = nullptr;
      unsigned long long v = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || text[0] == '-') {
        std::fprintf(stderr, "%s: not a number: '%s'\n", argv[0], text.c_str());
        std::exit(2);
      }
      return static_cast<std::size_t>(v);
    };
    auto own = std::find_if(o.options.begin(), o.options.end(), [&](const IntOption& x) { return x.name == arg; });
    auto mode = std::find_if(spec.modes.begin(), spec.modes.end(), [&](const Mode& m) { return m.name == arg; });
    if (arg == "--help" || arg == "-h") usage(argv[0], what, 0, spec);
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
    } else if (own != o.options.end()) {
      own->value = static_cast<long long>(number(value()));
      own->given = true;
    } else if (mode != spec.modes.end()) {
      named[static_cast<std::size_t>(mode - spec.modes.begin())] = true;
    } else {
      std::fprintf(stderr, "%s: unknown %s '%s' (see --help)\n", argv[0],
                   arg.rfind("-", 0) == 0 || spec.modes.empty() ? "option" : "mode", arg.c_str());
      std::exit(2);
    }
  }
  if (o.ranks < 1) {
    std::fprintf(stderr, "%s: --ranks must be at least 1\n", argv[0]);
    std::exit(2);
  }
  if (o.repeats < 1) {
    std::fprintf(stderr, "%s: --repeats must be at least 1\n", argv[0]);
    std::exit(2);
  }
  const bool any = std::find(named.begin(), named.end(), true) != named.end();
  for (std::size_t m = 0; m < spec.modes.size(); ++m)
    if (named[m] || !any) o.modes.push_back(spec.modes[m].name);
  if (!o.validate && !o.bench) o.validate = true;
  return o;
}

// ------------------------------------------------------------ heap access
// Copies between host memory and a symmetric heap (the calling rank's, or another
// rank's through rank.translate). On the GPU the copies go through the rank's own
// stream (the one kernels launch on by default) and are complete on return.
// The stream is waited for first, and only then is the copy queued: a copy
// from or to pageable memory goes through the driver's staging buffer, which
// a copy still queued behind a kernel holds, so the copy of another rank
// sharing the GPU would wait for it -- and so for a kernel that may be
// waiting for that rank's next launch (the fused operations' back-to-back
// calls hung so, tests/fused_consumer with 2 ranks on one H200).
#if IRIS_GPU
inline void gpu_check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("sample: ") + what + ": " + hipGetErrorString(e));
}
// Copies `bytes` on the rank's stream once it is idle, and waits for the copy.
inline void copy_on_stream(void* dst, const void* src, std::size_t bytes, hipMemcpyKind kind, const char* what) {
  if (bytes == 0) return;
  gpu_check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
  gpu_check(hipMemcpyAsync(dst, src, bytes, kind, hipStreamPerThread), what);
  gpu_check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
}
template <class T>
void to_device(T* dst, const T* src, std::size_t count) {
  copy_on_stream(dst, src, count * sizeof(T), hipMemcpyHostToDevice, "hipMemcpyAsync to the heap");
}
template <class T>
void from_device(T* dst, const T* src, std::size_t count) {
  copy_on_stream(dst, src, count * sizeof(T), hipMemcpyDeviceToHost, "hipMemcpyAsync from the heap");
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
// hosts rank 0 gets the total of its node team's ranks added to it. Returns whether this
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
    // The error counts of rank 0's node team, summed on rank 0 through its view
    // of their heaps. A far rank's heap takes no host reads: its mismatches
    // show in its own report and exit status (and so in mpirun's).
    auto* slot = rank.allocate<std::uint64_t>(1);
    const std::uint64_t mine = errors.load();
    to_device(slot, &mine, 1);
    rank.barrier();
    if (leader) {
      for (int r = 1; r < rank.device_context().node_size; ++r) errors += read(rank.translate(slot, r), 1)[0];
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
// The exit status of a sample with modes: a failure line when results were
// wrong, else (on the leader, with --validate) the modes that were validated.
inline int report_modes(const char* sample, const Options& opt, bool leader, std::size_t errors,
                        const char* what = "elements") {
  if (errors) {
    std::fprintf(stderr, "%s: FAILED with %zu wrong %s\n", sample, errors, what);
    return 1;
  }
  if (opt.validate && leader) {
    std::printf("%s: %d ranks, sizes validated:", sample, opt.ranks);
    for (const std::string& mode : opt.modes) std::printf(" %s", mode.c_str());
    std::printf("\n");
  }
  return 0;
}

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

// What an output is set to before a kernel runs, so that an element the kernel
// should have written and did not shows: NaN for floating-point types (also
// iris::half and iris::bfloat16), a pattern no sample writes for integers.
template <class T>
T poison() {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(0x5eadbeef);
  else if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else return T(std::numeric_limits<float>::quiet_NaN());
}

// Counts mismatches on this rank and reports the first few.
struct Checker {
  int rank;
  std::size_t errors = 0;
  template <class T>
  void expect(const char* what, std::size_t index, T got, T want) {
    if (got == want) return;
    report(what, index, static_cast<double>(got), static_cast<double>(want));
  }
  // |got - want| <= tolerance (false for NaN, so poison never passes).
  void near(const char* what, std::size_t index, double got, double want, double tolerance) {
    if (std::fabs(got - want) <= tolerance) return;
    report(what, index, got, want);
  }
  void report(const char* what, std::size_t index, double got, double want) {
    if (errors++ < 5) std::fprintf(stderr, "rank %d: %s[%zu] = %g, expected %g\n", rank, what, index, got, want);
  }
};

}  // namespace sample
