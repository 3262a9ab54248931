// A helper called with the wrong number of arguments.
__device__ inline float mix(float a, float b, float t) { return a + (b - a) * t; } // expected-note {{'mix' is declared here}}
