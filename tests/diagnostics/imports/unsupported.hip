// Functions .iris cannot call, each for another reason.
struct Pair { float a, b; };
__device__ inline float first(Pair p) { return p.a; } // expected-note {{'first' is declared here}}
__device__ inline float deref(const float* p) { return *p; } // expected-note {{'deref' is declared here}}
__device__ inline Pair make_pair(float a) { return {a, a}; } // expected-note {{'make_pair' is declared here}}
inline float host_only(float x) { return x; } // expected-note {{'host_only' is declared here}}
template <class T> __device__ T twice(T x) { return x + x; } // expected-note {{'twice' is declared here}}
__device__ inline float by_ref(float& x) { return x; } // expected-note {{'by_ref' is declared here}}
