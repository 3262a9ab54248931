// Bad calls of the host collectives (iris/ccl.hpp), one ctest per error
// (`ccl_host_errors <case> [ranks]`): on 3 ranks (or `ranks`), every rank must
// throw an iris::Error that starts with the call's name and says what is
// wrong, before anything is launched (the workspace counts no call), and the
// ranks must still be in step afterwards: a correct all_reduce follows and
// gives the right sums. The hangs (`ccl_host_errors hang:<case> ranks`): calls
// that the ranks' comparison would have refused, made without it
// (compare_calls = false), must end the run in a deadlock report.
#include <iris/ccl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../library_errors.hpp"

namespace {

using iris::ccl::Algorithm;
using iris::ccl::Config;
using iris::ccl::Op;

constexpr int kWorld = 3;
constexpr std::size_t kCount = 300;  // a multiple of 2, 3, 4 and kWorld

// What a case's call gets: the rank's workspace and a second one, two heap
// buffers of kCount floats, one of kCount / 2, one freed, and one of host memory.
struct Operands {
  iris::Workspace& ws;
  iris::Workspace& other_ws;
  float* heap_a;
  float* heap_b;
  float* heap_half;
  float* freed;
  float* host;
};

struct Case {
  const char* name;
  const char* prefix;    // the message starts with it
  const char* expected;  // and holds this
  std::function<void(const Operands&)> call;
};

Config forced(Algorithm a) {
  Config config;
  config.algorithm = a;
  return config;
}

const Case kCases[] = {
    {"outside_heap", "iris::ccl::all_reduce: ",
     "'s symmetric heap, but other ranks reach it (one_shot): allocate it with Rank::allocate",
     [](const Operands& o) {
       iris::ccl::all_reduce(o.ws, o.host, o.heap_b, kCount, Op::sum, {}, forced(Algorithm::one_shot));
     }},
    {"count_not_dividing", "iris::ccl::all_gather: ", "count = 301 does not divide over 3 ranks",
     [](const Operands& o) { iris::ccl::all_gather(o.ws, o.heap_a, o.heap_b, kCount + 1); }},
    {"in_place", "iris::ccl::all_reduce: ", "input and output overlap: in place (one_shot) is not allowed",
     [](const Operands& o) {
       iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_a, kCount, Op::max, {}, forced(Algorithm::one_shot));
     }},
    {"in_place_gather", "iris::ccl::all_gather: ", "input and output overlap",
     [](const Operands& o) { iris::ccl::all_gather(o.ws, o.heap_a + kCount / kWorld, o.heap_a, kCount); }},
    {"mismatch", "iris::ccl::reduce_scatter: ", "differs between ranks: rank 0 called iris::ccl::reduce_scatter(f32, sum",
     [](const Operands& o) {
       const Op op = o.ws.rank().rank() == 2 ? Op::min : Op::sum;
       iris::ccl::reduce_scatter(o.ws, o.heap_a, o.heap_b, kCount, op);
     }},
    {"one_rank_fails", "iris::ccl::all_to_all: ", "failing: iris::ccl::all_to_all: input (",
     [](const Operands& o) {
       const float* input = o.ws.rank().rank() == 1 ? o.host : o.heap_a;
       iris::ccl::all_to_all(o.ws, input, o.heap_b, kCount, {}, forced(Algorithm::one_shot));
     }},
    {"algorithm", "iris::ccl::reduce_scatter: ", "config.algorithm = two_shot is not one of reduce_scatter's algorithms",
     [](const Operands& o) {
       iris::ccl::reduce_scatter(o.ws, o.heap_a, o.heap_b, kCount, Op::sum, {}, forced(Algorithm::two_shot));
     }},
    {"block", "iris::ccl::broadcast: ", "config.block = 100 is not 0",
     [](const Operands& o) {
       Config config;
       config.block = 100;
       iris::ccl::broadcast(o.ws, o.heap_a, kCount, 0, {}, config);
     }},
    {"root", "iris::ccl::broadcast: ", "root = 3 is not a rank of the 3-rank world",
     [](const Operands& o) { iris::ccl::broadcast(o.ws, o.heap_a, kCount, kWorld); }},
    {"null", "iris::ccl::all_reduce: ", "output is null",
     [](const Operands& o) { iris::ccl::all_reduce(o.ws, o.heap_a, static_cast<float*>(nullptr), kCount); }},
    {"output_too_small", "iris::ccl::all_reduce: output (1200 bytes from byte 0 of allocation #5) ",
     "runs past the end of the allocation (600 bytes)",
     [](const Operands& o) { iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_half, kCount); }},
    {"input_too_small", "iris::ccl::all_to_all: input (1200 bytes from byte 0 of allocation #5) ",
     "runs past the end of the allocation (600 bytes)",
     [](const Operands& o) { iris::ccl::all_to_all(o.ws, o.heap_half, o.heap_b, kCount); }},
    {"output_freed", "iris::ccl::all_gather: output (1200 bytes at byte 3840 of the symmetric heap) ",
     "is in no live allocation (freed, or past the end of one)",
     [](const Operands& o) { iris::ccl::all_gather(o.ws, o.heap_a, o.freed, kCount); }},
    {"overlap_not_in_place", "iris::ccl::all_reduce: input and output overlap without being the same buffer",
     ": in place, output must be input",
     [](const Operands& o) {
       iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_a + 1, kCount - 1, Op::sum, {}, forced(Algorithm::two_shot));
     }},
    {"op_out_of_range", "iris::ccl::all_reduce: op = Op(99) ", "is not an iris::ccl::Op (sum, max or min)",
     [](const Operands& o) { iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_b, kCount, static_cast<Op>(99)); }},
    {"algorithm_out_of_range", "iris::ccl::broadcast: config.algorithm = Algorithm(-1) ",
     "is not an iris::ccl::Algorithm",
     [](const Operands& o) { iris::ccl::broadcast(o.ws, o.heap_a, kCount, 0, {}, forced(static_cast<Algorithm>(-1))); }},
    {"other_workspace", "iris::ccl::all_gather: ", "through the workspace at allocation #2 (every rank must make the same sequence",
     [](const Operands& o) {
       iris::Workspace& ws = o.ws.rank().rank() == o.ws.rank().world_size() - 1 ? o.other_ws : o.ws;
       iris::ccl::all_gather(ws, o.heap_a, o.heap_b, kCount);
     }},
    {"heap_exhausted", "iris::ccl::all_reduce: the workspace's ",
     "bytes of scratch do not fit in the symmetric heap: iris: out of symmetric heap memory",
     [](const Operands& o) {
       // push's scratch holds W inputs, which do not fit in the 1 MiB heap beside them
       constexpr std::size_t big = 100000;
       iris::Rank& rank = o.ws.rank();
       float* in = rank.allocate<float>(big);
       float* out = rank.allocate<float>(big);
       struct Free {
         iris::Rank& rank;
         float* in;
         float* out;
         ~Free() {
           rank.free(out);
           rank.free(in);
         }
       } free_after{rank, in, out};
       iris::ccl::all_reduce(o.ws, in, out, big, Op::sum, {}, forced(Algorithm::push));
     }},
};

// The hangs: after a first call made by every rank (which grows the
// workspace), the last rank's call differs from the others' in a way that the
// comparison of the calls would have refused.
struct Hang {
  const char* name;
  std::function<void(const Operands&, const Config&)> call;
};

const Hang kHangs[] = {
    {"other_workspace",
     [](const Operands& o, const Config& c) {
       iris::Workspace& ws = o.ws.rank().rank() == o.ws.rank().world_size() - 1 ? o.other_ws : o.ws;
       iris::ccl::all_reduce(ws, o.heap_a, o.heap_b, kCount, Op::sum, {}, c);
     }},
    {"skipped_call",
     [](const Operands& o, const Config& c) {
       if (o.ws.rank().rank() != o.ws.rank().world_size() - 1) {
         iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_b, kCount, Op::sum, {}, c);
       }
     }},
};

using library_errors::fail;
using library_errors::failures;

// Runs body(operands) on every rank of a world of `world`; the allocations'
// numbers: #1 ws's words, #2 other_ws's, #3 heap_a, #4 heap_b, #5 heap_half.
void run_with_operands(int world, const std::function<void(const Operands&)>& body) {
  iris::run_threads(world, 1 << 20, [&](iris::Rank& rank) {
    iris::Workspace ws(rank);
    iris::Workspace other_ws(rank);
    float* a = rank.allocate<float>(kCount);
    float* b = rank.allocate<float>(kCount);
    float* half = rank.allocate<float>(kCount / 2);
    float* freed = rank.allocate<float>(kCount);
    rank.free(freed);
    std::vector<float> host(kCount);
    for (std::size_t j = 0; j < kCount; ++j) a[j] = static_cast<float>(rank.rank() + 1);
    rank.barrier();
    body({ws, other_ws, a, b, half, freed, host.data()});
  });
}

void run(const Case& c, int world) {
  run_with_operands(world, [&](const Operands& o) {
    iris::Workspace& ws = o.ws;
    iris::Rank& rank = ws.rank();
    float* a = o.heap_a;
    float* b = o.heap_b;
    const std::string message = library_errors::message_of([&] { c.call(o); });
    library_errors::expect_message(rank.rank(), c.name, message, c.prefix, c.expected);
    if (ws.calls() != 0) fail(rank.rank(), std::string(c.name) + ": a kernel was launched");
    iris::ccl::all_reduce(ws, a, b, kCount);  // still in step
    rank.barrier();
    const float sum = static_cast<float>(world * (world + 1) / 2);
    for (std::size_t j = 0; j < kCount; ++j) {
      if (b[j] != sum) {
        fail(rank.rank(), std::string(c.name) + ": the all_reduce after the error gave " + std::to_string(b[j]));
        break;
      }
    }
  });
}

// The run must end in a deadlock report (library_errors::expect_deadlock).
int run(const Hang& h, int world) {
  Config unchecked;
  unchecked.compare_calls = false;
  return library_errors::expect_deadlock(h.name, world, [&] {
    run_with_operands(world, [&](const Operands& o) {
      iris::ccl::all_reduce(o.ws, o.heap_a, o.heap_b, kCount, Op::sum, {}, unchecked);
      h.call(o, unchecked);
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int world = argc == 3 ? std::atoi(argv[2]) : kWorld;
  for (const Case& c : kCases) {
    if (argc < 2 || std::strcmp(argv[1], c.name) != 0) continue;
    run(c, world);
    std::printf("%s: %s\n", c.name, failures == 0 ? "every rank threw the expected iris::Error" : "FAILED");
    return failures == 0 ? 0 : 1;
  }
  for (const Hang& h : kHangs) {
    if (argc >= 2 && std::string(argv[1]) == std::string("hang:") + h.name) return run(h, world);
  }
  std::fprintf(stderr, "usage: ccl_host_errors <case> [ranks]: one of");
  for (const Case& c : kCases) std::fprintf(stderr, " %s", c.name);
  for (const Hang& h : kHangs) std::fprintf(stderr, " hang:%s", h.name);
  std::fprintf(stderr, "\n");
  return 2;
}
