// message_passing: rank r sends n floats to rank (r + 1) % world through its
// symmetric buffer and a flag per block, for --rounds messages in a row; each
// receiver checks every element of every message against the host's values.
#include "message_passing.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

int main(int argc, char** argv) {
  sample::Options opt = sample::parse(argc, argv, "message_passing: payload + release flag to the next rank");
  const int rounds = 4;
  std::atomic<std::size_t> errors{0};
  if (opt.bench) std::printf("%12s %8s %12s %12s\n", "elements", "ranks", "time [ms]", "GB/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 1024);
      float* src = rank.allocate<float>(n);
      float* buffer = rank.allocate<float>(n);
      int32_t* flags = rank.allocate<int32_t>(static_cast<std::size_t>(blocks));
      float* out = rank.allocate<float>(n);
      sample::fill(flags, int32_t{0}, static_cast<std::size_t>(blocks));
      int round = 0;
      auto message = [&] {
        ++round;
        iris::DeviceContext ctx = rank.device_context();
        iris_kernels::send<>::launch({blocks}, ctx, src, buffer, flags, static_cast<int32_t>(n), next, round);
        iris_kernels::receive<>::launch({blocks}, ctx, buffer, flags, out, static_cast<int32_t>(n), round);
        rank.barrier();  // the buffer is reused by the next message
      };
      if (opt.validate) {
        sample::Checker check{me};
        for (int k = 0; k < rounds; ++k) {
          std::vector<float> values(n);
          for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i) + static_cast<float>(k);
          sample::to_device(src, values.data(), n);
          sample::fill(out, 0.0f, n);
          rank.barrier();
          message();
          const std::vector<float> got = sample::read(out, n);
          for (std::size_t i = 0; i < n; ++i)
            check.expect("out", i, got[i], sample::value_of(prev, i) + static_cast<float>(k));
        }
        errors += check.errors;
      }
      if (opt.bench) {
        double t = sample::median_seconds(rank, opt.repeats, message);
        if (me == 0) std::printf("%12zu %8d %12.3f %12.3f\n", n, world, t * 1e3, n * sizeof(float) / t / 1e9);
      }
      rank.free(out);
      rank.free(flags);
      rank.free(buffer);
      rank.free(src);
    }
  });
  if (errors) {
    std::fprintf(stderr, "message_passing: FAILED with %zu wrong elements\n", errors.load());
    return 1;
  }
  if (opt.validate && leader)
    std::printf("message_passing: %d ranks, %d messages per size validated\n", opt.ranks, rounds);
  return 0;
}
