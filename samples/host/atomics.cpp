// atomics: remote read-modify-write atomics on rank 0 from every program
// instance of every rank, one instance per 256 elements of --size:
//
//   up_down     atomic_add then atomic_sub on one counter: it must end at the
//               number of instances of all ranks.
//   swap_ids    atomic_xchg of each instance's id into one slot: the values
//               replaced, with the slot's final value, must be a permutation of
//               0 and every id (none lost, none seen twice).
//   locked_sum  a spin lock taken with atomic_cas guards a plain load + store of
//               a total: rank r adds r + 1 per instance, and no update may be lost.
//
// The expected values are counted on the host. --bench reports operations per
// second: atomics (up_down: two per instance; swap_ids: one) or critical sections.
#include "atomics.iris.hpp"
#include "sample.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.modes = {{"up_down", "atomic_add and atomic_sub on a counter on rank 0"},
                {"swap_ids", "atomic_xchg of every instance's id into a slot on rank 0"},
                {"locked_sum", "a lock on rank 0 (atomic_cas / atomic_store) around a plain update"}};
  sample::Options opt = sample::parse(
      argc, argv, "atomics: remote atomics on rank 0 from every instance (one per 256 elements)", spec);
  std::atomic<std::size_t> errors{0};
  if (opt.bench)
    std::printf("%-12s %12s %10s %8s %12s %14s\n", "kernel", "elements", "instances", "ranks", "time [ms]", "ops/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const iris::DeviceContext ctx = rank.device_context();
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 256);  // program instances per rank
      const int64_t instances = static_cast<int64_t>(blocks) * world;
      for (const std::string& mode : opt.modes) {
        sample::Checker check{me};
        double ops = static_cast<double>(instances);  // per run, for --bench
        if (mode == "up_down") {
          int64_t* counter = rank.allocate<int64_t>(1);
          auto run = [&] { iris_kernels::up_down<>::launch({blocks}, ctx, counter); };
          if (opt.validate) {
            sample::fill(counter, int64_t{0}, 1);
            rank.barrier();
            run();
            rank.barrier();
            if (me == 0) check.expect("counter", 0, sample::read(counter, 1)[0], instances);
          }
          ops = 2.0 * static_cast<double>(instances);
          if (opt.bench) {
            double t = sample::median_seconds(rank, opt.repeats, run);
            if (me == 0)
              std::printf("%-12s %12zu %10d %8d %12.3f %14.0f\n", mode.c_str(), n, blocks, world, t * 1e3, ops / t);
          }
          rank.free(counter);
        } else if (mode == "swap_ids") {
          int32_t* slot = rank.allocate<int32_t>(1);
          int32_t* replaced = rank.allocate<int32_t>(static_cast<std::size_t>(blocks));
          auto run = [&] { iris_kernels::swap_ids::launch({blocks}, ctx, slot, replaced); };
          if (opt.validate) {
            sample::fill(slot, int32_t{0}, 1);
            sample::fill(replaced, sample::poison<int32_t>(), static_cast<std::size_t>(blocks));
            rank.barrier();
            run();
            rank.barrier();
            if (me == 0) {
              // Every rank's replaced values (through rank 0's view of the heaps),
              // then the slot: a permutation of 0 .. instances.
              std::vector<int32_t> seen = sample::read(slot, 1);
              for (int r = 0; r < world; ++r) {
                const std::vector<int32_t> part = sample::read(rank.translate(replaced, r), static_cast<std::size_t>(blocks));
                seen.insert(seen.end(), part.begin(), part.end());
              }
              std::sort(seen.begin(), seen.end());
              for (std::size_t i = 0; i < seen.size(); ++i)
                check.expect("sorted ids", i, seen[i], static_cast<int32_t>(i));
            }
          }
          if (opt.bench) {
            double t = sample::median_seconds(rank, opt.repeats, run);
            if (me == 0)
              std::printf("%-12s %12zu %10d %8d %12.3f %14.0f\n", mode.c_str(), n, blocks, world, t * 1e3, ops / t);
          }
          rank.free(replaced);
          rank.free(slot);
        } else {  // locked_sum
          int32_t* lock = rank.allocate<int32_t>(1);
          int64_t* total = rank.allocate<int64_t>(1);
          const int64_t amount = me + 1;
          auto run = [&] { iris_kernels::locked_sum::launch({blocks}, ctx, lock, total, amount); };
          // The lock starts free (also for --bench alone: heap memory is not cleared).
          sample::fill(lock, int32_t{0}, 1);
          sample::fill(total, int64_t{0}, 1);
          if (opt.validate) {
            rank.barrier();
            run();
            rank.barrier();
            if (me == 0) {
              const int64_t want = static_cast<int64_t>(blocks) * world * (world + 1) / 2;  // sum of r + 1
              check.expect("total", 0, sample::read(total, 1)[0], want);
              check.expect("lock (released)", 0, sample::read(lock, 1)[0], int32_t{0});
            }
          }
          if (opt.bench) {
            double t = sample::median_seconds(rank, opt.repeats, run);
            if (me == 0)
              std::printf("%-12s %12zu %10d %8d %12.3f %14.0f\n", mode.c_str(), n, blocks, world, t * 1e3, ops / t);
          }
          rank.free(total);
          rank.free(lock);
        }
        errors += check.errors;
      }
    }
  });
  return sample::report_modes("atomics", opt, leader, errors.load(), "values");
}
