// gemm: C = A × B on row-major bf16 matrices, accumulated in f32 (gemm.iris):
// A is M×K, B is K×N, C is M×N, with leading dimensions lda, ldb, ldc.
//
//   tiled       kernel gemm: one program instance per 64×64 tile of C, grid
//               ceil(M/64) * ceil(N/64) on axis 0
//   persistent  kernel gemm_persistent: min(tiles, --programs) instances (by
//               default one per multiprocessor, Rank::multiprocessor_count()),
//               each walking the tiles t = program_id(0), + num_programs(0), ...
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
#include "sample.hpp"

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

const char* const kDefaultShapes = "1x1x1,100x70x45+3,70x90x7,600x130x96+1";

const char* const kWhat =
    "gemm: C = A x B on row-major bf16 matrices, accumulated in f32 (samples/gemm.iris)\n"
    "\n"
    "SHAPES (default 1x1x1,100x70x45+3,70x90x7,600x130x96+1):\n"
    "  --shape LIST   MxNxK[+P], comma-separated: A is MxK, B is KxN, C is MxN; +P pads\n"
    "                 the rows: lda = K + P, ldb = N + 2P, ldc = N + 3P (default P = 0)\n"
    "  --size LIST    square shapes: L stands for LxLxL (in command-line order with --shape)\n"
    "\n"
    "VALIDATION: every element of C within 2^-8 |ref| + (1 + 2^-8) E + 2^-126 of ref, the\n"
    "  product in double of the same bf16 inputs, where E = K 2^-23 sum_k |a_ik b_kj| bounds\n"
    "  the f32 accumulation (2^-23: truncating hardware) and 2^-8 is the final rounding to\n"
    "  bf16; the padding of C must keep its poison. --bench: TFLOP/s per rank (2 M N K / t).";

struct Shape {
  std::int64_t M = 0, N = 0, K = 0, pad = 0;
  std::int64_t lda() const { return K + pad; }
  std::int64_t ldb() const { return N + 2 * pad; }
  std::int64_t ldc() const { return N + 3 * pad; }
  std::string text() const {
    std::string t = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    return pad ? t + "+" + std::to_string(pad) : t;
  }
};

[[noreturn]] void bad_shape(const char* program, const std::string& text, const char* why) {
  std::fprintf(stderr, "%s: bad shape '%s': %s (MxNxK[+P], see --help)\n", program, text.c_str(), why);
  std::exit(2);
}

// A decimal number of text[pos..), advancing pos; -1 if there is none.
std::int64_t number_at(const std::string& text, std::size_t& pos) {
  std::int64_t v = 0;
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 12) v = v * 10 + (text[pos++] - '0');
  return pos == start ? -1 : v;
}

Shape parse_shape(const char* program, const std::string& text) {
  Shape s;
  std::size_t pos = 0;
  std::int64_t* fields[3] = {&s.M, &s.N, &s.K};
  for (int f = 0; f < 3; ++f) {
    if (f > 0 && (pos >= text.size() || text[pos++] != 'x')) bad_shape(program, text, "expected MxNxK");
    *fields[f] = number_at(text, pos);
    if (*fields[f] < 1) bad_shape(program, text, "M, N and K must be numbers of at least 1");
  }
  if (pos < text.size() && text[pos] == '+') {
    ++pos;
    s.pad = number_at(text, pos);
    if (s.pad < 0) bad_shape(program, text, "expected a number after +");
  }
  if (pos != text.size()) bad_shape(program, text, "trailing characters");
  // The kernels index with i32: the largest offset into each matrix must fit.
  constexpr std::int64_t kMax = INT32_MAX;
  if (s.ldc() > kMax || s.M * s.lda() > kMax || s.K * s.ldb() > kMax || s.M * s.ldc() > kMax)
    bad_shape(program, text, "a matrix has more than 2^31 - 1 elements");
  return s;
}

void add_shapes(const char* program, const std::string& list, bool square, std::vector<Shape>& shapes) {
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    if (square && item.find_first_not_of("0123456789") != std::string::npos)
      bad_shape(program, item, "--size takes side lengths L, for LxLxL");
    shapes.push_back(parse_shape(program, square ? item + "x" + item + "x" + item : item));
    start = comma + 1;
  }
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element (row, col) of matrix 0 (A) or 1 (B) of `rank`: in [-1, 1), rounded to bf16.
iris::bfloat16 element(int rank, int matrix, std::int64_t row, std::int64_t col) {
  const std::uint64_t h = mix(mix(mix(static_cast<std::uint64_t>(rank) * 2 + static_cast<std::uint64_t>(matrix)) ^
                                  static_cast<std::uint64_t>(row)) ^
                              static_cast<std::uint64_t>(col));
  return iris::bfloat16(static_cast<double>(h >> 11) * 0x1p-52 - 1.0);
}

std::uint16_t bits_of(iris::bfloat16 v) { return v.bits; }

}  // namespace

int main(int argc, char** argv) {
  // --shape and --size are this sample's: taken out before sample::parse sees the
  // rest (sample::Spec has integer options only, and --size means elements there).
  std::vector<Shape> shapes;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--shape" || arg == "--size") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value (see --help)\n", argv[0], arg.c_str());
        return 2;
      }
      add_shapes(argv[0], argv[++i], arg == "--size", shapes);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (shapes.empty()) add_shapes(argv[0], kDefaultShapes, false, shapes);

  sample::Spec spec;
  spec.modes = {{"tiled", "kernel gemm: one program instance per 64x64 tile of C"},
                {"persistent", "kernel gemm_persistent: min(tiles, --programs) instances walk the tiles"}};
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
        for (std::int64_t k = 0; k < K; ++k) host_a[static_cast<std::size_t>(i * lda + k)] = element(me, 0, i, k);
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t j = 0; j < N; ++j) host_b[static_cast<std::size_t>(k * ldb + j)] = element(me, 1, k, j);
      sample::to_device(a, host_a.data(), size_a);
      sample::to_device(b, host_b.data(), size_b);

      // The reference and the bound of each element (see the top of this file).
      std::vector<double> ref, bound;
      if (opt.validate) {
        std::vector<double> abs_sum(static_cast<std::size_t>(M * N), 0.0);
        ref.assign(static_cast<std::size_t>(M * N), 0.0);
        for (std::int64_t i = 0; i < M; ++i) {
          double* row = &ref[static_cast<std::size_t>(i * N)];
          double* abs_row = &abs_sum[static_cast<std::size_t>(i * N)];
          for (std::int64_t k = 0; k < K; ++k) {
            const double av = static_cast<float>(host_a[static_cast<std::size_t>(i * lda + k)]);
            const iris::bfloat16* b_row = &host_b[static_cast<std::size_t>(k * ldb)];
            for (std::int64_t j = 0; j < N; ++j) {
              const double p = av * static_cast<float>(b_row[j]);
              row[j] += p;
              abs_row[j] += std::fabs(p);
            }
          }
        }
        bound.resize(ref.size());
        for (std::size_t e = 0; e < ref.size(); ++e) {
          const double accumulation = static_cast<double>(K) * 0x1p-23 * abs_sum[e];
          bound[e] = 0x1p-8 * std::fabs(ref[e]) + (1 + 0x1p-8) * accumulation + 0x1p-126;
        }
      }

      const int tiles = sample::blocks_for(static_cast<std::size_t>(M), 64) * sample::blocks_for(static_cast<std::size_t>(N), 64);
      const int32_t m32 = static_cast<int32_t>(M), n32 = static_cast<int32_t>(N), k32 = static_cast<int32_t>(K);
      const int32_t lda32 = static_cast<int32_t>(lda), ldb32 = static_cast<int32_t>(ldb), ldc32 = static_cast<int32_t>(ldc);
      for (const std::string& mode : opt.modes) {
        int grid = tiles;
        std::function<void()> run;
        if (mode == "tiled") {
          run = [&] { iris_kernels::gemm::launch({grid}, ctx, a, b, c, m32, n32, k32, lda32, ldb32, ldc32); };
        } else {  // persistent
          grid = static_cast<int>(std::min<long long>(tiles, programs));
          run = [&] { iris_kernels::gemm_persistent::launch({grid}, ctx, a, b, c, m32, n32, k32, lda32, ldb32, ldc32); };
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
              if (bits_of(got[static_cast<std::size_t>(i * ldc + j)]) != bits_of(poison))
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
