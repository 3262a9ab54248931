// Iris runtime: which kernels a host library over .iris kernels uses
// (<iris/fused.hpp>, <iris/ccl.hpp>), decided here for both. The package ships
// each library's kernels generated three ways, each in a namespace of its own
// (runtime/CMakeLists.txt): plain, checked (irisc --checked) and traced (irisc
// --trace). A library takes
//   the checked kernels  where its checked switch is 1 (IRIS_FUSED_CHECKED,
//                        IRIS_CCL_CHECKED; iris_add_kernels(... CHECKED ...)
//                        defines both),
//   else the traced ones where its traced switch is 1 (IRIS_FUSED_TRACED,
//                        IRIS_CCL_TRACED; iris_add_kernels(... TRACE ...)
//                        defines both, without CHECKED),
//   else the plain ones;
// a switch that is not defined counts as 0 (tests/library_variant builds each
// setting).
//
// A library defines IRIS_LIBRARY_CHECKED and IRIS_LIBRARY_TRACED as its two
// switches and includes this file, which undefines them and defines
//   IRIS_LIBRARY_VARIANT(plain, checked, traced)
// as the argument of the variant taken. The library includes its generated
// header through it and names its namespaces with it (the kernels' namespace,
// and the inline namespace of its operations, so that code built with one
// variant and code built with another never share an instantiation), then
// undefines it. Hence no include guard: each library includes the file once.
#if IRIS_LIBRARY_CHECKED
#define IRIS_LIBRARY_VARIANT(plain, checked, traced) checked
#elif IRIS_LIBRARY_TRACED
#define IRIS_LIBRARY_VARIANT(plain, checked, traced) traced
#else
#define IRIS_LIBRARY_VARIANT(plain, checked, traced) plain
#endif
#undef IRIS_LIBRARY_CHECKED
#undef IRIS_LIBRARY_TRACED
