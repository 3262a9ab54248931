// point_to_point: one rank's data moves to or from a peer, every rank at once.
// Rank r's peer is the next rank, (r + 1) % world:
//
//   load_peer   dst (local)     <- the next rank's src, loaded through `@`
//   store_peer  the next's dst  <- my src, stored through `@`
//   get         dst (symmetric) <- the next rank's src
//   put         the next's dst  <- my src
//   all_load    slot p of dst   <- rank p's src, for every p
//   all_store   slot r of every rank's dst <- my src
//
// Every output is checked against values computed on the host from (rank,
// index) alone. --bench reports the bytes each rank receives per second.
#include "point_to_point.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.modes = {{"load_peer", "load the next rank's src into my local dst"},
                {"store_peer", "store my src into the next rank's dst"},
                {"get", "copy the next rank's src into my symmetric dst"},
                {"put", "copy my src into the next rank's symmetric dst"},
                {"all_load", "load every rank's src (slot p of dst: rank p's src)"},
                {"all_store", "store my src into slot rank() of every rank's dst"}};
  sample::Options opt = sample::parse(argc, argv, "point_to_point: loads and stores between peers", spec);
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%-12s %12s %8s %12s %12s\n", "kernel", "elements", "ranks", "time [ms]", "GB/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    const iris::DeviceContext ctx = rank.device_context();
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 1024);
      const int32_t count = static_cast<int32_t>(n);
      const std::size_t all = n * static_cast<std::size_t>(world);
      float* src = rank.allocate<float>(n);
      float* dst = rank.allocate<float>(all);  // n elements for the single-peer kernels
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
      sample::to_device(src, values.data(), n);

      for (const std::string& mode : opt.modes) {
        std::function<void()> run;
        std::size_t out = n;  // elements of dst the kernel writes
        int from_rank = 0;    // single-peer kernels: whose src ends up in my dst
        if (mode == "load_peer") {
          run = [&] { iris_kernels::load_peer<>::launch({blocks}, ctx, src, dst, count, next); };
          from_rank = next;
        } else if (mode == "store_peer") {
          run = [&] { iris_kernels::store_peer<>::launch({blocks}, ctx, src, dst, count, next); };
          from_rank = prev;
        } else if (mode == "get") {
          run = [&] { iris_kernels::get<>::launch({blocks}, ctx, src, dst, count, next); };
          from_rank = next;
        } else if (mode == "put") {
          run = [&] { iris_kernels::put<>::launch({blocks}, ctx, src, dst, count, next); };
          from_rank = prev;
        } else if (mode == "all_load") {
          run = [&] { iris_kernels::all_load<>::launch({blocks}, ctx, src, dst, count); };
          out = all;
        } else {  // all_store
          run = [&] { iris_kernels::all_store<>::launch({blocks}, ctx, src, dst, count); };
          out = all;
        }
        if (opt.validate) {
          sample::fill(dst, sample::poison<float>(), all);
          rank.barrier();  // every src written, every dst poisoned
          run();
          rank.barrier();  // every kernel done, also those that wrote my dst
          const std::vector<float> got = sample::read(dst, all);
          sample::Checker check{me};
          for (std::size_t j = 0; j < all; ++j) {
            const std::size_t slot = j / (n ? n : 1), i = j % (n ? n : 1);
            if (out == all) check.expect("dst", j, got[j], sample::value_of(static_cast<int>(slot), i));
            else if (j < n) check.expect("dst", j, got[j], sample::value_of(from_rank, i));
            else if (!std::isnan(got[j])) check.report("dst past the message (written)", j, got[j], NAN);
          }
          errors += check.errors;
        }
        if (opt.bench) {
          double t = sample::median_seconds(rank, opt.repeats, run);
          // Bytes that arrive in each rank's dst (all_*: including its own slot).
          double bytes = static_cast<double>(out) * sizeof(float);
          if (me == 0)
            std::printf("%-12s %12zu %8d %12.3f %12.3f\n", mode.c_str(), n, world, t * 1e3, bytes / t / 1e9);
        }
      }
      rank.free(dst);
      rank.free(src);
    }
  });
  return sample::report_modes("point_to_point", opt, leader, errors.load());
}
