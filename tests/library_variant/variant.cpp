// Which generated kernels <iris/fused.hpp> and <iris/ccl.hpp> take for the
// switches this file is built with (iris/library_variant.hpp), checked at
// compile time: tests/CMakeLists.txt builds it once per setting of the
// switches, with the inline namespace of each library's operations
// (fused_unchecked, fused_checked, ...) and the namespace of the kernels it
// expects them to use (fused_gemm_iris, fused_gemm_checked_iris, ...) in
// IRIS_TEST_*. A wrong variant names a namespace that is not there (the
// generated header of another variant was included), or another one.
#include <iris/ccl.hpp>
#include <iris/fused.hpp>

#include <cstdio>

// (A function, as GCC warns of `&x == &x` written out.)
constexpr bool same_object(const void* a, const void* b) { return a == b; }
static_assert(same_object(&iris::ops::IRIS_TEST_FUSED::kernels::iris_module_ccl::OP_SUM,
                          &iris_kernels::IRIS_TEST_FUSED_KERNELS::iris_module_ccl::OP_SUM));
static_assert(same_object(&iris::ccl::IRIS_TEST_CCL::kernels::iris_module_ccl::OP_SUM,
                          &iris_kernels::IRIS_TEST_CCL_KERNELS::iris_module_ccl::OP_SUM));

int main() { std::puts("library_variant: the expected kernels"); }
