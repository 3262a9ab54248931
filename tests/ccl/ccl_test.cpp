// The tile-level collectives of iris/ccl.iris on the CPU target, through the
// kernels of collectives.iris: every collective (and every reduction
// operation) with 1, 2, 3, 4 and 8 ranks, on data of every type the library
// admits (f32, bf16, f16, i32, i64), each result against the collective
// computed here on the host from its definition (docs/language.md §4.5),
// never from a kernel's output.
//
// Element j of rank r's input is value_of(r, j): small integers, so that sums
// over 8 ranks are exact in every type (bf16 holds integers up to 256) and
// results compare exactly. n is not a multiple of the tile size, so the last
// instance's tile is masked; outputs are poisoned beforehand and padded by a
// tile, so an element written that should not be, in the buffer or past its
// end, shows. Built twice: plain and with irisc --checked, whose CPU race
// detector also reports any access of one rank racing with another's.
#include "collectives.iris.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace {

namespace ccl = iris_kernels::collectives_iris::iris_module_ccl;

constexpr int kBlock = 64;       // the kernels' default tile size
constexpr int32_t kCount = 200;  // elements per rank: 4 tiles, the last one partial
constexpr double kPoison = 1024; // exact in every type tested, and no value_of

std::mutex report_lock;  // ranks are threads
int failures = 0;
long checks = 0;

int64_t value_of(int rank, int64_t j) { return (rank * 37 + j * 11) % 29 - 14; }

// The host's reduction of value_of(p, j) over the ranks, in rank order.
int64_t reduce(int32_t op, int world, const std::function<int64_t(int)>& value) {
  int64_t acc = value(0);
  for (int p = 1; p < world; ++p) {
    int64_t v = value(p);
    acc = op == ccl::OP_SUM ? acc + v : op == ccl::OP_MAX ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

// got[0 .. want.size()) against want, and the padding after it still poisoned.
template <class T>
void expect(const std::string& what, int rank, const T* got, const std::vector<int64_t>& want) {
  std::lock_guard<std::mutex> lock(report_lock);
  for (size_t i = 0; i < want.size() + kBlock; ++i) {
    ++checks;
    const double expected = i < want.size() ? static_cast<double>(want[i]) : kPoison;
    const double value = static_cast<double>(static_cast<float>(got[i]));
    if (value == expected) continue;
    if (failures++ < 40)
      std::fprintf(stderr, "FAILED %s: rank %d, element %zu = %g, expected %g\n", what.c_str(), rank, i, value,
                   expected);
  }
}

template <class T>
T* allocate(iris::Rank& rank, int64_t count, const std::function<double(int64_t)>& value) {
  T* p = rank.allocate<T>(count + kBlock);
  for (int64_t i = 0; i < count + kBlock; ++i) p[i] = T(static_cast<float>(i < count ? value(i) : kPoison));
  return p;
}

// Runs body on `world` ranks: every rank's buffers ready before any kernel,
// every rank's kernel done before any check. A runtime error (a checked-mode
// report) fails the case.
void run(const std::string& what, int world, const std::function<void(iris::Rank&)>& body) {
  try {
    iris::run_threads(world, 1 << 22, body);
  } catch (const iris::Error& e) {
    std::lock_guard<std::mutex> lock(report_lock);
    ++failures;
    std::fprintf(stderr, "FAILED %s: iris::Error: %s\n", what.c_str(), e.what());
  }
}

const iris::Grid kGrid{(kCount + kBlock - 1) / kBlock};

// One run of a collective: its name in reports ("all_reduce max bf16 on 3
// rank(s)") and how many ranks run it.
struct Case {
  std::string what;
  int world;
};

template <class T>
void test_all_gather(const Case& c) {
  run(c.what, c.world, [&](iris::Rank& rank) {
    const int me = rank.rank();
    T* input = allocate<T>(rank, kCount, [&](int64_t j) { return value_of(me, j); });
    T* output = allocate<T>(rank, c.world * kCount, [](int64_t) { return kPoison; });
    rank.barrier();
    iris_kernels::gather<T>::launch(kGrid, rank.device_context(), input, output, kCount);
    rank.barrier();
    std::vector<int64_t> want;
    for (int p = 0; p < c.world; ++p)
      for (int64_t j = 0; j < kCount; ++j) want.push_back(value_of(p, j));
    expect(c.what, me, output, want);
  });
}

template <class T, int32_t Op>
void test_reduce_scatter(const Case& c) {
  run(c.what, c.world, [&](iris::Rank& rank) {
    const int me = rank.rank();
    T* input = allocate<T>(rank, c.world * kCount, [&](int64_t k) { return value_of(me, k); });
    T* output = allocate<T>(rank, kCount, [](int64_t) { return kPoison; });
    rank.barrier();
    iris_kernels::scatter_reduced<T, Op>::launch(kGrid, rank.device_context(), input, output, kCount);
    rank.barrier();
    std::vector<int64_t> want;
    for (int64_t j = 0; j < kCount; ++j)
      want.push_back(reduce(Op, c.world, [&](int p) { return value_of(p, me * kCount + j); }));
    expect(c.what, me, output, want);
  });
}

template <class T, int32_t Op>
void test_all_reduce(const Case& c) {
  run(c.what, c.world, [&](iris::Rank& rank) {
    const int me = rank.rank();
    T* input = allocate<T>(rank, kCount, [&](int64_t j) { return value_of(me, j); });
    T* output = allocate<T>(rank, kCount, [](int64_t) { return kPoison; });
    rank.barrier();
    iris_kernels::reduced<T, Op>::launch(kGrid, rank.device_context(), input, output, kCount);
    rank.barrier();
    std::vector<int64_t> want;
    for (int64_t j = 0; j < kCount; ++j) want.push_back(reduce(Op, c.world, [&](int p) { return value_of(p, j); }));
    expect(c.what, me, output, want);
  });
}

template <class T>
void test_all_to_all(const Case& c) {
  run(c.what, c.world, [&](iris::Rank& rank) {
    const int me = rank.rank();
    T* input = allocate<T>(rank, c.world * kCount, [&](int64_t k) { return value_of(me, k); });
    T* output = allocate<T>(rank, c.world * kCount, [](int64_t) { return kPoison; });
    rank.barrier();
    iris_kernels::exchanged<T>::launch(kGrid, rank.device_context(), input, output, kCount);
    rank.barrier();
    std::vector<int64_t> want;  // block p: block me of rank p's input
    for (int p = 0; p < c.world; ++p)
      for (int64_t j = 0; j < kCount; ++j) want.push_back(value_of(p, me * kCount + j));
    expect(c.what, me, output, want);
  });
}

// Every root in turn.
template <class T>
void test_broadcast(const Case& c) {
  for (int root = 0; root < c.world; ++root) {
    const std::string what = c.what + " from root " + std::to_string(root);
    run(what, c.world, [&](iris::Rank& rank) {
      const int me = rank.rank();
      T* buffer = allocate<T>(rank, kCount, [&](int64_t j) { return value_of(me, j); });
      rank.barrier();
      iris_kernels::broadcast_from<T>::launch(kGrid, rank.device_context(), buffer, kCount, root);
      rank.barrier();
      std::vector<int64_t> want;
      for (int64_t j = 0; j < kCount; ++j) want.push_back(value_of(root, j));
      expect(what, me, buffer, want);
    });
  }
}

template <class T>
void test_type(const std::string& type) {
  for (int world : {1, 2, 3, 4, 8}) {
    auto named = [&](const std::string& collective) {
      return Case{collective + " " + type + " on " + std::to_string(world) + " rank(s)", world};
    };
    test_all_gather<T>(named("all_gather"));
    test_reduce_scatter<T, ccl::OP_SUM>(named("reduce_scatter sum"));
    test_reduce_scatter<T, ccl::OP_MAX>(named("reduce_scatter max"));
    test_reduce_scatter<T, ccl::OP_MIN>(named("reduce_scatter min"));
    test_all_reduce<T, ccl::OP_SUM>(named("all_reduce sum"));
    test_all_reduce<T, ccl::OP_MAX>(named("all_reduce max"));
    test_all_reduce<T, ccl::OP_MIN>(named("all_reduce min"));
    test_all_to_all<T>(named("all_to_all"));
    test_broadcast<T>(named("broadcast"));
  }
}

}  // namespace

int main() {
  test_type<float>("f32");
  test_type<iris::bfloat16>("bf16");
  test_type<iris::half>("f16");
  test_type<int32_t>("i32");
  test_type<int64_t>("i64");
  std::printf("%ld checks, %d failure(s)\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
