// Two .iris files that both define `SCALE` and `adjust` (left.iris,
// right.iris) in one program: it builds, and each kernel uses its own file's
// definitions (values computed here from the two files' formulas).
#include "left.iris.hpp"
#include "right.iris.hpp"

#include <cstdio>

int main() {
  constexpr int n = 16;
  int failures = 0;
  iris::run_threads(1, 1 << 20, [&](iris::Rank& rank) {
    int32_t* a = rank.allocate<int32_t>(n);
    int32_t* b = rank.allocate<int32_t>(n);
    iris_kernels::left::launch({1}, rank.device_context(), a, n);
    iris_kernels::right::launch({1}, rank.device_context(), b, n);
    for (int i = 0; i < n; ++i) {
      if (a[i] != i * 2 + 1) ++failures, std::fprintf(stderr, "left[%d] = %d, expected %d\n", i, a[i], i * 2 + 1);
      if (b[i] != i * 10 - 3) ++failures, std::fprintf(stderr, "right[%d] = %d, expected %d\n", i, b[i], i * 10 - 3);
    }
  });
  std::printf(failures ? "modules: FAILED (%d)\n" : "modules: passed\n", failures);
  return failures ? 1 : 0;
}
