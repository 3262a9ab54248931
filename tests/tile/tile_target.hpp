// What the tile library's unit tests need of a target, so that one source
// (tile_test.cpp) runs on the CPU emulation and, compiled with nvcc, on a GPU:
//   Buffer<T>   memory that the host and the program instances both address
//               (managed memory on the GPU), freed at the end of its scope;
//   run<K>(...) launches K::run over a grid of program instances through the
//               runtime's launch_kernel and returns when they are done. On the
//               CPU the launch runs inside a world of threads, so a wait that
//               can never be satisfied ends in the runtime's deadlock error
//               instead of a hang. run_with<K>(ctx, ...) runs it with a
//               given context (heaps to translate between).
#pragma once

#include <iris/kernel.hpp>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>

namespace tile_test {

#if IRIS_GPU
inline void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw std::runtime_error(std::string(what) + ": " + hipGetErrorString(e));
}
#endif

template <class T>
class Buffer {
 public:
  explicit Buffer(std::size_t n, T fill = T{}) : n_(n) {
#if IRIS_GPU
    void* p = nullptr;
    check(hipMallocManaged(&p, n * sizeof(T)), "hipMallocManaged");
    data_ = static_cast<T*>(p);
#else
    data_ = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
#endif
    for (std::size_t i = 0; i < n; ++i) data_[i] = fill;
  }
  ~Buffer() {
#if IRIS_GPU
    (void)hipFree(data_);
#else
    ::operator delete(data_, std::align_val_t{64});
#endif
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() { return data_; }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) { return data_[i]; }

 private:
  T* data_;
  std::size_t n_;
};

// A context for one rank of `world` whose heaps start at `bases` (a Buffer
// that the instances can read: translation reads it on the device).
inline iris::DeviceContext context(Buffer<char*>& bases, std::size_t heap_size, int rank) {
  const int ranks = static_cast<int>(bases.size());
  return iris::DeviceContext{bases.data(), heap_size, rank, ranks, 0, ranks, nullptr, nullptr};
}

template <class Kernel, class... Args>
void run_with(const iris::DeviceContext& ctx, int instances, Args... args) {
#if IRIS_GPU
  iris::launch_kernel<Kernel>(iris::Grid{instances}, iris::Stream{}, ctx, args...);
  check(hipDeviceSynchronize(), "kernel");
#else
  // The instances run on the thread of rank ctx.rank; the ranks before it
  // return at once.
  iris::run_threads(ctx.rank + 1, 4096, [&](iris::Rank& r) {
    if (r.rank() == ctx.rank) iris::launch_kernel<Kernel>(iris::Grid{instances}, iris::Stream{}, ctx, args...);
  });
#endif
}

// A context for a world of one rank whose heap is not used.
template <class Kernel, class... Args>
void run(int instances, Args... args) {
  Buffer<char*> bases(1, nullptr);
  run_with<Kernel>(context(bases, 0, 0), instances, args...);
}

}  // namespace tile_test
