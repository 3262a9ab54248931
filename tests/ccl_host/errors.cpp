// Bad calls of the host collectives (iris/ccl.hpp), one ctest per error
// (`ccl_host_errors <case>`): on 3 ranks, every rank must throw an iris::Error
// that starts with the call's name and says what is wrong, before anything is
// launched (the workspace counts no call), and the ranks must still be in step
// afterwards: a correct all_reduce follows and gives the right sums.
#include <iris/ccl.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace {

using iris::ccl::Algorithm;
using iris::ccl::Config;
using iris::ccl::Op;

constexpr int kWorld = 3;
constexpr std::size_t kCount = 300;  // a multiple of kWorld

// What a case's call gets: the rank's workspace, two heap buffers of kCount
// floats and one of host memory.
struct Operands {
  iris::Workspace& ws;
  float* heap_a;
  float* heap_b;
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
};

std::mutex report_lock;
int failures = 0;

void fail(int rank, const std::string& why) {
  std::lock_guard<std::mutex> lock(report_lock);
  ++failures;
  std::fprintf(stderr, "FAILED: rank %d: %s\n", rank, why.c_str());
}

void run(const Case& c) {
  iris::run_threads(kWorld, 1 << 20, [&](iris::Rank& rank) {
    iris::Workspace ws(rank);
    float* a = rank.allocate<float>(kCount);
    float* b = rank.allocate<float>(kCount);
    std::vector<float> host(kCount);
    for (std::size_t j = 0; j < kCount; ++j) a[j] = static_cast<float>(rank.rank() + 1);
    rank.barrier();
    std::string message = "<no iris::Error>";
    try {
      c.call({ws, a, b, host.data()});
    } catch (const iris::Error& e) {
      message = e.what();
    }
    if (message.rfind(c.prefix, 0) != 0 || message.find(c.expected) == std::string::npos) {
      fail(rank.rank(), std::string(c.name) + ": got \"" + message + "\", expected \"" + c.prefix + "...\" with \"" +
                            c.expected + "\"");
    }
    if (ws.calls() != 0) fail(rank.rank(), std::string(c.name) + ": a kernel was launched");
    iris::ccl::all_reduce(ws, a, b, kCount);  // still in step
    rank.barrier();
    for (std::size_t j = 0; j < kCount; ++j) {
      if (b[j] != 6.0f) {
        fail(rank.rank(), std::string(c.name) + ": the all_reduce after the error gave " + std::to_string(b[j]));
        break;
      }
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  for (const Case& c : kCases) {
    if (argc != 2 || std::strcmp(argv[1], c.name) != 0) continue;
    run(c);
    std::printf("%s: %s\n", c.name, failures == 0 ? "every rank threw the expected iris::Error" : "FAILED");
    return failures == 0 ? 0 : 1;
  }
  std::fprintf(stderr, "usage: ccl_host_errors <case>: one of");
  for (const Case& c : kCases) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "\n");
  return 2;
}
