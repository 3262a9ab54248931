// Unit tests of the tile library (iris/kernel.hpp), op by op: elementwise
// operations with scalars broadcast, masked loads and stores over partial
// tiles, reductions, translation between heaps, atomics over tiles, signals
// and waits, and tiles of a layout other than the default one. Each kernel
// writes what it computed to memory; the host compares every element with
// values computed here by plain loops.
//
// The same source runs on the CPU emulation (ctest: tile.unit, and
// tile.unit.tsan under ThreadSanitizer) and, compiled with nvcc, on a GPU
// (scripts/gpu-check.sh: tile_unit_tests_gpu), where a program instance is a
// block of kThreads threads: tiles of 64 elements leave threads idle, tiles of
// 1024 give each thread vectors of 4.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "mirrored_layout.hpp"
#include "tile_target.hpp"

using iris::AtomicOp;
using iris::Cmp;
using iris::Program;
using iris::Scope;
using iris::Sem;
using tile_test::Buffer;
using tile_test::Mirrored;
using tile_test::run;
using tile_test::run_with;

namespace {

constexpr int kSmall = 64;
constexpr int kLarge = 1024;
constexpr float kSentinel = -999.0f;

// ------------------------------------------------------------ elementwise
// out[k * N + i] is operation k applied to x[i] (and scalars, on either side).
constexpr int kIntOps = 17;
template <int N>
struct IntElementwise {
  static IRIS_HD void run(const Program&, const int32_t* x, int32_t* out) {
    using namespace iris;
    const auto i = arange<N>();
    const auto v = load(add(x, i));
    int k = 0;
    auto put = [&](const auto& value) { store(add(add(out, k++ * N), i), value); };
    put(add(v, 7));
    put(sub(100, v));
    put(sub(v, i));
    put(mul(v, 3));
    put(div(v, 7));
    put(div(1000, add(bit_and(v, 63), 1)));
    put(mod(v, 5));
    put(bit_and(v, 0x5A));
    put(bit_or(v, 0x101));
    put(bit_xor(v, i));
    put(shl(bit_and(v, 0xFF), 4));
    put(shr(bit_and(v, 0xFFFF), 3));
    put(neg(v));
    put(bit_not(v));
    put(where(lt(v, 0), v, mul(v, 2)));
    put(add(mul(lt(v, i), 1), mul(ge(v, 40), 2)));
    put(logical_and(gt(v, -50), logical_not(eq(v, 8))));
  }
};

int32_t int_op(int k, int32_t v, int32_t i) {
  switch (k) {
    case 0: return v + 7;
    case 1: return 100 - v;
    case 2: return v - i;
    case 3: return v * 3;
    case 4: return v / 7;
    case 5: return 1000 / ((v & 63) + 1);
    case 6: return v % 5;
    case 7: return v & 0x5A;
    case 8: return v | 0x101;
    case 9: return v ^ i;
    case 10: return (v & 0xFF) << 4;
    case 11: return (v & 0xFFFF) >> 3;
    case 12: return -v;
    case 13: return ~v;
    case 14: return v < 0 ? v : v * 2;
    case 15: return (v < i ? 1 : 0) + (v >= 40 ? 2 : 0);
    default: return (v > -50 && v != 8) ? 1 : 0;
  }
}

template <int N>
void check_int_elementwise() {
  Buffer<int32_t> x(N), out(kIntOps * N, 12345);
  for (int i = 0; i < N; ++i) x[i] = (i * 37) % 201 - 100;  // negative and positive
  run<IntElementwise<N>>(1, x.data(), out.data());
  for (int k = 0; k < kIntOps; ++k)
    for (int i = 0; i < N; ++i) {
      CAPTURE(k);
      CAPTURE(i);
      REQUIRE(out[k * N + i] == int_op(k, x[i], i));
    }
}

// Mixed types: an i32 tile with f32 scalars and tiles, and conversions.
template <int N>
struct FloatElementwise {
  static IRIS_HD void run(const Program&, const int32_t* x, const float* y, float* out) {
    using namespace iris;
    const auto i = arange<N>();
    const auto v = load(add(x, i));
    const auto w = load(add(y, i));
    store(add(out, i), mul(v, 0.5f));
    store(add(out + N, i), div(w, v));
    store(add(out + 2 * N, i), sub(w, as<float>(i)));
    store(add(out + 3 * N, i), where(gt(w, 0.0f), w, 2.5f));
    store(add(out + 4 * N, i), as<float>(as<int32_t>(w)));
  }
};

template <int N>
void check_float_elementwise() {
  Buffer<int32_t> x(N);
  Buffer<float> y(N), out(5 * N, kSentinel);
  for (int i = 0; i < N; ++i) {
    x[i] = i % 2 ? i + 1 : -(i + 1);
    y[i] = static_cast<float>(i % 13) * 0.75f - 4.0f;
  }
  run<FloatElementwise<N>>(1, x.data(), y.data(), out.data());
  for (int i = 0; i < N; ++i) {
    CAPTURE(i);
    CHECK(out[i] == static_cast<float>(x[i]) * 0.5f);
    CHECK(out[N + i] == y[i] / static_cast<float>(x[i]));
    CHECK(out[2 * N + i] == y[i] - static_cast<float>(i));
    CHECK(out[3 * N + i] == (y[i] > 0.0f ? y[i] : 2.5f));
    CHECK(out[4 * N + i] == static_cast<float>(static_cast<int32_t>(y[i])));
  }
}

// ------------------------------------------------------------ loads
// Region r of out (N elements each) holds load number r; data holds 2N
// elements, of which the first n are valid and the rest are sentinels.
template <int N>
struct MaskedLoads {
  static IRIS_HD void run(const Program&, const float* data, int n, float* out) {
    using namespace iris;
    const auto i = arange<N>();
    const auto mask = lt(i, n);
    store(add(out, i), load(add(data, i), mask, -1.5f));  // contiguous, aligned
    store(add(out + N, i), load(add(data + 1, i), lt(i, n - 1), -2.5f));  // contiguous, unaligned
    store(add(out + 2 * N, i), load(add(data, i), mask, mul(as<float>(i), 10.0f)));  // `other` a tile
    store(add(out + 3 * N, i), load(add(data, mul(i, 2)), lt(mul(i, 2), n), 7.0f));  // gathered
    store(add(out + 4 * N, i), load(add(data, i), mask));  // no `other`: zero
    store(add(out + 5 * N, i), load(add(data, i)));        // no mask
    store(out + 6 * N, load(data + 3, n > 3, 3.25f));      // scalar pointer
  }
};

template <int N>
void check_masked_loads(int n) {
  CAPTURE(N);
  CAPTURE(n);
  Buffer<float> data(2 * N + 8), out(7 * N, kSentinel);
  for (int i = 0; i < 2 * N + 8; ++i) data[i] = i < n ? static_cast<float>(i) + 0.25f : kSentinel - 1.0f - i;
  run<MaskedLoads<N>>(1, data.data(), n, out.data());
  for (int i = 0; i < N; ++i) {
    CAPTURE(i);
    CHECK(out[i] == (i < n ? data[i] : -1.5f));
    CHECK(out[N + i] == (i < n - 1 ? data[i + 1] : -2.5f));
    CHECK(out[2 * N + i] == (i < n ? data[i] : static_cast<float>(i) * 10.0f));
    CHECK(out[3 * N + i] == (2 * i < n ? data[2 * i] : 7.0f));
    CHECK(out[4 * N + i] == (i < n ? data[i] : 0.0f));
    CHECK(out[5 * N + i] == data[i]);
  }
  CHECK(out[6 * N] == (n > 3 ? data[3] : 3.25f));
}

// ------------------------------------------------------------ stores
// Regions of out, each N + 8 elements: contiguous aligned, contiguous
// unaligned (one element in), gathered (every other element), scalar.
template <int N>
struct MaskedStores {
  static IRIS_HD void run(const Program&, float* out, int n) {
    using namespace iris;
    constexpr int R = N + 8;
    const auto i = arange<N>();
    const auto mask = lt(i, n);
    const auto value = add(as<float>(i), 0.5f);
    store(add(out, i), value, mask);
    store(add(out + R + 1, i), value, mask);
    store(add(out + 2 * R, mul(i, 2)), value, lt(mul(i, 2), n));
    store(out + 4 * R, 9.0f, n > 5);
    store(out + 4 * R + 1, 8.0f, n < 0);
    store(add(out + 4 * R + 2, i), value);  // no mask: all N
  }
};

template <int N>
void check_masked_stores(int n) {
  CAPTURE(N);
  CAPTURE(n);
  constexpr int R = N + 8;
  Buffer<float> out(5 * R + N, kSentinel);
  run<MaskedStores<N>>(1, out.data(), n);
  auto stored = [](int i) { return static_cast<float>(i) + 0.5f; };
  for (int j = 0; j < R; ++j) {
    CAPTURE(j);
    CHECK(out[j] == (j < n ? stored(j) : kSentinel));
    CHECK(out[R + j] == (j >= 1 && j - 1 < n ? stored(j - 1) : kSentinel));
  }
  for (int j = 0; j < 2 * R; ++j) {
    CAPTURE(j);
    CHECK(out[2 * R + j] == (j % 2 == 0 && j < n && j / 2 < N ? stored(j / 2) : kSentinel));
  }
  CHECK(out[4 * R] == (n > 5 ? 9.0f : kSentinel));
  CHECK(out[4 * R + 1] == kSentinel);
  for (int i = 0; i < N; ++i) CHECK(out[4 * R + 2 + i] == stored(i));
  CHECK(out[4 * R + 2 + N] == kSentinel);
}

// ------------------------------------------------------------ reductions
// out: sum, max, min of the whole tile; then of the first n elements, loaded
// with the identity of each reduction as `other`.
template <int N, class T>
struct Reductions {
  static IRIS_HD void run(const Program&, const T* x, int n, T* out) {
    using namespace iris;
    const auto i = arange<N>();
    const auto mask = lt(i, n);
    const auto v = load(add(x, i));
    store(out, sum(v));
    store(out + 1, max(v));
    store(out + 2, min(v));
    store(out + 3, sum(load(add(x, i), mask, T{})));
    store(out + 4, max(load(add(x, i), mask, std::numeric_limits<T>::lowest())));
    store(out + 5, min(load(add(x, i), mask, std::numeric_limits<T>::max())));
  }
};

template <int N, class T>
void check_reductions(const char* what, T (*value)(int), int n) {
  CAPTURE(what);
  CAPTURE(N);
  CAPTURE(n);
  Buffer<T> x(N), out(6, T{99});
  for (int i = 0; i < N; ++i) x[i] = value(i);
  run<Reductions<N, T>>(1, x.data(), n, out.data());
  T total{}, partial{};
  for (int i = 0; i < N; ++i) total += x[i];
  for (int i = 0; i < n; ++i) partial += x[i];
  CHECK(out[0] == total);
  CHECK(out[1] == *std::max_element(x.data(), x.data() + N));
  CHECK(out[2] == *std::min_element(x.data(), x.data() + N));
  CHECK(out[3] == partial);
  CHECK(out[4] == *std::max_element(x.data(), x.data() + n));
  CHECK(out[5] == *std::min_element(x.data(), x.data() + n));
}

template <class T>
void check_reductions_of_type() {
  // Exact in both types: small integers, the extremes away from element 0.
  T (*negative)(int) = [](int i) { return static_cast<T>(-1 - (i * 7) % 50); };
  T (*positive)(int) = [](int i) { return static_cast<T>(1 + (i * 11) % 60); };
  T (*mixed)(int) = [](int i) { return static_cast<T>((i * 13) % 41 - 20); };
  for (int n : {1, 5, kSmall - 3}) {
    check_reductions<kSmall, T>("all negative", negative, n);
    check_reductions<kSmall, T>("all positive", positive, n);
    check_reductions<kSmall, T>("mixed", mixed, n);
  }
  for (int n : {1, 700, kLarge}) {
    check_reductions<kLarge, T>("all negative", negative, n);
    check_reductions<kLarge, T>("all positive", positive, n);
    check_reductions<kLarge, T>("mixed", mixed, n);
  }
}

// ------------------------------------------------------------ translation
// `local` points into this rank's heap; the loads go to rank `to`'s heap.
template <int N>
struct Translate {
  static IRIS_HD void run(const Program& p, float* local, int to, float* out) {
    using namespace iris;
    const auto i = arange<N>();
    store(add(out, i), load(translate_to(p, add(local, i), to)));
    store(add(out + N, i), load(translate_to(p, add(local, mul(i, 3)), to)));
    store(out + 2 * N, load(translate_to(p, local + 5, to)));
  }
};

template <int N>
void check_translation() {
  constexpr std::size_t kHeapFloats = 4 * N;
  Buffer<float> heaps(3 * kHeapFloats);  // three ranks' heaps, side by side
  Buffer<char*> bases(3);
  for (int r = 0; r < 3; ++r) {
    bases[r] = reinterpret_cast<char*>(heaps.data() + r * kHeapFloats);
    for (std::size_t e = 0; e < kHeapFloats; ++e) heaps[r * kHeapFloats + e] = static_cast<float>(r * 100000 + e);
  }
  constexpr int offset = 16;  // the object's offset in every heap
  for (int me : {0, 2}) {
    for (int to = 0; to < 3; ++to) {
      CAPTURE(me);
      CAPTURE(to);
      Buffer<float> out(2 * N + 1, kSentinel);
      float* local = heaps.data() + me * kHeapFloats + offset;
      run_with<Translate<N>>(tile_test::context(bases, kHeapFloats * sizeof(float), me), 1, local, to, out.data());
      const float* remote = heaps.data() + to * kHeapFloats + offset;
      for (int i = 0; i < N; ++i) {
        CAPTURE(i);
        CHECK(out[i] == remote[i]);
        CHECK(out[N + i] == remote[3 * i]);
      }
      CHECK(out[2 * N] == remote[5]);
    }
  }
}

// ------------------------------------------------------------ atomics
// Every read-modify-write over a tile, with a mask: region k of mem (N
// elements) gets operation k; old receives the values returned.
constexpr int kRmwOps = 8;
template <int N>
struct TileRmw {
  template <AtomicOp Op>
  static IRIS_HD void apply(int k, int32_t* mem, int32_t* old, int n) {
    using namespace iris;
    const auto i = arange<N>();
    const auto value = sub(mul(i, 5), 100);
    store(add(old + k * N, i), atomic_rmw<Op, Sem::acq_rel, Scope::gpu>(add(mem + k * N, i), value, lt(i, n)));
  }
  static IRIS_HD void run(const Program&, int32_t* mem, int32_t* old, int n) {
    apply<AtomicOp::add>(0, mem, old, n);
    apply<AtomicOp::sub>(1, mem, old, n);
    apply<AtomicOp::and_>(2, mem, old, n);
    apply<AtomicOp::or_>(3, mem, old, n);
    apply<AtomicOp::xor_>(4, mem, old, n);
    apply<AtomicOp::min>(5, mem, old, n);
    apply<AtomicOp::max>(6, mem, old, n);
    apply<AtomicOp::xchg>(7, mem, old, n);
  }
};

int32_t rmw_result(int k, int32_t old, int32_t v) {
  switch (k) {
    case 0: return old + v;
    case 1: return old - v;
    case 2: return old & v;
    case 3: return old | v;
    case 4: return old ^ v;
    case 5: return std::min(old, v);
    case 6: return std::max(old, v);
    default: return v;
  }
}

template <int N>
void check_tile_rmw(int n) {
  CAPTURE(N);
  CAPTURE(n);
  Buffer<int32_t> mem(kRmwOps * N), old(kRmwOps * N, 12345);
  auto initial = [](int k, int i) { return (i * 29 + k * 7) % 301 - 150; };
  for (int k = 0; k < kRmwOps; ++k)
    for (int i = 0; i < N; ++i) mem[k * N + i] = initial(k, i);
  run<TileRmw<N>>(1, mem.data(), old.data(), n);
  for (int k = 0; k < kRmwOps; ++k)
    for (int i = 0; i < N; ++i) {
      CAPTURE(k);
      CAPTURE(i);
      const int32_t before = initial(k, i), value = i * 5 - 100;
      if (i < n) {
        REQUIRE(old[k * N + i] == before);
        REQUIRE(mem[k * N + i] == rmw_result(k, before, value));
      } else {
        REQUIRE(mem[k * N + i] == before);  // masked off: untouched
      }
    }
}

// Compare-and-swap over a tile: even elements compare equal and take the new
// value, odd ones fail and keep theirs; then a whole-tile read and write.
template <int N>
struct TileCasReadWrite {
  static IRIS_HD void run(const Program&, int32_t* mem, int32_t* old, int32_t* read, int32_t* written) {
    using namespace iris;
    const auto i = arange<N>();
    const auto current = load(add(mem, i));
    const auto expected = add(current, bit_and(i, 1));
    const auto desired = add(mul(i, 3), 1000);
    store(add(old, i), atomic_compare_exchange<Sem::acq_rel, Scope::sys>(add(mem, i), expected, desired));
    store(add(read, i), atomic_read<Sem::acquire, Scope::gpu>(add(mem, i)));
    atomic_write<Sem::release, Scope::gpu>(add(written, i), sub(0, i));
  }
};

template <int N>
void check_tile_cas() {
  Buffer<int32_t> mem(N), old(N, 12345), read(N, 12345), written(N + 1, 12345);
  for (int i = 0; i < N; ++i) mem[i] = 7 * i - 40;
  run<TileCasReadWrite<N>>(1, mem.data(), old.data(), read.data(), written.data());
  for (int i = 0; i < N; ++i) {
    CAPTURE(i);
    const int32_t before = 7 * i - 40, after = i % 2 == 0 ? 3 * i + 1000 : before;
    CHECK(old[i] == before);
    CHECK(mem[i] == after);
    CHECK(read[i] == after);
    CHECK(written[i] == -i);
  }
  CHECK(written[N] == 12345);
}

// Scalar atomics act once per program instance, not once per thread.
struct ScalarAtomics {
  static IRIS_HD void run(const Program& p, int32_t* counter, int32_t* olds, uint32_t* bits, float* total) {
    using namespace iris;
    const int id = program_id(p, 0);
    store(olds + id, atomic_rmw<AtomicOp::add, Sem::relaxed, Scope::gpu>(counter, 5));
    atomic_rmw<AtomicOp::or_, Sem::relaxed, Scope::gpu>(bits, 1u << id);
    atomic_rmw<AtomicOp::add, Sem::relaxed, Scope::gpu>(total, 0.25f, id % 2 == 0);  // masked: half of them
  }
};

TEST_CASE("tile: scalar atomics act once per program instance, masks included") {
  constexpr int instances = 6;
  Buffer<int32_t> counter(1, 100), olds(instances, -1);
  Buffer<uint32_t> bits(1, 0);
  Buffer<float> total(1, 1.0f);
  run<ScalarAtomics>(instances, counter.data(), olds.data(), bits.data(), total.data());
  CHECK(counter[0] == 100 + 5 * instances);
  std::vector<int32_t> seen(olds.data(), olds.data() + instances);
  std::sort(seen.begin(), seen.end());
  for (int k = 0; k < instances; ++k) CHECK(seen[k] == 100 + 5 * k);  // each old value once
  CHECK(bits[0] == (1u << instances) - 1);
  CHECK(total[0] == 1.0f + 0.25f * (instances / 2));
}

// ------------------------------------------------------------ signals
// Instance 0 writes a payload and raises a flag (set 1, then add 2, both
// release); instance 1 waits for 3 (acquire) and copies the payload, then
// waits once per comparison on conditions that hold.
template <int N>
struct Signals {
  static IRIS_HD void run(const Program& p, int32_t* flag, int32_t* payload, int32_t* copy) {
    using namespace iris;
    const auto i = arange<N>();
    if (program_id(p, 0) == 0) {
      store(add(payload, i), add(i, 42));
      raise_signal<false, Sem::release, Scope::gpu>(flag, 1);
      raise_signal<true, Sem::release, Scope::gpu>(flag, 2);
    } else {
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::eq, 3);
      store(add(copy, i), load(add(payload, i)));
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::ne, 0);
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::lt, 4);
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::le, 3);
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::gt, 2);
      wait<Sem::acquire, Scope::gpu>(flag, Cmp::ge, 3);
      store(copy + N, 1);  // every wait returned
    }
  }
};

template <int N>
void check_signals() {
  Buffer<int32_t> flag(1, 0), payload(N, 0), copy(N + 1, -1);
  run<Signals<N>>(2, flag.data(), payload.data(), copy.data());
  CHECK(flag[0] == 3);
  for (int i = 0; i < N; ++i) CHECK(copy[i] == i + 42);
  CHECK(copy[N] == 1);
}

// ------------------------------------------------------------ layouts
// Tiles of a second layout, Mirrored (mirrored_layout.hpp).
// Region 0 of out (N elements each): a masked contiguous load, -7 where the
// mask is off, times 3 plus the offsets; region 1: a gathered load (x holds
// 2N elements); region 2: the old values of an atomic add of the offsets to
// counts where the mask is off; then the sum of the loaded elements under
// the mask. Every tile has the mirrored layout.
template <int N>
struct MirroredOperations {
  static IRIS_HD void run(const Program&, const int32_t* x, int n, int32_t* counts, int32_t* out) {
    using namespace iris;
    const Range<int32_t, N, Mirrored<N>> i{0};
    const auto mask = lt(i, n);
    const auto v = load(add(x, i), mask, -7);
    store(add(out, i), add(mul(v, 3), i));
    store(add(out + N, i), load(add(x, mul(i, 2))));
    const auto old = atomic_rmw<AtomicOp::add, Sem::relaxed, Scope::gpu>(add(counts, i), i, logical_not(mask));
    store(add(out + 2 * N, i), old);
    store(out + 3 * N, sum(where(mask, v, 0)));
  }
};

template <int N>
void check_mirrored_operations(int n) {
  CAPTURE(N);
  CAPTURE(n);
  Buffer<int32_t> x(2 * N), counts(N), out(3 * N + 1, 12345);
  for (int i = 0; i < 2 * N; ++i) x[i] = (i * 37) % 201 - 100;
  auto initial_count = [](int i) { return 1000 + 3 * i; };
  for (int i = 0; i < N; ++i) counts[i] = initial_count(i);
  run<MirroredOperations<N>>(1, x.data(), n, counts.data(), out.data());
  int32_t total = 0;
  for (int i = 0; i < N; ++i) {
    CAPTURE(i);
    REQUIRE(out[i] == (i < n ? x[i] : -7) * 3 + i);
    REQUIRE(out[N + i] == x[2 * i]);
    REQUIRE(out[2 * N + i] == (i < n ? 0 : initial_count(i)));
    REQUIRE(counts[i] == initial_count(i) + (i < n ? 0 : i));
    if (i < n) total += x[i];
  }
  CHECK(out[3 * N] == total);
}

}  // namespace

TEST_CASE("tile: integer elementwise operations, scalars broadcast on either side") {
  check_int_elementwise<kSmall>();
  check_int_elementwise<kLarge>();
}

TEST_CASE("tile: mixed integer and float operands, conversions") {
  check_float_elementwise<kSmall>();
  check_float_elementwise<kLarge>();
}

// iris::clamp (.iris's clamp) against min(max(x, lo), hi) written out here:
// every i8 value against bounds that cross, and floats with NaN and lo > hi.
TEST_CASE("tile: clamp is min(max(x, lo), hi)") {
  for (int x = -128; x < 128; ++x)
    for (int lo : {-128, -5, 0, 100})
      for (int hi : {-128, -6, 0, 99, 127}) {
        CAPTURE(x);
        CAPTURE(lo);
        CAPTURE(hi);
        const auto got = iris::clamp(static_cast<int8_t>(x), static_cast<int8_t>(lo), static_cast<int8_t>(hi));
        static_assert(std::is_same_v<decltype(got), const int8_t>);
        REQUIRE(got == std::min(std::max(x, lo), hi));
      }
  CHECK(iris::clamp(-3.5f, -1.0f, 2.5f) == -1.0f);
  CHECK(iris::clamp(7.0f, -1.0f, 2.5f) == 2.5f);
  CHECK(iris::clamp(0.25f, -1.0f, 2.5f) == 0.25f);
  CHECK(iris::clamp(0.25f, 3.0f, 2.5f) == 2.5f);  // lo > hi: hi
  CHECK(std::isnan(iris::clamp(std::numeric_limits<float>::quiet_NaN(), -1.0f, 2.5f)));
}

TEST_CASE("tile: masked loads give `other` (or zero) where the mask is off and never read there") {
  for (int n : {0, 1, 5, kSmall - 3, kSmall}) check_masked_loads<kSmall>(n);
  for (int n : {0, 3, 4, 511, 1021, kLarge}) check_masked_loads<kLarge>(n);
}

TEST_CASE("tile: masked stores leave masked-off elements and the element past the end alone") {
  for (int n : {0, 1, 6, kSmall - 3, kSmall}) check_masked_stores<kSmall>(n);
  for (int n : {0, 3, 4, 513, 1021, kLarge}) check_masked_stores<kLarge>(n);
}

TEST_CASE("tile: sum, max and min of all-negative, all-positive and partially masked tiles") {
  check_reductions_of_type<int32_t>();
  check_reductions_of_type<float>();
}

TEST_CASE("tile: translation of scalar, contiguous and gathered pointers to every rank's heap") {
  check_translation<kSmall>();
  check_translation<kLarge>();
}

TEST_CASE("tile: read-modify-write atomics return the old value, store the new one, skip masked-off elements") {
  for (int n : {0, 7, kSmall}) check_tile_rmw<kSmall>(n);
  for (int n : {5, 1000, kLarge}) check_tile_rmw<kLarge>(n);
}

TEST_CASE("tile: compare-and-swap stores only where the comparison holds; atomic read and write") {
  check_tile_cas<kSmall>();
  check_tile_cas<kLarge>();
}

TEST_CASE("tile: a signal releases a wait, every comparison returns when it holds") {
  check_signals<kSmall>();
  check_signals<kLarge>();
}

TEST_CASE("tile: the layout is part of a tile's type; operations keep their operands' layout") {
  using iris::Blocked;
  using iris::ContigPtrs;
  using iris::Range;
  using iris::Tile;
  constexpr int N = kSmall;
  using M = Mirrored<N>;
  // Spelled without a layout, as generated code spells them, and as created,
  // tiles have the default layout.
  CHECK(std::is_same_v<Tile<float, N>, Tile<float, N, Blocked<N>>>);
  CHECK(std::is_same_v<decltype(iris::full<float, N>(1.0f)), Tile<float, N>>);
  CHECK(std::is_same_v<decltype(iris::zeros<int32_t, N>()), Tile<int32_t, N>>);
  CHECK(std::is_same_v<decltype(iris::arange<N>()), Range<int32_t, N>>);
  CHECK(!std::is_same_v<Tile<float, N, M>, Tile<float, N>>);

  // Operands for decltype only (constexpr: nvcc warns about variables never read).
  using F = Tile<float, N, M>;
  constexpr Range<int32_t, N, M> i{0};
  constexpr F f{};
  constexpr float* p = nullptr;
  constexpr const Program* program = nullptr;
  CHECK(std::is_same_v<decltype(iris::add(i, 3)), Range<int32_t, N, M>>);
  CHECK(std::is_same_v<decltype(iris::as<int64_t>(i)), Range<int64_t, N, M>>);
  CHECK(std::is_same_v<decltype(iris::as<float>(i)), F>);
  CHECK(std::is_same_v<decltype(iris::add(p, i)), ContigPtrs<float, N, M>>);
  CHECK(std::is_same_v<decltype(iris::sub(iris::add(p, i), 1)), ContigPtrs<float, N, M>>);
  CHECK(std::is_same_v<decltype(iris::add(p, iris::mul(i, 2))), Tile<float*, N, M>>);
  CHECK(std::is_same_v<decltype(iris::add(f, i)), F>);
  CHECK(std::is_same_v<decltype(iris::mul(2.0f, f)), F>);
  CHECK(std::is_same_v<decltype(iris::neg(f)), F>);
  CHECK(std::is_same_v<decltype(iris::lt(f, 0.0f)), Tile<bool, N, M>>);
  CHECK(std::is_same_v<decltype(iris::where(iris::lt(f, 0.0f), 1.0f, f)), F>);
  CHECK(std::is_same_v<decltype(iris::load(iris::add(p, i), iris::lt(i, 5), f)), F>);
  CHECK(std::is_same_v<decltype(iris::translate_to(*program, iris::add(p, i), 0)), ContigPtrs<float, N, M>>);
  CHECK(std::is_same_v<decltype(iris::atomic_rmw<AtomicOp::add, Sem::relaxed, Scope::gpu>(iris::add(p, i), f)), F>);
  CHECK(std::is_same_v<decltype(iris::atomic_read<Sem::relaxed, Scope::gpu>(iris::add(p, i))), F>);
}

TEST_CASE("tile: loads, stores, elementwise operations, atomics and sums over a tile of another layout") {
  for (int n : {0, 5, kSmall}) check_mirrored_operations<kSmall>(n);
  for (int n : {3, 700, kLarge}) check_mirrored_operations<kLarge>(n);
}

#if !IRIS_GPU
// A wait whose condition is false must not return (on a GPU it would hang;
// the CPU world of one rank reports the deadlock instead).
struct WaitFalse {
  static void run(const Program&, int32_t* flag, int op, int32_t value) {
    iris::wait<Sem::acquire, Scope::sys>(flag, static_cast<Cmp>(op), value);
  }
};

TEST_CASE("tile: a wait on a false condition does not return") {
  Buffer<int32_t> flag(1, 3);
  const struct {
    Cmp op;
    int32_t value;
  } waits[] = {{Cmp::eq, 4}, {Cmp::ne, 3}, {Cmp::lt, 3}, {Cmp::le, 2}, {Cmp::gt, 3}, {Cmp::ge, 4}};
  for (const auto& w : waits) {
    CAPTURE(static_cast<int>(w.op));
    CHECK_THROWS_WITH_AS(run<WaitFalse>(1, flag.data(), static_cast<int>(w.op), w.value),
                         doctest::Contains("deadlock in wait_until"), iris::Error);
  }
}

// Two ranks: rank 0 writes a payload with plain stores and raises a flag with
// release; rank 1 waits with acquire and reads it. Under ThreadSanitizer
// (tile.unit.tsan) a signal or wait without its order is a reported race.
struct Producer {
  static void run(const Program& p, int32_t* payload, int32_t* flag) {
    using namespace iris;
    const auto i = arange<kLarge>();
    store(add(translate_to(p, payload, 1), i), add(i, 7));
    raise_signal<false, Sem::release, Scope::sys>(translate_to(p, flag, 1), 1);
  }
};
struct Consumer {
  static void run(const Program&, int32_t* payload, int32_t* flag, int32_t* copy) {
    using namespace iris;
    const auto i = arange<kLarge>();
    wait<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
    store(add(copy, i), load(add(payload, i)));
  }
};

TEST_CASE("tile: release and acquire order a payload between two ranks") {
  for (int round = 0; round < 20; ++round) {
    std::vector<int32_t> copy(kLarge, -1);
    iris::run_threads(2, 1 << 20, [&](iris::Rank& r) {
      auto* payload = r.allocate<int32_t>(kLarge);
      auto* flag = r.allocate<int32_t>(1);
      *flag = 0;
      r.barrier();
      if (r.rank() == 0) iris::launch_kernel<Producer>({1}, {}, r.device_context(), payload, flag);
      else iris::launch_kernel<Consumer>({1}, {}, r.device_context(), payload, flag, copy.data());
    });
    for (int i = 0; i < kLarge; ++i) REQUIRE(copy[i] == i + 7);
  }
}

// Checked mode at the tile level (what irisc --checked emits around an
// access): an access may reach the last element of its allocation, not one
// element past it; masked-off elements do not count.
struct CheckedLoad {
  static void run(const Program& p, const float* base, int offset, int n, float* out) {
    using namespace iris;
    const auto i = arange<kSmall>();
    store(add(out, i), load(add(base + offset, i), lt(i, n), 0.0f, Checked{p, "bounds.iris", 7}));
  }
};

TEST_CASE("tile: checked mode allows the last element of an allocation and reports one past it") {
  constexpr int kFloats = 128;  // 512 bytes: a whole number of allocation granules
  auto error_of = [&](int offset, int n) {
    std::vector<float> out(kSmall);
    try {
      iris::run_threads(1, 1 << 20, [&](iris::Rank& r) {
        const float* block = r.allocate<float>(kFloats);
        r.allocate<float>(kFloats);  // the next allocation: one past the end lands in it
        iris::launch_kernel<CheckedLoad>({1}, {}, r.device_context(), block, offset, n, out.data());
      });
    } catch (const iris::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(kFloats - kSmall, kSmall) == "");
  CHECK(error_of(kFloats - kSmall + 1, kSmall - 1) == "");
  const std::string past = error_of(kFloats - kSmall + 1, kSmall);
  CHECK(past.find("bounds.iris:7: error:") != std::string::npos);
  CHECK(past.find("allocation") != std::string::npos);
}

// The race detector: rank 0 stores into rank 1's element, rank 1 loads it;
// reported unless a barrier orders the two.
struct CheckedStore {
  static void run(const Program& p, int32_t* x) {
    using namespace iris;
    store(translate_to(p, x, 1), 5, NoMask{}, Checked{p, "race.iris", 3});
  }
};
struct CheckedRead {
  static void run(const Program& p, int32_t* x, int32_t* out) {
    using namespace iris;
    store(out, load(x, NoMask{}, NoOther{}, Checked{p, "race.iris", 9}));
  }
};

TEST_CASE("tile: checked mode reports an unordered store and load of one element by two ranks") {
  auto error_of = [&](bool barrier) {
    int32_t seen = 0;
    try {
      iris::run_threads(2, 1 << 20, [&](iris::Rank& r) {
        int32_t* x = r.allocate<int32_t>(1);
        if (r.rank() == 0) iris::launch_kernel<CheckedStore>({1}, {}, r.device_context(), x);
        if (barrier) r.barrier();
        if (r.rank() == 1) iris::launch_kernel<CheckedRead>({1}, {}, r.device_context(), x, &seen);
      });
    } catch (const iris::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string race = error_of(false);
  CHECK(race.find("data race") != std::string::npos);
  CHECK(race.find("race.iris:") != std::string::npos);
  CHECK(error_of(true) == "");
}
#endif
