// collectives: the kernels of collectives.iris on n elements per rank, each
// checked against the same collective computed on the host (sums in double):
//
//   all_gather                block p of every rank's output = rank p's input
//   reduce_scatter            rank r's out = sum over ranks of block r of their inputs
//   all_to_all                block q of rank p's input -> block p of rank q's output
//   broadcast                 every rank copies root's buffer (validated for every root)
//   all_reduce_one_shot       every rank reads every peer's input and sums
//   all_reduce_one_shot_bf16  the same on bf16 data, accumulated in f32
//   all_reduce_two_shot       reduce-scatter into scratch, host barrier, all-gather
//   all_reduce_atomic         remote atomic_add into every rank's (zeroed) output
//
// f32 results must be within a relative 1e-6 of the double sum; bf16 results
// within one bf16 step (1/128 relative) of the double sum rounded to bf16.
// Outputs are poisoned (NaN) before each validated run, except all_reduce_atomic's,
// which the kernel adds into: it is zeroed. Every kernel is followed by a host
// barrier before the check. The collectives that the library has (all f32 ones
// but the atomic all_reduce) are validated a second time through iris::ccl
// (iris/ccl.hpp) with the same algorithm (all_reduce_two_shot: the library's
// one-kernel two-shot), which needs no host barrier before the check: its
// kernels end only once every rank has done its part.
//
// --bench prints the algorithm and bus bandwidth as nccl-tests defines them
// (doc/PERFORMANCE.md there): algbw = S / t, S the collective's size in bytes
// (all_reduce, broadcast: one rank's buffer; all_gather, reduce_scatter,
// all_to_all: the whole buffer of world * n elements), and busbw = algbw * factor,
// with factor 2 (w - 1) / w for all_reduce, (w - 1) / w for all_gather,
// reduce_scatter and all_to_all, 1 for broadcast.
#include "collectives.iris.hpp"
#include "sample.hpp"

#include <iris/ccl.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.modes = {{"all_gather", "block p of every rank's output is rank p's input"},
                {"reduce_scatter", "rank r gets the sum of block r of every rank's input"},
                {"all_to_all", "block q of rank p's input becomes block p of rank q's output"},
                {"broadcast", "every rank copies the root's buffer (every root in turn)"},
                {"all_reduce_one_shot", "sum of every rank's input, one kernel (f32)"},
                {"all_reduce_one_shot_bf16", "the same on bf16 data, accumulated in f32"},
                {"all_reduce_two_shot", "reduce-scatter + all-gather kernels (f32)"},
                {"all_reduce_atomic", "remote atomic_add into every rank's output (f32)"}};
  sample::Options opt =
      sample::parse(argc, argv, "collectives: all_gather, reduce_scatter, all_to_all, broadcast, all_reduce", spec);
  std::atomic<std::size_t> errors{0};
  if (opt.bench)
    std::printf("%-26s %12s %8s %12s %14s %14s\n", "collective", "elements", "ranks", "time [ms]", "algbw [GB/s]",
                "busbw [GB/s]");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const double w = world;
    const iris::DeviceContext ctx = rank.device_context();
    iris::Workspace ws(rank);  // iris::ccl's (collective)
    // The library's call with `algorithm` forced, on the sample's tile.
    const auto forced = [](iris::ccl::Algorithm algorithm) {
      iris::ccl::Config config;
      config.algorithm = algorithm;
      config.block = 1024;
      return config;
    };
    for (std::size_t n : opt.sizes) {
      const int blocks = sample::blocks_for(n, 1024);
      const int32_t count = static_cast<int32_t>(n);
      const std::size_t all = n * static_cast<std::size_t>(world);
      float* input = rank.allocate<float>(all);   // inputs (world * n for reduce_scatter, all_to_all)
      float* output = rank.allocate<float>(all);  // outputs; the two-shot scratch
      float* output2 = rank.allocate<float>(n);   // the two-shot output
      iris::bfloat16* input16 = rank.allocate<iris::bfloat16>(n);
      iris::bfloat16* output16 = rank.allocate<iris::bfloat16>(n);

      // The inputs: element j of rank r is value_of(r, j), in f32 and in bf16.
      std::vector<float> values(all);
      for (std::size_t j = 0; j < all; ++j) values[j] = sample::value_of(me, j);
      sample::to_device(input, values.data(), all);
      std::vector<iris::bfloat16> values16(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n));
      sample::to_device(input16, values16.data(), n);
      // The host's all_reduce, in double: sum over ranks of element i.
      auto sum_of = [&](std::size_t i) {
        double s = 0;
        for (int r = 0; r < world; ++r) s += sample::value_of(r, i);
        return s;
      };

      for (const std::string& mode : opt.modes) {
        sample::Checker check{me};
        std::function<void()> run;
        std::function<void()> library;  // the same collective through iris::ccl, if it has it
        int root = 0;  // broadcast's, which its validation walks (run and library outlive the mode's block)
        double bytes = static_cast<double>(n) * sizeof(float), factor = 2 * (w - 1) / w;  // all_reduce
        // One validated run: outputs poisoned by `prepare`, inputs and outputs of
        // every rank ready before the kernel, every rank's kernel done before the check.
        // With the library, a second run relies on its call alone for the last part:
        // no host barrier between it and the check.
        auto validated = [&](const std::function<void()>& prepare, const std::function<void()>& verify) {
          prepare();
          rank.barrier();
          run();
          rank.barrier();
          verify();
          if (!library) return;
          prepare();
          rank.barrier();
          library();
          verify();
        };
        auto check_f32 = [&](const char* what, const float* out, std::size_t count_out,
                             const std::function<double(std::size_t)>& want) {
          const std::vector<float> got = sample::read(out, count_out);
          for (std::size_t i = 0; i < count_out; ++i) {
            const double x = want(i);
            check.near(what, i, got[i], x, 1e-6 * std::fabs(x));
          }
        };

        if (mode == "all_gather") {
          run = [&] { iris_kernels::all_gather_f32<>::launch({blocks}, ctx, input, output, count); };
          library = [&] { iris::ccl::all_gather(ws, input, output, all, {}, forced(iris::ccl::Algorithm::push)); };
          if (opt.validate)
            validated([&] { sample::fill(output, sample::poison<float>(), all); },
                      [&] {
                        const std::vector<float> got = sample::read(output, all);
                        for (std::size_t j = 0; j < all; ++j)
                          check.expect("output", j, got[j], sample::value_of(static_cast<int>(j / n), j % n));
                      });
          bytes = static_cast<double>(all) * sizeof(float);
          factor = (w - 1) / w;
        } else if (mode == "reduce_scatter") {
          run = [&] { iris_kernels::reduce_scatter_f32<>::launch({blocks}, ctx, input, output, count); };
          library = [&] {
            iris::ccl::reduce_scatter(ws, input, output, all, iris::ccl::Op::sum, {},
                                      forced(iris::ccl::Algorithm::one_shot));
          };
          if (opt.validate)
            validated([&] { sample::fill(output, sample::poison<float>(), n); },
                      [&] {
                        check_f32("out", output, n, [&](std::size_t i) {
                          double s = 0;
                          for (int r = 0; r < world; ++r) s += sample::value_of(r, static_cast<std::size_t>(me) * n + i);
                          return s;
                        });
                      });
          bytes = static_cast<double>(all) * sizeof(float);
          factor = (w - 1) / w;
        } else if (mode == "all_to_all") {
          run = [&] { iris_kernels::all_to_all_f32<>::launch({blocks}, ctx, input, output, count); };
          library = [&] { iris::ccl::all_to_all(ws, input, output, all, {}, forced(iris::ccl::Algorithm::push)); };
          if (opt.validate)
            validated([&] { sample::fill(output, sample::poison<float>(), all); },
                      [&] {
                        const std::vector<float> got = sample::read(output, all);
                        for (std::size_t j = 0; j < all; ++j) {
                          const int p = static_cast<int>(j / n);  // block p came from rank p
                          check.expect("output", j, got[j],
                                       sample::value_of(p, static_cast<std::size_t>(me) * n + j % n));
                        }
                      });
          bytes = static_cast<double>(all) * sizeof(float);
          factor = (w - 1) / w;
        } else if (mode == "broadcast") {
          run = [&] { iris_kernels::broadcast_f32<>::launch({blocks}, ctx, output, count, root); };
          library = [&] { iris::ccl::broadcast(ws, output, n, root, {}, forced(iris::ccl::Algorithm::one_shot)); };
          if (opt.validate) {
            for (root = 0; root < world; ++root)
              validated(
                  [&] {
                    if (me == root) {
                      std::vector<float> v(n);
                      for (std::size_t i = 0; i < n; ++i) v[i] = sample::value_of(root, i);
                      sample::to_device(output, v.data(), n);
                    } else {
                      sample::fill(output, sample::poison<float>(), n);
                    }
                  },
                  [&] {
                    const std::vector<float> got = sample::read(output, n);
                    for (std::size_t i = 0; i < n; ++i) check.expect("buffer", i, got[i], sample::value_of(root, i));
                  });
            root = 0;
          }
          factor = 1;
        } else if (mode == "all_reduce_one_shot") {
          run = [&] { iris_kernels::all_reduce_one_shot_f32<>::launch({blocks}, ctx, input, output, count); };
          library = [&] {
            iris::ccl::all_reduce(ws, input, output, n, iris::ccl::Op::sum, {}, forced(iris::ccl::Algorithm::one_shot));
          };
          if (opt.validate)
            validated([&] { sample::fill(output, sample::poison<float>(), n); },
                      [&] { check_f32("output", output, n, sum_of); });
        } else if (mode == "all_reduce_one_shot_bf16") {
          run = [&] { iris_kernels::all_reduce_one_shot_bf16<>::launch({blocks}, ctx, input16, output16, count); };
          if (opt.validate)
            validated([&] { sample::fill(output16, sample::poison<iris::bfloat16>(), n); },
                      [&] {
                        const std::vector<iris::bfloat16> got = sample::read(output16, n);
                        for (std::size_t i = 0; i < n; ++i) {
                          double s = 0;  // the bf16 inputs, summed in double
                          for (int r = 0; r < world; ++r) s += static_cast<float>(iris::bfloat16(sample::value_of(r, i)));
                          const double want = static_cast<float>(iris::bfloat16(static_cast<float>(s)));
                          check.near("output", i, static_cast<float>(got[i]), want, std::fabs(want) / 128);
                        }
                      });
          bytes = static_cast<double>(n) * sizeof(iris::bfloat16);
        } else if (mode == "all_reduce_two_shot") {
          // Rank r reduces chunk r (chunk = ceil(n / world) elements), then every
          // rank gathers every chunk; the host barrier lets the scratch fill first.
          const std::size_t chunk = std::max<std::size_t>(1, (n + static_cast<std::size_t>(world) - 1) / static_cast<std::size_t>(world));
          const int chunk_blocks = sample::blocks_for(chunk, 1024);
          run = [&, chunk, chunk_blocks] {
            iris_kernels::two_shot_reduce_f32<>::launch({chunk_blocks}, ctx, input, output, count,
                                                        static_cast<int32_t>(chunk));
            rank.barrier();
            iris_kernels::two_shot_gather_f32<>::launch({chunk_blocks}, ctx, output, output2, count,
                                                        static_cast<int32_t>(chunk));
          };
          library = [&] {
            iris::ccl::all_reduce(ws, input, output2, n, iris::ccl::Op::sum, {}, forced(iris::ccl::Algorithm::two_shot));
          };
          if (opt.validate)
            validated(
                [&] {
                  sample::fill(output, sample::poison<float>(), n);
                  sample::fill(output2, sample::poison<float>(), n);
                },
                [&] { check_f32("output", output2, n, sum_of); });
        } else {  // all_reduce_atomic
          run = [&] { iris_kernels::all_reduce_atomic_f32<>::launch({blocks}, ctx, input, output, count); };
          if (opt.validate)
            validated([&] { sample::fill(output, 0.0f, n); }, [&] { check_f32("output", output, n, sum_of); });
          // --bench adds into the output again and again (only the time counts).
          sample::fill(output, 0.0f, n);
        }
        errors += check.errors;
        if (opt.bench) {
          double t = sample::median_seconds(rank, opt.repeats, run);
          if (me == 0)
            std::printf("%-26s %12zu %8d %12.3f %14.3f %14.3f\n", mode.c_str(), n, world, t * 1e3, bytes / t / 1e9,
                        bytes / t / 1e9 * factor);
        }
      }
      rank.free(output16);
      rank.free(input16);
      rank.free(output2);
      rank.free(output);
      rank.free(input);
    }
  });
  return sample::report_modes("collectives", opt, leader, errors.load());
}
