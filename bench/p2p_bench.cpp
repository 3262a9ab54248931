// Point to point between two GPUs: the .iris put and get kernels of
// samples/point_to_point.iris against the copy engines (hipMemcpyPeerAsync,
// i.e. cudaMemcpyPeerAsync) on the same buffers, side by side in one run
// (issue 7). One process, rank 0 on GPU 0 and rank 1 on GPU 1 (run_threads
// gives them peer access); bench/nvshmem_put.cu measures NVSHMEM's put on the
// same pair of GPUs.
//
//   one_way   rank 0's src -> rank 1's dst: memcpy_peer and iris_put run on
//             rank 0 (writes over the link), iris_get on rank 1 (reads over it)
//   both_ways each rank sends its src to the other's dst at the same time
//             (memcpy_peer, iris_put); GB/s per direction
//
// For each size S (1 KiB to max_bytes, steps of 4) the time of one transfer is
// the median of 5 timings of back-to-back transfers (GPU events on the stream of
// the rank that runs it; both ways: the slower rank), after warm-up: latency at
// small sizes. GB/s = S / t. Every destination is poisoned first and checked
// after. Usage: p2p_bench [max_bytes]   (needs 2 GPUs)
#include "gpu_timer.hpp"
#include "point_to_point.iris.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace {

using bench::check;

float value_of(int rank, std::size_t i) { return static_cast<float>(rank * 1000 + i % 977) + 0.5f; }

struct Row {
  std::string mode, who;
  std::size_t bytes;
  double us, gbps;
  bool ok;
};

}  // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  check(hipGetDeviceCount(&gpus), "hipGetDeviceCount");
  if (gpus < 2) {
    std::fprintf(stderr, "p2p_bench: needs 2 GPUs, found %d\n", gpus);
    return 2;
  }
  const std::size_t max_bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 30);
  const std::size_t max_elems = max_bytes / sizeof(float);
  std::vector<Row> rows;
  std::mutex rows_mutex;
  std::atomic<int> wrong{0};
  std::vector<double> slot_us(2);  // both ways: each rank's time

  iris::run_threads(2, 2 * max_bytes + (std::size_t{16} << 20), [&](iris::Rank& rank) {
    const int me = rank.rank(), other = 1 - me;
    float* src = rank.allocate<float>(max_elems);
    float* dst = rank.allocate<float>(max_elems);
    float* other_dst = rank.translate(dst, other);
    hipStream_t stream = nullptr;
    check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreate");
    bench::GpuTimer timer(stream);
    {
      std::vector<float> host(max_elems);
      for (std::size_t i = 0; i < host.size(); ++i) host[i] = value_of(me, i);
      check(hipMemcpy(src, host.data(), max_bytes, hipMemcpyHostToDevice), "hipMemcpy");
    }
    const iris::DeviceContext ctx = rank.device_context();
    int device = 0, other_device = 0;
    check(hipGetDevice(&device), "hipGetDevice");
    other_device = 1 - device;  // run_threads: rank r on GPU r

    // Times back-to-back runs of f on this rank's stream if `active`; every rank
    // that `receives` then checks its dst (the other rank's src).
    auto measure = [&](const std::string& mode, const std::string& who, std::size_t bytes, bool active,
                       bool receives, const std::function<void()>& f) {
      check(hipMemsetAsync(dst, 0xff, max_bytes, stream), "hipMemset");  // NaN
      check(hipStreamSynchronize(stream), "sync");
      rank.barrier();
      slot_us[static_cast<std::size_t>(me)] = active ? timer.median_us(bytes, f) : 0;
      rank.barrier();  // every transfer done
      if (receives) {
        std::vector<float> got(bytes / sizeof(float));
        check(hipMemcpy(got.data(), dst, bytes, hipMemcpyDeviceToHost), "hipMemcpy back");
        for (std::size_t i = 0; i < got.size(); ++i)
          if (got[i] != value_of(other, i)) {
            ++wrong;
            break;
          }
      }
      rank.barrier();
      if (me == 0) {
        std::lock_guard lock(rows_mutex);
        const double us = std::max(slot_us[0], slot_us[1]);
        rows.push_back({mode, who, bytes, us, static_cast<double>(bytes) / us / 1e3, wrong.load() == 0});
        wrong = 0;
      }
      rank.barrier();
    };

    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      const std::size_t n = bytes / sizeof(float);
      const int blocks = static_cast<int>((n + 1023) / 1024);
      const int32_t count = static_cast<int32_t>(n);
      auto memcpy_peer = [&] {
        check(hipMemcpyPeerAsync(other_dst, other_device, src, device, bytes, stream), "hipMemcpyPeerAsync");
      };
      auto put = [&] { iris_kernels::put<>::launch({blocks}, ctx, src, dst, count, other, stream); };
      auto get = [&] { iris_kernels::get<>::launch({blocks}, ctx, src, dst, count, other, stream); };
      measure("one_way", "memcpy_peer", bytes, me == 0, me == 1, memcpy_peer);
      measure("one_way", "iris_put", bytes, me == 0, me == 1, put);
      measure("one_way", "iris_get", bytes, me == 1, me == 1, get);
      measure("both_ways", "memcpy_peer", bytes, true, true, memcpy_peer);
      measure("both_ways", "iris_put", bytes, true, true, put);
    }
    check(hipStreamDestroy(stream), "hipStreamDestroy");
  });

  std::printf("%-10s %-12s %12s %12s %12s %6s\n", "mode", "who", "bytes", "time [us]", "GB/s", "check");
  bool all_ok = true;
  for (const Row& r : rows) {
    std::printf("%-10s %-12s %12zu %12.2f %12.2f %6s\n", r.mode.c_str(), r.who.c_str(), r.bytes, r.us, r.gbps,
                r.ok ? "ok" : "WRONG");
    all_ok &= r.ok;
  }
  return all_ok ? 0 : 1;
}
