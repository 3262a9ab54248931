// A header with a C++ error: Clang's own diagnostic is printed, and the
// import fails.
__device__ inline float broken(float x) { return x * ; }
