// The GPU's nvshmem provider (run_mpi of iris_runtime_gpu_nvshmem) against
// NVSHMEM called directly, in kernels of the same shape: latency of an 8-byte
// put completed by quiet (ours: remote_store + quiet; direct: nvshmem_putmem +
// nvshmem_quiet) and of an 8-byte get (remote_load; nvshmem_getmem), and the
// bandwidth of puts (+ quiet) and gets of 4 KiB to 4 MiB, one 4 KiB tile per
// program instance (ours: remote_store / remote_load of the tile; direct:
// nvshmemx_putmem_block / nvshmemx_getmem_block of the same 4 KiB). Every
// kernel repeats its operation kRounds times, so a row's time is that of the
// operation, not of a launch. Rank 0 times, rank 1 waits in a host barrier;
// the rows are medians of GpuTimer's side-by-side timings (bench/gpu_timer.hpp),
// the ratio ours / direct. With IRIS_RANKS_PER_NODE=1 rank 1 is far (the far
// path); as one node (IRIS_TRANSPORT=nvshmem) it is near and ours are stores
// and loads through nvshmem_ptr's mapping:
//
//   mpirun -np 2 -x LD_LIBRARY_PATH -x IRIS_RANKS_PER_NODE=1 -x NVSHMEM_REMOTE_TRANSPORT=none
//          -x NVSHMEM_DISABLE_NVLS=1 build/bench/nvshmem_transport_bench
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_timer.hpp"
#include "iris/host.hpp"
#include "iris/kernel.hpp"

namespace {

constexpr int kTile = 1024;  // floats: 4 KiB per program instance
constexpr int kRounds = 64;  // operations per kernel
constexpr std::size_t kLargest = std::size_t{4} << 20;

struct PutWordOurs {
  IRIS_DEVICE static void run(const iris::Program& p, std::uint64_t* word, int far) {
    std::uint64_t* there = iris::translate_to(p, word, far);
    for (int i = 0; i < kRounds; ++i) {
      iris::remote_store(p, there, static_cast<std::uint64_t>(i));
      iris::quiet(p);
    }
  }
};
struct PutWordDirect {
  IRIS_DEVICE static void run(const iris::Program& p, std::uint64_t* word, int far) {
    if (iris::thread_index() != 0) return;
    for (int i = 0; i < kRounds; ++i) {
      word[1] = static_cast<std::uint64_t>(i);
      nvshmem_putmem(word, word + 1, sizeof *word, far);
      nvshmem_quiet();
    }
    (void)p;
  }
};
struct GetWordOurs {
  IRIS_DEVICE static void run(const iris::Program& p, std::uint64_t* word, int far) {
    std::uint64_t* there = iris::translate_to(p, word, far);
    std::uint64_t sum = 0;
    for (int i = 0; i < kRounds; ++i) sum += iris::remote_load(p, there);
    if (iris::thread_index() == 0) word[2] = sum;
  }
};
struct GetWordDirect {
  IRIS_DEVICE static void run(const iris::Program& p, std::uint64_t* word, int far) {
    if (iris::thread_index() != 0) return;
    std::uint64_t sum = 0;
    for (int i = 0; i < kRounds; ++i) {
      nvshmem_getmem(word + 1, word, sizeof *word, far);
      sum += word[1];
    }
    word[2] = sum;
    (void)p;
  }
};

// Program instance i's 4 KiB of block, here and on rank far.
struct PutTileOurs {
  IRIS_DEVICE static void run(const iris::Program& p, float* block, int far) {
    float* here = block + p.id[0] * kTile;
    const auto data = iris::load(iris::ContigPtrs<float, kTile>{here});
    const iris::ContigPtrs<float, kTile> there{iris::translate_to(p, here, far)};
    for (int i = 0; i < kRounds; ++i) {
      iris::remote_store(p, there, data);
      iris::quiet(p);
    }
  }
};
struct PutTileDirect {
  IRIS_DEVICE static void run(const iris::Program& p, float* block, int far) {
    float* here = block + p.id[0] * kTile;
    for (int i = 0; i < kRounds; ++i) {
      nvshmemx_putmem_block(here, here, kTile * sizeof(float), far);
      if (iris::thread_index() == 0) nvshmem_quiet();
      __syncthreads();
    }
  }
};
struct GetTileOurs {
  IRIS_DEVICE static void run(const iris::Program& p, float* block, int far) {
    float* here = block + p.id[0] * kTile;
    const iris::ContigPtrs<float, kTile> there{iris::translate_to(p, here, far)};
    float sum = 0;
    for (int i = 0; i < kRounds; ++i) sum += iris::remote_load(p, there).v[0];
    if (sum == -1.0f) *here = sum;  // keeps the loads
  }
};
struct GetTileDirect {
  IRIS_DEVICE static void run(const iris::Program& p, float* block, int far) {
    float* here = block + p.id[0] * kTile;
    float* copy = here + (kLargest / sizeof(float));  // a second block of kLargest bytes
    for (int i = 0; i < kRounds; ++i) nvshmemx_getmem_block(copy, here, kTile * sizeof(float), far);
  }
};

}  // namespace

int main() {
  iris::run_mpi(4 * kLargest, [&](iris::Rank& r) {
    if (r.world_size() != 2) throw iris::Error("nvshmem_transport_bench: run it with 2 ranks");
    const iris::DeviceContext ctx = r.device_context();
    const iris::Program p{ctx, {0, 0, 0}, {1, 1, 1}};
    const int far = 1 - r.rank();
    auto* block = r.allocate<float>(2 * kLargest / sizeof(float));
    auto* word = r.allocate<std::uint64_t>(4);
    r.barrier();
    if (r.rank() == 0) {
      hipStream_t stream = hipStreamPerThread;
      bench::GpuTimer timer(stream);
      std::printf("rank 1 is %s; %d operations per kernel; medians of side-by-side timings\n\n",
                  iris::near(p, far) ? "near (nvshmem_ptr's mapping)" : "far (the far path)", kRounds);
      std::printf("| operation | bytes | ours | NVSHMEM direct | ours / direct |\n| --- | --- | --- | --- | --- |\n");
      const auto row = [&](const char* what, std::size_t bytes, auto launch_ours, auto launch_direct) {
        const std::vector<double> us = timer.medians_us(bytes, {launch_ours, launch_direct}, [] {}, 20);
        const double ours = us[0] / kRounds, direct = us[1] / kRounds;
        if (bytes == 8) {
          std::printf("| %s | 8 | %.2f us | %.2f us | %.2f |\n", what, ours, direct, ours / direct);
        } else {
          std::printf("| %s | %zu | %.1f GB/s | %.1f GB/s | %.2f |\n", what, bytes, bytes / ours / 1e3,
                      bytes / direct / 1e3, ours / direct);
        }
        std::fflush(stdout);
      };
      row("put + quiet", 8, [&] { iris::launch_kernel<PutWordOurs>({1}, stream, ctx, word, far); },
          [&] { iris::launch_kernel<PutWordDirect>({1}, stream, ctx, word, far); });
      row("get", 8, [&] { iris::launch_kernel<GetWordOurs>({1}, stream, ctx, word, far); },
          [&] { iris::launch_kernel<GetWordDirect>({1}, stream, ctx, word, far); });
      for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20, kLargest}) {
        const iris::Grid grid{static_cast<int>(bytes / (kTile * sizeof(float)))};
        row("put + quiet", bytes, [&] { iris::launch_kernel<PutTileOurs>(grid, stream, ctx, block, far); },
            [&] { iris::launch_kernel<PutTileDirect>(grid, stream, ctx, block, far); });
        row("get", bytes, [&] { iris::launch_kernel<GetTileOurs>(grid, stream, ctx, block, far); },
            [&] { iris::launch_kernel<GetTileDirect>(grid, stream, ctx, block, far); });
      }
    }
    r.barrier();
  });
}
