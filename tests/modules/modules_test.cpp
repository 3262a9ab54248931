// Two .iris files that both define `SCALE` and `adjust` (left.iris,
// right.iris) and both import the module bias.iris, in one program: it
// builds, and each kernel uses its own file's definitions and the module's
// (values computed here from the three files' formulas).
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
      int left = i * 2 + 1 + 1000, right = i * 10 - 3 + 1000;
      if (a[i] != left) ++failures, std::fprintf(stderr, "left[%d] = %d, expected %d\n", i, a[i], left);
      if (b[i] != right) ++failures, std::fprintf(stderr, "right[%d] = %d, expected %d\n", i, b[i], right);
    }
  });
  std::printf(failures ? "modules: FAILED (%d)\n" : "modules: passed\n", failures);
  return failures ? 1 : 0;
}
