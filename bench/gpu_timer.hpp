// How the benchmarks (nccl_bench, p2p_bench, fused_bench) time an operation:
// back-to-back calls on one stream between two GPU events, after warm-up, and
// the median of five such timings (of fifteen, for several operations timed
// side by side: medians_us). Back-to-back calls keep the launch gaps out
// of the figure at large sizes; at small sizes the time per call is the latency
// of a call that follows another.
//
// The CPU emulation build (fused_bench's CTest runs) has no events: a launch
// there runs the kernel before it returns, so the host clock around the calls
// times the same thing, the emulator's speed and nothing a GPU would do.
#pragma once

#include <iris/kernel.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bench {

#if IRIS_GPU
inline void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("bench: ") + what + ": " + hipGetErrorString(e));
}
#endif

// Calls per timing: many at small sizes, where one call takes microseconds.
inline int calls_for(std::size_t bytes) {
  return bytes >= (std::size_t{64} << 20) ? 5 : bytes >= (std::size_t{1} << 20) ? 20 : 50;
}

class GpuTimer {
 public:
#if IRIS_GPU
  explicit GpuTimer(hipStream_t stream) : stream_(stream) {
    check(hipEventCreate(&start_), "hipEventCreate");
    check(hipEventCreate(&stop_), "hipEventCreate");
  }
  ~GpuTimer() {
    (void)hipEventDestroy(start_);
    (void)hipEventDestroy(stop_);
  }
#else
  explicit GpuTimer(iris::Stream) {}
#endif
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Microseconds per call of f (which enqueues on the stream): three warm-up
  // calls, then five timings of calls_for(bytes) calls; `before` runs ahead of
  // the warm-up and of every timing (a host barrier between ranks, say).
  double median_us(std::size_t bytes, const std::function<void()>& f, const std::function<void()>& before = [] {}) {
    return medians_us(bytes, {f}, before, 0)[0];
  }

  // The same for several operations side by side: the timings go round them,
  // each round starting one further on, so that a drift of the GPU's state
  // (its clocks fall within milliseconds of full load, as its power limit
  // holds them: docs/performance.md) weighs on every one alike; the median per
  // operation. Before the timings, the operations run in turn for at least
  // warm_ms of GPU time, so that every timing sees the clocks of sustained load.
  std::vector<double> medians_us(std::size_t bytes, const std::vector<std::function<void()>>& fs,
                                 const std::function<void()>& before, double warm_ms) {
    const int calls = calls_for(bytes);
    const std::size_t n = fs.size();
    before();
    start();
    for (int i = 0; i < 3; ++i)
      for (const auto& f : fs) f();
    for (double warmed = elapsed_ms(); warmed < warm_ms; warmed += elapsed_ms()) {
      start();
      for (const auto& f : fs) f();
    }
    synchronize();
    std::vector<std::vector<double>> times(n);
    for (std::size_t round = 0; round < 5 * (n > 1 ? 3 : 1); ++round) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t which = (round + j) % n;
        before();
        start();
        for (int i = 0; i < calls; ++i) fs[which]();
        times[which].push_back(elapsed_ms() * 1e3 / calls);
      }
    }
    std::vector<double> medians;
    for (std::vector<double>& t : times) {
      std::sort(t.begin(), t.end());
      medians.push_back(t[t.size() / 2]);
    }
    return medians;
  }

 private:
#if IRIS_GPU
  void synchronize() { check(hipStreamSynchronize(stream_), "hipStreamSynchronize"); }
  void start() { check(hipEventRecord(start_, stream_), "hipEventRecord"); }
  // Since start(), once the calls enqueued since have completed.
  double elapsed_ms() {
    check(hipEventRecord(stop_, stream_), "hipEventRecord");
    check(hipEventSynchronize(stop_), "hipEventSynchronize");
    float ms = 0;
    check(hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
    return ms;
  }

  hipStream_t stream_;
  hipEvent_t start_ = nullptr, stop_ = nullptr;
#else
  void synchronize() {}
  void start() { start_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

  std::chrono::steady_clock::time_point start_;
#endif
};

}  // namespace bench
