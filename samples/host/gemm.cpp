// gemm: C = A × B on row-major bf16 matrices, accumulated in f32 (gemm.iris):
// A is M×K, B is K×N, C is M×N, with leading dimensions lda, ldb, ldc.
//
//   tiled       kernel gemm: one program instance per tile of C, grid
//               ceil(M/BM) * ceil(N/BN) on axis 0
//   persistent  kernel gemm_persistent: min(tiles, --programs) instances (by
//               default one per multiprocessor, Rank::multiprocessor_count()),
//               each walking the tiles t = program_id(0), + num_programs(0), ...
//   autotuned   kernel gemm at the tiles of kTunedTiles that iris::autotune
//               (<iris/autotune.hpp>) finds fastest at the shape's first call
//               (it times each; rank 0's choice for every rank)
//
// Tiles: on a GPU BM×BN×BK = 128×256×64, the kernels' defaults (the fastest on
// an H200's wgmma); on the CPU 64×64×32, so that the test shapes span several
// tiles (and the emulation stays quick).
//
// Shapes: --shape MxNxK[+P][,...]; +P pads the rows, lda = K + P, ldb = N + 2P,
// ldc = N + 3P (three different leading dimensions, so that a kernel that uses
// the wrong one, or the row length instead, fails). --size L stands for LxLxL.
//
// Every rank fills A and B with its own values (a hash of rank, matrix, row and
// column, in [-1, 1), rounded to bf16), the padding of A and B with NaN (a
// kernel that reads it makes NaNs), and poisons all of C (NaN); after the run
// every element of C must be near the host's reference and the padding of C
// must still hold the poison.
//
// Tolerance. The reference is computed in double from the same bf16 inputs:
// ref = sum_k a_ik b_kj, S = sum_k |a_ik b_kj| (exact products, double sums;
// their own error is negligible here). The kernel's products of two bf16 values
// are exact in f32 (8 + 8 significant bits <= 24); summing K of them in f32, in
// any order, errs by at most about K u S, with u = 2^-24 when every addition
// rounds to nearest; we take u = 2^-23, since tensor cores align and normalise
// by truncation, whose unit roundoff is twice as large. Call that E = K 2^-23 S.
// The f32 accumulator acc is then rounded to bf16 once, to nearest (8 significant
// bits, unit roundoff 2^-8): |c - acc| <= 2^-8 |acc| <= 2^-8 (|ref| + E). So
//   |c - ref| <= 2^-8 |ref| + (1 + 2^-8) E + 2^-126,
// the last term an absolute slack for ref = 0 (S = 0: c must be 0, up to a
// result flushed to zero). With values in [-1, 1) and K in the hundreds, E is
// around 1e-5 |S|, far below the bf16 rounding, so the check is essentially
// "within half a bf16 step of the exact result": a missing product, a wrong row
// or column, or a wrong leading dimension puts almost every element affected
// outside it (checked with planted bugs of each kind).
//
// --bench prints the median time of --repeats runs and TFLOP/s (2 M N K flops
// per run) per rank and mode; every rank computes its own product.
#include "gemm.iris.hpp"
#include "gemm_common.hpp"
#include "sample.hpp"

#include <iris/autotune.hpp>

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

const char* const kDefaultShapes = "1x1x1,100x70x45+3,70x90x7,600x130x96+1";

// The tiles of the tiled and persistent modes, and those the autotuned mode
// chooses from (see the top of this file).
#if IRIS_GPU
using Tiles = iris::Tiles<128, 256, 64>;
using TunedTiles = iris::ConfigList<iris::Tiles<128, 256, 64>, iris::Tiles<128, 128, 64>, iris::Tiles<64, 64, 32>>;
#else
using Tiles = iris::Tiles<64, 64, 32>;
using TunedTiles = iris::ConfigList<iris::Tiles<64, 64, 32>, iris::Tiles<32, 64, 32>>;
#endif

// Tiles of BM x BN over an M x N matrix.
int tiles_of(std::int64_t M, std::int64_t N, int BM, int BN) {
  return sample::blocks_for(static_cast<std::size_t>(M), BM) * sample::blocks_for(static_cast<std::size_t>(N), BN);
}

const char* const kWhat =
    "gemm: C = A x B on row-major bf16 matrices, accumulated in f32 (samples/gemm.iris)\n"
    "\n"
    "SHAPES (default 1x1x1,100x70x45+3,70x90x7,600x130x96+1):\n"
    "  --shape LIST   MxNxK[+P], comma-separated: A is MxK, B is KxN, C is MxN; +P pads\n"
    "                 the rows: lda = K + P, ldb = N + 2P, ldc = N + 3P (default P = 0)\n"
    "\n"
    "VALIDATION: every element of C within 2^-8 |ref| + (1 + 2^-8) E + 2^-126 of ref, the\n"
    "  product in double of the same bf16 inputs, where E = K 2^-23 sum_k |a_ik b_kj| bounds\n"
    "  the f32 accumulation (2^-23: truncating hardware) and 2^-8 is the final rounding to\n"
    "  bf16; the padding of C must keep its poison. --bench: TFLOP/s per rank (2 M N K / t).";

using gemm_common::Shape;

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::vector<char*> rest = gemm_common::take_shapes(argc, argv, kDefaultShapes, shapes);

  sample::Spec spec = gemm_common::gemm_spec();
  spec.modes = {{"tiled", "kernel gemm: one program instance per tile of C"},
                {"persistent", "kernel gemm_persistent: min(tiles, --programs) instances walk the tiles"},
                {"autotuned", "kernel gemm at the tiles iris::autotune times fastest at the shape's first call"}};
  spec.options = {{"--programs", "N", "instances of gemm_persistent; 0: multiprocessor_count()", 0}};
  sample::Options opt = sample::parse(static_cast<int>(rest.size()), rest.data(), kWhat, spec);
  const long long programs_option = opt.value("--programs");

  std::atomic<std::size_t> errors{0};
  if (opt.bench)
    std::printf("%-12s %20s %8s %8s %12s %10s\n", "kernel", "shape", "ranks", "grid", "time [ms]", "TFLOP/s");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const iris::DeviceContext ctx = rank.device_context();
    const iris::bfloat16 poison = sample::poison<iris::bfloat16>();
    const long long programs = programs_option > 0 ? programs_option : rank.multiprocessor_count();
    for (const Shape& s : shapes) {
      const std::int64_t M = s.M, N = s.N, K = s.K, lda = s.lda(), ldb = s.ldb(), ldc = s.ldc();
      const auto size_a = static_cast<std::size_t>(M * lda), size_b = static_cast<std::size_t>(K * ldb),
                 size_c = static_cast<std::size_t>(M * ldc);
      iris::bfloat16* a = rank.allocate<iris::bfloat16>(size_a);
      iris::bfloat16* b = rank.allocate<iris::bfloat16>(size_b);
      iris::bfloat16* c = rank.allocate<iris::bfloat16>(size_c);

      // The inputs, NaN in the padding.
      std::vector<iris::bfloat16> host_a(size_a, poison), host_b(size_b, poison);
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t k = 0; k < K; ++k) host_a[static_cast<std::size_t>(i * lda + k)] = gemm_common::element(me, 0, i, k);
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t j = 0; j < N; ++j) host_b[static_cast<std::size_t>(k * ldb + j)] = gemm_common::element(me, 1, k, j);
      sample::to_device(a, host_a.data(), size_a);
      sample::to_device(b, host_b.data(), size_b);

      // The reference and the bound of each element (see the top of this file).
      std::vector<double> ref, bound;
      if (opt.validate) {
        std::vector<double> abs_sum;
        gemm_common::reference(host_a.data(), lda, host_b.data(), ldb, M, N, K, ref, abs_sum);
        bound.resize(ref.size());
        for (std::size_t e = 0; e < ref.size(); ++e) bound[e] = gemm_common::bound(ref[e], abs_sum[e], static_cast<double>(K));
      }

      const int tiles = tiles_of(M, N, Tiles::m, Tiles::n);
      const int32_t m32 = static_cast<int32_t>(M), n32 = static_cast<int32_t>(N), k32 = static_cast<int32_t>(K);
      const int32_t lda32 = static_cast<int32_t>(lda), ldb32 = static_cast<int32_t>(ldb), ldc32 = static_cast<int32_t>(ldc);
      for (const std::string& mode : opt.modes) {
        int grid = tiles;
        std::function<void()> run;
        if (mode == "tiled") {
          run = [&] {
            iris_kernels::gemm<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a, b, c, m32, n32, k32, lda32, ldb32,
                                                                     ldc32);
          };
        } else if (mode == "persistent") {
          grid = static_cast<int>(std::min<long long>(tiles, programs));
          run = [&] {
            iris_kernels::gemm_persistent<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a, b, c, m32, n32, k32,
                                                                                lda32, ldb32, ldc32);
          };
        } else {  // autotuned: the key names all the best tiles depend on
          // (run outlives this block: it keeps its own copy of the key.)
          run = [&, key = "samples/gemm " + s.text() + " on " + std::to_string(world) + " ranks"] {
            iris::autotune(rank, key, TunedTiles{}, [&](auto tiles) {
              using S = decltype(tiles);
              grid = tiles_of(M, N, S::m, S::n);  // (the last launch's: the chosen tiles')
              iris_kernels::gemm<S::m, S::n, S::k>::launch({grid}, ctx, a, b, c, m32, n32, k32, lda32, ldb32, ldc32);
            });
          };
        }
        if (opt.validate) {
          sample::fill(c, poison, size_c);
          rank.barrier();
          run();
          rank.barrier();
          const std::vector<iris::bfloat16> got = sample::read(c, size_c);
          std::size_t wrong = 0;
          auto report = [&](std::int64_t i, std::int64_t j, double value, const char* expected) {
            if (wrong++ < 5)
              std::fprintf(stderr, "rank %d: %s %s: C[%" PRId64 "][%" PRId64 "] = %.9g, expected %s\n", me,
                           mode.c_str(), s.text().c_str(), i, j, value, expected);
          };
          for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
              const double value = static_cast<float>(got[static_cast<std::size_t>(i * ldc + j)]);
              const std::size_t e = static_cast<std::size_t>(i * N + j);
              if (std::fabs(value - ref[e]) <= bound[e]) continue;  // false for NaN: poison fails
              char expected[96];
              std::snprintf(expected, sizeof expected, "%.9g +- %.3g", ref[e], bound[e]);
              report(i, j, value, expected);
            }
            for (std::int64_t j = N; j < ldc; ++j)  // the padding: never written
              if (gemm_common::bits_of(got[static_cast<std::size_t>(i * ldc + j)]) != gemm_common::bits_of(poison))
                report(i, j, static_cast<float>(got[static_cast<std::size_t>(i * ldc + j)]),
                       "the poison (padding past column N)");
          }
          errors += wrong;
        }
        if (opt.bench) {
          const double t = sample::median_seconds(rank, opt.repeats, run);
          if (me == 0)
            std::printf("%-12s %20s %8d %8d %12.3f %10.4g\n", mode.c_str(), s.text().c_str(), world, grid, t * 1e3,
                        2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) / t / 1e12);
        }
      }
      rank.free(c);
      rank.free(b);
      rank.free(a);
    }
  });
  return sample::report_modes("gemm", opt, leader, errors.load());
}
