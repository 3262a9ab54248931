// The built-in functions end to end on the CPU target: the kernels of
// memory.iris, atomics.iris, ranks.iris and tiles.iris (2-D) call every built-in with two or
// more value arguments positionally, with values chosen so that swapping any
// two arguments, or getting a semantic rule wrong (load's `other`, masked-off
// stores, old values returned by atomics, the identity of max and min, the
// order of a wait_until comparison, ...), changes the result. The expected
// values are computed here on the host from the rules in docs/language.md,
// never from the kernels' output. Built twice: plain and with irisc --checked.
#include "atomics.iris.hpp"
#include "memory.iris.hpp"
#include "ranks.iris.hpp"
#include "tiles.iris.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>

namespace {

constexpr int B = 16;  // the tile size of the kernels
constexpr std::int64_t big = std::int64_t{1} << 40;

std::mutex report_lock;  // ranks are threads
int failures = 0;
int checks = 0;

template <class T>
std::string show(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(x));
    return buf;
  } else {
    return std::to_string(x);
  }
}

// One element: what[index] must equal expected (floats: the chosen values
// are exact in binary, so exact equality).
template <class T>
void expect(const std::string& what, int index, T got, T expected) {
  std::lock_guard<std::mutex> lock(report_lock);
  ++checks;
  if (got == expected) return;
  if (failures++ < 60)
    std::fprintf(stderr, "FAILED %s[%d] = %s, expected %s\n", what.c_str(), index, show(got).c_str(),
                 show(expected).c_str());
}

// Every element of got[0 .. count) against expected[0 .. count).
template <class T>
void expect_all(const std::string& what, const T* got, const T* expected, int count) {
  for (int i = 0; i < count; ++i) expect(what, i, got[i], expected[i]);
}

// Runs body on `ranks` ranks; a runtime error (a wait that can never be
// satisfied, a checked-mode report) is a failure of the group.
void run(const char* group, int ranks, const std::function<void(iris::Rank&)>& body) {
  try {
    iris::run_threads(ranks, 1 << 20, body);
  } catch (const iris::Error& e) {
    std::lock_guard<std::mutex> lock(report_lock);
    ++failures;
    std::fprintf(stderr, "FAILED %s on %d rank(s): iris::Error: %s\n", group, ranks, e.what());
  }
}

template <class T>
void fill(T* p, int count, T value) {
  std::fill(p, p + count, value);
}

// ------------------------------------------------------------------ memory.iris

void test_loads() {
  run("loads", 1, [](iris::Rank& rank) {
    constexpr int n = 11, other = -77;
    int32_t* x = rank.allocate<int32_t>(3 * B);
    int32_t* out = rank.allocate<int32_t>(5 * B + 4);
    // x[0 .. n) data, x[n ..) sentinels that a masked-off lane must not return.
    for (int i = 0; i < 3 * B; ++i) x[i] = i < n ? 100 + 7 * i : -5000 - i;
    fill(out, 5 * B + 4, -1);
    iris_kernels::loads<>::launch({1}, rank.device_context(), x, n, other, out);
    int32_t e[5 * B + 4];
    for (int i = 0; i < B; ++i) {
      e[i] = i < n ? x[i] : other;
      e[B + i] = i < n ? x[i] : 0;
      e[2 * B + i] = i < n ? x[i] : -3 * i - 1;
      e[3 * B + i] = i < n ? x[1 + i] : other;
      e[4 * B + i] = i < n / 2 ? x[2 * i] : other;
    }
    e[5 * B] = other;
    e[5 * B + 1] = x[3];
    e[5 * B + 2] = 0;
    e[5 * B + 3] = x[5];
    expect_all("loads.out", out, e, 5 * B + 4);
  });
}

void test_stores() {
  run("stores", 1, [](iris::Rank& rank) {
    constexpr int n = 11, v = 4, sentinel = -999;
    int32_t* out = rank.allocate<int32_t>(5 * B);
    fill(out, 5 * B, sentinel);
    iris_kernels::stores<>::launch({1}, rank.device_context(), out, n, v);
    int32_t e[5 * B];
    fill(e, 5 * B, sentinel);
    for (int i = 0; i < n; ++i) e[i] = i * 10 + v;
    for (int i = 0; i < n; ++i) e[B + 1 + i] = i - v;
    for (int i = 0; i < n / 2; ++i) e[2 * B + 2 * i] = i + v;
    e[4 * B + 1] = v + 1;
    e[4 * B + 2] = v + 2;
    expect_all("stores.out", out, e, 5 * B);
  });
}

void test_wheres() {
  run("wheres", 1, [](iris::Rank& rank) {
    constexpr int n = 6;
    int32_t* a = rank.allocate<int32_t>(B);
    int32_t* b = rank.allocate<int32_t>(B);
    int32_t* out = rank.allocate<int32_t>(4 * B + 2);
    float* outf = rank.allocate<float>(B);
    for (int i = 0; i < B; ++i) a[i] = 5 * i - 30, b[i] = 17 - 3 * i;
    fill(out, 4 * B + 2, -1);
    fill(outf, B, 0.0f);
    iris_kernels::wheres<>::launch({1}, rank.device_context(), a, b, n, out, outf);
    int32_t e[4 * B + 2];
    float ef[B];
    for (int i = 0; i < B; ++i) {
      e[i] = i < n ? a[i] : b[i];
      e[B + i] = a[i] > b[i] ? a[i] - b[i] : 7;
      e[2 * B + i] = b[i];
      e[3 * B + i] = 5;
      ef[i] = i % 3 == 0 ? 1.5f : -2.5f;
    }
    e[4 * B] = n;       // n > 5
    e[4 * B + 1] = -n;  // !(n < 5)
    expect_all("wheres.out", out, e, 4 * B + 2);
    expect_all("wheres.outf", outf, ef, B);
  });
}

void test_fills() {
  run("fills", 1, [](iris::Rank& rank) {
    constexpr float v = 2.75f;
    constexpr int64_t w = big + 3;
    float* outf = rank.allocate<float>(2 * B);
    int64_t* outl = rank.allocate<int64_t>(2 * B);
    int32_t* outi = rank.allocate<int32_t>(2 * B);
    fill(outf, 2 * B, 9.5f);
    fill(outl, 2 * B, int64_t{77});
    fill(outi, 2 * B, -1);
    iris_kernels::fills<>::launch({1}, rank.device_context(), v, w, outf, outl, outi);
    float ef[2 * B];
    int64_t el[2 * B];
    int32_t ei[2 * B];
    fill(ei, 2 * B, -1);
    for (int i = 0; i < B; ++i) {
      ef[i] = v;
      ef[B + i] = 0.0f;
      el[i] = w + i;
      el[B + i] = -1;
      ei[i] = 255;  // zeros of u8, minus 1, wraps
    }
    for (int k = 0; k < 8; ++k) ei[B + k] = 9 * (k + 1);  // full(8, 9): 8 elements, each 9
    expect_all("fills.outf", outf, ef, 2 * B);
    expect_all("fills.outl", outl, el, 2 * B);
    expect_all("fills.outi", outi, ei, 2 * B);
  });
}

void test_reductions() {
  run("reductions", 1, [](iris::Rank& rank) {
    constexpr int n = 11;
    int32_t* neg = rank.allocate<int32_t>(B);
    int32_t* pos = rank.allocate<int32_t>(B);
    float* negf = rank.allocate<float>(B);
    float* posf = rank.allocate<float>(B);
    int32_t* out = rank.allocate<int32_t>(13);
    float* outf = rank.allocate<float>(8);
    // All negative (all positive); the lanes from n on hold the largest
    // (smallest) values, so a reduction that sees masked-off memory is caught.
    for (int i = 0; i < B; ++i) {
      neg[i] = i < n ? -(3 + (i * 7) % 13) : -1 - i % 2;
      pos[i] = i < n ? 4 + (i * 5) % 11 : 1 + i % 2;
      negf[i] = i < n ? -0.25f - 0.5f * static_cast<float>((i * 7) % 13) : -0.125f;
      posf[i] = i < n ? 0.75f + 0.5f * static_cast<float>((i * 5) % 11) : 0.5f;
    }
    fill(out, 13, 12345);
    fill(outf, 8, 12345.0f);
    iris_kernels::reductions<>::launch({1}, rank.device_context(), neg, pos, negf, posf, n, out, outf);
    // Plain loops over the host arrays.
    int32_t e[13];
    e[0] = e[6] = e[11] = neg[0];
    e[1] = neg[0];
    e[3] = e[4] = e[7] = e[12] = pos[0];
    e[2] = e[5] = e[8] = 0;
    for (int i = 0; i < B; ++i) {
      if (neg[i] > e[0]) e[0] = neg[i];
      if (neg[i] < e[1]) e[1] = neg[i];
      e[2] += neg[i];
      if (pos[i] > e[3]) e[3] = pos[i];
      if (pos[i] < e[4]) e[4] = pos[i];
      e[5] += pos[i];
      if (i < n) {
        if (neg[i] > e[6]) e[6] = neg[i];
        if (pos[i] < e[7]) e[7] = pos[i];
        e[8] += neg[i];
        if (neg[i] > e[11]) e[11] = neg[i];
        if (pos[i] < e[12]) e[12] = pos[i];
      }
    }
    e[9] = 0;   // max of negatives and the 0s of the masked lanes
    e[10] = 0;  // min of positives and the 0s of the masked lanes
    float ef[8];
    ef[0] = ef[1] = ef[6] = negf[0];
    ef[3] = ef[4] = ef[7] = posf[0];
    ef[2] = ef[5] = 0.0f;
    for (int i = 0; i < B; ++i) {
      if (negf[i] > ef[0]) ef[0] = negf[i];
      if (negf[i] < ef[1]) ef[1] = negf[i];
      ef[2] += negf[i];
      if (posf[i] > ef[3]) ef[3] = posf[i];
      if (posf[i] < ef[4]) ef[4] = posf[i];
      ef[5] += posf[i];
      if (i < n && negf[i] > ef[6]) ef[6] = negf[i];
      if (i < n && posf[i] < ef[7]) ef[7] = posf[i];
    }
    // The rules themselves: the max of negatives is negative, the min of
    // positives positive (a max that starts from 0 returns 0).
    expect("reductions.max_of_negatives_is_negative", 0, out[0] < 0 && outf[0] < 0.0f, true);
    expect("reductions.min_of_positives_is_positive", 0, out[4] > 0 && outf[4] > 0.0f, true);
    expect_all("reductions.out", out, e, 13);
    expect_all("reductions.outf", outf, ef, 8);
  });
}

// ----------------------------------------------------------------- atomics.iris

void test_rmw_i32() {
  run("rmw_i32", 1, [](iris::Rank& rank) {
    constexpr int n = 13, sentinel = -31337;
    int32_t* mem = rank.allocate<int32_t>(8 * B);
    int32_t* vals = rank.allocate<int32_t>(B);
    int32_t* olds = rank.allocate<int32_t>(8 * B);
    int32_t init[8 * B];
    for (int k = 0; k < 8; ++k)
      for (int i = 0; i < B; ++i) init[k * B + i] = 200 - 20 * i + 7 * k;
    for (int i = 0; i < B; ++i) vals[i] = 3 * i * i - 40;
    std::copy(init, init + 8 * B, mem);
    fill(olds, 8 * B, sentinel);
    iris_kernels::rmw_i32<>::launch({1}, rank.device_context(), mem, vals, n, olds);
    const char* names[8] = {"add", "sub", "and", "or", "xor", "min", "max", "xchg"};
    for (int k = 0; k < 8; ++k) {
      for (int i = 0; i < B; ++i) {
        const int32_t old = init[k * B + i], v = vals[i];
        int32_t now = old;
        if (i < n) {
          switch (k) {
            case 0: now = old + v; break;
            case 1: now = old - v; break;
            case 2: now = old & v; break;
            case 3: now = old | v; break;
            case 4: now = old ^ v; break;
            case 5: now = v < old ? v : old; break;
            case 6: now = v > old ? v : old; break;
            case 7: now = v; break;
          }
        }
        expect(std::string("rmw_i32.mem.") + names[k], i, mem[k * B + i], now);
        expect(std::string("rmw_i32.old.") + names[k], i, olds[k * B + i], i < n ? old : sentinel);
      }
    }
  });
}

void test_rmw_scalar() {
  run("rmw_scalar", 1, [](iris::Rank& rank) {
    constexpr int v = 10, sentinel = -31337;
    const int32_t init[10] = {100, 100, 12, 12, 12, 5, 5, 66, 123, 50};
    int32_t* p = rank.allocate<int32_t>(10);
    int32_t* olds = rank.allocate<int32_t>(10);
    std::copy(init, init + 10, p);
    fill(olds, 10, sentinel);
    iris_kernels::rmw_scalar::launch({1}, rank.device_context(), p, v, olds);
    const int32_t now[10] = {110, 90, 12 & 10, 12 | 10, 12 ^ 10, 5, 10, 10, 123, 40};
    const int32_t old[10] = {100, 100, 12, 12, 12, 5, 5, 66, sentinel, 50};
    expect_all("rmw_scalar.p", p, now, 10);
    expect_all("rmw_scalar.old", olds, old, 10);
  });
}

void test_rmw_wide() {
  run("rmw_wide", 1, [](iris::Rank& rank) {
    constexpr int n = 13;
    uint32_t* u = rank.allocate<uint32_t>(2 * B);
    uint32_t* uv = rank.allocate<uint32_t>(B);
    int64_t* l = rank.allocate<int64_t>(2 * B);
    int64_t* lv = rank.allocate<int64_t>(B);
    float* f = rank.allocate<float>(3 * B);
    float* fv = rank.allocate<float>(B);
    uint32_t* uolds = rank.allocate<uint32_t>(2 * B);
    int64_t* lolds = rank.allocate<int64_t>(2 * B);
    float* folds = rank.allocate<float>(3 * B);
    uint32_t uinit[2 * B];
    int64_t linit[2 * B];
    float finit[3 * B];
    for (int i = 0; i < B; ++i) {
      // Unsigned order differs from signed order on these.
      uinit[i] = uinit[B + i] = i % 2 ? 0xFFFFFFF0u - static_cast<uint32_t>(i) : 3u * static_cast<uint32_t>(i);
      uv[i] = i % 3 ? 0xFFFFFF00u + static_cast<uint32_t>(i) : 7u + static_cast<uint32_t>(i);
      linit[i] = linit[B + i] = (i % 2 ? 1 : -1) * (big + i * 1000);
      lv[i] = (std::int64_t{1} << 33) * (i % 5) - (std::int64_t{1} << 35);
      finit[i] = finit[B + i] = finit[2 * B + i] = 0.5f * static_cast<float>(i) - 3.0f;
      fv[i] = 0.25f + static_cast<float>(i);
    }
    std::copy(uinit, uinit + 2 * B, u);
    std::copy(linit, linit + 2 * B, l);
    std::copy(finit, finit + 3 * B, f);
    fill(uolds, 2 * B, 0xABCDu);
    fill(lolds, 2 * B, int64_t{-31337});
    fill(folds, 3 * B, 99.5f);
    iris_kernels::rmw_wide<>::launch({1}, rank.device_context(), u, uv, l, lv, f, fv, n, uolds, lolds, folds);
    for (int i = 0; i < B; ++i) {
      const bool on = i < n;
      expect("rmw_wide.u.min", i, u[i], on ? std::min(uinit[i], uv[i]) : uinit[i]);
      expect("rmw_wide.u.max", i, u[B + i], on ? std::max(uinit[B + i], uv[i]) : uinit[B + i]);
      expect("rmw_wide.uold.min", i, uolds[i], on ? uinit[i] : 0xABCDu);
      expect("rmw_wide.uold.max", i, uolds[B + i], on ? uinit[B + i] : 0xABCDu);
      expect("rmw_wide.l.max", i, l[i], on ? std::max(linit[i], lv[i]) : linit[i]);
      expect("rmw_wide.l.sub", i, l[B + i], on ? linit[B + i] - lv[i] : linit[B + i]);
      expect("rmw_wide.lold.max", i, lolds[i], on ? linit[i] : int64_t{-31337});
      expect("rmw_wide.lold.sub", i, lolds[B + i], on ? linit[B + i] : int64_t{-31337});
      expect("rmw_wide.f.add", i, f[i], on ? finit[i] + fv[i] : finit[i]);
      expect("rmw_wide.f.sub", i, f[B + i], on ? finit[B + i] - fv[i] : finit[B + i]);
      expect("rmw_wide.f.xchg", i, f[2 * B + i], on ? fv[i] : finit[2 * B + i]);
      for (int k = 0; k < 3; ++k)
        expect("rmw_wide.fold", k * B + i, folds[k * B + i], on ? finit[k * B + i] : 99.5f);
    }
  });
}

void test_cas() {
  run("cas", 1, [](iris::Rank& rank) {
    int32_t* p = rank.allocate<int32_t>(B + 2);
    int32_t* cmp = rank.allocate<int32_t>(B);
    int32_t* vals = rank.allocate<int32_t>(B);
    int32_t* olds = rank.allocate<int32_t>(B + 2);
    int64_t* s = rank.allocate<int64_t>(2);
    int64_t* olds64 = rank.allocate<int64_t>(2);
    int32_t init[B + 2];
    for (int i = 0; i < B; ++i) {
      init[i] = 10 * i + 1;
      cmp[i] = i % 2 == 0 ? init[i] : init[i] + 1;  // even lanes match
      vals[i] = 500 + i;                            // never equal to compare
    }
    init[B] = 5;
    init[B + 1] = 9;
    std::copy(init, init + B + 2, p);
    fill(olds, B + 2, -1);
    s[0] = s[1] = big + 3;
    olds64[0] = olds64[1] = -1;
    iris_kernels::cas<>::launch({1}, rank.device_context(), p, cmp, vals, olds, s, olds64);
    for (int i = 0; i < B; ++i) {
      expect("cas.p", i, p[i], i % 2 == 0 ? vals[i] : init[i]);
      expect("cas.old", i, olds[i], init[i]);
    }
    expect("cas.p", B, p[B], 9);          // 5 == compare 5: set to 9
    expect("cas.p", B + 1, p[B + 1], 9);  // 9 != compare 4: unchanged
    expect("cas.old", B, olds[B], 5);
    expect("cas.old", B + 1, olds[B + 1], 9);
    expect("cas.s", 0, s[0], 2 * big + 5);
    expect("cas.s", 1, s[1], big + 3);
    expect("cas.old64", 0, olds64[0], big + 3);
    expect("cas.old64", 1, olds64[1], big + 3);
  });
}

void test_load_store() {
  run("load_store", 1, [](iris::Rank& rank) {
    constexpr int v = 6;
    constexpr float w = 1.25f;
    int32_t* p = rank.allocate<int32_t>(3 * B);
    float* q = rank.allocate<float>(2);
    int32_t* out = rank.allocate<int32_t>(B + 1);
    float* outf = rank.allocate<float>(1);
    fill(p, 3 * B, -1);
    for (int i = 0; i < B; ++i) p[2 * B + i] = 40 - i * i;
    q[0] = 0.0f;
    q[1] = 8.5f;
    fill(out, B + 1, -2);
    outf[0] = 0.0f;
    iris_kernels::load_store<>::launch({1}, rank.device_context(), p, q, v, w, out, outf);
    for (int i = 0; i < B; ++i) {
      expect("load_store.p", i, p[i], 3 * i + v);
      expect("load_store.out", i, out[i], 40 - i * i);
    }
    expect("load_store.p", B, p[B], v - 1);
    expect("load_store.p", B + 1, p[B + 1], -1);
    expect("load_store.out", B, out[B], 40 - 9);
    expect("load_store.q", 0, q[0], w);
    expect("load_store.q", 1, q[1], 8.5f);
    expect("load_store.outf", 0, outf[0], 8.5f);
  });
}

void test_signals() {
  run("signals", 1, [](iris::Rank& rank) {
    int32_t* f = rank.allocate<int32_t>(4);
    int64_t* g = rank.allocate<int64_t>(2);
    fill(f, 4, 1000);
    g[0] = 5;
    g[1] = 77;
    iris_kernels::signals::launch({1}, rank.device_context(), f, g);
    const int32_t ef[4] = {42, 9, 1005, 1000};  // set 40 then add 2; set by default; add 5; untouched
    expect_all("signals.f", f, ef, 4);
    expect("signals.g", 0, g[0], big + 5);
    expect("signals.g", 1, g[1], big + 1);
  });
}

void test_waits() {
  run("waits", 1, [](iris::Rank& rank) {
    int32_t* f = rank.allocate<int32_t>(1);
    int64_t* g = rank.allocate<int64_t>(1);
    int32_t* progress = rank.allocate<int32_t>(10);
    f[0] = 5;
    g[0] = big + 7;
    fill(progress, 10, 0);
    iris_kernels::waits::launch({1}, rank.device_context(), f, g, progress);
    for (int k = 0; k < 10; ++k) expect("waits.progress", k, progress[k], 1);
    expect("waits.f", 0, f[0], 5);
    expect("waits.g", 0, g[0], big + 7);
  });
}

// ------------------------------------------------------------------- ranks.iris

void test_ids() {
  run("ids", 1, [](iris::Rank& rank) {
    constexpr int gx = 4, gy = 3, gz = 2, total = gx * gy * gz;
    int32_t* out = rank.allocate<int32_t>(total * 6);
    fill(out, total * 6, -1);
    iris_kernels::ids::launch({gx, gy, gz}, rank.device_context(), out);
    for (int z = 0; z < gz; ++z)
      for (int y = 0; y < gy; ++y)
        for (int x = 0; x < gx; ++x) {
          const int lin = x + gx * (y + gy * z);
          const int32_t e[6] = {x, y, z, gx, gy, gz};
          for (int k = 0; k < 6; ++k) expect("ids.out", lin * 6 + k, out[lin * 6 + k], e[k]);
        }
  });
}

void test_persistent() {
  run("persistent", 1, [](iris::Rank& rank) {
    constexpr int grid = 3, tiles = 10, sentinel = -1;
    int32_t* owner = rank.allocate<int32_t>(tiles + 1);
    int32_t* strided = rank.allocate<int32_t>(4);
    fill(owner, tiles + 1, sentinel);
    fill(strided, 4, sentinel);
    iris_kernels::persistent::launch({grid}, rank.device_context(), owner, tiles, strided);
    for (int t = 0; t < tiles; ++t) expect("persistent.owner", t, owner[t], t % grid);
    expect("persistent.owner", tiles, owner[tiles], sentinel);
    const int32_t e[4] = {1, 5, 9, sentinel};
    expect_all("persistent.strided", strided, e, 4);
    // Sized as a persistent kernel is: one instance per multiprocessor.
    const int sms = rank.multiprocessor_count();
    expect("persistent.multiprocessor_count", 0, sms >= 1, true);
    fill(owner, tiles + 1, sentinel);
    iris_kernels::persistent::launch({sms}, rank.device_context(), owner, tiles, strided);
    for (int t = 0; t < tiles; ++t) expect("persistent.owner(sms)", t, owner[t], t % sms);
  });
}

void test_world(int ranks) {
  run("world", ranks, [ranks](iris::Rank& rank) {
    const int me = rank.rank();
    int32_t* table = rank.allocate<int32_t>(ranks + 1);
    int32_t* out = rank.allocate<int32_t>(2);
    fill(table, ranks + 1, -1);
    fill(out, 2, -1);
    rank.barrier();
    iris_kernels::world::launch({1}, rank.device_context(), table, out);
    rank.barrier();
    const std::string at = "world(" + std::to_string(ranks) + " ranks).rank" + std::to_string(me);
    expect(at + ".out", 0, out[0], me);
    expect(at + ".out", 1, out[1], ranks);
    for (int s = 0; s < ranks; ++s) expect(at + ".table", s, table[s], s * 100 + ranks * 10 + me);
    expect(at + ".table", ranks, table[ranks], -1);
  });
}

void test_exchange(int ranks) {
  run("exchange", ranks, [ranks](iris::Rank& rank) {
    const int me = rank.rank();
    int32_t* payload = rank.allocate<int32_t>(B);
    int32_t* flag = rank.allocate<int32_t>(1);
    int64_t* counter = rank.allocate<int64_t>(1);
    int32_t* out = rank.allocate<int32_t>(B + 2);
    fill(payload, B, -1);
    flag[0] = 0;
    counter[0] = 1;
    fill(out, B + 2, -1);
    int64_t total = 1;
    for (int r = 0; r < ranks; ++r) total += (r + 1) * 10;
    rank.barrier();
    iris_kernels::exchange<>::launch({1}, rank.device_context(), payload, flag, counter, total, out);
    rank.barrier();
    const int sender = (me + ranks - 1) % ranks;
    const std::string at = "exchange(" + std::to_string(ranks) + " ranks).rank" + std::to_string(me);
    for (int i = 0; i < B; ++i) expect(at + ".out", i, out[i], i * 10 + sender * 1000);
    expect(at + ".out", B, out[B], 7 + sender);
    expect(at + ".out", B + 1, out[B + 1], me == 0 ? 1 : -1);
    if (me == 0) expect(at + ".counter", 0, counter[0], total);
  });
}

}  // namespace

// ------------------------------------------------------------------ tiles.iris

// dot over (8, 16) x (16, 4) for each element type, with small integers so
// that every product and sum is exact in each type.
void test_dots() {
  run("dots", 1, [](iris::Rank& rank) {
    constexpr int M = 8, K = 16, N = 4;
    auto* a32 = rank.allocate<float>(M * K);
    auto* b32 = rank.allocate<float>(K * N);
    auto* a16 = rank.allocate<iris::half>(M * K);
    auto* b16 = rank.allocate<iris::half>(K * N);
    auto* ab = rank.allocate<iris::bfloat16>(M * K);
    auto* bb = rank.allocate<iris::bfloat16>(K * N);
    auto* a8 = rank.allocate<int8_t>(M * K);
    auto* b8 = rank.allocate<int8_t>(K * N);
    auto* acc = rank.allocate<float>(M * N);
    auto* acc8 = rank.allocate<int32_t>(M * N);
    auto* out = rank.allocate<float>(3 * M * N);
    auto* out8 = rank.allocate<int32_t>(M * N);
    int A[M][K], B[K][N], C[M][N];
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) A[i][k] = (i * 7 + k * 3) % 9 - 4;
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) B[k][j] = (k * 5 + j * 11) % 7 - 3;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) C[i][j] = i - 2 * j;
    for (int i = 0; i < M * K; ++i) {
      const int v = A[i / K][i % K];
      a32[i] = static_cast<float>(v), a16[i] = v, ab[i] = v, a8[i] = static_cast<int8_t>(v);
    }
    for (int i = 0; i < K * N; ++i) {
      const int v = B[i / N][i % N];
      b32[i] = static_cast<float>(v), b16[i] = v, bb[i] = v, b8[i] = static_cast<int8_t>(v);
    }
    for (int i = 0; i < M * N; ++i) acc[i] = static_cast<float>(C[i / N][i % N]), acc8[i] = C[i / N][i % N];
    fill(out, 3 * M * N, -999.0f);
    fill(out8, M * N, -999);
    iris_kernels::dots::launch({1}, rank.device_context(), a32, b32, a16, b16, ab, bb, a8, b8, acc, acc8, out, out8);
    float e[3 * M * N];
    int32_t e8[M * N];
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int product = 0;
        for (int k = 0; k < K; ++k) product += A[i][k] * B[k][j];
        const int f = i * N + j;
        e[f] = e[M * N + f] = static_cast<float>(product + C[i][j]);
        e[2 * M * N + f] = static_cast<float>(product);
        e8[f] = product + C[i][j];
      }
    expect_all("dots.out", out, e, 3 * M * N);
    expect_all("dots.out8", out8, e8, M * N);
  });
}

void test_shapes() {
  run("shapes", 1, [](iris::Rank& rank) {
    constexpr int R = 4, C = 8, n = 27, sentinel = -999, size = 304;
    int32_t* x = rank.allocate<int32_t>(48);
    int32_t* out = rank.allocate<int32_t>(size);
    for (int i = 0; i < 48; ++i) x[i] = (i * 37) % 101 - 50;
    fill(out, size, sentinel);
    for (int f = 0; f < R * C; ++f) out[208 + f] = 1000 + f;
    iris_kernels::shapes::launch({1}, rank.device_context(), x, n, out);
    int32_t e[size];
    fill(e, size, sentinel);
    auto t = [&](int r, int c) { return r * C + c < n ? x[r * C + c] : -1; };
    int lowest = t(0, 0);
    for (int r = 0; r < R; ++r) {
      int row_sum = 0;
      for (int c = 0; c < C; ++c) {
        const int f = r * C + c;
        e[c * R + r] = t(r, c);
        row_sum += t(r, c);
        lowest = std::min(lowest, t(r, c));
        e[48 + f] = x[r] * 100 + x[8 + c];
        e[80 + f] = e[112 + f] = t(r, c);
        e[144 + f] = f + 3;
        if (c < 5) e[176 + f] = t(r, c);
        e[208 + f] = r < 3 ? 1000 + 2 * f : 1000 + f;
        if (r < 3) e[240 + f] = 1000 + f;
        e[272 + f] = t(r, c) > 0 ? t(r, c) : r;
      }
      e[32 + r] = row_sum;
    }
    for (int c = 0; c < C; ++c) {
      int column_max = t(0, c);
      for (int r = 1; r < R; ++r) column_max = std::max(column_max, t(r, c));
      e[36 + c] = column_max;
    }
    e[44] = lowest;
    expect_all("shapes.out", out, e, size);
  });
}

int main() {
  test_loads();
  test_stores();
  test_wheres();
  test_fills();
  test_reductions();
  test_rmw_i32();
  test_rmw_scalar();
  test_rmw_wide();
  test_cas();
  test_load_store();
  test_signals();
  test_waits();
  test_ids();
  test_persistent();
  test_dots();
  test_shapes();
  for (int ranks : {1, 2}) {
    test_world(ranks);
    test_exchange(ranks);
  }
  if (failures > 60) std::fprintf(stderr, "... and %d more\n", failures - 60);
  if (failures)
    std::printf("builtins: FAILED (%d of %d checks)\n", failures, checks);
  else
    std::printf("builtins: %d checks passed, 0 failed\n", checks);
  return failures ? 1 : 0;
}
