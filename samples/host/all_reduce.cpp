// all_reduce (one-shot): every rank's output is the elementwise sum of all
// ranks' inputs; checked against a sum computed on the host in double.
#include "all_reduce.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <cmath>
#include <vector>

int main(int argc, char** argv) {
  sample::Options opt = sample::parse(argc, argv, "all_reduce: one-shot sum of every rank's input");
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%12s %8s %12s %12s\n", "elements", "ranks", "time [ms]", "GB/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    for (std::size_t n : opt.sizes) {
      float* input = rank.allocate<float>(n);
      float* output = rank.allocate<float>(n);
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
      sample::to_device(input, values.data(), n);
      auto run = [&] {
        iris_kernels::all_reduce_one_shot<>::launch({sample::blocks_for(n, 1024)}, rank.device_context(),
                                                    input, output, static_cast<int32_t>(n));
      };
      if (opt.validate) {
        sample::fill(output, 0.0f, n);
        rank.barrier();
        run();
        rank.barrier();
        const std::vector<float> got = sample::read(output, n);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < world; ++r) want += sample::value_of(r, i);
          if (std::abs(got[i] - want) > 1e-6 * std::abs(want) && wrong++ < 5)
            std::fprintf(stderr, "rank %d: output[%zu] = %g, expected %g\n", me, i, got[i], want);
        }
        errors += wrong;
      }
      if (opt.bench) {
        double t = sample::median_seconds(rank, opt.repeats, run);
        // Bus bandwidth as nccl-tests defines it for all_reduce: 2 (w - 1) / w of the data.
        double bus = 2.0 * (world - 1) / world * n * sizeof(float);
        if (me == 0) std::printf("%12zu %8d %12.3f %12.3f\n", n, world, t * 1e3, bus / t / 1e9);
      }
      rank.free(output);
      rank.free(input);
    }
  });
  if (errors) {
    std::fprintf(stderr, "all_reduce: FAILED with %zu wrong elements\n", errors.load());
    return 1;
  }
  if (opt.validate && leader) std::printf("all_reduce: %d ranks, sizes validated\n", opt.ranks);
  return 0;
}
