// Helpers called with arguments of the wrong type.
__device__ inline int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; } // expected-note {{'clamp_index' is declared here}} expected-note {{'clamp_index' is declared here}}
__device__ inline float half_of(float x) { return x / 2; } // expected-note {{'half_of' is declared here}}
