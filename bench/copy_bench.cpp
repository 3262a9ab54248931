// The copy benchmark of the GPU target: 1 GiB of f32 copied on one GPU by
//   hipMemcpy (device to device), the .iris `copy` kernel at several tile
//   sizes, and `copy_to` through `@ r` with r = own rank and r = another rank
//   whose heap is on the same GPU.
// Each figure is the median of --repeats timed runs (GPU events) after a
// warm-up; GB/s counts bytes read plus bytes written. Every variant's output
// is checked against the source. Built as CUDA by bench/CMakeLists.txt: as
// copy_bench (two ranks as threads of one process: the other heap is a plain
// allocation of this process) and copy_bench_mpi (two processes under mpirun:
// the other heap is mapped through CUDA IPC).
#include "copy.iris.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("copy_bench: ") + what + ": " + hipGetErrorString(e));
}

struct Result {
  std::string name;
  double ms;
};

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::size_t n = std::size_t{1} << 28;  // 1 GiB of f32
  const std::size_t bytes = n * sizeof(float);
  std::vector<Result> results;
  bool ok = true;
  const std::size_t heap_bytes = 2 * bytes + (std::size_t{64} << 20);
  auto body = [&](iris::Rank& rank) {
    float* src = rank.allocate<float>(n);
    float* dst = rank.allocate<float>(n);
    const int me = rank.rank();
    hipStream_t stream = nullptr;
    hipEvent_t start, stop;
    check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreate");
    check(hipEventCreate(&start), "hipEventCreate");
    check(hipEventCreate(&stop), "hipEventCreate");
    std::vector<float> host(n);
    if (me == 0) {
      for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>((i * 2654435761u) % 1000003u) + 0.5f;
      check(hipMemcpy(src, host.data(), bytes, hipMemcpyHostToDevice), "hipMemcpy");
    }
    rank.barrier();
    const iris::DeviceContext ctx = rank.device_context();
    float* remote_dst = rank.translate(dst, 1 - me);  // the other rank's dst, on the same GPU

    // Times f on rank 0 (rank 1 only keeps its heap alive) and checks `out`.
    auto measure = [&](const std::string& name, const std::function<void()>& f, float* out) {
      if (me == 0) {
        check(hipMemsetAsync(out, 0, bytes, stream), "hipMemset");
        for (int i = 0; i < 3; ++i) f();
        std::vector<float> times;
        for (int i = 0; i < repeats; ++i) {
          check(hipEventRecord(start, stream), "hipEventRecord");
          f();
          check(hipEventRecord(stop, stream), "hipEventRecord");
          check(hipEventSynchronize(stop), "hipEventSynchronize");
          float ms = 0;
          check(hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
          times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        results.push_back({name, times[times.size() / 2]});
        std::vector<float> back(n);
        check(hipMemcpy(back.data(), out, bytes, hipMemcpyDeviceToHost), "hipMemcpy back");
        if (back != host) {
          std::fprintf(stderr, "copy_bench: %s copied wrong data\n", name.c_str());
          ok = false;
        }
      }
      rank.barrier();
    };

    const int32_t count = static_cast<int32_t>(n);
    auto grid = [&](int block) { return iris::Grid{static_cast<int>(n / static_cast<std::size_t>(block))}; };
    measure("hipMemcpy device to device", [&] {
      check(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream), "hipMemcpyAsync");
    }, dst);
    measure(".iris copy, BLOCK 1024", [&] { iris_kernels::copy<1024>::launch(grid(1024), ctx, src, dst, count, stream); }, dst);
    measure(".iris copy, BLOCK 2048", [&] { iris_kernels::copy<2048>::launch(grid(2048), ctx, src, dst, count, stream); }, dst);
    measure(".iris copy, BLOCK 4096", [&] { iris_kernels::copy<4096>::launch(grid(4096), ctx, src, dst, count, stream); }, dst);
    measure(".iris copy, BLOCK 8192", [&] { iris_kernels::copy<8192>::launch(grid(8192), ctx, src, dst, count, stream); }, dst);
    measure(".iris copy_to @ own rank", [&] {
      iris_kernels::copy_to<1024>::launch(grid(1024), ctx, src, dst, count, me, stream);
    }, dst);
    measure(".iris copy_to @ other rank", [&] {
      iris_kernels::copy_to<1024>::launch(grid(1024), ctx, src, dst, count, 1 - me, stream);
    }, remote_dst);
    check(hipStreamDestroy(stream), "hipStreamDestroy");
    rank.free(dst);
    rank.free(src);
  };
#ifdef IRIS_BENCH_MPI
  iris::run_mpi(heap_bytes, body);
#else
  iris::run_threads(2, heap_bytes, body);
#endif
  if (results.empty()) return 0;  // not the process of rank 0
  const double memcpy_ms = results.at(0).ms;
  const double copy_ms = results.at(1).ms;  // the copy with the same tile size as copy_to
  std::printf("%-30s %10s %10s %14s\n", "variant (1 GiB f32)", "ms", "GB/s", "vs hipMemcpy");
  for (const Result& r : results)
    std::printf("%-30s %10.3f %10.1f %14.3f\n", r.name.c_str(), r.ms, 2.0 * bytes / r.ms / 1e6, memcpy_ms / r.ms);
  std::printf("translation cost (copy_to @ own rank / copy, BLOCK 1024): %+.2f%%\n",
              (results.at(5).ms / copy_ms - 1) * 100);
  std::printf("translation cost (copy_to @ other rank / copy, BLOCK 1024): %+.2f%%\n",
              (results.at(6).ms / copy_ms - 1) * 100);
  return ok ? 0 : 1;
}
