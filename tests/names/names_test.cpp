// hostile_names.iris: the kernels named run, run_ and EINVAL are called as C++
// names them (run_, run__2, and EINVAL, which <cerrno> defines as a macro
// again after the generated header), and give the values of the .iris
// formulas; the macros the header undefines are back for the code after it.
#include "hostile_names.iris.hpp"

#include <cassert>
#include <cerrno>
#include <cstdio>

#pragma push_macro("EINVAL")
#undef EINVAL
using hostile_kernel = iris_kernels::EINVAL;
#pragma pop_macro("EINVAL")

int main() {
  int failures = 0;
  iris::run_threads(1, 1 << 20, [&](iris::Rank& rank) {
    int32_t* out = rank.allocate<int32_t>(2);
    iris_kernels::run_::launch({1}, rank.device_context(), out, 3, 5, 10, 20, 30, 40);
    hostile_kernel::launch({1}, rank.device_context(), out + 1, 7);
    const int expected[2] = {3 * 5 + (4 + 1) + 2 + 10 + 20 + 30 + 40, 7};
    for (int i = 0; i < 2; ++i)
      if (out[i] != expected[i]) ++failures, std::fprintf(stderr, "out[%d] = %d, expected %d\n", i, out[i], expected[i]);
    // run_<int, class = 4>(out, launch_ = 7): the inner m is 8, m_2 10, launch(1) 2, class_<4>(1) 5.
    int32_t* out32 = rank.allocate<int32_t>(4);
    int64_t* out64 = rank.allocate<int64_t>(4);
    iris_kernels::run__2<int32_t>::launch({1}, rank.device_context(), out32, 7);
    iris_kernels::run__2<int64_t>::launch({1}, rank.device_context(), out64, 7);
    for (int i = 0; i < 4; ++i)
      if (out32[i] != 8 * 10 + 2 + 5 || out64[i] != 8 * 10 + 2 + 5)
        ++failures, std::fprintf(stderr, "run_: element %d is %d and %lld, expected 87\n", i, out32[i],
                                 static_cast<long long>(out64[i]));
  });
  assert(NULL == nullptr && EOF < 0 && EINVAL > 0);  // the library's macros again
  std::printf(failures ? "names: FAILED (%d)\n" : "names: passed\n", failures);
  return failures ? 1 : 0;
}
