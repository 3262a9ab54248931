// barrier: the device-side barrier, checked many times. The kernel `rounds`
// runs --rounds rounds; in each, every rank writes the round number into its
// slot on every peer, meets the others at barrier(), checks that all its slots
// hold this round (a rank that passed the barrier early leaves an old value
// behind), and meets them again before the next round. The kernel counts what
// was wrong in `errors`; the host checks the count and the final slots. It is
// launched twice in a row, so the barrier is reused within a kernel and across
// kernels. --size is not used: the work is the number of rounds.
//
// The barrier needs every program instance of every rank to be running at the
// same time (on the GPU: co-resident), so the grid is a single instance.
// --bench reports the time of one barrier (a round has two).
#include "barrier.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.options.push_back({"--rounds", "N", "rounds of the kernel (two barriers each)", 200});
  sample::Options opt = sample::parse(argc, argv, "barrier: the device barrier, round after round (--size is not used)", spec);
  const long long rounds_ll = opt.value("--rounds");
  if (rounds_ll < 1 || rounds_ll > (1 << 30)) {
    std::fprintf(stderr, "barrier: --rounds must be between 1 and 2^30\n");
    return 2;
  }
  const int32_t rounds = static_cast<int32_t>(rounds_ll);
  const int launches = 2;
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%10s %8s %12s %18s\n", "rounds", "ranks", "time [ms]", "per barrier [us]");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const std::size_t slots_count = static_cast<std::size_t>(world);
    int32_t* slots = rank.allocate<int32_t>(slots_count);
    int32_t* wrong = rank.allocate<int32_t>(1);
    auto run = [&] { iris_kernels::rounds::launch({1}, rank.device_context(), slots, wrong, rounds); };
    sample::fill(slots, sample::poison<int32_t>(), slots_count);
    sample::fill(wrong, int32_t{0}, 1);
    if (opt.validate) {
      rank.barrier();
      for (int l = 0; l < launches; ++l) run();
      rank.barrier();
      sample::Checker check{me};
      check.expect("errors counted by the kernel", 0, sample::read(wrong, 1)[0], int32_t{0});
      const std::vector<int32_t> got = sample::read(slots, slots_count);
      for (std::size_t p = 0; p < slots_count; ++p) check.expect("slots", p, got[p], rounds);
      errors += check.errors;
    }
    if (opt.bench) {
      double t = sample::median_seconds(rank, opt.repeats, run);
      if (me == 0) std::printf("%10d %8d %12.3f %18.3f\n", rounds, world, t * 1e3, t / (2.0 * rounds) * 1e6);
    }
    rank.free(wrong);
    rank.free(slots);
  });
  if (errors) {
    std::fprintf(stderr, "barrier: FAILED with %zu wrong values\n", errors.load());
    return 1;
  }
  if (opt.validate && leader)
    std::printf("barrier: %d ranks, %d launches of %d rounds validated\n", opt.ranks, launches, rounds);
  return 0;
}
