// What the GEMM samples' host programs share (host/gemm.cpp, host/fused_gemm.cpp):
// the --shape / --size command line (MxNxK[+P], padded leading dimensions), the
// bf16 input values, and the double-precision reference with its error bound.
#pragma once

#include "sample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace gemm_common {

// A shape MxNxK[+P]: A is MxK, B is KxN, C is MxN; +P pads the rows: lda = K + P,
// ldb = N + 2P, ldc = N + 3P (three different leading dimensions, so that a
// kernel that uses the wrong one, or the row length instead, fails).
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

[[noreturn]] inline void bad_shape(const char* program, const std::string& text, const char* why) {
  std::fprintf(stderr, "%s: bad shape '%s': %s (MxNxK[+P], see --help)\n", program, text.c_str(), why);
  std::exit(2);
}

// A decimal number of text[pos..), advancing pos; -1 if there is none.
inline std::int64_t number_at(const std::string& text, std::size_t& pos) {
  std::int64_t v = 0;
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 12) v = v * 10 + (text[pos++] - '0');
  return pos == start ? -1 : v;
}

inline Shape parse_shape(const char* program, const std::string& text) {
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

inline void add_shapes(const char* program, const std::string& list, bool square, std::vector<Shape>& shapes) {
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    if (square && item.find_first_not_of("0123456789") != std::string::npos)
      bad_shape(program, item, "--size takes side lengths L, for LxLxL");
    shapes.push_back(parse_shape(program, square ? item + "x" + item + "x" + item : item));
    start = comma + 1;
  }
}

// --shape and --size are the GEMM samples' own: taken out of argv before
// sample::parse sees the rest (sample::Spec has integer options only, and --size
// means elements there). Returns the other arguments, argv[0] first; `shapes`
// gets the shapes in command-line order, or `defaults` if there are none.
inline std::vector<char*> take_shapes(int argc, char** argv, const char* defaults, std::vector<Shape>& shapes) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--shape" || arg == "--size") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value (see --help)\n", argv[0], arg.c_str());
        std::exit(2);
      }
      add_shapes(argv[0], argv[++i], arg == "--size", shapes);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (shapes.empty()) add_shapes(argv[0], defaults, false, shapes);
  return rest;
}

// The common options' help where the GEMM samples give them their own
// meaning: --size is square shapes (take_shapes), --bench prints TFLOP/s.
inline sample::Spec gemm_spec() {
  sample::Spec spec;
  spec.size_arg = "L[,L...]";
  spec.size_help = "square shapes: L stands for LxLxL (in command-line order with --shape)";
  spec.bench_help = "print a table of shape, time and TFLOP/s (median of --repeats)";
  return spec;
}

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element (row, col) of the matrix numbered `stream`: in [-1, 1), rounded to bf16.
inline iris::bfloat16 value(std::uint64_t stream, std::int64_t row, std::int64_t col) {
  const std::uint64_t h = mix(mix(mix(stream) ^ static_cast<std::uint64_t>(row)) ^ static_cast<std::uint64_t>(col));
  return iris::bfloat16(static_cast<double>(h >> 11) * 0x1p-52 - 1.0);
}

// Element (row, col) of matrix 0 (A) or 1 (B) of `rank` (gemm.cpp's inputs).
inline iris::bfloat16 element(int rank, int matrix, std::int64_t row, std::int64_t col) {
  return value(static_cast<std::uint64_t>(rank) * 2 + static_cast<std::uint64_t>(matrix), row, col);
}

inline std::uint16_t bits_of(iris::bfloat16 v) { return v.bits; }

// The reference product of row-major bf16 matrices, in double: ref = A × B and
// abs_sum = |A| × |B| (M×N, row length N), from A (MxK, lda) and B (KxN, ldb).
// The products are exact, the double sums' own error is negligible here.
inline void reference(const iris::bfloat16* a, std::int64_t lda, const iris::bfloat16* b, std::int64_t ldb,
                      std::int64_t M, std::int64_t N, std::int64_t K, std::vector<double>& ref,
                      std::vector<double>& abs_sum) {
  ref.assign(static_cast<std::size_t>(M * N), 0.0);
  abs_sum.assign(static_cast<std::size_t>(M * N), 0.0);
  for (std::int64_t i = 0; i < M; ++i) {
    double* row = &ref[static_cast<std::size_t>(i * N)];
    double* abs_row = &abs_sum[static_cast<std::size_t>(i * N)];
    for (std::int64_t k = 0; k < K; ++k) {
      const double av = static_cast<float>(a[static_cast<std::size_t>(i * lda + k)]);
      const iris::bfloat16* b_row = &b[static_cast<std::size_t>(k * ldb)];
      for (std::int64_t j = 0; j < N; ++j) {
        const double p = av * static_cast<float>(b_row[j]);
        row[j] += p;
        abs_row[j] += std::fabs(p);
      }
    }
  }
}

// The error bound of one element of C (host/gemm.cpp derives it): the f32
// accumulation errs by at most E = additions 2^-23 abs_sum (2^-23: truncating
// hardware; `additions` is the most f32 additions any product passes through,
// K for one accumulator), and a result rounded to bf16 once more by 2^-8 |acc|:
//   |c - ref| <= 2^-8 |ref| + (1 + 2^-8) E + 2^-126   (rounded to bf16)
//   |c - ref| <= E + 2^-126                           (kept in f32)
// the last term an absolute slack for ref = 0.
inline double bound(double ref, double abs_sum, double additions, bool to_bf16 = true) {
  const double accumulation = additions * 0x1p-23 * abs_sum;
  if (!to_bf16) return accumulation + 0x1p-126;
  return 0x1p-8 * std::fabs(ref) + (1 + 0x1p-8) * accumulation + 0x1p-126;
}

}  // namespace gemm_common
