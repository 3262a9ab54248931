// Tests of the device atomics: single-thread semantics of every operation, then
// contention from all ranks on another rank's heap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "iris/device_cpu.hpp"
#include "iris/host.hpp"
#include "iris/launch_cpu.hpp"

using iris::Cmp;
using iris::Scope;
using iris::Sem;

namespace {
constexpr std::size_t kHeap = 1 << 20;
}

TEST_CASE_TEMPLATE("atomics: every operation returns the old value and stores the new one", T, int, unsigned,
                   std::int64_t, std::uint64_t) {
  T x = 12;
  CHECK(iris::atomic_add<Sem::relaxed, Scope::gpu>(&x, T(5)) == T(12));
  CHECK(x == T(17));
  CHECK(iris::atomic_sub<Sem::acq_rel, Scope::sys>(&x, T(7)) == T(17));
  CHECK(x == T(10));
  CHECK(iris::atomic_and<Sem::acquire, Scope::block>(&x, T(6)) == T(10));  // 1010 & 0110
  CHECK(x == T(2));
  CHECK(iris::atomic_or<Sem::release, Scope::gpu>(&x, T(9)) == T(2));
  CHECK(x == T(11));
  CHECK(iris::atomic_xor<Sem::relaxed, Scope::gpu>(&x, T(3)) == T(11));  // 1011 ^ 0011
  CHECK(x == T(8));
  CHECK(iris::atomic_min<Sem::relaxed, Scope::gpu>(&x, T(20)) == T(8));
  CHECK(x == T(8));
  CHECK(iris::atomic_min<Sem::acq_rel, Scope::gpu>(&x, T(3)) == T(8));
  CHECK(x == T(3));
  CHECK(iris::atomic_max<Sem::relaxed, Scope::gpu>(&x, T(1)) == T(3));
  CHECK(x == T(3));
  CHECK(iris::atomic_max<Sem::release, Scope::gpu>(&x, T(40)) == T(3));
  CHECK(x == T(40));
  CHECK(iris::atomic_xchg<Sem::acq_rel, Scope::sys>(&x, T(5)) == T(40));
  CHECK(x == T(5));
  CHECK(iris::atomic_cas<Sem::acq_rel, Scope::sys>(&x, T(4), T(9)) == T(5));  // fails: unchanged
  CHECK(x == T(5));
  CHECK(iris::atomic_cas<Sem::acquire, Scope::sys>(&x, T(5), T(9)) == T(5));  // succeeds
  CHECK(x == T(9));
  CHECK(iris::atomic_cas<Sem::release, Scope::sys>(&x, T(1), T(2)) == T(9));
  CHECK(iris::atomic_load<Sem::acquire, Scope::sys>(&x) == T(9));
  iris::atomic_store<Sem::release, Scope::sys>(&x, T(77));
  CHECK(iris::atomic_load<Sem::relaxed, Scope::gpu>(&x) == T(77));
  iris::signal_set<Sem::release, Scope::sys>(&x, T(3));
  iris::signal_add<Sem::relaxed, Scope::sys>(&x, T(4));
  CHECK(x == T(7));
}

TEST_CASE("atomics: the value type follows the pointer (literals convert)") {
  std::uint64_t u = 1;
  CHECK(iris::atomic_add<Sem::relaxed, Scope::sys>(&u, 2) == 1u);  // int literal, u64 pointer
  CHECK(iris::atomic_cas<Sem::relaxed, Scope::sys>(&u, 3, 10) == 3u);
  iris::wait_until<Sem::acquire, Scope::sys>(&u, Cmp::eq, 10);  // satisfied: returns at once
  float f = 0;
  iris::atomic_add<Sem::relaxed, Scope::sys>(&f, 1);
  CHECK(f == 1.0f);
}

TEST_CASE("atomics: signed min/max and floating point") {
  int s = -5;
  CHECK(iris::atomic_min<Sem::relaxed, Scope::gpu>(&s, -9) == -5);
  CHECK(s == -9);
  CHECK(iris::atomic_max<Sem::relaxed, Scope::gpu>(&s, 0) == -9);
  CHECK(s == 0);

  float f = 1.5f;
  CHECK(iris::atomic_add<Sem::relaxed, Scope::gpu>(&f, 2.25f) == 1.5f);
  CHECK(f == 3.75f);
  CHECK(iris::atomic_sub<Sem::relaxed, Scope::gpu>(&f, 0.75f) == 3.75f);
  CHECK(f == 3.0f);
  CHECK(iris::atomic_max<Sem::relaxed, Scope::gpu>(&f, 4.5f) == 3.0f);
  CHECK(f == 4.5f);
  CHECK(iris::atomic_min<Sem::relaxed, Scope::gpu>(&f, -1.0f) == 4.5f);
  CHECK(f == -1.0f);
  CHECK(iris::atomic_xchg<Sem::relaxed, Scope::gpu>(&f, 8.0f) == -1.0f);
  CHECK(iris::atomic_cas<Sem::relaxed, Scope::gpu>(&f, 8.0f, 0.5f) == 8.0f);
  CHECK(f == 0.5f);

  double d = 0.25;
  CHECK(iris::atomic_add<Sem::acq_rel, Scope::sys>(&d, 0.5) == 0.25);
  CHECK(d == 0.75);

  iris::fence<Sem::acq_rel, Scope::sys>();  // compiles and runs for every Sem
  iris::fence<Sem::acquire, Scope::gpu>();
  iris::fence<Sem::release, Scope::block>();
  iris::fence<Sem::relaxed, Scope::sys>();
}

TEST_CASE("atomics: a counter on rank 0 incremented from every rank and program") {
  constexpr int iters = 2000, grid = 4;
  for (int n : {1, 2, 4, 8}) {
    CAPTURE(n);
    std::vector<std::vector<std::uint32_t>> olds(n);
    std::uint64_t final_value = 0;
    iris::run_threads(n, kHeap, [&](iris::Rank& r) {
      const iris::DeviceContext ctx = r.device_context();
      auto* counter = r.allocate<std::uint32_t>(1);
      r.barrier();  // rank 0's counter is zero before anybody adds
      iris::launch(ctx, grid, [&](int, int) {
        std::uint32_t* target = iris::translate(counter, 0, ctx);
        for (int i = 0; i < iters; ++i) {
          olds[r.rank()].push_back(iris::atomic_add<Sem::relaxed, Scope::sys>(target, std::uint32_t{1}));
        }
      });
      r.barrier();
      if (r.rank() == 0) final_value = iris::atomic_load<Sem::relaxed, Scope::sys>(counter);
    });
    const std::uint64_t total = std::uint64_t{1} * n * grid * iters;
    CHECK(final_value == total);
    // Every increment saw a different old value: together exactly 0 .. total-1.
    std::vector<std::uint32_t> all;
    for (auto& v : olds) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    std::vector<std::uint32_t> expected(total);
    std::iota(expected.begin(), expected.end(), 0u);
    CHECK(all == expected);
  }
}

TEST_CASE("atomics: atomic_sub from every rank counts down to zero") {
  constexpr int n = 4, iters = 3000;
  std::vector<std::int64_t> sum_of_olds(n, 0);
  std::int64_t final_value = -1;
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const iris::DeviceContext ctx = r.device_context();
    auto* counter = r.allocate<std::int64_t>(1);
    if (r.rank() == 0) *counter = n * iters;
    r.barrier();
    std::int64_t* target = iris::translate(counter, 0, ctx);
    for (int i = 0; i < iters; ++i) sum_of_olds[r.rank()] += iris::atomic_sub<Sem::acq_rel, Scope::sys>(target, std::int64_t{1});
    r.barrier();
    if (r.rank() == 0) final_value = *counter;
  });
  CHECK(final_value == 0);
  // The old values were n*iters, n*iters-1, ..., 1 in some order.
  const std::int64_t total = std::int64_t{n} * iters;
  CHECK(std::accumulate(sum_of_olds.begin(), sum_of_olds.end(), std::int64_t{0}) == total * (total + 1) / 2);
}

TEST_CASE("atomics: a CAS spin lock protects a plain counter") {
  constexpr int iters = 1000;
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    long final_count = -1;
    iris::run_threads(n, kHeap, [&](iris::Rank& r) {
      const iris::DeviceContext ctx = r.device_context();
      auto* lock = r.allocate<int>(1);
      auto* count = r.allocate<long>(1);
      r.barrier();
      iris::launch(ctx, 1, [&](int, int) {
        int* l = iris::translate(lock, 0, ctx);
        long* c = iris::translate(count, 0, ctx);
        for (int i = 0; i < iters; ++i) {
          while (iris::atomic_cas<Sem::acquire, Scope::sys>(l, 0, 1) != 0) std::this_thread::yield();
          *c = *c + 1;  // not atomic: only the lock makes this safe
          iris::atomic_store<Sem::release, Scope::sys>(l, 0);
        }
      });
      r.barrier();
      if (r.rank() == 0) final_count = *count;
    });
    CHECK(final_count == static_cast<long>(n) * iters);
  }
}

TEST_CASE("atomics: float add, bitwise or and min/max from every rank") {
  constexpr int n = 8, iters = 1000;
  float sum = 0;
  unsigned bits = 0;
  int lo = 0, hi = 0;
  iris::run_threads(n, kHeap, [&](iris::Rank& r) {
    const iris::DeviceContext ctx = r.device_context();
    auto* f = r.allocate<float>(1);
    auto* b = r.allocate<unsigned>(1);
    auto* mn = r.allocate<int>(2);
    if (r.rank() == 0) {
      mn[0] = 1 << 30;
      mn[1] = -(1 << 30);
    }
    r.barrier();
    const int me = r.rank();
    for (int i = 0; i < iters; ++i) iris::atomic_add<Sem::relaxed, Scope::sys>(iris::translate(f, 0, ctx), 0.25f);
    iris::atomic_or<Sem::relaxed, Scope::sys>(iris::translate(b, 0, ctx), 1u << me);
    iris::atomic_min<Sem::relaxed, Scope::sys>(iris::translate(mn, 0, ctx), me * 7 + 3);
    iris::atomic_max<Sem::relaxed, Scope::sys>(iris::translate(mn + 1, 0, ctx), me * 7 + 3);
    r.barrier();
    if (me == 0) {
      sum = *f;
      bits = *b;
      lo = mn[0];
      hi = mn[1];
    }
  });
  CHECK(sum == 0.25f * n * iters);  // exact: all partial sums are multiples of 1/4 below 2^22
  CHECK(bits == (1u << n) - 1);
  CHECK(lo == 3);
  CHECK(hi == (n - 1) * 7 + 3);
}
