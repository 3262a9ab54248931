// An imported HIP header end to end on the CPU target: dequant.iris calls
// the helpers of quant.hip; the results are compared with the formulas
// computed here on the host.
#include "dequant.iris.hpp"

#include <cmath>
#include <cstdio>

int main() {
  constexpr int n = 1000;  // not a multiple of the block: the mask matters
  constexpr float scale = 0.25f, zero = 3.0f;
  int failures = 0;
  iris::run_threads(1, 1 << 20, [&](iris::Rank& rank) {
    int8_t* q = rank.allocate<int8_t>(n);
    float* out = rank.allocate<float>(n + 1);
    int32_t* sat = rank.allocate<int32_t>(2);
    for (int i = 0; i < n; ++i) q[i] = static_cast<int8_t>(i % 256 - 128);
    out[n] = -1.0f;  // past the end: must stay untouched
    iris_kernels::dequant<>::launch({(n + 63) / 64}, rank.device_context(), q, out, scale, zero, n);
    iris_kernels::saturated::launch({1}, rank.device_context(), sat, 7);  // the CPU launch returns when done
    for (int i = 0; i < n; ++i) {
      float expected = (static_cast<float>(i % 256 - 128) - 3.0f) * 0.25f;
      if (out[i] != expected) {
        if (failures++ < 5) std::fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], expected);
      }
    }
    if (out[n] != -1.0f) ++failures, std::fprintf(stderr, "out[n] was written\n");
    // saturate(7 * 2, -10, 10) = 10; saturate(7, 0, 5) = 5.
    if (sat[0] != 10 || sat[1] != 5) ++failures, std::fprintf(stderr, "saturate: %d %d\n", sat[0], sat[1]);
  });
  std::printf(failures ? "imports: FAILED (%d)\n" : "imports: 1 passed, 0 failed\n", failures);
  return failures ? 1 : 0;
}
