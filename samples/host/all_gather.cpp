// all_gather: every rank contributes n floats; afterwards every rank's output
// holds all contributions, ordered by rank. Validated against values computed
// on the host from (rank, index) alone.
#include "all_gather.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Options opt = sample::parse(argc, argv, "all_gather: every rank's block to every rank");
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%12s %8s %12s %12s\n", "elements", "ranks", "time [ms]", "GB/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    for (std::size_t n : opt.sizes) {
      float* src = rank.allocate<float>(n);
      float* dst = rank.allocate<float>(n * static_cast<std::size_t>(world));
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
      sample::to_device(src, values.data(), n);
      auto run = [&] {
        iris_kernels::all_gather<>::launch({sample::blocks_for(n, 1024)}, rank.device_context(), src,
                                           dst, static_cast<int32_t>(n));
      };
      if (opt.validate) {
        sample::fill(dst, 0.0f, n * static_cast<std::size_t>(world));
        rank.barrier();
        run();
        rank.barrier();
        const std::vector<float> got = sample::read(dst, n * static_cast<std::size_t>(world));
        sample::Checker check{me};
        for (int r = 0; r < world; ++r)
          for (std::size_t i = 0; i < n; ++i)
            check.expect("dst", static_cast<std::size_t>(r) * n + i, got[static_cast<std::size_t>(r) * n + i],
                         sample::value_of(r, i));
        errors += check.errors;
      }
      if (opt.bench) {
        double t = sample::median_seconds(rank, opt.repeats, run);
        // Bytes each rank receives (algorithm bandwidth as nccl-tests defines it).
        double bytes = static_cast<double>(n) * sizeof(float) * world;
        if (me == 0) std::printf("%12zu %8d %12.3f %12.3f\n", n, world, t * 1e3, bytes / t / 1e9);
      }
      rank.free(dst);
      rank.free(src);
    }
  });
  if (errors) {
    std::fprintf(stderr, "all_gather: FAILED with %zu wrong elements\n", errors.load());
    return 1;
  }
  if (opt.validate && leader) std::printf("all_gather: %d ranks, sizes validated\n", opt.ranks);
  return 0;
}
