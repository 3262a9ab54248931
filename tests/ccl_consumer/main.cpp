// Sums a vector over the ranks, then gathers every rank's sums, with two calls
// of iris::ccl one after the other and no host barrier between them: when a
// call has completed on a rank, it has on every rank. Checks the result.
//
//   ccl_consumer [ranks]   (default 2) prints "ccl: <ranks> ranks: ok"
#include <iris/ccl.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Heap memory is device memory on a GPU: the host copies it, never
// dereferences it. On the CPU target a copy is a memcpy.
void copy_heap(float* dst, const float* src, std::size_t count) {
#if IRIS_GPU
  // On the rank's own stream, once it is idle: a plain hipMemcpy would also
  // wait for the kernels of the other ranks on the GPU, some of which may wait
  // for this one, and so would a copy queued behind this rank's own kernels
  // (the driver stages copies of pageable memory through one buffer).
  (void)hipStreamSynchronize(hipStreamPerThread);
  (void)hipMemcpyAsync(dst, src, count * sizeof(float), hipMemcpyDefault, hipStreamPerThread);
  (void)hipStreamSynchronize(hipStreamPerThread);
#else
  std::memcpy(dst, src, count * sizeof(float));
#endif
}

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 2;
  const std::size_t n = 1000;  // elements per rank
  std::atomic<int> wrong{0};
  iris::run_threads(ranks, std::size_t{1} << 26, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    iris::Workspace ws(rank);  // collective: once per rank, before any call
    // The buffers other ranks reach live in the symmetric heap (collective).
    float* x = rank.allocate<float>(n);
    float* sums = rank.allocate<float>(n);
    float* gathered = rank.allocate<float>(n * world);
    std::vector<float> values(n * world);
    for (std::size_t i = 0; i < n; ++i) values[i] = float(me + i);
    copy_heap(x, values.data(), n);
    rank.barrier();  // every rank's x is written before any rank reads it

    iris::ccl::all_reduce(ws, x, sums, n);  // Op::sum, the table's algorithm
    iris::ccl::Config push;
    push.algorithm = iris::ccl::Algorithm::push;
    iris::ccl::all_gather(ws, sums, gathered, n * world, {}, push);
    rank.barrier();  // waits for the device, then the host reads

    copy_heap(values.data(), gathered, n * world);
    for (std::size_t i = 0; i < n * world; ++i) {
      const std::size_t j = i % n;
      const float expected = float(world * j + world * (world - 1) / 2);
      if (values[i] != expected && wrong++ < 5)
        std::fprintf(stderr, "rank %d: gathered[%zu] = %g, expected %g\n", me, i, values[i], expected);
    }
    rank.free(gathered);
    rank.free(sums);
    rank.free(x);
  });
  std::printf("ccl: %d ranks: %s\n", ranks, wrong ? "FAILED" : "ok");
  return wrong ? 1 : 0;
}
