// Tests of the symmetric-heap allocator: directly (offsets) and through run_threads
// (collective behaviour: same offsets on every rank, mismatch detection, errors).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "heap_allocator.hpp"
#include "iris/host.hpp"
#include "test_util.hpp"

using iris::detail::HeapAllocator;

namespace {
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// A failed collective call is reported on every rank: each rank's message holds every part.
void check_every_rank(const std::vector<std::string>& messages, std::initializer_list<const char*> parts) {
  for (const std::string& message : messages) {
    CAPTURE(message);
    for (const char* part : parts) CHECK(contains(message, part));
  }
}
}  // namespace

TEST_CASE("allocator: first fit with 256-byte granularity and alignment") {
  HeapAllocator a(1 * MiB);
  CHECK(a.allocate(1, 256) == 0);
  CHECK(a.allocate(256, 256) == 256);
  CHECK(a.allocate(257, 256) == 512);    // rounded up to 512 bytes: [512, 1024)
  CHECK(a.allocate(0, 256) == 1024);     // zero bytes still gets its own block
  CHECK(a.allocate(10, 4096) == 4096);   // first multiple of 4096 that is free
  CHECK(a.allocate(10, 16) == 1280);     // alignment 16 raised to 256; fills the gap left before 4096
  CHECK(a.allocate(300, 2 * MiB / 4) == 512 * KiB);
  CHECK(a.allocated_blocks() == 7);
  // 256 + 256 + 512 + 256 + 256 + 256 + 512 bytes are in use.
  CHECK(a.free_total() == 1 * MiB - 2304);
}

TEST_CASE("allocator: every power-of-two alignment, after blocks of odd sizes and frees") {
  HeapAllocator a(16 * MiB);
  std::vector<std::size_t> blocks;
  for (std::size_t align = 1; align <= 1 * MiB; align *= 2) {
    CAPTURE(align);
    blocks.push_back(a.allocate(align * 3 + 77, 256));  // leaves the next free offset unaligned for larger sizes
    const std::size_t offset = a.allocate(100, align);
    CHECK(offset % align == 0);
    CHECK(offset % 256 == 0);
    if (blocks.size() % 2 == 0) a.free(blocks[blocks.size() - 2]);  // a gap, reused by a later first fit
  }
}

TEST_CASE("allocator: freed blocks are reused, first fit picks the lowest") {
  HeapAllocator a(64 * KiB);
  const std::size_t x = a.allocate(1000, 256);  // [0, 1024)
  const std::size_t y = a.allocate(1000, 256);  // [1024, 2048)
  const std::size_t z = a.allocate(1000, 256);  // [2048, 3072)
  CHECK(x == 0);
  CHECK(y == 1024);
  CHECK(z == 2048);
  a.free(y);
  CHECK(a.allocate(512, 256) == 1024);  // into y's hole
  CHECK(a.allocate(512, 256) == 1536);  // the rest of the hole
  CHECK(a.allocate(512, 256) == 3072);  // hole full: after z
  a.free(x);
  CHECK(a.allocate(1024, 1024) == 0);
}

TEST_CASE("allocator: coalescing of neighbours on both sides") {
  HeapAllocator a(4096);
  std::vector<std::size_t> blocks;
  for (int i = 0; i < 16; ++i) blocks.push_back(a.allocate(256, 256));
  for (int i = 0; i < 16; ++i) CHECK(blocks[i] == static_cast<std::size_t>(i) * 256);
  CHECK(a.free_total() == 0);
  CHECK_THROWS_AS(a.allocate(1, 256), iris::Error);

  a.free(256);  // [256, 512)
  a.free(768);  // [768, 1024): not adjacent yet
  CHECK(a.largest_free() == 256);
  a.free(512);  // joins both: [256, 1024)
  CHECK(a.largest_free() == 768);
  CHECK(a.free_total() == 768);
  CHECK(a.allocate(768, 256) == 256);

  a.free(0);
  a.free(256);  // the 768-byte block
  for (int i = 4; i < 16; ++i) a.free(static_cast<std::size_t>(i) * 256);
  CHECK(a.largest_free() == 4096);  // everything merged back into one block
  CHECK(a.allocated_blocks() == 0);
  CHECK(a.allocate(4096, 256) == 0);
}

TEST_CASE("allocator: out-of-memory message names request, heap size, free total and largest block") {
  HeapAllocator a(1 * MiB);
  CHECK(a.allocate(600 * KiB, 256) == 0);
  const std::string msg = error_of([&] { a.allocate(600 * KiB, 256); });
  CHECK(contains(msg, "cannot allocate 614400 bytes"));
  CHECK(contains(msg, "heap size 1048576 bytes"));
  CHECK(contains(msg, "434176 bytes free in total"));  // 1 MiB - 600 KiB
  CHECK(contains(msg, "largest free block 434176 bytes"));

  HeapAllocator f(4096);  // fragmented: 3 free blocks of 256, none adjacent
  for (int i = 0; i < 16; ++i) f.allocate(256, 256);
  f.free(0);
  f.free(1024);
  f.free(2048);
  const std::string frag = error_of([&] { f.allocate(512, 256); });
  CHECK(contains(frag, "768 bytes free in total"));
  CHECK(contains(frag, "largest free block 256 bytes"));

  CHECK(contains(error_of([&] { HeapAllocator(4096).allocate(SIZE_MAX, 256); }), std::to_string(SIZE_MAX)));
}

TEST_CASE("allocator: bad alignment and bad free") {
  HeapAllocator a(1 * MiB);
  CHECK(contains(error_of([&] { a.allocate(64, 0); }), "alignment 0 is not a power of two"));
  CHECK(contains(error_of([&] { a.allocate(64, 100); }), "alignment 100 is not a power of two"));
  CHECK(contains(error_of([&] { a.allocate(64, 4 * MiB); }), "exceeds"));
  CHECK(a.allocated_blocks() == 0);  // failed calls changed nothing

  const std::size_t p = a.allocate(512, 256);
  CHECK(contains(error_of([&] { a.free(p + 256); }), "not the start of an allocated block"));
  a.free(p);
  CHECK(contains(error_of([&] { a.free(p); }), "not the start of an allocated block"));  // double free
}

TEST_CASE("allocate: same offsets on every rank, aligned addresses, reuse") {
  for (int n : {1, 2, 4, 8}) {
    CAPTURE(n);
    std::vector<std::vector<std::uintptr_t>> offsets(n);
    std::vector<int> aligned(n, 0);
    iris::run_threads(n, 1 * MiB, [&](iris::Rank& r) {
      const auto base = reinterpret_cast<std::uintptr_t>(r.device_context().heap_bases[r.rank()]);
      void* a = r.allocate(100);          // [0, 256)
      void* b = r.allocate(1000, 1024);   // [1024, 2048)
      double* c = r.allocate<double>(3);  // 24 bytes -> [256, 512)
      r.free(a);
      void* d = r.allocate(200);          // reuses a's block at 0
      for (void* p : {a, b, static_cast<void*>(c), d}) {
        offsets[r.rank()].push_back(reinterpret_cast<std::uintptr_t>(p) - base);
      }
      aligned[r.rank()] = reinterpret_cast<std::uintptr_t>(b) % 1024 == 0 &&
                          reinterpret_cast<std::uintptr_t>(c) % 256 == 0;
    });
    const std::vector<std::uintptr_t> expected = {0, 1024, 256, 0};
    for (int r = 0; r < n; ++r) {
      CHECK(offsets[r] == expected);
      CHECK(aligned[r] == 1);
    }
  }
}

TEST_CASE("allocate: default-sized 1 GiB heaps on 8 ranks are reserved lazily") {
  constexpr std::size_t GiB = 1024 * MiB;
  std::vector<int> seen(8, -1);
  iris::run_threads(8, GiB, [&](iris::Rank& r) {
    char* big = static_cast<char*>(r.allocate(GiB - 4096));
    char* last = static_cast<char*>(r.allocate(4096));  // the heap's last page
    const int next = (r.rank() + 1) % 8;
    r.translate(last, next)[4095] = static_cast<char>(10 + r.rank());  // touches one page of rank `next`
    big[0] = 1;
    r.barrier();
    seen[r.rank()] = last[4095];
  });
  for (int r = 0; r < 8; ++r) CHECK(seen[r] == 10 + (r + 7) % 8);
}

TEST_CASE("allocate: errors are reported on every rank and leave the heap usable") {
  std::vector<std::string> oom(2), align(2);
  std::vector<std::uintptr_t> after(2);
  iris::run_threads(2, 1 * MiB, [&](iris::Rank& r) {
    oom[r.rank()] = error_of([&] { r.allocate(2 * MiB); });
    align[r.rank()] = error_of([&] { r.allocate(64, 100); });
    after[r.rank()] = reinterpret_cast<std::uintptr_t>(r.allocate(64)) -
                      reinterpret_cast<std::uintptr_t>(r.device_context().heap_bases[r.rank()]);
  });
  check_every_rank(oom, {"cannot allocate 2097152 bytes", "heap size 1048576 bytes"});
  check_every_rank(align, {"alignment 100 is not a power of two"});
  CHECK(after == std::vector<std::uintptr_t>{0, 0});
}

TEST_CASE("collectives: a sequence that differs between ranks is detected, nobody hangs") {
  SUBCASE("different sizes") {
    std::vector<std::string> msg(4);
    std::vector<std::uintptr_t> next(4);
    iris::run_threads(4, 1 * MiB, [&](iris::Rank& r) {
      msg[r.rank()] = error_of([&] { r.allocate(r.rank() == 2 ? 2048 : 1024); });
      // Every rank failed the same call, so the world is still in step.
      next[r.rank()] = reinterpret_cast<std::uintptr_t>(r.allocate(512)) -
                       reinterpret_cast<std::uintptr_t>(r.device_context().heap_bases[r.rank()]);
    });
    for (int r = 0; r < 4; ++r) {
      CAPTURE(msg[r]);
      CHECK(contains(msg[r], "collective call #1 differs between ranks"));
      CHECK(contains(msg[r], "rank 0 called allocate(1024 bytes, alignment 256)"));
      CHECK(contains(msg[r], "rank 2 called allocate(2048 bytes, alignment 256)"));
      CHECK(!contains(msg[r], "rank 1 called"));
      CHECK(next[r] == 0);
    }
  }
  SUBCASE("allocate against barrier and free") {
    std::vector<std::string> msg(3);
    iris::run_threads(3, 1 * MiB, [&](iris::Rank& r) {
      void* p = r.allocate(256);
      msg[r.rank()] = error_of([&] {
        if (r.rank() == 0) r.barrier();
        if (r.rank() == 1) r.allocate(256);
        if (r.rank() == 2) r.free(p);
      });
    });
    check_every_rank(msg, {"collective call #2 differs", "rank 0 called barrier()", "rank 1 called allocate(256 bytes",
                           "rank 2 called free(heap offset 0)"});
  }
  SUBCASE("a rank that skips a call and returns") {
    std::vector<std::string> msg(4);
    // A deadlock ends the run even where the body catches the error.
    const std::string run = error_of([&] {
      iris::run_threads(4, 1 * MiB, [&](iris::Rank& r) {
        if (r.rank() == 1) return;
        msg[r.rank()] = error_of([&] { r.allocate(256); });
      });
    });
    CHECK(contains(run, "deadlock"));
    CHECK(contains(run, "waits in collective call #1 (allocate(256 bytes, alignment 256))"));
    CHECK(contains(run, "rank 1 has returned from its body"));
    for (int r : {0, 2, 3}) {
      CAPTURE(msg[r]);  // the first to notice reports the deadlock, the rest are released
      CHECK((contains(msg[r], "deadlock") || contains(msg[r], "stopped because another rank failed")));
    }
  }
  SUBCASE("uncaught: run_threads rethrows it") {
    CHECK_THROWS_WITH_AS(iris::run_threads(2, 1 * MiB, [](iris::Rank& r) { r.allocate(r.rank() == 0 ? 256 : 512); }),
                         doctest::Contains("differs between ranks"), iris::Error);
  }
}

TEST_CASE("agree: the ranks' texts are compared like any collective call") {
  std::vector<std::string> differ(3), same(3), mixed(3);
  iris::run_threads(3, 1 * MiB, [&](iris::Rank& r) {
    same[r.rank()] = error_of([&] { r.agree("op(4 elements)"); });
    differ[r.rank()] = error_of([&] { r.agree(r.rank() == 1 ? "op(5 elements)" : "op(4 elements)"); });
    mixed[r.rank()] = error_of([&] {
      if (r.rank() == 2) r.barrier();
      else r.agree("op(4 elements)");
    });
  });
  for (int r = 0; r < 3; ++r) CHECK(same[r] == "<no iris::Error>");
  check_every_rank(differ, {"collective call #2 differs", "rank 0 called op(4 elements)", "rank 1 called op(5 elements)"});
  check_every_rank(mixed, {"collective call #3 differs", "rank 2 called barrier()"});
  for (int r = 0; r < 3; ++r) CHECK(!contains(differ[r], "rank 2 called"));
}

TEST_CASE("from_rank0: every rank gets rank 0's value, and the call is compared like any other") {
  std::vector<std::uint64_t> got(3), again(3);
  std::vector<std::string> mixed(3);
  iris::run_threads(3, 1 * MiB, [&](iris::Rank& r) {
    got[r.rank()] = r.from_rank0(100 + static_cast<std::uint64_t>(r.rank()));
    again[r.rank()] = r.from_rank0(r.rank() == 0 ? UINT64_MAX : 7);  // -1 as autotune sends it
    mixed[r.rank()] = error_of([&] {
      if (r.rank() == 1) r.barrier();
      else r.from_rank0(5);
    });
  });
  for (int r = 0; r < 3; ++r) {
    CHECK(got[r] == 100);
    CHECK(again[r] == UINT64_MAX);
  }
  check_every_rank(mixed, {"collective call #3 differs", "rank 0 called from_rank0()", "rank 1 called barrier()"});
}

TEST_CASE("free: pointers that allocate did not return are errors on every rank") {
  std::vector<std::string> inner(2), outside(2), twice(2);
  std::vector<int> reused(2, 0);
  iris::run_threads(2, 1 * MiB, [&](iris::Rank& r) {
    char* p = static_cast<char*>(r.allocate(512));
    int on_stack = 0;
    inner[r.rank()] = error_of([&] { r.free(p + 256); });
    outside[r.rank()] = error_of([&] { r.free(&on_stack); });
    r.free(nullptr);  // a collective no-op
    r.free(p);
    twice[r.rank()] = error_of([&] { r.free(p); });
    reused[r.rank()] = r.allocate(512) == p;
  });
  check_every_rank(inner, {"heap offset 256 is not the start of an allocated block"});
  check_every_rank(outside, {"is not inside the symmetric heap"});
  check_every_rank(twice, {"heap offset 0 is not the start of an allocated block"});
  CHECK(reused == std::vector<int>{1, 1});
}

TEST_CASE("run_threads: bad arguments are refused") {
  const auto body = [](iris::Rank&) {};
  CHECK_THROWS_WITH_AS(iris::run_threads(0, 4096, body), doctest::Contains("need at least 1 rank, got 0"),
                       iris::Error);
  CHECK_THROWS_WITH_AS(iris::run_threads(-3, 4096, body), doctest::Contains("got -3"), iris::Error);
  CHECK_THROWS_WITH_AS(iris::run_threads(2, 0, body), doctest::Contains("multiple of 4096 bytes, got 0"),
                       iris::Error);
  CHECK_THROWS_WITH_AS(iris::run_threads(2, 4097, body), doctest::Contains("got 4097"), iris::Error);
  CHECK_THROWS_WITH_AS(iris::run_threads(2, 4096, nullptr), doctest::Contains("empty body"), iris::Error);
  CHECK_NOTHROW(iris::run_threads(2, 4096, body));
}
