// Checked mode end to end: kernels generated with `irisc --checked` must report
// planted bugs as an error naming the .iris file and line, the rank and the
// program instance, and the run must end (no hang) with that error:
//   out_of_heap.iris      an access past the end of the heap, a rank outside [0, world_size)
//   past_allocation.iris  a tile past the end of its allocation, inside the heap,
//                         through a local and through a translated pointer
//   races.iris            write-write and read-write races between ranks; the same
//                         hand-offs ordered by a host barrier, the device barrier, a
//                         release/acquire signal and fences must not be reported
// The expected messages are written out here, from the rules in docs/runtime.md.
#include "out_of_heap.iris.hpp"
#include "past_allocation.iris.hpp"
#include "races.iris.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>

namespace {

int failures = 0;
int checks = 0;

// Runs `body` on 2 ranks; returns the error text, or "" if none was raised.
template <class F>
std::string error_of(F body) {
  try {
    iris::run_threads(2, 1 << 20, body);
  } catch (const iris::Error& e) {
    return e.what();
  }
  return "";
}

void fail(const std::string& what, const std::string& expected, const std::string& got) {
  ++failures;
  std::fprintf(stderr, "FAILED %s:\n  expected %s\n  got      '%s'\n", what.c_str(), expected.c_str(), got.c_str());
}

void expect_none(const std::string& what, const std::string& text) {
  ++checks;
  if (!text.empty()) fail(what, "no error", text);
}

// Every needle occurs in text.
void expect(const std::string& what, const std::string& text, std::initializer_list<std::string> needles) {
  ++checks;
  for (const std::string& n : needles) {
    if (text.find(n) == std::string::npos) return fail(what, "an error containing '" + n + "'", text);
  }
}

// Which rank reported decides which of two messages is right: every needle of
// one of the two lists occurs in text.
void expect_either(const std::string& what, const std::string& text, std::initializer_list<std::string> a,
                   std::initializer_list<std::string> b) {
  ++checks;
  const auto all = [&](std::initializer_list<std::string> needles) {
    for (const std::string& n : needles) {
      if (text.find(n) == std::string::npos) return false;
    }
    return true;
  };
  if (!all(a) && !all(b)) fail(what, "one of the two race reports (see the test)", text);
}

// A race report, in two parts around the path of the other access's file: the
// access that found the race (its kind, line, the heap), the other one's kind and
// rank; then the other one's line and the reporting rank.
std::string race_head(const std::string& kind, int line, const std::string& heap, const std::string& other_kind,
                      int other_rank) {
  return "races.iris:" + std::to_string(line) + ": error: data race: this " + kind + " of 4 bytes at offset 0 of " +
         heap + " (allocation #1, byte 0) and a " + other_kind + " by rank " + std::to_string(other_rank) +
         ", program 0, at ";
}
std::string race_tail(int other_line, int rank) {
  return "races.iris:" + std::to_string(other_line) +
         " are not ordered by a barrier or by a release/acquire pair at system scope (rank " + std::to_string(rank) +
         ", program 0)";
}

void out_of_heap_tests() {
  expect_none("in bounds", error_of([](iris::Rank& rank) {
                float* dst = rank.allocate<float>(256);
                rank.barrier();
                iris_kernels::overrun<>::launch({1}, rank.device_context(), dst, 0);
                rank.barrier();
              }));
  // 1 MiB heaps hold 262144 floats: this offset runs off the end.
  expect("out of heap",
         error_of([](iris::Rank& rank) {
           float* dst = rank.allocate<float>(256);
           rank.barrier();
           iris_kernels::overrun<>::launch({1}, rank.device_context(), dst, 262144 - 16);
           rank.barrier();
         }),
         {"out_of_heap.iris:4: error: access of 4 bytes at ", " is outside every rank's symmetric heap",
          ", program 0)"});
  expect_none("masked-off elements before the heap, translated", error_of([](iris::Rank& rank) {
                float* dst = rank.allocate<float>(256);
                rank.barrier();
                iris_kernels::masked_edge::launch({1}, rank.device_context(), dst);
                rank.barrier();
              }));
  expect("bad rank", error_of([](iris::Rank& rank) {
           float* dst = rank.allocate<float>(1);
           rank.barrier();
           iris_kernels::bad_rank::launch({1}, rank.device_context(), dst, 5);
           rank.barrier();
         }),
         {"out_of_heap.iris:8: error: rank 5 is out of range [0, 2) (rank "});
}

// copy_block over 128 elements (2 blocks of 64) from a buffer of `src` floats to
// a buffer of `dst` floats on the next rank.
template <int Src, int Dst>
void copy_128(iris::Rank& rank) {
  float* src = rank.allocate<float>(Src);
  float* dst = rank.allocate<float>(Dst);
  rank.barrier();
  iris_kernels::copy_block<>::launch({2}, rank.device_context(), src, dst);
  rank.barrier();
}

void past_allocation_tests() {
  expect_none("copy within both allocations", error_of(copy_128<128, 128>));
  // src: allocation #1 (offset 0, 400 bytes); program 1 loads elements 64..127.
  expect_either("load past the end of a local allocation", error_of(copy_128<100, 128>),
                {"past_allocation.iris:5: error: access of 4-byte elements at offset 256 .. 508 of rank 0's heap runs "
                 "28 elements past the end of allocation #1 (heap offset 0, 400 bytes) (rank 0, program 1)"},
                {"past_allocation.iris:5: error: access of 4-byte elements at offset 256 .. 508 of rank 1's heap runs "
                 "28 elements past the end of allocation #1 (heap offset 0, 400 bytes) (rank 1, program 1)"});
  // dst: allocation #2 (offset 512, 400 bytes), written on the next rank.
  expect_either("store past the end of a translated allocation", error_of(copy_128<128, 100>),
                {"past_allocation.iris:6: error: access of 4-byte elements at offset 768 .. 1020 of rank 1's heap runs "
                 "28 elements past the end of allocation #2 (heap offset 512, 400 bytes) (rank 0, program 1)"},
                {"past_allocation.iris:6: error: access of 4-byte elements at offset 768 .. 1020 of rank 0's heap runs "
                 "28 elements past the end of allocation #2 (heap offset 512, 400 bytes) (rank 1, program 1)"});
}

// copy_rows between two buffers of 128 floats (allocations #1 and #2), rows `ld`
// elements apart.
auto copy_rows_with(int ld) {
  return [ld](iris::Rank& rank) {
    float* src = rank.allocate<float>(128);
    float* dst = rank.allocate<float>(128);
    rank.barrier();
    iris_kernels::copy_rows::launch({1}, rank.device_context(), src, dst, ld);
    rank.barrier();
  };
}

void past_allocation_2d_tests() {
  expect_none("2-D copy within both allocations", error_of(copy_rows_with(16)));
  // Rows 20 apart: the last element is 7 * 20 + 15 = 155 (byte 620), 28
  // elements past src's 128.
  expect_either("2-D load past the end of a local allocation", error_of(copy_rows_with(20)),
                {"past_allocation.iris:13: error: access of 4-byte elements at offset 0 .. 620 of rank 0's heap runs "
                 "28 elements past the end of allocation #1 (heap offset 0, 512 bytes) (rank 0, program 0)"},
                {"past_allocation.iris:13: error: access of 4-byte elements at offset 0 .. 620 of rank 1's heap runs "
                 "28 elements past the end of allocation #1 (heap offset 0, 512 bytes) (rank 1, program 0)"});
}

// Runs `kernel` once on every rank with a buffer of 64 floats (allocation #1) and
// one of 64 Aux (allocation #2), then meets at a host barrier; returns the error.
template <class Aux, class K>
std::string on_buffers(K kernel) {
  return error_of([&](iris::Rank& rank) {
    float* buf = rank.allocate<float>(64);
    Aux* aux = rank.allocate<Aux>(64);
    kernel(rank.device_context(), buf, aux);
    rank.barrier();
  });
}

void race_tests() {
  using Ctx = const iris::DeviceContext&;
  using namespace iris_kernels;
  // Both ranks store into rank 0's buffer, nothing between the launches.
  expect_either("write-write race",
                on_buffers<int>([](Ctx ctx, float* buf, int*) { store_to::launch({1}, ctx, buf, 0); }),
                {race_head("store", 7, "rank 0's heap", "store", 1), race_tail(7, 0)},
                {race_head("store", 7, "rank 0's heap", "store", 0), race_tail(7, 1)});
  // The same stores, one launch after the other with a host barrier between.
  expect_none("stores ordered by a host barrier", error_of([](iris::Rank& rank) {
                float* buf = rank.allocate<float>(64);
                if (rank.rank() == 0) store_to::launch({1}, rank.device_context(), buf, 0);
                rank.barrier();
                if (rank.rank() == 1) store_to::launch({1}, rank.device_context(), buf, 0);
                rank.barrier();
              }));
  expect_either("read-write race",
                on_buffers<float>([](Ctx ctx, float* buf, float* out) { write_read::launch({1}, ctx, buf, out); }),
                {race_head("store", 13, "rank 0's heap", "load", 1), race_tail(16, 0)},
                {race_head("load", 16, "rank 0's heap", "store", 0), race_tail(13, 1)});
  expect_either("write-write race without the device barrier",
                on_buffers<int>([](Ctx ctx, float* buf, int*) { barrier_handoff::launch({1}, ctx, buf, false); }),
                {race_head("store", 23, "rank 1's heap", "store", 1), race_tail(29, 0)},
                {race_head("store", 29, "rank 1's heap", "store", 0), race_tail(23, 1)});
  expect_none("stores ordered by the device barrier",
              on_buffers<int>([](Ctx ctx, float* buf, int*) { barrier_handoff::launch({1}, ctx, buf, true); }));
  expect_none("stores ordered by a release signal and an acquire wait",
              on_buffers<int>([](Ctx ctx, float* buf, int* flag) { signal_handoff::launch({1}, ctx, buf, flag); }));
  // Rank 1 stores only after it has seen the flag, so it is the one to report.
  expect("a flag at gpu scope orders nothing between ranks",
         on_buffers<int>([](Ctx ctx, float* buf, int* flag) { signal_handoff_gpu_scope::launch({1}, ctx, buf, flag); }),
         {race_head("store", 53, "rank 1's heap", "store", 0), race_tail(48, 1)});
  expect_either("write-write race through 2-D tiles",
                on_buffers<int>([](Ctx ctx, float* buf, int*) { store_rows_to::launch({1}, ctx, buf, 0); }),
                {race_head("store", 74, "rank 0's heap", "store", 1), race_tail(74, 0)},
                {race_head("store", 74, "rank 0's heap", "store", 0), race_tail(74, 1)});
  expect_none("stores ordered by fences around relaxed flag operations",
              on_buffers<int>([](Ctx ctx, float* buf, int* flag) { fence_handoff::launch({1}, ctx, buf, flag); }));
}

}  // namespace

int main() {
  out_of_heap_tests();
  past_allocation_tests();
  past_allocation_2d_tests();
  race_tests();
  std::printf("checked mode: %d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
