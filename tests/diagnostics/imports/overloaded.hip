// One name, two declarations: C++ picks by argument types, .iris does not.
__device__ inline float scale(float x) { return 2 * x; } // expected-note {{'scale' is declared here}}
__device__ inline double scale(double x) { return 2 * x; } // expected-note {{'scale' is declared here}}
