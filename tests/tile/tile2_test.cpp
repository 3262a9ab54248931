// Unit tests of the tile library's 2-D tiles (iris/kernel.hpp): arange of a
// shape, expand_dims, broadcast_to from ranges, contiguous pointers and
// register tiles (of the default layout and of another one), 2-D pointer tiles
// built as an outer sum of offsets with 2-D masks (loads with `other`, masked
// stores, where, atomics), trans and reshape, reductions along each axis and
// whole, and dot for every element type it takes. As in tile_test.cpp, each
// kernel writes what it computed to memory and the host compares every
// element with values computed by plain loops: element (r, c) of a tile of
// shape (M, N) is stored at r * N + c.
//
// On a GPU (tile_unit_tests_gpu), where an instance is a block of kThreads =
// 256 threads: (8, 8) leaves threads idle, (64, 64) gives each thread 16
// elements in vectors of 4, and (4, 32) and (32, 8) are not square.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mirrored_layout.hpp"
#include "tile_target.hpp"

using iris::AtomicOp;
using iris::Program;
using iris::Scope;
using iris::Sem;
using tile_test::Buffer;
using tile_test::Mirrored;
using tile_test::run;

namespace {

constexpr int32_t kIntSentinel = 12345;
constexpr float kSentinel = -999.0f;

// ------------------------------------------------- creation and broadcast
// Region k of out (M * N elements each, stored through a 2-D contiguous
// pointer tile) holds shape result k; x holds M values, y N.
constexpr int kShapeResults = 12;
template <int M, int N>
struct Shapes {
  static IRIS_HD void run(const Program&, const int32_t* x, const int32_t* y, int32_t* out) {
    using namespace iris;
    const auto rows = arange<M>();
    const auto cols = arange<N>();
    int k = 0;
    auto put = [&](const auto& value) { store(add(out + k++ * M * N, arange<M, N>()), value); };
    put(arange<M, N>());
    // From ranges: (M, 1), (1, N) and the 1-D (N).
    put(broadcast_to<M, N>(expand_dims<1>(rows)));
    put(broadcast_to<M, N>(expand_dims<0>(cols)));
    put(broadcast_to<M, N>(cols));
    // From register tiles: (M, 1) and (1, N) made by expand_dims and loaded
    // as such, the 1-D (N), and a 1-D tile of another layout.
    put(broadcast_to<M, N>(expand_dims<1>(load(add(x, rows)))));
    put(broadcast_to<M, N>(expand_dims<0>(load(add(y, cols)))));
    put(broadcast_to<M, N>(load(add(x, arange<M, 1>()))));
    put(broadcast_to<M, N>(load(add(y, arange<1, N>()))));
    put(broadcast_to<M, N>(load(add(y, cols))));
    put(broadcast_to<M, N>(load(add(y, Range<int32_t, N, Mirrored<N>>{0}))));
    // From contiguous pointers: (M, 1) and (1, N), loaded after the broadcast.
    put(load(broadcast_to<M, N>(expand_dims<1>(add(x, rows)))));
    put(load(broadcast_to<M, N>(expand_dims<0>(add(y, cols)))));
  }
};

int32_t shape_result(int k, int r, int c, int n, Buffer<int32_t>& x, Buffer<int32_t>& y) {
  switch (k) {
    case 0: return r * n + c;
    case 1: return r;
    case 2:
    case 3: return c;
    case 4:
    case 6:
    case 10: return x[r];
    default: return y[c];
  }
}

template <int M, int N>
void check_shapes() {
  CAPTURE(M);
  CAPTURE(N);
  Buffer<int32_t> x(M), y(N), out(kShapeResults * M * N, kIntSentinel);
  for (int i = 0; i < M; ++i) x[i] = 1000 + 7 * i;
  for (int i = 0; i < N; ++i) y[i] = -500 - 3 * i;
  run<Shapes<M, N>>(1, x.data(), y.data(), out.data());
  for (int k = 0; k < kShapeResults; ++k)
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        CAPTURE(k);
        CAPTURE(r);
        CAPTURE(c);
        REQUIRE(out[k * M * N + r * N + c] == shape_result(k, r, c, N, x, y));
      }
}

// ------------------------------------------------- 2-D pointer tiles
// A window of M rows and N columns of a matrix with leading dimension ld:
// the offsets r * ld + c, an outer sum of the rows (M, 1) and the columns
// (1, N), and the mask r < m && c < n (a partial window), in layout L.
template <int M, int N, class L = iris::Blocked<M, N>>
IRIS_HD auto window_offsets(int ld) {
  using namespace iris;
  return add(broadcast_to<L>(mul(expand_dims<1>(arange<M>()), ld)), broadcast_to<L>(expand_dims<0>(arange<N>())));
}
template <int M, int N, class L = iris::Blocked<M, N>>
IRIS_HD auto window_mask(int m, int n) {
  using namespace iris;
  return logical_and(broadcast_to<L>(lt(expand_dims<1>(arange<M>()), m)),
                     broadcast_to<L>(lt(expand_dims<0>(arange<N>()), n)));
}

// dst (leading dimension ld) gets src + 0.5 under the mask; flat (M * N
// elements, twice) the loaded tile (-1 where the mask is off), then where's
// choice of it and 7.
template <int M, int N>
struct Pointers2D {
  static IRIS_HD void run(const Program&, const float* src, int ld, int m, int n, float* dst, float* flat) {
    using namespace iris;
    const auto offsets = window_offsets<M, N>(ld);
    const auto mask = window_mask<M, N>(m, n);
    const auto v = load(add(src, offsets), mask, -1.0f);
    store(add(dst, offsets), add(v, 0.5f), mask);
    store(add(flat, arange<M, N>()), v);
    store(add(flat + M * N, arange<M, N>()), where(mask, v, 7.0f));
  }
};

template <int M, int N>
void check_pointers_2d(int m, int n) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(m);
  CAPTURE(n);
  const int ld = N + 3;
  Buffer<float> src(M * ld), dst(M * ld, kSentinel), flat(2 * M * N, kSentinel);
  for (int i = 0; i < M * ld; ++i) src[i] = static_cast<float>(i) * 0.25f + 1.0f;
  run<Pointers2D<M, N>>(1, src.data(), ld, m, n, dst.data(), flat.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < ld; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      const bool on = r < m && c < n;
      REQUIRE(dst[r * ld + c] == (on ? src[r * ld + c] + 0.5f : kSentinel));
      if (c >= N) continue;
      REQUIRE(flat[r * N + c] == (on ? src[r * ld + c] : -1.0f));
      REQUIRE(flat[M * N + r * N + c] == (on ? src[r * ld + c] : 7.0f));
    }
}

// counts (leading dimension ld) += c + 1 under the mask; old gets the old
// values (0 where the mask is off).
template <int M, int N>
struct Atomics2D {
  static IRIS_HD void run(const Program&, int32_t* counts, int ld, int m, int n, int32_t* old) {
    using namespace iris;
    const auto value = add(broadcast_to<M, N>(expand_dims<0>(arange<N>())), 1);
    const auto mask = window_mask<M, N>(m, n);
    store(add(old, arange<M, N>()),
          atomic_rmw<AtomicOp::add, Sem::relaxed, Scope::gpu>(add(counts, window_offsets<M, N>(ld)), value, mask));
  }
};

template <int M, int N>
void check_atomics_2d(int m, int n) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(m);
  CAPTURE(n);
  const int ld = N + 5;
  Buffer<int32_t> counts(M * ld), old(M * N, kIntSentinel);
  auto initial = [](int i) { return 100 + 3 * i; };
  for (int i = 0; i < M * ld; ++i) counts[i] = initial(i);
  run<Atomics2D<M, N>>(1, counts.data(), ld, m, n, old.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < ld; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      const bool on = r < m && c < n;
      REQUIRE(counts[r * ld + c] == initial(r * ld + c) + (on ? c + 1 : 0));
      if (c < N) REQUIRE(old[r * N + c] == (on ? initial(r * ld + c) : 0));
    }
}

// ------------------------------------------------- trans and reshape
// Region k of out (M * N elements each) holds result k, stored flat through
// a contiguous pointer tile of the result's shape.
constexpr int kMoveResults = 7;
template <int M, int N>
struct Moves {
  static IRIS_HD void run(const Program&, const int32_t* x, int32_t* out) {
    using namespace iris;
    const auto v = load(add(x, arange<M, N>()));
    store(add(out, arange<N, M>()), trans(v));
    store(add(out + M * N, arange<N, M>()), trans(arange<M, N>()));
    store(add(out + 2 * M * N, arange<M, N>()), trans(trans(v)));
    store(add(out + 3 * M * N, arange<M * N>()), reshape<M * N>(v));
    store(add(out + 4 * M * N, arange<N, M>()), reshape<N, M>(v));
    store(add(out + 5 * M * N, arange<M, N>()), reshape<M, N>(reshape<M * N>(v)));
    store(add(out + 6 * M * N, arange<M * N>()), load(reshape<M * N>(add(x, arange<M, N>()))));
  }
};

template <int M, int N>
void check_moves() {
  CAPTURE(M);
  CAPTURE(N);
  Buffer<int32_t> x(M * N), out(kMoveResults * M * N, kIntSentinel);
  for (int i = 0; i < M * N; ++i) x[i] = (i * 37) % 201 - 100;
  run<Moves<M, N>>(1, x.data(), out.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      const int f = r * N + c, t = c * M + r;  // (r, c) in the tile and in its transpose
      REQUIRE(out[t] == x[f]);
      REQUIRE(out[M * N + t] == f);
      for (int k = 2; k < kMoveResults; ++k) {
        CAPTURE(k);
        REQUIRE(out[k * M * N + f] == x[f]);
      }
    }
}

// ------------------------------------------------- reductions
// out: sum, max and min along axis 1 (M each) and axis 0 (N each), in that
// order, then sum, max and min of the whole tile, then the row sums of
// arange<M, N>().
template <int M, int N, class T>
struct Reductions2D {
  static IRIS_HD void run(const Program&, const T* x, T* out) {
    using namespace iris;
    const auto rows = arange<M>();
    const auto cols = arange<N>();
    const auto v = load(add(x, arange<M, N>()));
    store(add(out, rows), sum<1>(v));
    store(add(out + M, cols), sum<0>(v));
    store(add(out + (M + N), rows), max<1>(v));
    store(add(out + (M + N) + M, cols), max<0>(v));
    store(add(out + 2 * (M + N), rows), min<1>(v));
    store(add(out + 2 * (M + N) + M, cols), min<0>(v));
    T* p = out + 3 * (M + N);
    store(p, sum(v));
    store(p + 1, max(v));
    store(p + 2, min(v));
    store(add(p + 3, rows), sum<1>(arange<M, N>()));
  }
};

template <int M, int N, class T>
void check_reductions_2d(T (*value)(int, int)) {
  CAPTURE(M);
  CAPTURE(N);
  const int size = 3 * (M + N) + 3 + M;
  Buffer<T> x(M * N), out(size, T{99});
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) x[r * N + c] = value(r, c);
  run<Reductions2D<M, N, T>>(1, x.data(), out.data());
  // Per row and per column: the sum, the largest and the smallest element.
  auto fold = [&](int count, auto at) {
    T s{}, hi = at(0), lo = at(0);
    for (int i = 0; i < count; ++i) {
      s += at(i);
      hi = std::max(hi, at(i));
      lo = std::min(lo, at(i));
    }
    return std::array<T, 3>{s, hi, lo};
  };
  for (int what = 0; what < 3; ++what) {
    CAPTURE(what);
    const int at = what * (M + N);
    for (int r = 0; r < M; ++r) CHECK(out[at + r] == fold(N, [&](int c) { return x[r * N + c]; })[what]);
    for (int c = 0; c < N; ++c) CHECK(out[at + M + c] == fold(M, [&](int r) { return x[r * N + c]; })[what]);
    CHECK(out[3 * (M + N) + what] == fold(M * N, [&](int f) { return x[f]; })[what]);
  }
  for (int r = 0; r < M; ++r) CHECK(out[3 * (M + N) + 3 + r] == static_cast<T>(r * N * N + N * (N - 1) / 2));
}

template <class T>
void check_reductions_2d_of_type() {
  // Exact in both types; the extremes of each row and column away from its
  // first element, of both signs.
  T (*value)(int, int) = [](int r, int c) { return static_cast<T>((r * 13 + c * 29 + r * c) % 61 - 30); };
  check_reductions_2d<8, 8, T>(value);
  check_reductions_2d<4, 32, T>(value);
  check_reductions_2d<32, 8, T>(value);
  check_reductions_2d<64, 64, T>(value);
}

// ------------------------------------------------- dot
// out = dot(a, b, acc), of shapes (M, K), (K, N) and (M, N).
template <class T, class R, int M, int K, int N>
struct Dot {
  static IRIS_HD void run(const Program&, const T* a, const T* b, const R* acc, R* out) {
    using namespace iris;
    const auto ta = load(add(a, arange<M, K>()));
    const auto tb = load(add(b, arange<K, N>()));
    const auto tc = load(add(acc, arange<M, N>()));
    store(add(out, arange<M, N>()), dot(ta, tb, tc));
  }
};

// Small integers, exact in every type and in any order of summation; int8
// uses most of its range, so that products and sums in 8 bits would overflow.
template <class T, class R, int M, int K, int N>
void check_dot() {
  CAPTURE(M);
  CAPTURE(K);
  CAPTURE(N);
  constexpr bool int8 = std::is_same_v<T, int8_t>;
  auto a_at = [](int r, int k) { return int8 ? (r * 37 + k * 11) % 255 - 127 : (r * 3 + k * 5) % 7 - 3; };
  auto b_at = [](int k, int c) { return int8 ? (k * 53 + c * 19) % 241 - 120 : (k * 2 + c * 3) % 5 - 2; };
  auto acc_at = [](int r, int c) { return static_cast<R>(int8 ? r * 1000 - c * 7 : (r - 2 * c) * 0.5f); };
  Buffer<T> a(M * K), b(K * N);
  Buffer<R> acc(M * N), out(M * N, R{99});
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k) a[r * K + k] = static_cast<T>(a_at(r, k));
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < N; ++c) b[k * N + c] = static_cast<T>(b_at(k, c));
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) acc[r * N + c] = acc_at(r, c);
  run<Dot<T, R, M, K, N>>(1, a.data(), b.data(), acc.data(), out.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      R expected = acc_at(r, c);
      for (int k = 0; k < K; ++k) expected += static_cast<R>(a_at(r, k) * b_at(k, c));
      REQUIRE(out[r * N + c] == expected);
    }
}

template <class T, class R>
void check_dot_of_type() {
  check_dot<T, R, 32, 16, 64>();
  check_dot<T, R, 64, 32, 64>();
  check_dot<T, R, 16, 16, 16>();
  check_dot<T, R, 8, 16, 8>();  // 64 results: threads idle on a GPU
  check_dot<T, R, 16, 64, 32>();
}

// ------------------------------------------------- dot's accumulator layout
// out = acc + 1 + a x b with the accumulator in DotLayout<T, M, N> (MmaAcc on
// an NVIDIA GPU for half and bfloat16 where the shape fits its warps: dot on
// tensor cores from sm_80 on; MfmaAcc on an AMD GPU where it fits its
// wavefronts; Blocked elsewhere), over Steps calls of dot, one
// per block of K columns of a (M, Steps * K, addressed as a window) and K rows
// of b (Steps * K, N). The accumulator is loaded, created and stored in its
// layout (arange<L>()); flat gets it again converted to the default layout
// where that exchange fits in shared memory.
template <class T, int M, int K, int N, int Steps>
struct DotInLayout {
  static IRIS_HD void run(const Program&, const T* a, const T* b, const float* acc, float* out, float* flat) {
    using namespace iris;
    using L = DotLayout<T, M, N>;
    auto c = add(load(add(acc, arange<L>())), add(zeros<float, L>(), full<float, L>(1.0f)));
    for (int s = 0; s < Steps; ++s) {
      const auto ta = load(add(a + s * K, window_offsets<M, K>(Steps * K)));
      const auto tb = load(add(b + s * K * N, arange<K, N>()));
      c = dot(ta, tb, c);
    }
    store(add(out, arange<L>()), c);
    if constexpr (M * N * sizeof(float) <= 16 * 1024) store(add(flat, arange<M, N>()), convert_layout<Blocked<M, N>>(c));
  }
};

template <class T, int M, int K, int N, int Steps>
void check_dot_in_layout() {
  CAPTURE(M);
  CAPTURE(K);
  CAPTURE(N);
  CAPTURE(Steps);
  constexpr int KS = K * Steps;
  constexpr bool flat_too = M * N * sizeof(float) <= 16 * 1024;
  auto a_at = [](int r, int k) { return (r * 3 + k * 5) % 7 - 3; };
  auto b_at = [](int k, int c) { return (k * 2 + c * 3) % 5 - 2; };
  auto acc_at = [](int r, int c) { return static_cast<float>(r - 2 * c) * 0.5f; };
  Buffer<T> a(M * KS), b(KS * N);
  Buffer<float> acc(M * N), out(M * N, kSentinel), flat(M * N, kSentinel);
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < KS; ++k) a[r * KS + k] = static_cast<T>(a_at(r, k));
  for (int k = 0; k < KS; ++k)
    for (int c = 0; c < N; ++c) b[k * N + c] = static_cast<T>(b_at(k, c));
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) acc[r * N + c] = acc_at(r, c);
  run<DotInLayout<T, M, K, N, Steps>>(1, a.data(), b.data(), acc.data(), out.data(), flat.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      float expected = acc_at(r, c) + 1.0f;
      for (int k = 0; k < KS; ++k) expected += static_cast<float>(a_at(r, k) * b_at(k, c));
      REQUIRE(out[r * N + c] == expected);
      if (flat_too) REQUIRE(flat[r * N + c] == expected);
    }
}

// Two products in a row, the first one's result (in its accumulator layout,
// converted to T) the second one's a: out = ((a x b) as T) x b2, of shapes
// (M, K), (K, J), (J, N).
template <class T, int M, int K, int J, int N>
struct DotChain {
  static IRIS_HD void run(const Program&, const T* a, const T* b, const T* b2, float* out) {
    using namespace iris;
    using L1 = DotLayout<T, M, J>;
    using L2 = DotLayout<T, M, N>;
    const auto p = as<T>(dot(load(add(a, arange<M, K>())), load(add(b, arange<K, J>())), zeros<float, L1>()));
    store(add(out, arange<L2>()), dot(p, load(add(b2, arange<J, N>())), zeros<float, L2>()));
  }
};

template <class T, int M, int K, int J, int N>
void check_dot_chain() {
  // |a x b| <= 3 * 2 * K = 96: exact in half and bfloat16.
  auto a_at = [](int r, int k) { return (r * 3 + k * 5) % 7 - 3; };
  auto b_at = [](int k, int c) { return (k * 2 + c * 3) % 5 - 2; };
  auto b2_at = [](int k, int c) { return (k * 5 + c) % 3 - 1; };
  Buffer<T> a(M * K), b(K * J), b2(J * N);
  Buffer<float> out(M * N, kSentinel);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<T>(a_at(i / K, i % K));
  for (int i = 0; i < K * J; ++i) b[i] = static_cast<T>(b_at(i / J, i % J));
  for (int i = 0; i < J * N; ++i) b2[i] = static_cast<T>(b2_at(i / N, i % N));
  run<DotChain<T, M, K, J, N>>(1, a.data(), b.data(), b2.data(), out.data());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      float expected = 0;
      for (int j = 0; j < J; ++j) {
        int p = 0;
        for (int k = 0; k < K; ++k) p += a_at(r, k) * b_at(k, j);
        expected += static_cast<float>(p * b2_at(j, c));
      }
      REQUIRE(out[r * N + c] == expected);
    }
}

template <class T>
void check_dot_in_layout_of_type() {
  check_dot_in_layout<T, 64, 32, 64, 3>();
  check_dot_in_layout<T, 128, 64, 128, 2>();  // 2 x 8 mma tiles per warp
  check_dot_in_layout<T, 64, 16, 128, 2>();
  check_dot_in_layout<T, 16, 16, 64, 4>();    // one warp row: (16, 8) per warp
  check_dot_in_layout<T, 32, 32, 32, 2>();    // one n-tile per warp
  check_dot_in_layout<T, 8, 16, 8, 2>();      // too small for the warps: Blocked everywhere
  check_dot_in_layout<T, 64, 8, 64, 2>();     // K not a multiple of 16: the generic path
  check_dot_chain<T, 64, 16, 32, 64>();
}

// ------------------------------------------------- dot from shared-memory stages
// out = a x b over a K loop of Steps blocks of K, pipelined as generated code
// does it: rings of Stages shared-memory tiles (SharedStages) that copy_async
// fills Stages - 2 blocks ahead, and dot reading the stages, which may still
// run (Hopper's wgmma) while the next copies and the next dot are issued.
// a has m valid rows
// of M and k valid columns, leading dimension lda; b k valid rows and n valid
// columns of N, leading dimension ldb. Masked-off elements are `other`, 0.
template <class T, int M, int K, int N, int Stages, int Steps, class Known, class KnownMask, class UniformRuns>
struct StagedDot {
  static_assert(Stages >= 3, "one stage in flight, one being read and one whose dot may still run");
  using AStages = iris::SharedStages<T, M, K, Stages>;
  using BStages = iris::SharedStages<T, K, N, Stages>;
  static constexpr std::size_t dynamic_shared_bytes = AStages::bytes + BStages::bytes;
  static IRIS_DEVICE void run(const Program&, const T* a, const T* b, float* out, int lda, int ldb, int m, int k,
                              int n) {
    using namespace iris;
    using L = DotLayout<T, M, N>;
    const AStages a_stages{dynamic_shared()};
    const BStages b_stages{a_stages.end()};
    // The pointers and masks in the layout generated code computes them in.
    using ALayout = CopyLayout<T, M, K>;
    using BLayout = CopyLayout<T, K, N>;
    auto issue = [&](int s) {
      copy_async(a_stages[s % Stages], add(a + s * K, window_offsets<M, K, ALayout>(lda)),
                 window_mask<M, K, ALayout>(m, k - s * K), T(0), Unchecked{}, Known{}, KnownMask{}, UniformRuns{});
      copy_async(b_stages[s % Stages], add(b + s * K * ldb, window_offsets<K, N, BLayout>(ldb)),
                 window_mask<K, N, BLayout>(k - s * K, n), T(0), Unchecked{}, Known{}, KnownMask{}, UniformRuns{});
    };
    constexpr int Lookahead = Stages - 2;
    for (int s = 0; s < Lookahead; ++s) {
      if (s < Steps) issue(s);
      commit_async();
    }
    auto c = zeros<float, L>();
    for (int i = 0; i < Steps; ++i) {
      wait_async<Lookahead - 1>();
      c = dot(a_stages[i % Stages], b_stages[i % Stages], c, Pipelined{});
      wait_dots<1>(c);
      if (i + Lookahead < Steps) issue(i + Lookahead);
      commit_async();
    }
    wait_dots<0>(c);
    wait_async<0>();
    store(add(out, arange<L>()), c);
  }
};

// Known and KnownMask: what copy_async is told of the pointers and the masks
// (the windows' rows are contiguous, and their masks hold on one run of each
// row, so every choice must give the same result). UniformRuns: that every
// run of 16 bytes is aligned and wholly in or out of the window, which only
// k, n, lda and ldb that are multiples of 16 bytes' elements make true.
template <class T, int M, int K, int N, int Stages, int Steps, class Known = iris::AnyPointers,
          class KnownMask = iris::AnyMask, class UniformRuns = std::false_type>
void check_staged_dot(int m, int k, int n, int lda, int ldb) {
  CAPTURE(M);
  CAPTURE(K);
  CAPTURE(N);
  CAPTURE(Stages);
  CAPTURE(k);
  CAPTURE(lda);
  auto a_at = [](int r, int kk) { return (r * 3 + kk * 5) % 7 - 3; };
  auto b_at = [](int kk, int c) { return (kk * 2 + c * 3) % 5 - 2; };
  // Elements outside the valid window hold a value that would show if read.
  Buffer<T> a(M * lda, T(50)), b(Steps * K * ldb, T(50));
  Buffer<float> out(M * N, kSentinel);
  for (int r = 0; r < m; ++r)
    for (int kk = 0; kk < k; ++kk) a[r * lda + kk] = static_cast<T>(a_at(r, kk));
  for (int kk = 0; kk < k; ++kk)
    for (int c = 0; c < n; ++c) b[kk * ldb + c] = static_cast<T>(b_at(kk, c));
  run<StagedDot<T, M, K, N, Stages, Steps, Known, KnownMask, UniformRuns>>(1, a.data(), b.data(), out.data(), lda, ldb,
                                                                          m, k, n);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      float expected = 0;
      if (r < m && c < n)
        for (int kk = 0; kk < k; ++kk) expected += static_cast<float>(a_at(r, kk) * b_at(kk, c));
      REQUIRE(out[r * N + c] == expected);
    }
}

template <class T>
void check_staged_dot_of_type() {
  check_staged_dot<T, 128, 32, 128, 4, 4>(128, 128, 128, 128, 128);  // the GEMM's tiles, aligned and whole
  check_staged_dot<T, 128, 64, 128, 5, 3>(128, 192, 128, 192, 128);  // 160 KiB: over the 48 KiB default
  check_staged_dot<T, 64, 32, 64, 3, 3>(50, 77, 60, 79, 64);        // partial runs; odd rows misaligned
  check_staged_dot<T, 64, 16, 128, 5, 5>(64, 80, 128, 80, 136);
  check_staged_dot<T, 32, 32, 32, 4, 1>(32, 32, 32, 32, 32);        // fewer blocks than stages
  check_staged_dot<T, 128, 16, 64, 4, 5>(128, 80, 64, 80, 64);      // wgmma's 32- and 128-byte swizzles
  check_staged_dot<T, 128, 64, 256, 4, 2>(128, 128, 256, 128, 256);  // b in 4 panels
  using iris::ContiguousRows;
  check_staged_dot<T, 128, 32, 128, 4, 4, ContiguousRows>(128, 128, 128, 128, 128);
  check_staged_dot<T, 64, 32, 64, 3, 3, ContiguousRows>(50, 77, 60, 79, 64);
  using iris::RowIntervals;  // runs cut by the masks' ends fall back to element copies
  check_staged_dot<T, 64, 32, 64, 3, 3, ContiguousRows, RowIntervals>(50, 77, 60, 79, 64);
  check_staged_dot<T, 128, 16, 64, 4, 5, iris::AnyPointers, RowIntervals>(100, 75, 61, 80, 64);
  // Runs taken whole or not at all: partial rows, the last block of K and
  // columns of b cut at a run's boundary (runs of 8 elements).
  check_staged_dot<T, 64, 32, 64, 3, 3, ContiguousRows, RowIntervals, std::true_type>(50, 72, 56, 80, 64);
  check_staged_dot<T, 128, 32, 128, 4, 4, ContiguousRows, RowIntervals, std::true_type>(128, 128, 128, 128, 128);
}

// Region k of out (M * N elements each, stored through a pointer tile in the
// value's own layout) holds result k, of layout L and the default one; xr
// holds M values, yc N; region kLayoutResults the row sums of x.
constexpr int kLayoutResults = 14;
template <int M, int N, class L>
struct LayoutMoves {
  static IRIS_HD void run(const Program&, const int32_t* x, const int32_t* xr, const int32_t* yc, int32_t* out) {
    using namespace iris;
    using B = Blocked<M, N>;
    int k = 0;
    auto put = [&](const auto& value) {
      store(add(out + k++ * M * N, arange<layout_of<decltype(value)>>()), value);
    };
    const auto v = load(add(x, arange<M, N>()));
    put(arange<L>());
    put(load(add(x, arange<L>())));
    put(convert_layout<L>(v));
    put(convert_layout<B>(convert_layout<L>(v)));
    put(convert_layout<B>(load(add(x, arange<L>()))));
    put(broadcast_to<L>(expand_dims<1>(arange<M>())));
    put(broadcast_to<L>(expand_dims<0>(arange<N>())));
    put(broadcast_to<L>(arange<N>()));
    put(broadcast_to<L>(expand_dims<1>(load(add(xr, arange<M>())))));
    put(broadcast_to<L>(load(add(yc, arange<1, N>()))));
    put(load(broadcast_to<L>(expand_dims<1>(add(xr, arange<M>())))));
    put(broadcast_to<L>(int32_t{7}));
    put(add(add(zeros<int32_t, L>(), full<int32_t, L>(5)), convert_layout<L>(arange<M, N>())));
    put(broadcast_to<L>(convert_layout<L>(v)));
    store(add(out + k * M * N, arange<M>()), sum<1>(convert_layout<L>(v)));
  }
};

int32_t layout_result(int k, int r, int c, int n, Buffer<int32_t>& x, Buffer<int32_t>& xr, Buffer<int32_t>& yc) {
  const int f = r * n + c;
  switch (k) {
    case 0: return f;
    case 5: return r;
    case 6:
    case 7: return c;
    case 8:
    case 10: return xr[r];
    case 9: return yc[c];
    case 11: return 7;
    case 12: return 5 + f;
    default: return x[f];
  }
}

template <int M, int N, class L>
void check_layout_moves() {
  CAPTURE(M);
  CAPTURE(N);
  Buffer<int32_t> x(M * N), xr(M), yc(N), out((kLayoutResults + 1) * M * N, kIntSentinel);
  for (int i = 0; i < M * N; ++i) x[i] = (i * 37) % 201 - 100;
  for (int i = 0; i < M; ++i) xr[i] = 1000 + 7 * i;
  for (int i = 0; i < N; ++i) yc[i] = -500 - 3 * i;
  run<LayoutMoves<M, N, L>>(1, x.data(), xr.data(), yc.data(), out.data());
  for (int k = 0; k < kLayoutResults; ++k)
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        CAPTURE(k);
        CAPTURE(r);
        CAPTURE(c);
        REQUIRE(out[k * M * N + r * N + c] == layout_result(k, r, c, N, x, xr, yc));
      }
  for (int r = 0; r < M; ++r) {
    CAPTURE(r);
    int32_t row = 0;
    for (int c = 0; c < N; ++c) row += x[r * N + c];
    REQUIRE(out[kLayoutResults * M * N + r] == row);
  }
}

// A bf16 tile in dot's accumulator layout stored through contiguous rows
// (m x n of an ld-wide matrix at out + offset), as generated code stores a
// dot's result: its pointers and mask in RowsOf<the layout>, with
// iris::ContiguousRows and, where `intervals`, iris::RowIntervals. On an
// NVIDIA GPU in 16-byte runs of rows where they are aligned and unmasked,
// element by element where not (the right edge, rows of an ld that is not a
// multiple of 8, a misaligned base).
template <int M, int N, bool Intervals>
struct StoreDotRows {
  static IRIS_HD void run(const Program&, iris::bfloat16* out, int32_t m, int32_t n, int32_t ld) {
    using namespace iris;
    using D = DotLayout<bfloat16, M, N>;
    using R = RowsOf<D>;
    const auto rows = broadcast_to<D>(expand_dims<1>(arange<M>()));
    const auto cols = broadcast_to<D>(expand_dims<0>(arange<N>()));
    // value_at(r, c) below, computed where the layout puts each element
    const auto value = as<bfloat16>(as<float>(sub(mod(add(mul(rows, 3), cols), 64), 32)));
    const auto run_rows = broadcast_to<R>(expand_dims<1>(arange<M>()));
    const auto run_cols = broadcast_to<R>(expand_dims<0>(arange<N>()));
    const auto ptr = add(add(out, mul(run_rows, ld)), run_cols);
    const auto mask = logical_and(lt(run_rows, m), lt(run_cols, n));
    if constexpr (Intervals) {
      store(ptr, value, mask, Unchecked{}, ContiguousRows{}, RowIntervals{});
    } else {
      store(ptr, value, mask, Unchecked{}, ContiguousRows{});
    }
  }
};

// An f32 tile loaded and stored in dot's accumulator layout through
// contiguous rows (m x n of ld-wide matrices at in and out + offset), as
// generated code accesses a fused all-reduce's partial sums: ContiguousRows
// without RowsOf, so on an NVIDIA GPU one pointer per row of a thread's
// fragments (MmaAcc::row_head). Elements the mask leaves out load as -1, and
// `whole` (M x N) receives the loaded tile unmasked.
template <int M, int N>
struct CopyDotRows {
  static IRIS_HD void run(const Program&, const float* in, float* out, float* whole, int32_t m, int32_t n,
                          int32_t ld) {
    using namespace iris;
    using D = DotLayout<bfloat16, M, N>;
    const auto rows = broadcast_to<D>(expand_dims<1>(arange<M>()));
    const auto cols = broadcast_to<D>(expand_dims<0>(arange<N>()));
    const auto mask = logical_and(lt(rows, m), lt(cols, n));
    const auto loaded = load(add(add(in, mul(rows, ld)), cols), mask, -1.0f, Unchecked{}, ContiguousRows{});
    store(add(add(out, mul(rows, ld)), cols), add(loaded, 1.0f), mask, Unchecked{}, ContiguousRows{});
    store(add(add(whole, mul(rows, N)), cols), loaded, NoMask{}, Unchecked{}, ContiguousRows{});
  }
};

template <int M, int N>
void check_copy_dot_rows(int m, int n, int ld, int offset) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(ld);
  CAPTURE(offset);
  const auto value_at = [](int r, int c) { return static_cast<float>(r * 1000 + c); };
  Buffer<float> in(offset + M * ld, 0.0f), out(offset + M * ld, 5e6f), whole(M * N, 0.0f);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < ld; ++c) in[offset + r * ld + c] = value_at(r, c);
  run<CopyDotRows<M, N>>(1, in.data() + offset, out.data() + offset, whole.data(), m, n, ld);
  for (int i = 0; i < offset + M * ld; ++i) {
    const int r = (i - offset) / ld, c = (i - offset) % ld;
    const bool stored = i >= offset && r < m && c < n;
    CAPTURE(r);
    CAPTURE(c);
    REQUIRE(out[i] == (stored ? value_at(r, c) + 1.0f : 5e6f));
  }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      REQUIRE(whole[r * N + c] == (r < m && c < n ? value_at(r, c) : -1.0f));
    }
}

template <int M, int N, bool Intervals = true>
void check_store_dot_rows(int m, int n, int ld, int offset) {
  CAPTURE(Intervals);
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(ld);
  CAPTURE(offset);
  const auto value_at = [](int r, int c) { return static_cast<float>((r * 3 + c) % 64 - 32); };  // exact in bf16
  const iris::bfloat16 sentinel(1000.0f);
  Buffer<iris::bfloat16> out(offset + M * ld, sentinel);
  run<StoreDotRows<M, N, Intervals>>(1, out.data() + offset, m, n, ld);
  for (int i = 0; i < offset + M * ld; ++i) {
    const int r = (i - offset) / ld, c = (i - offset) % ld;
    const bool stored = i >= offset && r < m && c < n;
    CAPTURE(r);
    CAPTURE(c);
    REQUIRE(static_cast<float>(out[i]) == (stored ? value_at(r, c) : 1000.0f));
  }
}

// That the grid G of a matrix instruction's accumulator over an (M, N) tile
// places, for 256 threads, every element exactly once, each thread's elements
// in runs of Vec adjacent ones.
template <class G, int M, int N, int Vec>
void check_grid_places_once() {
  REQUIRE(G::fits);
  REQUIRE(G::per_thread * 256 == M * N);
  std::vector<int> seen(M * N, 0);
  for (int t = 0; t < 256; ++t)
    for (int j = 0; j < G::per_thread; ++j) {
      CAPTURE(t);
      CAPTURE(j);
      const int f = G::index(t, j);
      REQUIRE(f >= 0);
      REQUIRE(f < M * N);
      ++seen[f];
      if (j % Vec != 0) REQUIRE(f == G::index(t, j - 1) + 1);
    }
  CHECK(std::count(seen.begin(), seen.end(), 1) == M * N);
}

// MmaAcc's placement for 256 threads (8 warps), checked on every target
// through the mapping it is built on: every element exactly once, runs of
// vec = 2 adjacent, and the fragment of mma.sync's accumulator (lane l's
// registers 0-3 at rows l / 4 and l / 4 + 8, columns 2 * (l % 4) and the next).
template <int M, int N>
void check_mma_grid() {
  CAPTURE(M);
  CAPTURE(N);
  using G = iris::detail::MmaGrid<M, N, 256>;
  REQUIRE(G::WM * G::WN == 8);
  check_grid_places_once<G, M, N, 2>();
  for (int lane = 0; lane < 32; ++lane) {
    CAPTURE(lane);
    for (int q = 0; q < 4; ++q) CHECK(G::index(lane, q) == (lane / 4 + 8 * (q / 2)) * N + 2 * (lane % 4) + q % 2);
  }
  // Warp 1 starts the next warp column, or the next warp row if there is one column.
  CHECK(G::index(32, 0) == (G::WN > 1 ? G::TN : G::TM * N));
  // Each element is its row's head plus its column after it, for every thread
  // (what loads and stores through contiguous rows rely on).
  for (int t = 0; t < 256; ++t)
    for (int j = 0; j < G::per_thread; ++j) {
      CAPTURE(t);
      CAPTURE(j);
      REQUIRE(G::index(t, j) == G::index(t, G::row_head(j)) + G::column_after_head(j));
      REQUIRE(G::column_after_head(G::row_head(j)) == 0);
    }
}


// One v_mfma_f32_16x16x16f16 (or _16x16x16bf16_1k) of a wavefront, modelled
// from the register layouts that AMD's matrix instruction calculator gives
// for CDNA 2 and CDNA 3 (the same for both instructions and architectures):
// lane l's register v (v = 0 to 3, two 16-bit elements per VGPR) holds
//   A operand (16 x 16, rows i, columns k):  A[l % 16][4 * (l / 16) + v]
//   B operand (16 x 16, rows k, columns j):  B[4 * (l / 16) + v][l % 16]
//   C and D (16 x 16 f32, rows i, columns j): D[4 * (l / 16) + v][l % 16]
// and D = A x B + C. Registers in, registers out: the matrices exist only here.
using MfmaRegisters = std::array<std::array<float, 4>, 64>;

void mfma_16x16x16_model(const MfmaRegisters& a_operand, const MfmaRegisters& b_operand, MfmaRegisters& d) {
  float a[16][16], b[16][16];
  for (int lane = 0; lane < 64; ++lane)
    for (int v = 0; v < 4; ++v) {
      a[lane % 16][4 * (lane / 16) + v] = a_operand[lane][v];
      b[4 * (lane / 16) + v][lane % 16] = b_operand[lane][v];
    }
  for (int lane = 0; lane < 64; ++lane)
    for (int v = 0; v < 4; ++v) {
      const int i = 4 * (lane / 16) + v, j = lane % 16;
      for (int k = 0; k < 16; ++k) d[lane][v] += a[i][k] * b[k][j];
    }
}

// MfmaAcc's placement and operands for 256 threads (4 wavefronts), checked on
// every target through the grid they are built on: every element exactly
// once, runs of vec = 4 adjacent; and a product (M, K) x (K, N) + acc run as
// ops/mfma_amd.hpp runs it -- each wave, step of 16 along K and instruction
// tile feeding b's fragment (b_col, fragment_k) as the instruction's A operand
// and a's (a_row, fragment_k) as its B, accumulating into the registers that
// index places -- through the model above, equals the plain product.
template <int M, int K, int N>
void check_mfma_grid() {
  CAPTURE(M);
  CAPTURE(K);
  CAPTURE(N);
  using G = iris::detail::MfmaGrid<M, N, 256>;
  REQUIRE(G::WM * G::WN == 4);
  check_grid_places_once<G, M, N, 4>();

  auto a_at = [](int r, int k) { return static_cast<float>((r * 3 + k * 5) % 7 - 3); };
  auto b_at = [](int k, int c) { return static_cast<float>((k * 2 + c * 3) % 5 - 2); };
  auto acc_at = [](int r, int c) { return static_cast<float>(r - 2 * c); };
  std::vector<std::array<float, G::per_thread>> registers(256);
  for (int t = 0; t < 256; ++t)
    for (int j = 0; j < G::per_thread; ++j) registers[t][j] = acc_at(G::index(t, j) / N, G::index(t, j) % N);
  for (int wave = 0; wave < 4; ++wave)
    for (int k0 = 0; k0 < K; k0 += 16)
      for (int mi = 0; mi < G::MI; ++mi)
        for (int ni = 0; ni < G::NI; ++ni) {
          MfmaRegisters from_b, from_a, d;
          for (int lane = 0; lane < 64; ++lane)
            for (int v = 0; v < 4; ++v) {
              const int k = k0 + G::fragment_k(lane) + v;
              from_b[lane][v] = b_at(k, G::b_col(wave, lane, ni));
              from_a[lane][v] = a_at(G::a_row(wave, lane, mi), k);
              d[lane][v] = registers[wave * 64 + lane][(mi * G::NI + ni) * 4 + v];
            }
          mfma_16x16x16_model(from_b, from_a, d);
          for (int lane = 0; lane < 64; ++lane)
            for (int v = 0; v < 4; ++v) registers[wave * 64 + lane][(mi * G::NI + ni) * 4 + v] = d[lane][v];
        }
  std::vector<float> result(M * N);
  for (int t = 0; t < 256; ++t)
    for (int j = 0; j < G::per_thread; ++j) result[G::index(t, j)] = registers[t][j];
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      float expected = acc_at(r, c);
      for (int k = 0; k < K; ++k) expected += a_at(r, k) * b_at(k, c);
      REQUIRE(result[r * N + c] == expected);
    }
}

}  // namespace

TEST_CASE("tile 2-D: arange of a shape, expand_dims and broadcast_to from ranges, pointers and register tiles") {
  check_shapes<8, 8>();
  check_shapes<4, 32>();
  check_shapes<32, 8>();
  check_shapes<64, 64>();
}

TEST_CASE("tile 2-D: an outer sum of rows and columns addresses a matrix; 2-D masks, `other`, where") {
  for (auto [m, n] : {std::pair{8, 8}, {0, 8}, {5, 3}, {8, 1}}) check_pointers_2d<8, 8>(m, n);
  for (auto [m, n] : {std::pair{4, 32}, {3, 17}}) check_pointers_2d<4, 32>(m, n);
  for (auto [m, n] : {std::pair{64, 64}, {61, 30}}) check_pointers_2d<64, 64>(m, n);
}

TEST_CASE("tile 2-D: atomics over a 2-D pointer tile skip masked-off elements") {
  for (auto [m, n] : {std::pair{8, 8}, {3, 5}}) check_atomics_2d<8, 8>(m, n);
  for (auto [m, n] : {std::pair{32, 8}, {17, 7}}) check_atomics_2d<32, 8>(m, n);
  check_atomics_2d<64, 64>(50, 63);
}

TEST_CASE("tile 2-D: trans of register tiles and ranges; reshape round trips") {
  check_moves<8, 8>();
  check_moves<4, 32>();
  check_moves<32, 8>();
  check_moves<64, 64>();
}

TEST_CASE("tile 2-D: sum, max and min along each axis and of the whole tile") {
  check_reductions_2d_of_type<int32_t>();
  check_reductions_2d_of_type<float>();
}

// max of an all-negative and min of an all-positive 16-bit float tile: their
// starting values must be the infinities, not 0.
template <class T>
struct Extremes16 {
  static IRIS_HD void run(const Program&, const T* negative, const T* positive, T* out) {
    using namespace iris;
    store(out, max(load(add(negative, arange<8, 8>()))));
    store(out + 1, min(load(add(positive, arange<8, 8>()))));
  }
};

template <class T>
void check_extremes_16() {
  Buffer<T> negative(64), positive(64), out(2, T{99});
  for (int i = 0; i < 64; ++i) negative[i] = T(-(i + 2)), positive[i] = T(i + 3);
  run<Extremes16<T>>(1, negative.data(), positive.data(), out.data());
  CHECK(static_cast<float>(out[0]) == -2.0f);
  CHECK(static_cast<float>(out[1]) == 3.0f);
}

TEST_CASE("tile 2-D: max and min of half and bfloat16 tiles whose elements all have one sign") {
  check_extremes_16<iris::half>();
  check_extremes_16<iris::bfloat16>();
}

// Each float of `in` converted to T as a float computed at run time is (one
// instruction on NVIDIA GPUs), and through a double, as a literal of
// generated code is (the integer code that constants fold through); each
// integer of `ints` by `as`, as `i as bf16` is.
template <class T>
struct Round16 {
  static IRIS_HD void run(const Program&, const float* in, int n, const int32_t* ints, int n_ints, T* from_float,
                          T* from_double, T* from_int) {
    iris::single([&] {
      for (int i = 0; i < n; ++i) {
        from_float[i] = T(in[i]);
        from_double[i] = T(static_cast<double>(in[i]));
      }
      for (int i = 0; i < n_ints; ++i) from_int[i] = iris::as<T>(ints[i]);
    });
  }
};

// The values of a 16-bit float format's finite non-negative patterns (with
// `exponent_bits` and `mantissa_bits`), decoded by the format's definition.
std::vector<double> decoded_patterns(int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  std::vector<double> values;
  for (uint32_t bits = 0; bits < ((1u << exponent_bits) - 1) << mantissa_bits; ++bits) {
    const int e = static_cast<int>(bits >> mantissa_bits);
    const double m = static_cast<double>(bits & ((1u << mantissa_bits) - 1)) / std::ldexp(1.0, mantissa_bits);
    values.push_back(e == 0 ? std::ldexp(m, 1 - bias) : std::ldexp(1.0 + m, e - bias));
  }
  return values;
}

// The pattern nearest to x among `values` (decoded_patterns), ties to the
// even pattern: an independent reference for the conversions' rounding.
// Infinity (the pattern after the last finite one) where x is at least half
// an ulp past the largest finite value; 0xffff for a NaN.
uint16_t nearest_pattern(float x, const std::vector<double>& values) {
  if (std::isnan(x)) return 0xffff;
  const double a = std::fabs(static_cast<double>(x));
  uint32_t best = 0;
  for (uint32_t bits = 1; bits < values.size(); ++bits) {
    const double d = std::fabs(values[bits] - a), best_d = std::fabs(values[best] - a);
    if (d < best_d || (d == best_d && bits % 2 == 0)) best = bits;
  }
  const double largest = values.back(), half_ulp = (largest - values[values.size() - 2]) / 2;
  if (a >= largest + half_ulp) best = static_cast<uint32_t>(values.size());
  return static_cast<uint16_t>((std::signbit(x) ? 0x8000u : 0u) | best);
}

template <class T>
void check_round_16(int exponent_bits, int mantissa_bits) {
  // Ties to even at each format's precision, subnormals (of half, of float),
  // overflow, signed zeros, infinities and a NaN, then spread values.
  std::vector<float> in = {0.0f, -0.0f, 1.0f, -3.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-11f,
                           1.0f + 3 * 0x1p-11f, -(1.0f + 5 * 0x1p-12f), 0x1p-24f, 0x1p-25f, 3 * 0x1p-25f,
                           0x1p-14f - 0x1p-25f, 1e-40f, -1e-45f, 65504.0f, 65519.0f, 65520.0f, -70000.0f,
                           3.3961e38f, 3.4028235e38f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  uint32_t state = 12345;
  for (int i = 0; i < 200; ++i) {
    state = state * 1664525u + 1013904223u;
    in.push_back(std::ldexp(static_cast<float>(state >> 8) / 16777216.0f - 0.5f, static_cast<int>(state % 61) - 30));
  }
  // Integers whose float is exact: ties at each format's precision, overflow.
  const std::vector<int32_t> whole = {0, 1, -3, 257, 259, 2049, 2051, -4097, 65504, 65519, 65520, 1 << 24, -(1 << 20) - 1};
  const int n = static_cast<int>(in.size()), n_ints = static_cast<int>(whole.size());
  Buffer<float> input(n);
  Buffer<int32_t> ints(n_ints);
  Buffer<T> from_float(n), from_double(n), from_int(n_ints);
  for (int i = 0; i < n; ++i) input[i] = in[i];
  for (int i = 0; i < n_ints; ++i) ints[i] = whole[i];
  run<Round16<T>>(1, input.data(), n, ints.data(), n_ints, from_float.data(), from_double.data(), from_int.data());
  const auto pattern = [](T v) { return std::isnan(static_cast<float>(v)) ? uint16_t{0xffff} : v.bits; };
  const std::vector<double> values = decoded_patterns(exponent_bits, mantissa_bits);
  for (int i = 0; i < n; ++i) {
    CAPTURE(in[i]);
    const uint16_t expected = nearest_pattern(in[i], values);
    CHECK(pattern(from_float[i]) == expected);
    CHECK(pattern(from_double[i]) == expected);
  }
  for (int i = 0; i < n_ints; ++i) {
    CAPTURE(whole[i]);
    CHECK(pattern(from_int[i]) == nearest_pattern(static_cast<float>(whole[i]), values));
  }
}

TEST_CASE("tile 2-D: half and bfloat16 round to nearest even, from run-time floats and from literals alike") {
  check_round_16<iris::half>(5, 10);
  check_round_16<iris::bfloat16>(8, 7);
}

TEST_CASE("tile 2-D: dot of bfloat16, half, float and int8 tiles plus an accumulator") {
  check_dot_of_type<iris::bfloat16, float>();
  check_dot_of_type<iris::half, float>();
  check_dot_of_type<float, float>();
  check_dot_of_type<int8_t, int32_t>();
}

TEST_CASE("tile 2-D: dot with the accumulator in DotLayout (tensor cores on an NVIDIA GPU), over a loop of K blocks") {
  check_dot_in_layout_of_type<iris::bfloat16>();
  check_dot_in_layout_of_type<iris::half>();
}

// Element (r, c) of a SharedTile<T, R, C> at the byte that Hopper's wgmma
// expects it (PTX ISA, "Shared Memory Matrix Layout"): columns in panels of
// 128 bytes at most, all R rows of a panel before the next panel, and the
// 16-byte-chunk bits of every address XORed with the bits above its 128-byte
// line (3 of them for panel rows of 128 bytes, 2 for 64, 1 for 32). The tile
// starts at 0, as rings keep it on 1024 bytes.
template <class T, int R, int C>
void check_wgmma_swizzle() {
  CAPTURE(R);
  CAPTURE(C);
  constexpr int size = static_cast<int>(sizeof(T));
  constexpr int panel_bytes = C * size < 128 ? C * size : 128;
  constexpr int panel = panel_bytes / size;
  const int line_mask = panel_bytes == 128 ? 7 : panel_bytes == 64 ? 3 : panel_bytes == 32 ? 1 : 0;
  std::vector<int> seen(R * C, 0);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      const int plain = (c / panel) * R * panel_bytes + r * panel_bytes + (c % panel) * size;
      const int swizzled = plain ^ (((plain >> 7) & line_mask) << 4);
      const int offset = iris::SharedTile<T, R, C>::offset(r, c);
      REQUIRE(offset * size == swizzled);
      ++seen[offset];
    }
  CHECK(std::count(seen.begin(), seen.end(), 1) == R * C);
}

TEST_CASE("tile 2-D: shared tiles lie in wgmma's swizzled panels") {
  check_wgmma_swizzle<iris::bfloat16, 64, 64>();   // 128-byte rows
  check_wgmma_swizzle<iris::bfloat16, 64, 32>();   // 64-byte rows
  check_wgmma_swizzle<iris::bfloat16, 64, 16>();   // 32-byte rows
  check_wgmma_swizzle<iris::bfloat16, 32, 256>();  // 4 panels
  check_wgmma_swizzle<iris::half, 16, 128>();
  check_wgmma_swizzle<float, 32, 64>();            // panels of 32
  check_wgmma_swizzle<int8_t, 16, 8>();            // one chunk per row: no swizzle
}

// copy_async places a thread's runs from its first run's offset plus
// run_stride_in_tile per run. Checked here, for a GPU's 256 threads copying
// 16-byte runs, against SharedTile::offset of every run of every thread:
// thread t's run i starts at element (i * 256 + t) * vec of the tile's flat
// row-major order (CopyLayout::index). The GEMM's operand tiles must get a
// stride (else every run's offset is computed again in the K loop).
template <class T, int R, int C>
void check_run_stride(bool expect_stride) {
  CAPTURE(R);
  CAPTURE(C);
  constexpr int threads = 256, vec = 16 / static_cast<int>(sizeof(T));
  constexpr int stride = iris::detail::run_stride_in_tile<T, R, C>(threads, vec);
  CHECK((stride != 0) == expect_stride);
  if (stride == 0) return;
  using Tile = iris::SharedTile<T, R, C>;
  const auto offset_of = [](int flat) { return Tile::offset(flat / C, flat % C); };
  for (int t = 0; t < threads; ++t)
    for (int i = 0; (i * threads + t) * vec < R * C; ++i) {
      CAPTURE(t);
      CAPTURE(i);
      REQUIRE(offset_of((i * threads + t) * vec) == offset_of(t * vec) + i * stride);
    }
}

TEST_CASE("tile 2-D: copy_async's runs of one thread lie a fixed stride apart in the swizzled tile") {
  check_run_stride<iris::bfloat16, 128, 64>(true);   // A at 128x256x64: 4 runs a thread
  check_run_stride<iris::bfloat16, 64, 256>(true);   // B at 128x256x64: 8 runs, 4 panels
  check_run_stride<iris::bfloat16, 128, 32>(true);   // 64-byte rows
  check_run_stride<iris::half, 32, 128>(true);       // B at 64x128x32
  check_run_stride<float, 64, 64>(true);             // panels of 32
  check_run_stride<iris::bfloat16, 8, 1024>(false);  // 2048 elements a step: two rows, not a whole period
}

TEST_CASE("tile 2-D: dot from shared-memory stages filled by copy_async, over a pipelined loop of K blocks") {
  check_staged_dot_of_type<iris::bfloat16>();
  check_staged_dot_of_type<iris::half>();
  check_staged_dot<float, 32, 16, 32, 3, 3>(30, 45, 31, 47, 32);  // the generic dot; 16-byte runs
}

TEST_CASE("tile 2-D: arange, zeros, full, broadcast_to and convert_layout in a given layout (DotLayout, CopyLayout)") {
  check_layout_moves<64, 64, iris::DotLayout<iris::bfloat16, 64, 64>>();
  check_layout_moves<16, 64, iris::DotLayout<iris::bfloat16, 16, 64>>();
  check_layout_moves<32, 32, iris::DotLayout<iris::half, 32, 32>>();
  check_layout_moves<8, 8, iris::DotLayout<iris::bfloat16, 8, 8>>();
  check_layout_moves<64, 64, iris::CopyLayout<iris::bfloat16, 64, 64>>();  // runs of 8 per thread
  check_layout_moves<32, 32, iris::CopyLayout<float, 32, 32>>();           // runs of 4
}

TEST_CASE("tile 2-D: a dot's result stored in runs of contiguous rows (ContiguousRows)") {
  check_store_dot_rows<64, 64>(64, 64, 64, 0);     // every run whole
  check_store_dot_rows<64, 64>(50, 61, 64, 0);     // the right edge cuts a run, rows cut off
  check_store_dot_rows<64, 64>(64, 64, 68, 0);     // every other row 8 bytes off 16
  check_store_dot_rows<64, 64>(64, 64, 64, 1);     // a misaligned base
  check_store_dot_rows<128, 256>(128, 256, 256, 0);  // wgmma's accumulator grid (sm_90a)
  check_store_dot_rows<16, 64>(16, 64, 64, 0);
  check_store_dot_rows<64, 64, false>(50, 61, 64, 0);  // the mask looked at element by element
  check_store_dot_rows<128, 256, false>(100, 250, 256, 0);
}

TEST_CASE("tile 2-D: f32 tiles of dot's layout loaded and stored through contiguous rows") {
  check_copy_dot_rows<64, 64>(64, 64, 64, 0);       // every pair whole
  check_copy_dot_rows<64, 64>(50, 61, 64, 0);       // the right edge cuts a pair, rows cut off
  check_copy_dot_rows<64, 64>(64, 64, 67, 0);       // every other row's pairs misaligned
  check_copy_dot_rows<64, 64>(64, 64, 64, 1);       // a misaligned base
  check_copy_dot_rows<128, 256>(100, 250, 256, 0);  // wgmma's accumulator grid (sm_90a)
  check_copy_dot_rows<16, 64>(16, 64, 64, 0);
}

// FragmentRows' placement over the mma grid G of an (M, N) tile, as a grid
// for check_grid_places_once.
template <class G, int N>
struct FragmentRowsGrid {
  static constexpr bool fits = G::fits && G::NI % 4 == 0;
  static constexpr int per_thread = G::per_thread;
  static int index(int t, int j) { return iris::detail::fragment_rows_index<G, N>(t, j); }
};

TEST_CASE("tile 2-D: FragmentRows places each element once, in runs of 8 adjacent columns") {
  check_grid_places_once<FragmentRowsGrid<iris::detail::MmaGrid<64, 64, 256>, 64>, 64, 64, 8>();
  check_grid_places_once<FragmentRowsGrid<iris::detail::MmaGrid<128, 128, 256>, 128>, 128, 128, 8>();
  check_grid_places_once<FragmentRowsGrid<iris::detail::MmaGrid<128, 256, 256>, 256>, 128, 256, 8>();
}

TEST_CASE("tile 2-D: MmaAcc places each element once, in mma.sync's accumulator fragments") {
  check_mma_grid<64, 64>();
  check_mma_grid<128, 128>();
  check_mma_grid<64, 128>();
  check_mma_grid<16, 64>();
  check_mma_grid<32, 32>();
  check_mma_grid<256, 16>();
  CHECK(!iris::detail::MmaGrid<8, 8, 256>::fits);
  CHECK(!iris::detail::MmaGrid<64, 8, 256>::fits);  // 4 x 2 warps: N must be a multiple of 16
  CHECK(!iris::detail::MmaGrid<16, 32, 256>::fits);  // 1 x 8 warps: N must be a multiple of 64
  CHECK(!iris::detail::MmaGrid<64, 64, 1>::fits);   // the CPU: one thread
}

TEST_CASE("tile 2-D: MfmaAcc places each element once, and MFMA's modelled registers compute the product") {
  check_mfma_grid<64, 32, 64>();
  check_mfma_grid<128, 32, 128>();
  check_mfma_grid<64, 16, 128>();
  check_mfma_grid<16, 32, 64>();
  check_mfma_grid<32, 16, 32>();
  check_mfma_grid<256, 16, 32>();
  CHECK(iris::detail::MfmaGrid<16, 64, 256>::WN == 4);  // one row of waves where M is one instruction tile
  CHECK(!iris::detail::MfmaGrid<8, 8, 256>::fits);
  CHECK(!iris::detail::MfmaGrid<64, 16, 256>::fits);  // 2 x 2 waves: N must be a multiple of 32
  CHECK(!iris::detail::MfmaGrid<16, 32, 256>::fits);  // 1 x 4 waves: N must be a multiple of 64
  CHECK(!iris::detail::MfmaGrid<64, 64, 32>::fits);   // less than a wavefront
  CHECK(!iris::detail::MfmaGrid<64, 64, 1>::fits);    // the CPU: one thread
}

TEST_CASE("tile 2-D: shapes are part of the type; expand_dims and reshape keep ranges and pointers symbolic") {
  using iris::Blocked;
  using iris::ContigPtrs;
  using iris::Range;
  using iris::Tile;
  using iris::Tile2;
  // Operands for decltype only (constexpr: nvcc warns about variables never read).
  constexpr float* p = nullptr;
  constexpr Tile<float, 32> t{};
  constexpr Tile2<float, 4, 8> t2{};
  CHECK(std::is_same_v<Tile2<float, 4, 8>, Tile<float, 32, Blocked<4, 8>>>);
  CHECK(!std::is_same_v<Tile2<float, 4, 8>, Tile2<float, 8, 4>>);
  CHECK(!std::is_same_v<Tile2<float, 1, 32>, Tile<float, 32>>);
  CHECK(Blocked<4, 8>::rank == 2);
  CHECK(Blocked<4, 8>::rows == 4);
  CHECK(Blocked<4, 8>::cols == 8);
  CHECK(Blocked<32>::rank == 1);
  CHECK(Blocked<32>::rows == 1);
  CHECK(Blocked<32>::cols == 32);
  CHECK(std::is_same_v<decltype(iris::arange<4, 8>()), Range<int32_t, 32, Blocked<4, 8>>>);
  CHECK(std::is_same_v<decltype(iris::full<float, 4, 8>(1.0f)), Tile2<float, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::zeros<int32_t, 4, 8>()), Tile2<int32_t, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::add(p, iris::arange<4, 8>())), ContigPtrs<float, 32, Blocked<4, 8>>>);

  CHECK(std::is_same_v<decltype(iris::expand_dims<0>(iris::arange<32>())), Range<int32_t, 32, Blocked<1, 32>>>);
  CHECK(std::is_same_v<decltype(iris::expand_dims<1>(iris::arange<32>())), Range<int32_t, 32, Blocked<32, 1>>>);
  CHECK(std::is_same_v<decltype(iris::expand_dims<1>(iris::add(p, iris::arange<32>()))),
                       ContigPtrs<float, 32, Blocked<32, 1>>>);
  CHECK(std::is_same_v<decltype(iris::expand_dims<0>(t)), Tile2<float, 1, 32>>);
  CHECK(std::is_same_v<decltype(iris::reshape<8, 4>(iris::arange<4, 8>())), Range<int32_t, 32, Blocked<8, 4>>>);
  CHECK(std::is_same_v<decltype(iris::reshape<32>(iris::add(p, iris::arange<4, 8>()))), ContigPtrs<float, 32>>);
  CHECK(std::is_same_v<decltype(iris::reshape<8, 4>(t2)), Tile2<float, 8, 4>>);

  // broadcast_to: the tile itself where the shape and layout already are the
  // target's; a 1-D tile of N to (1, N) is a change of type; else a tile.
  CHECK(std::is_same_v<decltype(iris::broadcast_to<4, 8>(iris::arange<4, 8>())), Range<int32_t, 32, Blocked<4, 8>>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<1, 32>(iris::add(p, iris::arange<32>()))),
                       ContigPtrs<float, 32, Blocked<1, 32>>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<4, 8>(iris::arange<8>())), Tile2<int32_t, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<4, 8>(iris::add(p, iris::arange<8>()))), Tile2<float*, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<4, 8>(iris::expand_dims<1>(iris::zeros<float, 4>()))),
                       Tile2<float, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::trans(t2)), Tile2<float, 8, 4>>);
  CHECK(std::is_same_v<decltype(iris::sum<1>(t2)), Tile<float, 4>>);
  CHECK(std::is_same_v<decltype(iris::max<0>(t2)), Tile<float, 8>>);
  CHECK(std::is_same_v<decltype(iris::sum(t2)), float>);
  CHECK(std::is_same_v<decltype(iris::dot(iris::zeros<iris::bfloat16, 4, 16>(), iris::zeros<iris::bfloat16, 16, 8>(),
                                          t2)),
                       Tile2<float, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::dot(iris::zeros<int8_t, 4, 16>(), iris::zeros<int8_t, 16, 8>(),
                                          iris::zeros<int32_t, 4, 8>())),
                       Tile2<int32_t, 4, 8>>);

  // Layout-parameterised creation and movement.
  using L = iris::DotLayout<iris::bfloat16, 64, 64>;
  using iris::DotLayout;
  using iris::bfloat16;
  using iris::half;
  // The matrix instructions' accumulator of the target, Blocked on the CPU.
  using Acc64x64 = std::conditional_t<IRIS_NVIDIA_GPU, iris::MmaAcc<64, 64>,
                                      std::conditional_t<IRIS_AMD_GPU, iris::MfmaAcc<64, 64>, Blocked<64, 64>>>;
  using Acc16x64 = std::conditional_t<IRIS_NVIDIA_GPU, iris::MmaAcc<16, 64>,
                                      std::conditional_t<IRIS_AMD_GPU, iris::MfmaAcc<16, 64>, Blocked<16, 64>>>;
  CHECK(std::is_same_v<DotLayout<bfloat16, 64, 64>, Acc64x64>);
  CHECK(std::is_same_v<DotLayout<half, 16, 64>, Acc16x64>);
  CHECK(std::is_same_v<DotLayout<float, 64, 64>, Blocked<64, 64>>);
  CHECK(std::is_same_v<DotLayout<int8_t, 64, 64>, Blocked<64, 64>>);
  CHECK(std::is_same_v<DotLayout<bfloat16, 8, 8>, Blocked<8, 8>>);
  CHECK(std::is_same_v<DotLayout<bfloat16, 16, 32>, Blocked<16, 32>>);
  CHECK(L::rank == 2);
  CHECK(L::rows == 64);
  CHECK(L::cols == 64);
  CHECK(std::is_same_v<decltype(iris::arange<L>()), Range<int32_t, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::zeros<float, L>()), Tile<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::full<float, L>(1.0f)), Tile<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::zeros<float, Blocked<4, 8>>()), Tile2<float, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::arange<Blocked<4, 8>>()), decltype(iris::arange<4, 8>())>);
  CHECK(std::is_same_v<decltype(iris::add(p, iris::arange<L>())), ContigPtrs<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::convert_layout<L>(iris::arange<64, 64>())), Range<int32_t, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::convert_layout<L>(iris::add(p, iris::arange<64, 64>()))),
                       ContigPtrs<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::convert_layout<L>(iris::zeros<float, 64, 64>())), Tile<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::convert_layout<Blocked<64, 64>>(iris::zeros<float, L>())),
                       Tile2<float, 64, 64>>);
  CHECK(std::is_same_v<decltype(iris::convert_layout<Blocked<1, 32>>(iris::arange<32>())),
                       Range<int32_t, 32, Blocked<1, 32>>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<L>(iris::expand_dims<1>(iris::arange<64>()))), Tile<int32_t, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<L>(iris::arange<64, 64>())), Range<int32_t, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<L>(2.0f)), Tile<float, 4096, L>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<4, 8>(2.0f)), Tile2<float, 4, 8>>);
  CHECK(std::is_same_v<decltype(iris::broadcast_to<Blocked<4, 8>>(iris::arange<8>())),
                       decltype(iris::broadcast_to<4, 8>(iris::arange<8>()))>);
  // dot returns its result in acc's layout.
  CHECK(std::is_same_v<decltype(iris::dot(iris::zeros<bfloat16, 64, 16>(), iris::zeros<bfloat16, 16, 64>(),
                                          iris::zeros<float, L>())),
                       Tile<float, 4096, L>>);
}

#if !IRIS_GPU
// Checked mode over a 2-D pointer tile (an outer sum, leading dimension 16):
// the mask decides which elements count, as for 1-D tiles.
struct CheckedLoad2D {
  static void run(const Program& p, const float* base, int offset, int m, int n, float* out) {
    using namespace iris;
    const auto v = load(add(base + offset, window_offsets<4, 8>(16)), window_mask<4, 8>(m, n), 0.0f,
                        Checked{p, "matrix.iris", 4});
    store(add(out, arange<4, 8>()), v);
  }
};

TEST_CASE("tile 2-D: checked mode checks the active elements of a 2-D pointer tile") {
  constexpr int kFloats = 128;
  constexpr int kReach = 3 * 16 + 7;  // the offset of element (3, 7)
  auto error_of = [&](int offset, int m, int n) {
    Buffer<float> out(32);
    try {
      iris::run_threads(1, 1 << 20, [&](iris::Rank& r) {
        const float* block = r.allocate<float>(kFloats);
        r.allocate<float>(kFloats);  // the next allocation: one past the end lands in it
        iris::launch_kernel<CheckedLoad2D>({1}, {}, r.device_context(), block, offset, m, n, out.data());
      });
    } catch (const iris::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(kFloats - 1 - kReach, 4, 8) == "");
  CHECK(error_of(kFloats - kReach, 4, 7) == "");  // the last column masked off
  CHECK(error_of(kFloats - kReach, 3, 8) == "");  // the last row masked off
  const std::string past = error_of(kFloats - kReach, 4, 8);
  CHECK(past.find("matrix.iris:4: error:") != std::string::npos);
  CHECK(past.find("allocation") != std::string::npos);
}
#endif
