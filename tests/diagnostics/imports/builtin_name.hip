// A device function named like a .iris built-in.
__device__ inline float load(float x) { return x; } // expected-note {{'load' is declared here}}
