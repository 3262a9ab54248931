// Collectives on several GPUs: the .iris kernels against NCCL, side by side
// in one run (issue 7). One process, one rank per visible GPU (run_threads
// places rank r on GPU r), NCCL communicators made with ncclCommInitAll over
// the same GPUs; both use the same symmetric-heap buffers and the rank's stream.
//
// Operations: all_reduce, all_gather, reduce_scatter (NCCL's calls) and
// all_to_all (NCCL has no call for it: a group of ncclSend / ncclRecv to and
// from every rank, as nccl-tests' alltoall does). The library's calls
// (iris/ccl.hpp, issue 16) run with each of the collective's algorithms forced
// and the automatic choice ("ccl one_shot", ..., "ccl automatic"), without the
// comparison of the calls between the ranks (a host rendezvous per call, which
// NCCL does not make): their kernels end on a rank only once every rank's
// instances have finished (finish() of iris/ccl.iris), as an NCCL call does.
// The fair comparison, and the numbers that the selection table of ccl.hpp is
// to be measured from. A variant the library refuses at a size (push's scratch
// past what the kernels index) is reported and skipped. Beside them, "iris":
// the kernel of samples/collectives.iris that does what one_shot (all_reduce,
// reduce_scatter) or push (all_gather, all_to_all) does, without finish(): it
// ends when this rank's instances end, and back-to-back calls are not ordered
// across ranks (the samples put a host barrier after the kernel). Cheaper than
// what NCCL promises: the difference is the cost of completion.
//
// Sizes follow nccl-tests (doc/PERFORMANCE.md there): S is the per-rank buffer
// of all_reduce and all_to_all, the whole output of all_gather and the whole
// input of reduce_scatter; algbw = S / t; busbw = algbw * 2 (w - 1) / w for
// all_reduce and algbw * (w - 1) / w for the others. S runs from 1 KiB to
// max_bytes in steps of 4. The time of a call is the median of 5 timings of
// back-to-back calls (GPU events on rank 0's stream), after warm-up; at small
// sizes it is the latency. Every output of every variant is checked against
// values computed on the host.
//
// NCCL is loaded at run time with dlopen (the GPU machine has libnccl.so.2; the
// build machine has no NCCL), so only the few entry points used are declared
// here, with NCCL's ABI.
#include "collectives.iris.hpp"
#include "gpu_timer.hpp"

#include <iris/ccl.hpp>

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
  ncclResult_t (*Send)(const void*, size_t, int, int, ncclComm_t, hipStream_t);
  ncclResult_t (*Recv)(void*, size_t, int, int, ncclComm_t, hipStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
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
  bind(lib, n.Send, "ncclSend");
  bind(lib, n.Recv, "ncclRecv");
  bind(lib, n.GroupStart, "ncclGroupStart");
  bind(lib, n.GroupEnd, "ncclGroupEnd");
  bind(lib, n.GetErrorString, "ncclGetErrorString");
  return n;
}

using bench::check;

// Sums of these are exact in f32, so outputs compare exactly.
float value_of(int rank, std::size_t i) { return static_cast<float>((rank * 7 + i % 251) % 64) * 0.25f; }

struct Row {
  std::string op, who;
  std::size_t bytes;
  double us, algbw, busbw;
  bool ok;
};

// One operation at one size: S in bytes (nccl-tests' size), the bus factor, the
// number of elements per rank block, and what each rank's output must hold.
struct Op {
  std::string name;
  double bus_factor;
  std::size_t out_count;                          // elements of the output to check
  std::function<double(int me, std::size_t j)> want;  // output element j of rank me
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
  std::vector<char> wrong(static_cast<std::size_t>(world));  // per rank: the last check failed
  const std::size_t max_elems = max_bytes / sizeof(float);
  // Heap: input and output of max_bytes each, the library's scratch (push's
  // all_reduce: world × max_bytes), its flags and finish()'s counters, slack.
  const std::size_t heap = (2 + static_cast<std::size_t>(world)) * max_bytes + (std::size_t{64} << 20);
  iris::run_threads(world, heap, [&](iris::Rank& rank) {
    const int me = rank.rank();
    const std::size_t W = static_cast<std::size_t>(world);
    float* input = rank.allocate<float>(max_elems);
    float* output = rank.allocate<float>(max_elems);
    iris::Workspace workspace(rank);  // the library's (collective)
    hipStream_t stream = nullptr;
    check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreate");
    bench::GpuTimer timer(stream);
    {
      std::vector<float> host(max_elems);
      for (std::size_t i = 0; i < host.size(); ++i) host[i] = value_of(me, i);
      check(hipMemcpy(input, host.data(), host.size() * sizeof(float), hipMemcpyHostToDevice), "hipMemcpy");
    }
    const iris::DeviceContext ctx = rank.device_context();
    ncclComm_t comm = comms[static_cast<std::size_t>(me)];
    auto nccl_check = [&](ncclResult_t r) {
      if (r) throw iris::Error(std::string("nccl: ") + nccl.GetErrorString(r));
    };
    // Every element of the output against the host's value (exact: see value_of).
    auto verify = [&](const Op& op) {
      std::vector<float> out(op.out_count);
      check(hipMemcpy(out.data(), output, out.size() * sizeof(float), hipMemcpyDeviceToHost), "hipMemcpy back");
      for (std::size_t j = 0; j < out.size(); ++j)
        if (static_cast<double>(out[j]) != op.want(me, j)) return false;
      return true;
    };

    // Times f on this rank's stream (every rank starts each timing together),
    // checks the output of the last call on every rank; rank 0 records the row.
    auto measure = [&](const Op& op, const std::string& who, std::size_t bytes, const std::function<void()>& f) {
      check(hipMemsetAsync(output, 0xff, max_bytes, stream), "hipMemset");  // NaN
      check(hipStreamSynchronize(stream), "sync");
      const double us = timer.median_us(bytes, f, [&] { rank.barrier(); });
      rank.barrier();  // every rank's calls done: my output is complete
      wrong[static_cast<std::size_t>(me)] = !verify(op);
      rank.barrier();
      if (me == 0) {
        std::lock_guard lock(rows_mutex);
        const double algbw = static_cast<double>(bytes) / us / 1e3;
        const bool ok = std::find(wrong.begin(), wrong.end(), 1) == wrong.end();
        rows.push_back({op.name, who, bytes, us, algbw, algbw * op.bus_factor, ok});
      }
      rank.barrier();
    };

    // Sum over ranks of value_of(r, i), which depends on i % 251 only.
    std::vector<double> sums(251, 0.0);
    for (std::size_t i = 0; i < sums.size(); ++i)
      for (int r = 0; r < world; ++r) sums[i] += value_of(r, i);
    const double w = world;
    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      const std::size_t total = bytes / sizeof(float);
      const std::size_t block = total / W;  // all_gather, reduce_scatter, all_to_all: per-rank block
      const std::size_t split_bytes = W * block * sizeof(float);  // their S (bytes, unless W does not divide it)
      // The sample's .iris kernel with `blocks` instances of 1024.
      auto iris_variant = [&](const Op& op, std::size_t size, std::size_t elements,
                              const std::function<void(int, int32_t)>& kernel) {
        const int blocks = static_cast<int>((elements + 1023) / 1024);
        const int32_t n = static_cast<int32_t>(elements);
        measure(op, "iris", size, [&] { kernel(blocks, n); });
      };
      // The library's call with every algorithm of `collective` and the
      // automatic choice; an argument it refuses throws on every rank alike,
      // before anything is launched.
      auto ccl_variants = [&](const Op& op, std::size_t size, iris::ccl::Collective collective,
                              const std::function<void(const iris::ccl::Config&)>& call) {
        using iris::ccl::Algorithm;
        for (Algorithm a : {Algorithm::one_shot, Algorithm::push, Algorithm::two_shot, Algorithm::ring,
                            Algorithm::automatic}) {
          if (a != Algorithm::automatic && !iris::ccl::offers(collective, a)) continue;
          iris::ccl::Config config;
          config.algorithm = a;
          config.compare_calls = false;
          const std::string who = std::string("ccl ") + iris::ccl::name_of(a);
          try {
            measure(op, who, size, [&] { call(config); });
          } catch (const iris::Error& e) {
            if (me == 0) std::fprintf(stderr, "nccl_bench: %s %s at %zu bytes skipped: %s\n", op.name.c_str(),
                                      who.c_str(), size, e.what());
          }
        }
      };
      auto sum_over_ranks = [&](std::size_t i) { return sums[i % 251]; };

      // all_reduce: S = one rank's buffer of `total` elements.
      const Op all_reduce{"all_reduce", 2 * (w - 1) / w, total, [&](int, std::size_t j) { return sum_over_ranks(j); }};
      iris_variant(all_reduce, bytes, total, [&](int blocks, int32_t n) {
        iris_kernels::all_reduce_one_shot_f32<>::launch({blocks}, ctx, input, output, n, stream);
      });
      measure(all_reduce, "nccl", bytes,
              [&] { nccl_check(nccl.AllReduce(input, output, total, ncclFloat32, ncclSum, comm, stream)); });
      ccl_variants(all_reduce, bytes, iris::ccl::Collective::all_reduce, [&](const iris::ccl::Config& c) {
        iris::ccl::all_reduce(workspace, input, output, total, iris::ccl::Op::sum, stream, c);
      });
      if (block == 0) continue;  // fewer elements than ranks: nothing to split

      // all_gather: S = the output, `block` elements from each rank.
      const Op all_gather{"all_gather", (w - 1) / w, W * block,
                          [&](int, std::size_t j) { return value_of(static_cast<int>(j / block), j % block); }};
      iris_variant(all_gather, split_bytes, block, [&](int blocks, int32_t n) {
        iris_kernels::all_gather_f32<>::launch({blocks}, ctx, input, output, n, stream);
      });
      measure(all_gather, "nccl", split_bytes,
              [&] { nccl_check(nccl.AllGather(input, output, block, ncclFloat32, comm, stream)); });
      ccl_variants(all_gather, split_bytes, iris::ccl::Collective::all_gather, [&](const iris::ccl::Config& c) {
        iris::ccl::all_gather(workspace, input, output, W * block, stream, c);
      });

      // reduce_scatter: S = the input, block `me` of the sum out.
      const Op reduce_scatter{"reduce_scatter", (w - 1) / w, block, [&](int r, std::size_t j) {
                                return sum_over_ranks(static_cast<std::size_t>(r) * block + j);
                              }};
      iris_variant(reduce_scatter, split_bytes, block, [&](int blocks, int32_t n) {
        iris_kernels::reduce_scatter_f32<>::launch({blocks}, ctx, input, output, n, stream);
      });
      measure(reduce_scatter, "nccl", split_bytes,
              [&] { nccl_check(nccl.ReduceScatter(input, output, block, ncclFloat32, ncclSum, comm, stream)); });
      ccl_variants(reduce_scatter, split_bytes, iris::ccl::Collective::reduce_scatter,
                   [&](const iris::ccl::Config& c) {
                     iris::ccl::reduce_scatter(workspace, input, output, W * block, iris::ccl::Op::sum, stream, c);
                   });

      // all_to_all: S = one rank's buffer; block q of rank p's input lands as
      // block p of rank q's output.
      const Op all_to_all{"all_to_all", (w - 1) / w, W * block, [&](int r, std::size_t j) {
                            return value_of(static_cast<int>(j / block), static_cast<std::size_t>(r) * block + j % block);
                          }};
      iris_variant(all_to_all, split_bytes, block, [&](int blocks, int32_t n) {
        iris_kernels::all_to_all_f32<>::launch({blocks}, ctx, input, output, n, stream);
      });
      measure(all_to_all, "nccl", split_bytes, [&] {
        nccl_check(nccl.GroupStart());
        for (int q = 0; q < world; ++q) {
          const std::size_t at = static_cast<std::size_t>(q) * block;
          nccl_check(nccl.Send(input + at, block, ncclFloat32, q, comm, stream));
          nccl_check(nccl.Recv(output + at, block, ncclFloat32, q, comm, stream));
        }
        nccl_check(nccl.GroupEnd());
      });
      ccl_variants(all_to_all, split_bytes, iris::ccl::Collective::all_to_all, [&](const iris::ccl::Config& c) {
        iris::ccl::all_to_all(workspace, input, output, W * block, stream, c);
      });
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
