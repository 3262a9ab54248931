// Checked mode end to end: kernels generated with `irisc --checked` from
// out_of_heap.iris must report a planted out-of-heap access and a rank
// outside [0, world_size) as an error naming the .iris file and line, the rank
// and the program instance, and the run must end (no hang) with that error.
#include "out_of_heap.iris.hpp"

#include <cstdio>
#include <string>

namespace {

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

bool expect(const std::string& what, const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return true;
  std::fprintf(stderr, "%s: expected an error containing '%s', got '%s'\n", what.c_str(), needle.c_str(),
               text.c_str());
  return false;
}

}  // namespace

int main() {
  bool ok = true;
  // In bounds: no error.
  std::string fine = error_of([](iris::Rank& rank) {
    float* dst = rank.allocate<float>(256);
    rank.barrier();
    iris_kernels::overrun<>::launch({1}, rank.device_context(), dst, 0);
    rank.barrier();
  });
  ok &= expect("in bounds", fine.empty() ? "no error" : fine, "no error");

  // 1 MiB heaps hold 262144 floats: this offset runs off the end.
  std::string overrun = error_of([](iris::Rank& rank) {
    float* dst = rank.allocate<float>(256);
    rank.barrier();
    iris_kernels::overrun<>::launch({1}, rank.device_context(), dst, 262144 - 16);
    rank.barrier();
  });
  ok &= expect("out of heap", overrun, "out_of_heap.iris:4");
  ok &= expect("out of heap", overrun, "program 0");

  std::string bad_rank = error_of([](iris::Rank& rank) {
    float* dst = rank.allocate<float>(1);
    rank.barrier();
    iris_kernels::bad_rank::launch({1}, rank.device_context(), dst, 5);
    rank.barrier();
  });
  ok &= expect("bad rank", bad_rank, "out_of_heap.iris:8");
  ok &= expect("bad rank", bad_rank, "5");

  std::puts(ok ? "checked mode: 3 passed, 0 failed" : "checked mode: FAILED");
  return ok ? 0 : 1;
}
