// Collectives on several GPUs: the .iris kernels against NCCL, side by side
// in one run (issue 7). One process, one rank per visible GPU (run_threads
// places rank r on GPU r), NCCL communicators made with ncclCommInitAll over
// the same GPUs; both use the same symmetric-heap buffers and the rank's stream.
//
// For each operation and per-rank message size (1 KiB to 1 GiB) it prints the
// median time of back-to-back launches and the algorithm and bus bandwidth as
// nccl-tests defines them; every output of both is checked against values
// computed on the host. NCCL is loaded at run time with dlopen (the GPU
// machine has libnccl.so.2; the build machine has no NCCL), so only the few
// entry points used are declared here, with NCCL's ABI.
#include "all_gather.iris.hpp"
#include "collectives.iris.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace {

// ---- NCCL, as declared in nccl.h (ABI stable across NCCL 2.x).
using ncclComm_t = struct ncclComm*;
using ncclResult_t = int;
constexpr int ncclFloat32 = 7;
constexpr int ncclSum = 0;
struct Nccl {
  ncclResult_t (*CommInitAll)(ncclComm_t*, int, const int*);
  ncclResult_t (*AllReduce)(const void*, void*, size_t, int, int, ncclComm_t, hipStream_t);
  ncclResult_t (*AllGather)(const void*, void*, size_t, int, ncclComm_t, hipStream_t);
  ncclResult_t (*ReduceScatter)(const void*, void*, size_t, int, int, ncclComm_t, hipStream_t);
  const char* (*GetErrorString)(ncclResult_t);
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) throw iris::Error(std::string("nccl_bench: ") + name + " not found in libnccl");
}

Nccl load_nccl() {
  void* lib = dlopen("libnccl.so.2", RTLD_NOW);
  if (!lib) throw iris::Error(std::string("nccl_bench: cannot load libnccl.so.2: ") + dlerror());
  Nccl n{};
  bind(lib, n.CommInitAll, "ncclCommInitAll");
  bind(lib, n.AllReduce, "ncclAllReduce");
  bind(lib, n.AllGather, "ncclAllGather");
  bind(lib, n.ReduceScatter, "ncclReduceScatter");
  bind(lib, n.GetErrorString, "ncclGetErrorString");
  return n;
}

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw iris::Error(std::string("nccl_bench: ") + what + ": " + hipGetErrorString(e));
}

float value_of(int rank, std::size_t i) { return static_cast<float>((rank * 7 + i % 251) % 64) * 0.25f; }

struct Row {
  std::string op, who;
  std::size_t bytes;
  double us, algbw, busbw;
  bool ok;
};

}  // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  check(hipGetDeviceCount(&gpus), "hipGetDeviceCount");
  const int world = argc > 1 ? std::atoi(argv[1]) : gpus;
  const std::size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::size_t{1} << 30);
  if (world < 2 || world > gpus) {
    std::fprintf(stderr, "nccl_bench: needs 2 to %d GPUs, asked for %d\n", gpus, world);
    return 2;
  }
  Nccl nccl = load_nccl();
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(world));
  std::vector<int> devices(static_cast<std::size_t>(world));
  for (int i = 0; i < world; ++i) devices[static_cast<std::size_t>(i)] = i;
  if (ncclResult_t r = nccl.CommInitAll(comms.data(), world, devices.data()))
    throw iris::Error(std::string("ncclCommInitAll: ") + nccl.GetErrorString(r));

  std::vector<Row> rows;
  std::mutex rows_mutex;
  const std::size_t max_elems = max_bytes / sizeof(float);
  // Heap: input (world * max) + output (world * max) + scratch.
  const std::size_t heap = 2 * static_cast<std::size_t>(world) * max_bytes + (std::size_t{256} << 20);
  iris::run_threads(world, heap, [&](iris::Rank& rank) {
    const int me = rank.rank();
    const std::size_t W = static_cast<std::size_t>(world);
    float* input = rank.allocate<float>(W * max_elems);
    float* output = rank.allocate<float>(W * max_elems);
    hipStream_t stream = nullptr;
    check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreate");
    hipEvent_t start, stop;
    check(hipEventCreate(&start), "hipEventCreate");
    check(hipEventCreate(&stop), "hipEventCreate");
    {
      std::vector<float> host(W * max_elems);
      for (std::size_t i = 0; i < host.size(); ++i) host[i] = value_of(me, i);
      check(hipMemcpy(input, host.data(), host.size() * sizeof(float), hipMemcpyHostToDevice), "hipMemcpy");
    }
    const iris::DeviceContext ctx = rank.device_context();
    ncclComm_t comm = comms[static_cast<std::size_t>(me)];
    auto nccl_check = [&](ncclResult_t r) {
      if (r) throw iris::Error(std::string("nccl: ") + nccl.GetErrorString(r));
    };

    // Times `iters` back-to-back calls of f (after warm-up) on this rank's stream;
    // then checks the output with `verify`; rank 0 records the row.
    auto measure = [&](const std::string& op, const std::string& who, std::size_t bytes, double bus_factor,
                       const std::function<void()>& f, const std::function<bool()>& verify) {
      const int iters = bytes >= (std::size_t{64} << 20) ? 5 : 20;
      check(hipMemsetAsync(output, 0xff, W * max_elems * sizeof(float), stream), "hipMemset");
      check(hipStreamSynchronize(stream), "sync");
      rank.barrier();
      for (int i = 0; i < 3; ++i) f();
      check(hipStreamSynchronize(stream), "sync");
      rank.barrier();
      std::vector<double> times;
      for (int rep = 0; rep < 5; ++rep) {
        rank.barrier();
        check(hipEventRecord(start, stream), "hipEventRecord");
        for (int i = 0; i < iters; ++i) f();
        check(hipEventRecord(stop, stream), "hipEventRecord");
        check(hipEventSynchronize(stop), "hipEventSynchronize");
        float ms = 0;
        check(hipEventElapsedTime(&ms, start, stop), "elapsed");
        times.push_back(ms * 1e3 / iters);
      }
      rank.barrier();
      std::sort(times.begin(), times.end());
      const double us = times[times.size() / 2];
      const bool ok = verify();
      if (me == 0) {
        std::lock_guard lock(rows_mutex);
        double algbw = bytes / us / 1e3;
        rows.push_back({op, who, bytes, us, algbw, algbw * bus_factor, ok});
      }
      rank.barrier();
    };
    auto read = [&](std::size_t count) {
      std::vector<float> out(count);
      check(hipMemcpy(out.data(), output, count * sizeof(float), hipMemcpyDeviceToHost), "hipMemcpy back");
      return out;
    };

    const double w = world;
    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      const std::size_t n = bytes / sizeof(float);
      const int32_t count = static_cast<int32_t>(n);
      const int blocks = static_cast<int>((n + 1023) / 1024);
      // all_reduce: n elements per rank.
      auto verify_reduce = [&] {
        auto out = read(n);
        for (std::size_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < world; ++r) want += value_of(r, i);
          if (std::abs(out[i] - want) > 1e-3) return false;
        }
        return true;
      };
      measure("all_reduce", "iris one-shot", bytes, 2 * (w - 1) / w, [&] {
        iris_kernels::all_reduce_one_shot_f32<>::launch({blocks}, ctx, input, output, count, stream);
      }, verify_reduce);
      measure("all_reduce", "nccl", bytes, 2 * (w - 1) / w, [&] {
        nccl_check(nccl.AllReduce(input, output, n, ncclFloat32, ncclSum, comm, stream));
      }, verify_reduce);
      // all_gather: n elements from each rank, world * n in every output.
      auto verify_gather = [&] {
        auto out = read(W * n);
        for (int r = 0; r < world; ++r)
          for (std::size_t i = 0; i < n; ++i)
            if (out[static_cast<std::size_t>(r) * n + i] != value_of(r, i)) return false;
        return true;
      };
      measure("all_gather", "iris", bytes * W, (w - 1) / w, [&] {
        iris_kernels::all_gather<>::launch({blocks}, ctx, input, output, count, stream);
      }, verify_gather);
      measure("all_gather", "nccl", bytes * W, (w - 1) / w, [&] {
        nccl_check(nccl.AllGather(input, output, n, ncclFloat32, comm, stream));
      }, verify_gather);
      // reduce_scatter: world * n elements in, block `me` of the sum out.
      auto verify_scatter = [&] {
        auto out = read(n);
        for (std::size_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < world; ++r) want += value_of(r, static_cast<std::size_t>(me) * n + i);
          if (std::abs(out[i] - want) > 1e-3) return false;
        }
        return true;
      };
      measure("reduce_scatter", "iris", bytes * W, (w - 1) / w, [&] {
        iris_kernels::reduce_scatter_f32<>::launch({blocks}, ctx, input, output, count, stream);
      }, verify_scatter);
      measure("reduce_scatter", "nccl", bytes * W, (w - 1) / w, [&] {
        nccl_check(nccl.ReduceScatter(input, output, n, ncclFloat32, ncclSum, comm, stream));
      }, verify_scatter);
    }
    check(hipStreamDestroy(stream), "hipStreamDestroy");
  });

  std::printf("%-15s %-14s %12s %12s %12s %12s %6s\n", "op", "who", "bytes", "time [us]", "algbw GB/s",
              "busbw GB/s", "check");
  bool all_ok = true;
  for (const Row& r : rows) {
    std::printf("%-15s %-14s %12zu %12.2f %12.2f %12.2f %6s\n", r.op.c_str(), r.who.c_str(), r.bytes, r.us,
                r.algbw, r.busbw, r.ok ? "ok" : "WRONG");
    all_ok &= r.ok;
  }
  return all_ok ? 0 : 1;
}
