// The CPU target's transport to a far rank (run_mpi, provider mpi) against MPI
// RMA called directly on a window of the same kind: latency of an 8-byte put
// completed by quiet (MPI_Put + MPI_Win_flush) and of an 8-byte get (MPI_Get +
// MPI_Win_flush_local), and the bandwidth of puts and gets of 4 KiB to 4 MiB
// tiles. Rank 0 times; rank 1, a node of its own, waits in a host barrier
// meanwhile, which drives MPI's progress for both (osc pt2pt's targets need
// it). Prints a table of medians over the repeats and the median of the
// per-repeat ratios ours / direct. Run it with 2 ranks, each a node:
//
//   mpirun -np 2 -x IRIS_RANKS_PER_NODE=1 --mca pml ob1 --mca btl tcp,self --mca osc pt2pt
//          build/bench/transport_bench [repeats]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "iris/host.hpp"
#include "iris/kernel.hpp"

namespace {

constexpr std::size_t kHeap = std::size_t{16} << 20;
constexpr std::size_t kLargest = std::size_t{4} << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of f, over `calls` calls.
template <class F>
double seconds_per_call(int calls, F f) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

// Rank 0 times one row: `ours` and `direct` alternately, `repeats` times each.
struct Row {
  const char* what;
  std::size_t bytes;
  std::vector<double> ours, direct, ratios;
};

void print(const Row& row) {
  const double ours = median(row.ours), direct = median(row.direct);
  const bool latency = row.bytes == 8;
  std::printf("| %s | %zu | %.2f %s | %.2f %s | %.2f |\n", row.what, row.bytes,
              latency ? ours * 1e6 : row.bytes / ours / 1e9, latency ? "us" : "GB/s",
              latency ? direct * 1e6 : row.bytes / direct / 1e9, latency ? "us" : "GB/s", median(row.ratios));
}

struct Bench {
  const iris::Program& p;
  MPI_Win window;   // the direct window: over the same heap block
  float* block;     // kLargest bytes in every heap
  float* source;    // the direct puts' data, kLargest bytes
  int repeats;

  template <class Ours, class Direct>
  void row(const char* what, std::size_t bytes, int calls, Ours ours, Direct direct) {
    Row r{what, bytes, {}, {}, {}};
    for (int i = 0; i < repeats; ++i) {
      r.ours.push_back(seconds_per_call(calls, ours));
      r.direct.push_back(seconds_per_call(calls, direct));
      r.ratios.push_back(r.ours.back() / r.direct.back());
    }
    print(r);
  }

  template <int Bytes>
  void bandwidth(int far) {
    constexpr int kElements = Bytes / 4;
    iris::Tile<float, kElements> data;
    for (int k = 0; k < kElements; ++k) data.v[k] = static_cast<float>(k);
    const iris::ContigPtrs<float, kElements> there{iris::translate_to(p, block, far)};
    const int calls = std::max(4, static_cast<int>((std::size_t{16} << 20) / Bytes));
    row("put", Bytes, calls,
        [&] {
          iris::remote_store(p, there, data);
          iris::quiet(p);
        },
        [&] {
          MPI_Put(source, Bytes, MPI_BYTE, far, 0, Bytes, MPI_BYTE, window);
          MPI_Win_flush(far, window);
        });
    volatile float sink = 0;  // keeps the gets
    row("get", Bytes, calls,
        [&] {
          const auto got = iris::remote_load(p, there);
          sink = got.v[0];
        },
        [&] {
          MPI_Get(source, Bytes, MPI_BYTE, far, 0, Bytes, MPI_BYTE, window);
          MPI_Win_flush_local(far, window);
        });
  }

  void run(int far) {
    auto* word = reinterpret_cast<std::uint64_t*>(iris::translate_to(p, block, far));
    std::uint64_t value = 1;
    constexpr int kCalls = 2000;
    row("put + quiet", 8, kCalls,
        [&] {
          iris::remote_store(p, word, ++value);
          iris::quiet(p);
        },
        [&] {
          MPI_Put(&value, 8, MPI_BYTE, far, 0, 8, MPI_BYTE, window);
          MPI_Win_flush(far, window);
        });
    row("get", 8, kCalls, [&] { value += iris::remote_load(p, word); },
        [&] {
          MPI_Get(&value, 8, MPI_BYTE, far, 0, 8, MPI_BYTE, window);
          MPI_Win_flush_local(far, window);
        });
    bandwidth<4 << 10>(far);
    bandwidth<64 << 10>(far);
    bandwidth<1 << 20>(far);
    bandwidth<4 << 20>(far);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 7;
  iris::run_mpi(kHeap, [&](iris::Rank& r) {
    const iris::Program p{r.device_context(), {0, 0, 0}, {1, 1, 1}};
    if (r.world_size() != 2 || iris::near(p, 1 - r.rank())) {
      throw iris::Error("transport_bench: run it with 2 ranks, each a node of its own (IRIS_RANKS_PER_NODE=1)");
    }
    float* block = r.allocate<float>(kLargest / 4);
    std::vector<float> source(kLargest / 4, 1.0f);
    MPI_Win window;
    MPI_Win_create(block, kLargest, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
    if (r.rank() == 0) {
      std::printf("| operation | bytes | ours | MPI direct | ours / direct |\n| --- | --- | --- | --- | --- |\n");
      Bench{p, window, block, source.data(), repeats}.run(1);
    }
    r.barrier();
    MPI_Win_unlock_all(window);
    MPI_Win_free(&window);
  });
  MPI_Finalize();
}
