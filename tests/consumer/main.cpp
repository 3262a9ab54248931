// Runs the two kernels on every rank: scale (y = 2 x + 1 on the rank) and ring
// (y to the next rank's z), then checks z against values computed on the host.
#include "ring.iris.hpp"   // written by irisc at build time
#include "scale.iris.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Heap memory is device memory on a GPU: the host copies it, never
// dereferences it. On the CPU target a copy is a memcpy.
template <class T>
void copy_heap(T* dst, const T* src, std::size_t count) {
#if IRIS_GPU
  // On the rank's own stream, once it is idle: a plain hipMemcpy would also
  // wait for the kernels of the other ranks on the GPU, some of which may wait
  // for this one, and so would a copy queued behind this rank's own kernels
  // (the driver stages copies of pageable memory through one buffer).
  (void)hipStreamSynchronize(hipStreamPerThread);
  (void)hipMemcpyAsync(dst, src, count * sizeof(T), hipMemcpyDefault, hipStreamPerThread);
  (void)hipStreamSynchronize(hipStreamPerThread);
#else
  std::memcpy(dst, src, count * sizeof(T));
#endif
}

// What rank r puts into x[i].
float input(int r, int i) { return float(r * 1000 + i); }

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 2;
  const int n = 1000, block = 256;  // block: the kernels' BLOCK
  std::atomic<int> wrong{0};
  iris::run_threads(ranks, std::size_t{1} << 26, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    // Collective: every rank allocates the same blocks, at the same offsets.
    float* x = rank.allocate<float>(n);
    float* y = rank.allocate<float>(n);
    float* z = rank.allocate<float>(n);
    std::vector<float> values(n);
    for (int i = 0; i < n; ++i) values[i] = input(me, i);
    copy_heap(x, values.data(), n);

    const iris::Grid grid{(n + block - 1) / block};
    iris_kernels::scale<>::launch(grid, rank.device_context(), x, y, 2.0f, 1.0f, n);
    rank.barrier();
    iris_kernels::ring<>::launch(grid, rank.device_context(), y, z, n);
    rank.barrier();  // every rank's stores have landed

    copy_heap(values.data(), z, n);
    const int from = (me + world - 1) % world;
    for (int i = 0; i < n; ++i) {
      const float expected = 2.0f * input(from, i) + 1.0f;
      if (values[i] != expected && wrong++ < 5)
        std::fprintf(stderr, "rank %d: z[%d] = %g, expected %g\n", me, i, values[i], expected);
    }
    rank.free(z);
    rank.free(y);
    rank.free(x);
  });
  if (wrong) {
    std::printf("consumer: FAILED, %d wrong elements\n", wrong.load());
    return 1;
  }
  std::printf("consumer: %d ranks, every element checked: ok\n", ranks);
  return 0;
}
