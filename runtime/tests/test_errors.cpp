// Tests of failure handling: an exception in one rank releases all others wherever
// they block; checked mode reports file:line, rank and program; hang detection turns
// waits that can never end into errors (and does not fire on waits that do end).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "iris/device_cpu.hpp"
#include "iris/host.hpp"
#include "iris/launch_cpu.hpp"
#include "test_util.hpp"

using iris::Cmp;
using iris::Scope;
using iris::Sem;

namespace {
constexpr std::size_t kHeap = 1 << 20;

// Runs `body` on `ranks` ranks; the run must end in an iris::Error whose message holds every part.
void check_run_error(int ranks, std::initializer_list<const char*> parts,
                     const std::function<void(iris::Rank&)>& body) {
  const std::string msg = error_of([&] { iris::run_threads(ranks, kHeap, body); });
  CAPTURE(msg);
  for (const char* part : parts) CHECK(contains(msg, part));
}
}  // namespace

TEST_CASE("errors: an exception in one rank releases the others wherever they block") {
  enum class Where { host_barrier, allocate, device_barrier, wait_until };
  for (Where where : {Where::host_barrier, Where::allocate, Where::device_barrier, Where::wait_until}) {
    CAPTURE(static_cast<int>(where));
    constexpr int n = 4;
    std::vector<std::string> others(n);
    const auto body = [&](iris::Rank& r) {
      const iris::DeviceContext ctx = r.device_context();
      int* flag = r.allocate<int>(1);
      if (r.rank() == 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the others block first
        throw std::runtime_error("boom from rank 2");
      }
      others[r.rank()] = error_of([&] {
        switch (where) {
          case Where::host_barrier: r.barrier(); break;
          case Where::allocate: r.allocate(64); break;
          case Where::device_barrier: iris::launch(ctx, 1, [&](int pid, int) { iris::barrier(ctx, pid); }); break;
          case Where::wait_until:
            iris::launch(ctx, 1, [&](int, int) { iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1); });
            break;
        }
      });
    };
    CHECK_THROWS_WITH_AS(iris::run_threads(n, kHeap, body), "boom from rank 2", std::runtime_error);
    for (int r : {0, 1, 3}) {
      CAPTURE(others[r]);
      // Released either by the abort flag or because rank 2 is gone for good.
      CHECK((contains(others[r], "stopped because another rank failed") || contains(others[r], "deadlock")));
    }
  }
}

TEST_CASE("errors: the first exception wins when several ranks throw") {
  CHECK_THROWS_WITH_AS(iris::run_threads(8, kHeap,
                                         [](iris::Rank& r) {
                                           r.barrier();
                                           throw std::logic_error("rank " + std::to_string(r.rank()));
                                         }),
                       doctest::Contains("rank "), std::logic_error);
}

TEST_CASE("checked mode: accesses, ranks and translations outside the heaps") {
  std::vector<std::string> msgs;
  std::vector<int> ok(2, 0);
  iris::run_threads(2, kHeap, [&](iris::Rank& r) {
    const iris::DeviceContext ctx = r.device_context();
    int* local = r.allocate<int>(16);  // the first block: heap offset 0
    int on_stack = 0;
    const int me = r.rank(), other = 1 - me;
    bool good = true;
    // Inside: my block, the peer's copy, the block's last element.
    iris::check_access(ctx, local, local + 15, 4, "k.iris", 1, 0);
    int* there = iris::translate(local, other, ctx);
    iris::check_access(ctx, there, there + 15, 4, "k.iris", 2, 0);
    iris::check_access(ctx, local + 15, local + 15, 4, "k.iris", 3, 0);
    good = good && iris::check_rank(ctx, other, "k.iris", 4, 0) == other;
    good = good && iris::translate_checked(local + 1, other, ctx, "k.iris", 5, 0) ==
                       reinterpret_cast<int*>(ctx.heap_bases[other] + 4);
    ok[me] = good;
    if (me != 1) return;
    msgs.push_back(error_of([&] {
      const char* last = ctx.heap_bases[0] + kHeap - 4;
      iris::check_access(ctx, last, last, 8, "k.iris", 12, 3);
    }));
    msgs.push_back(error_of([&] { iris::check_access(ctx, &on_stack, &on_stack, 4, "k.iris", 13, 3); }));
    msgs.push_back(error_of([&] { iris::check_rank(ctx, 2, "k.iris", 14, 3); }));
    msgs.push_back(error_of([&] { iris::check_rank(ctx, -1, "k.iris", 15, 3); }));
    msgs.push_back(error_of([&] { iris::translate_checked(local, 5, ctx, "k.iris", 16, 3); }));
    msgs.push_back(error_of([&] { iris::translate_checked(iris::translate(local, 0, ctx), 0, ctx, "k.iris", 17, 3); }));
  });
  CHECK(ok == std::vector<int>{1, 1});
  REQUIRE(msgs.size() == 6);
  CHECK(contains(msgs[0], "k.iris:12: error: access of 8 bytes at"));
  CHECK(contains(msgs[0], "offset 1048572 of rank 0's heap"));
  CHECK(contains(msgs[0], "(rank 1, program 3)"));
  CHECK(contains(msgs[1], "k.iris:13: error: access of 4 bytes"));
  CHECK(contains(msgs[1], "outside every rank's symmetric heap"));
  CHECK(contains(msgs[2], "k.iris:14: error: rank 2 is out of range [0, 2) (rank 1, program 3)"));
  CHECK(contains(msgs[3], "k.iris:15: error: rank -1 is out of range [0, 2)"));
  CHECK(contains(msgs[4], "k.iris:16: error: rank 5 is out of range"));
  CHECK(contains(msgs[5], "k.iris:17: error: translate to rank 0: pointer"));
  CHECK(contains(msgs[5], "not inside this rank's symmetric heap"));
}

TEST_CASE("checked mode: an access must stay inside the allocation of its lowest element") {
  std::vector<std::string> msgs;
  iris::run_threads(2, kHeap, [&](iris::Rank& r) {
    const iris::DeviceContext ctx = r.device_context();
    int* a = r.allocate<int>(10);  // allocation #1: heap offset 0, 40 bytes (256 reserved)
    int* b = r.allocate<int>(16);  // allocation #2: heap offset 256, 64 bytes
    const int other = 1 - r.rank();
    int* a_there = iris::translate(a, other, ctx);
    iris::check_access(ctx, a, a + 9, 4, "k.iris", 1, 0);
    iris::check_access(ctx, a_there, a_there + 9, 4, "k.iris", 2, 0);
    iris::check_access(ctx, b, b + 15, 4, "k.iris", 3, 0);
    r.barrier();
    if (r.rank() == 1) {
      msgs.push_back(error_of([&] { iris::check_access(ctx, a, a + 10, 4, "k.iris", 10, 2); }));
      msgs.push_back(error_of([&] { iris::check_access(ctx, a_there + 8, a_there + 13, 4, "k.iris", 11, 2); }));
      msgs.push_back(error_of([&] { iris::check_access(ctx, a + 10, a + 10, 4, "k.iris", 12, 2); }));
      msgs.push_back(error_of([&] { iris::check_access(ctx, a + 2, b + 1, 4, "k.iris", 13, 2); }));
      msgs.push_back(error_of([&] { iris::check_access(ctx, a + 9, a + 9, 8, "k.iris", 14, 2); }));
    }
    r.barrier();
    r.free(a);
    if (r.rank() == 1) msgs.push_back(error_of([&] { iris::check_access(ctx, a, a, 4, "k.iris", 15, 2); }));
  });
  REQUIRE(msgs.size() == 6);
  CHECK(msgs[0] == "k.iris:10: error: access of 4-byte elements at offset 0 .. 40 of rank 1's heap runs 1 element "
                   "past the end of allocation #1 (heap offset 0, 40 bytes) (rank 1, program 2)");
  CHECK(contains(msgs[1], "k.iris:11: error: access of 4-byte elements at offset 32 .. 52 of rank 0's heap runs 4 "
                          "elements past the end of allocation #1 (heap offset 0, 40 bytes)"));
  CHECK(contains(msgs[2], "k.iris:12: error: access of 4-byte elements at offset 40 of rank 1's heap is not inside "
                          "any live allocation (the nearest one before it, allocation #1 (heap offset 0, 40 bytes), "
                          "ends 0 bytes before it)"));
  CHECK(contains(msgs[3], "offset 8 .. 260 of rank 1's heap runs 56 elements past the end of allocation #1"));
  CHECK(contains(msgs[4], "access of 8-byte elements at offset 36 of rank 1's heap runs 1 element past the end of "
                          "allocation #1"));
  CHECK(contains(msgs[5], "k.iris:15: error: access of 4-byte elements at offset 0 of rank 1's heap is not inside any "
                          "live allocation (no allocation begins before it)"));
}

TEST_CASE("checked mode: the report goes to stderr as file:line: error: ... (rank, program)") {
  // A hand-made context: the checks need only the heap table, size, rank and world size.
  alignas(64) static char heap0[4096], heap1[4096];
  char* bases[] = {heap0, heap1};
  const iris::DeviceContext ctx{bases, sizeof heap0, 1, 2, 0, 2, nullptr, nullptr};

  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stderr);
  const int saved = dup(fileno(stderr));
  dup2(fileno(capture), fileno(stderr));
  const std::string msg = error_of([&] { iris::check_rank(ctx, 7, "gemm.iris", 42, 5); });
  std::fflush(stderr);
  dup2(saved, fileno(stderr));
  close(saved);

  std::rewind(capture);
  std::string printed;
  for (int c; (c = std::fgetc(capture)) != EOF;) printed.push_back(static_cast<char>(c));
  std::fclose(capture);
  CHECK(msg == "gemm.iris:42: error: rank 7 is out of range [0, 2) (rank 1, program 5)");
  CHECK(printed == msg + "\n");

  // No allocation table: only the heap bounds are checked.
  CHECK_NOTHROW(iris::check_access(ctx, heap1 + 4000, heap1 + 4000, 96, "gemm.iris", 43, 5));
  CHECK_THROWS_AS(iris::check_access(ctx, heap1 + 4000, heap1 + 4000, 97, "gemm.iris", 44, 5), iris::Error);
  CHECK_NOTHROW(iris::check_access(ctx, heap0, heap1 + 4092, 4, "gemm.iris", 45, 5));
}

TEST_CASE("checked mode: a violation inside a kernel ends the run with rank and program, no hang") {
  // Rank 1's program 2 fails before the barrier that rank 0's program 2 waits in.
  CHECK_THROWS_WITH_AS(iris::run_threads(2, kHeap,
                                         [](iris::Rank& r) {
                                           const iris::DeviceContext ctx = r.device_context();
                                           iris::launch(ctx, 3, [&](int pid, int) {
                                             if (r.rank() == 1 && pid == 2) {
                                               iris::check_rank(ctx, 2, "k.iris", 9, pid);
                                             }
                                             iris::barrier(ctx, pid);
                                           });
                                         }),
                       "k.iris:9: error: rank 2 is out of range [0, 2) (rank 1, program 2)", iris::Error);
}

TEST_CASE("hang detection: waits that can never end become errors") {
  SUBCASE("wait_until in a world of one rank") {
    check_run_error(1, {"(rank 0, program 0): the condition is false"}, [](iris::Rank& r) {
      int* flag = r.allocate<int>(1);
      iris::launch(r.device_context(), 1,
                   [&](int, int) { iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1); });
    });
  }
  SUBCASE("wait_until for a rank that has returned") {
    check_run_error(3,
                    {"deadlock in wait_until", ">= 4", "rank 1 has returned from its body",
                     "rank 2 has returned from its body"},
                    [](iris::Rank& r) {
                      int* flag = r.allocate<int>(1);
                      if (r.rank() != 0) return;
                      iris::launch(r.device_context(), 1,
                                   [&](int, int) { iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::ge, 4); });
                    });
  }
  SUBCASE("the report names the flag's allocation and offset and the value it holds") {
    // Allocations #1 (256 bytes) and #2: the flag is element 3 of #2, which rank 1 set to 7.
    check_run_error(2,
                    {"deadlock in wait_until(*", " >= 8) at flags.iris:5 (rank 0, program 0)",
                     "; the flag, at offset 268 of rank 0's heap, in allocation #2 (heap offset 256, 64 bytes), "
                     "holds 7; rank 1 has returned from its body"},
                    [](iris::Rank& r) {
                      r.allocate<int>(64);
                      int* flags = r.allocate<int>(16);
                      if (r.rank() == 1) {
                        iris::atomic_store<Sem::release, Scope::sys>(r.translate(flags + 3, 0), 7);
                        return;
                      }
                      iris::launch(r.device_context(), 1, [&](int, int) {
                        iris::wait_until<Sem::acquire, Scope::sys>(flags + 3, Cmp::ge, 8, "flags.iris", 5);
                      });
                    });
  }
  SUBCASE("in-order rule: program 0 waits for program 1 of the same rank") {
    check_run_error(2, {"deadlock in wait_until", "(rank 0, program 0)", "rank 1 waits in host collective call #2"},
                    [](iris::Rank& r) {
                      int* flag = r.allocate<int>(1);
                      if (r.rank() == 1) {
                        r.barrier();  // rank 1 waits in a host barrier rank 0 only reaches after its kernel
                        return;
                      }
                      iris::launch(r.device_context(), 2, [&](int pid, int) {
                        if (pid == 0) iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
                        if (pid == 1) iris::signal_set<Sem::release, Scope::sys>(flag, 1);
                      });
                      r.barrier();
                    });
  }
  SUBCASE("device barrier against a host barrier") {
    check_run_error(2, {"deadlock in device barrier #1 (rank 0, program 0)", "rank 1 waits in host collective call #1"},
                    [](iris::Rank& r) {
                      if (r.rank() == 0) {
                        iris::launch(r.device_context(), 1,
                                     [&](int pid, int) { iris::barrier(r.device_context(), pid); });
                      }
                      r.barrier();
                    });
  }
  SUBCASE("device barrier that a returned rank never reaches") {
    check_run_error(2, {"deadlock in device barrier #1", "rank 1 has returned from its body"}, [](iris::Rank& r) {
      if (r.rank() == 1) return;
      iris::launch(r.device_context(), 1, [&](int pid, int) { iris::barrier(r.device_context(), pid); });
    });
  }
}

namespace {
// How many of the ranks of a world of `ranks` the message says wait in wait_until.
int ranks_named_waiting(const std::string& msg, int ranks) {
  int named = 0;
  for (int r = 0; r < ranks; ++r) named += contains(msg, "rank " + std::to_string(r) + " waits in wait_until") ? 1 : 0;
  return named;
}
}  // namespace

TEST_CASE("hang detection: ranks that all wait in wait_until for each other are a deadlock") {
  for (int ranks : {2, 3, 4, 8}) {
    CAPTURE(ranks);
    SUBCASE("a ring: every rank waits for the next one, each at a line of its own") {
      // Rank r waits at ring.iris:(10 + r), in its program 1.
      const std::string msg = error_of([&] {
        iris::run_threads(ranks, kHeap, [&](iris::Rank& r) {
          int* flag = r.allocate<int>(1);
          iris::launch(r.device_context(), 2, [&](int pid, int) {
            // the next rank never sets it
            if (pid == 1) iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1, "ring.iris", 10 + r.rank());
          });
        });
      });
      CAPTURE(msg);
      CHECK(contains(msg, "iris: deadlock in wait_until(*"));
      int reporters = 0, located = 0;
      for (int r = 0; r < ranks; ++r) {
        const std::string line = "ring.iris:" + std::to_string(10 + r), rank = std::to_string(r);
        reporters += contains(msg, ") at " + line + " (rank " + rank + ", program 1): ") ? 1 : 0;
        located += contains(msg, "rank " + rank + " waits in wait_until at " + line + " (program 1)") ? 1 : 0;
      }
      CHECK(reporters == 1);
      CHECK(located == ranks - 1);  // all but the one that reports
    }
    SUBCASE("one rank skips the kernel the others wait in") {
      // Ranks 0 .. W-2 wait for a flag that the last rank would set in the
      // kernel it skips; it waits in the host barrier after the kernel.
      const std::string msg = error_of([&] {
        iris::run_threads(ranks, kHeap, [&](iris::Rank& r) {
          int* flag = r.allocate<int>(1);
          if (r.rank() != r.world_size() - 1) {
            iris::launch(r.device_context(), 1,
                         [&](int, int) { iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1); });
          }
          r.barrier();
        });
      });
      CAPTURE(msg);
      CHECK(contains(msg, "iris: deadlock in wait_until(*"));
      CHECK(contains(msg, "rank " + std::to_string(ranks - 1) + " waits in host collective call #2"));
      CHECK(ranks_named_waiting(msg, ranks) == ranks - 2);
    }
  }
}

TEST_CASE("hang detection: a rank seen in wait_until that leaves it for a host barrier") {
  // Rank 1 sleeps in a long wait_until; rank 0 releases it and at once waits
  // for a flag nobody sets, so rank 0's first checks still see rank 1 in
  // wait_until, which then leaves it for the host barrier (as a rank that
  // skips a kernel does). It never looks at its wait_until condition again:
  // the checks must not wait for it to. With 3 ranks, rank 2 waits in the
  // barrier from the start. Repeated to hit the race.
  for (int i = 0; i < 10; ++i) {
    const int ranks = 2 + i % 2;
    CAPTURE(i);
    const std::string msg = error_of([&] {
      iris::run_threads(ranks, 4096, [&](iris::Rank& r) {
        int* flag = r.allocate<int>(2);  // [0]: rank 1's release, [1]: never set
        const iris::DeviceContext ctx = r.device_context();
        if (r.rank() < 2) {
          iris::launch(ctx, 1, [&](int, int) {
            if (r.rank() == 0) {
              std::this_thread::sleep_for(std::chrono::milliseconds(60));  // rank 1 is long asleep in its wait
              iris::signal_set<Sem::release, Scope::sys>(iris::translate(flag, 1, ctx), 1);
              iris::wait_until<Sem::acquire, Scope::sys>(flag + 1, Cmp::eq, 1);
            } else {
              iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
            }
          });
        }
        r.barrier();
      });
    });
    CAPTURE(msg);
    CHECK(contains(msg, "iris: deadlock in wait_until(*"));
    CHECK(contains(msg, "(rank 0, program 0)"));
    CHECK(contains(msg, "rank 1 waits in host collective call #2"));
  }
}

TEST_CASE("hang detection: no false alarm on a rank in wait_until whose signal was sent before its sender waits") {
  // Rank 0 sets rank 1's flag and at once waits for rank 1's answer: for a
  // moment both wait in wait_until, rank 1 not yet having looked at its flag
  // (it sleeps between looks after a long wait). Rank 1 must be seen to leave.
  // Repeated to hit the race; with 3 ranks, rank 2 has returned.
  for (int i = 0; i < 40; ++i) {
    const int ranks = 2 + i % 2;
    CHECK_NOTHROW(iris::run_threads(ranks, 4096, [&](iris::Rank& r) {
      int* flag = r.allocate<int>(1);
      const iris::DeviceContext ctx = r.device_context();
      iris::launch(ctx, 1, [&](int, int) {
        if (r.rank() == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // rank 1 is long asleep in its wait
          iris::signal_set<Sem::release, Scope::sys>(iris::translate(flag, 1, ctx), 1);
          iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
        } else if (r.rank() == 1) {
          iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
          iris::signal_set<Sem::release, Scope::sys>(iris::translate(flag, 0, ctx), 1);
        }
      });
    }));
  }
}

TEST_CASE("hang detection: no false alarm when the signal comes just before the signaller stops") {
  // The signaller sets the flag and returns at once, or enters a host barrier at once;
  // the waiter must see the flag rather than report a deadlock. Repeated to hit the race.
  for (int i = 0; i < 300; ++i) {
    const bool then_barrier = i % 2 == 1;
    CHECK_NOTHROW(iris::run_threads(2, 4096, [&](iris::Rank& r) {
      int* flag = r.allocate<int>(1);
      iris::launch(r.device_context(), 1, [&](int, int) {
        if (r.rank() == 1) {
          iris::signal_set<Sem::release, Scope::sys>(iris::translate(flag, 0, r.device_context()), 1);
        } else {
          iris::wait_until<Sem::acquire, Scope::sys>(flag, Cmp::eq, 1);
        }
      });
      if (then_barrier) r.barrier();
    }));
  }
}
