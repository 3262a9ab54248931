// message_passing: rank r sends n floats to rank (r + 1) % world through its
// symmetric buffer and a flag per block: every rank sends and receives at once,
// around the ring.
//
//   ring (default)  4 messages, a host barrier after each; each receiver checks
//                   every element of every message against the host's values.
//   --stress K      K messages in a row with no host barrier in between (kernels
//                   stress_send / stress_receive): flow control by flags only. The
//                   payload of round k is stamped with k; the receiver checks the
//                   flag and every element of every round in the kernel and counts
//                   what was lost or torn; the host then checks the count, the
//                   flags and the last payload.
#include "message_passing.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <vector>

namespace {

// Element i of round k's stress payload, as stress_send computes it.
uint32_t stamp(int32_t round, std::size_t i) {
  return static_cast<uint32_t>(round) * 0x9E3779B1u + static_cast<uint32_t>(i);
}

}  // namespace

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.options.push_back({"--stress", "K", "send K messages in a row, no host barrier between them (0: ring mode)", 0});
  sample::Options opt =
      sample::parse(argc, argv, "message_passing: payload + release flag to the next rank", spec);
  const int rounds = 4;
  const long long stress = opt.value("--stress");
  std::atomic<std::size_t> errors{0};
  if (opt.bench) {
    if (stress > 0) std::printf("%12s %8s %10s %16s %12s\n", "elements", "ranks", "messages", "per message [ms]", "GB/s");
    else std::printf("%12s %8s %12s %12s\n", "elements", "ranks", "time [ms]", "GB/s");
  }
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 1024);
      const std::size_t nblocks = static_cast<std::size_t>(blocks);
      if (stress > 0) {
        // ---------------------------------------------------------------- stress
        uint32_t* buffer = rank.allocate<uint32_t>(n);
        int32_t* flags = rank.allocate<int32_t>(nblocks);
        int32_t* acks = rank.allocate<int32_t>(nblocks);
        int32_t* wrong = rank.allocate<int32_t>(1);
        sample::fill(buffer, sample::poison<uint32_t>(), n);
        sample::fill(flags, int32_t{0}, nblocks);
        sample::fill(acks, int32_t{0}, nblocks);
        sample::fill(wrong, int32_t{0}, 1);
        int32_t round = 0;
        // K messages in a row; rounds keep counting up, so flags need no reset.
        auto messages = [&] {
          const iris::DeviceContext ctx = rank.device_context();
          for (long long k = 0; k < stress; ++k) {
            ++round;
            iris_kernels::stress_send<>::launch({blocks}, ctx, buffer, flags, acks, static_cast<int32_t>(n), next, round);
            iris_kernels::stress_receive<>::launch({blocks}, ctx, buffer, flags, acks, wrong, static_cast<int32_t>(n),
                                                    prev, round);
          }
        };
        if (opt.validate) {
          rank.barrier();
          messages();
          rank.barrier();
          sample::Checker check{me};
          check.expect("lost or torn elements, counted by stress_receive", 0, sample::read(wrong, 1)[0], int32_t{0});
          const std::vector<int32_t> got_flags = sample::read(flags, nblocks), got_acks = sample::read(acks, nblocks);
          for (std::size_t b = 0; b < nblocks; ++b) {
            check.expect("flags", b, got_flags[b], round);
            check.expect("acks", b, got_acks[b], round);
          }
          const std::vector<uint32_t> got = sample::read(buffer, n);
          for (std::size_t i = 0; i < n; ++i) check.expect("buffer (last message)", i, got[i], stamp(round, i));
          errors += check.errors;
        }
        if (opt.bench) {
          double t = sample::median_seconds(rank, opt.repeats, messages);
          const double per_message = t / static_cast<double>(stress);
          if (me == 0)
            std::printf("%12zu %8d %10lld %16.4f %12.3f\n", n, world, stress, per_message * 1e3,
                        n * sizeof(uint32_t) / per_message / 1e9);
        }
        rank.free(wrong);
        rank.free(acks);
        rank.free(flags);
        rank.free(buffer);
        continue;
      }
      // ------------------------------------------------------------------ ring
      float* src = rank.allocate<float>(n);
      float* buffer = rank.allocate<float>(n);
      int32_t* flags = rank.allocate<int32_t>(nblocks);
      float* out = rank.allocate<float>(n);
      sample::fill(flags, int32_t{0}, nblocks);
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
          sample::fill(out, sample::poison<float>(), n);
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
  if (opt.validate && leader) {
    if (stress > 0)
      std::printf("message_passing: %d ranks, %lld messages in a row per size validated\n", opt.ranks, stress);
    else
      std::printf("message_passing: %d ranks, %d messages per size validated\n", opt.ranks, rounds);
  }
  return 0;
}
