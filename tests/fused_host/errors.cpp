// Bad calls of the fused operations (iris/fused.hpp), one ctest per error
// (`fused_host_errors <case> <ranks>`): every rank must throw an iris::Error
// that starts with the operation's name and says what is wrong, the same on
// every rank, before anything is launched (the workspace counts no call), and
// the ranks must still be in step afterwards: a correct matmul_all_reduce
// follows and gives the right product. The hangs (`fused_host_errors
// hang:<case> <ranks>`): after a warm-up call, calls that the ranks'
// comparison would have refused, made without it (compare_calls = false),
// must end the run in a deadlock report. As tests/ccl_host/errors.cpp does for
// iris::ccl; the operations run on the CPU with their 64x64x32 tiles.
#include <iris/fused.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../library_errors.hpp"

namespace {

using iris::bfloat16;
using iris::ops::FusedConfig;
using iris::ops::FusedWorkspace;

// m, n and k: multiples of 2, 3, 4 and 8 ranks, one tile of 64x64x32.
constexpr int kM = 24, kN = 24, kK = 24;
constexpr std::size_t kElements = std::size_t(kM) * kK;  // an m × k matrix's (all three are square)
constexpr int kBigM = 3 * kM;                             // the hangs': two rows of tiles

// What a case's call gets: the rank's workspace and a second one; heap
// matrices of 4 × kElements (a, b, c: room for kBigM rows), one of kElements
// / 2, one freed; and host memory of 4 × kElements.
struct Operands {
  FusedWorkspace& ws;
  FusedWorkspace& other_ws;
  bfloat16* heap_a;
  bfloat16* heap_b;
  bfloat16* heap_c;
  bfloat16* heap_half;
  bfloat16* freed;
  bfloat16* host;
  int rank() const { return ws.rank().rank(); }
  bool last() const { return rank() == ws.rank().world_size() - 1; }
};

struct Case {
  const char* name;
  const char* prefix;    // the message starts with it
  const char* expected;  // and holds this
  std::function<void(const Operands&)> call;
};

// The allocations' numbers (run_with_operands): #1 ws's words, #2 other_ws's,
// #3 heap_a, #4 heap_b, #5 heap_c, #6 heap_half.
const Case kCases[] = {
    {"c_too_small", "iris::ops::matmul_all_scatter: c (1152 bytes from byte 0 of allocation #6) ",
     "runs past the end of the allocation (576 bytes)",
     [](const Operands& o) { iris::ops::matmul_all_scatter(o.ws, o.host, o.heap_b, o.heap_half, kM, kN, kK); }},
    {"c_freed", "iris::ops::matmul_all_scatter: c (1152 bytes at byte ",
     "of the symmetric heap) is in no live allocation (freed, or past the end of one)",
     [](const Operands& o) { iris::ops::matmul_all_scatter(o.ws, o.heap_a, o.heap_b, o.freed, kM, kN, kK); }},
    {"c_off_heap_too_small", "iris::ops::matmul_all_reduce: c (1152 bytes from byte 0 of allocation #6) ",
     "runs past the end of the allocation (576 bytes)",
     [](const Operands& o) { iris::ops::matmul_all_reduce(o.ws, o.heap_a, o.heap_b, o.heap_half, kM, kN, kK); }},
    {"c_scattered_freed", "iris::ops::matmul_reduce_scatter: c (",
     "of the symmetric heap) is in no live allocation (freed, or past the end of one)",
     [](const Operands& o) { iris::ops::matmul_reduce_scatter(o.ws, o.heap_a, o.heap_b, o.freed, kM, kN, kK); }},
    {"pulled_a_too_small", "iris::ops::all_gather_matmul: a (",
     "bytes from byte 432 of allocation #6) runs past the end of the allocation (576 bytes)",
     [](const Operands& o) {
       // a holds kM / W rows of kK (288 bytes or more on 2 to 4 ranks): 144 bytes from the end of heap_half.
       iris::ops::all_gather_matmul(o.ws, o.heap_half + 216, o.heap_b, o.heap_c, kM, kN, kK);
     }},
    {"b_freed", "iris::ops::all_gather_matmul: b (1152 bytes at byte ",
     "of the symmetric heap) is in no live allocation (freed, or past the end of one)",
     [](const Operands& o) {
       FusedConfig push;
       push.comm_programs = 1;
       iris::ops::all_gather_matmul(o.ws, o.host, o.freed, o.heap_c, kM, kN, kK, {}, push);
     }},
    {"c_overlaps_a", "iris::ops::matmul_all_reduce: c and a overlap: ",
     "the output may share no memory with an input (the operation does not work in place)",
     [](const Operands& o) { iris::ops::matmul_all_reduce(o.ws, o.host, o.heap_b, o.host + 10, kM, kN, kK); }},
    {"c_overlaps_b", "iris::ops::matmul_all_scatter: c and b overlap: ",
     "the output may share no memory with an input (the operation does not work in place)",
     [](const Operands& o) { iris::ops::matmul_all_scatter(o.ws, o.host, o.heap_c, o.heap_c, kM, kN, kK); }},
    {"comm_negative", "iris::ops::matmul_all_scatter: config.comm_programs = -2 ",
     "must be 0 (no role split), a count of programs, or FusedConfig::automatic_comm (-1)",
     [](const Operands& o) {
       FusedConfig config;
       config.comm_programs = -2;
       iris::ops::matmul_all_scatter(o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK, {}, config);
     }},
    {"comm_automatic_without_comm", "iris::ops::matmul_all_reduce: config.comm_programs = -1: ",
     "this operation has no communication programs (leave it 0)",
     [](const Operands& o) {
       FusedConfig config;
       config.comm_programs = FusedConfig::automatic_comm;
       iris::ops::matmul_all_reduce(o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK, {}, config);
     }},
    {"k_differs", "iris::ops::matmul_all_reduce: iris: collective call #",
     "differs between ranks: rank 0 called iris::ops::matmul_all_reduce(bf16, m 24, n 24, k 24, tiles 64x64x32, "
     "group_m 8, programs 0, comm_programs 0) through the workspace at allocation #1",
     [](const Operands& o) {
       const int k = o.last() ? 2 * kK : kK;
       iris::ops::matmul_all_reduce(o.ws, o.host, o.host + 2 * kElements, o.heap_c, kM, kN, k);
     }},
    {"config_differs", "iris::ops::matmul_reduce_scatter: iris: collective call #", "group_m 4, programs 0",
     [](const Operands& o) {
       FusedConfig config;
       if (o.last()) config.group_m = 4;
       iris::ops::matmul_reduce_scatter(o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK, {}, config);
     }},
    {"other_workspace", "iris::ops::all_gather_matmul: iris: collective call #",
     "through the workspace at allocation #2 (every rank must make the same sequence",
     [](const Operands& o) {
       iris::ops::all_gather_matmul(o.last() ? o.other_ws : o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK);
     }},
    {"one_rank_fails", "iris::ops::matmul_all_scatter: iris: collective call #",
     "failing: iris::ops::matmul_all_scatter: c (1152 bytes from byte 0 of allocation #6) runs past the end",
     [](const Operands& o) {
       iris::ops::matmul_all_scatter(o.ws, o.heap_a, o.heap_b, o.last() ? o.heap_half : o.heap_c, kM, kN, kK);
     }},
    // The last rank's next collective call is a barrier: the others' calls and
    // its barrier differ (its message starts with "iris: ", as Rank::barrier's).
    {"skipped_call", "", "differs between ranks: rank 0 called iris::ops::matmul_all_scatter(bf16, m 24",
     [](const Operands& o) {
       if (o.last()) {
         o.ws.rank().barrier();
       } else {
         iris::ops::matmul_all_scatter(o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK);
       }
     }},
};

// The hangs: after a warm-up call made by every rank (which grows the
// workspace), the last rank's call differs from the others' in a way that
// the comparison of the calls would have refused: it skips the call, or it
// passes kM where the others pass kBigM, so that its kernel has fewer tiles.
using Call = std::function<void(const Operands&, int m, const FusedConfig&)>;
struct Hang {
  const char* name;
  Call call;
  bool skip;  // the last rank skips the second call; else it passes kM
};

void all_scatter(const Operands& o, int m, const FusedConfig& c) {
  iris::ops::matmul_all_scatter(o.ws, o.heap_a, o.heap_b, o.heap_c, m, kN, kK, {}, c);
}
void all_reduce(const Operands& o, int m, const FusedConfig& c) {
  iris::ops::matmul_all_reduce(o.ws, o.heap_a, o.heap_b, o.heap_c, m, kN, kK, {}, c);
}

const Hang kHangs[] = {
    {"skipped_all_scatter", all_scatter, true},
    {"skipped_all_reduce", all_reduce, true},
    {"other_m_all_reduce", all_reduce, false},
};

using library_errors::fail;
using library_errors::failures;
std::vector<std::string> messages;  // each rank's

// Runs body(operands) on every rank of a world of `world`.
void run_with_operands(int world, const std::function<void(const Operands&)>& body) {
  iris::run_threads(world, 1 << 20, [&](iris::Rank& rank) {
    FusedWorkspace ws(rank);
    FusedWorkspace other_ws(rank);
    bfloat16* a = rank.allocate<bfloat16>(4 * kElements);
    bfloat16* b = rank.allocate<bfloat16>(4 * kElements);
    bfloat16* c = rank.allocate<bfloat16>(4 * kElements);
    bfloat16* half = rank.allocate<bfloat16>(kElements / 2);
    bfloat16* freed = rank.allocate<bfloat16>(kElements);
    rank.free(freed);
    std::vector<bfloat16> host(4 * kElements, bfloat16(1.0f));
    for (std::size_t j = 0; j < 4 * kElements; ++j) a[j] = b[j] = bfloat16(1.0f);
    rank.barrier();
    body({ws, other_ws, a, b, c, half, freed, host.data()});
  });
}

void run(const Case& c, int world) {
  messages.assign(static_cast<std::size_t>(world), "");
  run_with_operands(world, [&](const Operands& o) {
    iris::Rank& rank = o.ws.rank();
    const std::string message = library_errors::message_of([&] { c.call(o); });
    library_errors::expect_message(rank.rank(), c.name, message, c.prefix, c.expected);
    messages[static_cast<std::size_t>(rank.rank())] = message;
    if (o.ws.calls() != 0 || o.other_ws.calls() != 0) fail(rank.rank(), std::string(c.name) + ": a kernel was launched");
    // Still in step: C = A × B of ones, k = kK split over the ranks.
    iris::ops::matmul_all_reduce(o.ws, o.heap_a, o.heap_b, o.heap_c, kM, kN, kK);
    rank.barrier();
    for (std::size_t j = 0; j < std::size_t(kM) * kN; ++j) {
      if (static_cast<float>(o.heap_c[j]) != static_cast<float>(kK)) {
        fail(rank.rank(), std::string(c.name) + ": the matmul_all_reduce after the error gave " +
                              std::to_string(static_cast<float>(o.heap_c[j])));
        break;
      }
    }
  });
  // The same message on every rank, but where one rank's call is not the
  // operation (skipped_call: its barrier's message has no operation's name).
  const std::string& first = messages[0];
  for (int r = 1; r < world; ++r) {
    const std::string& other = messages[static_cast<std::size_t>(r)];
    const std::size_t at = std::strlen(c.prefix) == 0 ? other.find("iris: ") : 0;
    const std::size_t first_at = std::strlen(c.prefix) == 0 ? first.find("iris: ") : 0;
    if (other.substr(at) != first.substr(first_at)) {
      fail(r, std::string(c.name) + ": the message differs from rank 0's: \"" + other + "\"");
    }
  }
}

// The run must end in a deadlock report (library_errors::expect_deadlock).
int run(const Hang& h, int world) {
  FusedConfig unchecked;
  unchecked.compare_calls = false;
  return library_errors::expect_deadlock(h.name, world, [&] {
    run_with_operands(world, [&](const Operands& o) {
      h.call(o, kBigM, unchecked);
      if (!(h.skip && o.last())) h.call(o, o.last() ? kM : kBigM, unchecked);
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3) {
    const int world = std::atoi(argv[2]);
    for (const Case& c : kCases) {
      if (std::strcmp(argv[1], c.name) != 0) continue;
      run(c, world);
      std::printf("%s on %d ranks: %s\n  rank 0: %s\n", c.name, world,
                  failures == 0 ? "every rank threw the expected iris::Error" : "FAILED", messages[0].c_str());
      return failures == 0 ? 0 : 1;
    }
    for (const Hang& h : kHangs) {
      if (std::string(argv[1]) == std::string("hang:") + h.name) return run(h, world);
    }
  }
  std::fprintf(stderr, "usage: fused_host_errors <case> <ranks>: a case of");
  for (const Case& c : kCases) std::fprintf(stderr, " %s", c.name);
  for (const Hang& h : kHangs) std::fprintf(stderr, " hang:%s", h.name);
  std::fprintf(stderr, "\n");
  return 2;
}
