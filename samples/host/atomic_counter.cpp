// atomic_counter: every program instance of every rank adds the number of its
// in-range elements to one counter on rank 0 with a remote atomic_add; the
// total must be world * n, counted on the host.
#include "atomic_counter.iris.hpp"
#include "sample.hpp"

#include <atomic>

int main(int argc, char** argv) {
  sample::Options opt = sample::parse(argc, argv, "atomic_counter: remote atomic_add from every rank");
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%12s %8s %12s %14s\n", "elements", "ranks", "time [ms]", "atomics/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 256);
      int64_t* counter = rank.allocate<int64_t>(1);
      auto run = [&] {
        iris_kernels::count<>::launch({blocks}, rank.device_context(), counter, static_cast<int32_t>(n));
      };
      if (opt.validate) {
        sample::fill(counter, int64_t{0}, 1);
        rank.barrier();
        run();
        rank.barrier();
        sample::Checker check{me};
        if (me == 0) check.expect("counter", 0, sample::read(counter, 1)[0], static_cast<int64_t>(n) * world);
        errors += check.errors;
      }
      if (opt.bench) {
        double t = sample::median_seconds(rank, opt.repeats, run);
        if (me == 0) std::printf("%12zu %8d %12.3f %14.0f\n", n, world, t * 1e3, blocks * world / t);
      }
      rank.free(counter);
    }
  });
  if (errors) {
    std::fprintf(stderr, "atomic_counter: FAILED\n");
    return 1;
  }
  if (opt.validate && leader) std::printf("atomic_counter: %d ranks, sizes validated\n", opt.ranks);
  return 0;
}
