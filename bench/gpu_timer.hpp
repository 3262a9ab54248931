// How the multi-GPU benchmarks (nccl_bench, p2p_bench) time an operation:
// back-to-back calls on one stream between two GPU events, after warm-up, and
// the median of five such timings. Back-to-back calls keep the launch gaps out
// of the figure at large sizes; at small sizes the time per call is the latency
// of a call that follows another.
#pragma once

#include <iris/kernel.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bench {

inline void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("bench: ") + what + ": " + hipGetErrorString(e));
}

// Calls per timing: many at small sizes, where one call takes microseconds.
inline int calls_for(std::size_t bytes) {
  return bytes >= (std::size_t{64} << 20) ? 5 : bytes >= (std::size_t{1} << 20) ? 20 : 50;
}

class GpuTimer {
 public:
  explicit GpuTimer(hipStream_t stream) : stream_(stream) {
    check(hipEventCreate(&start_), "hipEventCreate");
    check(hipEventCreate(&stop_), "hipEventCreate");
  }
  ~GpuTimer() {
    (void)hipEventDestroy(start_);
    (void)hipEventDestroy(stop_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Microseconds per call of f (which enqueues on the stream): three warm-up
  // calls, then five timings of calls_for(bytes) calls; `before` runs ahead of
  // the warm-up and of every timing (a host barrier between ranks, say).
  double median_us(std::size_t bytes, const std::function<void()>& f, const std::function<void()>& before = [] {}) {
    const int calls = calls_for(bytes);
    before();
    for (int i = 0; i < 3; ++i) f();
    check(hipStreamSynchronize(stream_), "hipStreamSynchronize");
    std::vector<double> times;
    for (int rep = 0; rep < 5; ++rep) {
      before();
      check(hipEventRecord(start_, stream_), "hipEventRecord");
      for (int i = 0; i < calls; ++i) f();
      check(hipEventRecord(stop_, stream_), "hipEventRecord");
      check(hipEventSynchronize(stop_), "hipEventSynchronize");
      float ms = 0;
      check(hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
      times.push_back(ms * 1e3 / calls);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  hipStream_t stream_;
  hipEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace bench
