// copy: the copy benchmark's kernels (bench/copy_bench.cpp times them on one GPU).
//
//   copy          dst <- src, both local
//   copy_to_self  dst @ rank() <- src: the translation to my own rank
//   copy_to_peer  dst @ next <- src: my src lands in the next rank's dst
//
// Every dst is poisoned before the run and checked against the host's values.
// --bench reports bytes read plus bytes written per second and rank, as
// copy_bench does.
#include "copy.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.modes = {{"copy", "copy: local src to local dst"},
                {"copy_to_self", "copy_to with r = rank(): through the translation, to my own heap"},
                {"copy_to_peer", "copy_to with r = the next rank: my src to its dst"}};
  sample::Options opt = sample::parse(argc, argv, "copy: local copy and copy through `@ r`", spec);
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%-14s %12s %8s %12s %12s\n", "kernel", "elements", "ranks", "time [ms]", "GB/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    const iris::DeviceContext ctx = rank.device_context();
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 1024);
      const int32_t count = static_cast<int32_t>(n);
      float* src = rank.allocate<float>(n);
      float* dst = rank.allocate<float>(n);
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
      sample::to_device(src, values.data(), n);
      for (const std::string& mode : opt.modes) {
        std::function<void()> run;
        int from_rank = me;  // whose src ends up in my dst
        if (mode == "copy") {
          run = [&] { iris_kernels::copy<>::launch({blocks}, ctx, src, dst, count); };
        } else if (mode == "copy_to_self") {
          run = [&] { iris_kernels::copy_to<>::launch({blocks}, ctx, src, dst, count, me); };
        } else {  // copy_to_peer
          run = [&] { iris_kernels::copy_to<>::launch({blocks}, ctx, src, dst, count, next); };
          from_rank = prev;
        }
        if (opt.validate) {
          sample::fill(dst, sample::poison<float>(), n);
          rank.barrier();
          run();
          rank.barrier();
          const std::vector<float> got = sample::read(dst, n);
          sample::Checker check{me};
          for (std::size_t i = 0; i < n; ++i) check.expect("dst", i, got[i], sample::value_of(from_rank, i));
          errors += check.errors;
        }
        if (opt.bench) {
          double t = sample::median_seconds(rank, opt.repeats, run);
          if (me == 0)
            std::printf("%-14s %12zu %8d %12.3f %12.3f\n", mode.c_str(), n, world, t * 1e3,
                        2.0 * static_cast<double>(n) * sizeof(float) / t / 1e9);
        }
      }
      rank.free(dst);
      rank.free(src);
    }
  });
  return sample::report_modes("copy", opt, leader, errors.load());
}
