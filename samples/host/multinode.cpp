// multinode: the kernels of multinode.iris, which run on a world of several
// nodes, validated against values the host computes on its own. Under run_threads
// (one node) every rank is near; in the MPI build (sample_multinode_mpi) each
// process is a rank, and IRIS_RANKS_PER_NODE splits one host into fake nodes
// whose far ranks are reached through MPI RMA (docs/multi-node.md):
//
//   IRIS_RANKS_PER_NODE=2 mpirun -np 4 --mca osc pt2pt build/samples/sample_multinode_mpi --validate
//
//   all_gather        every rank's block, put into every rank
//   ring              a message to the next rank with put_signal, rounds numbered
//   all_reduce        put_signal to far ranks, loads from near ones, summed in rank order
//   gemm_all_scatter  each rank's column block of C = A x B, put into every rank
#include "gemm_common.hpp"
#include "multinode.iris.hpp"
#include "sample.hpp"

#include <atomic>
#include <cstdint>
#include <vector>

namespace {

constexpr int kBlock = 1024;
// The GEMM's tile on the CPU, and the matrices' sides (each rank's B and C
// blocks are K x N and M x N): small enough for the emulation, with edges.
constexpr int kTileM = 32, kTileN = 32, kTileK = 16;

void all_gather(iris::Rank& rank, std::size_t n, sample::Checker& check) {
  const int me = rank.rank(), world = rank.world_size();
  const std::size_t all = n * static_cast<std::size_t>(world);
  float* src = rank.allocate<float>(n);
  float* dst = rank.allocate<float>(all);
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
  sample::to_device(src, values.data(), n);
  sample::fill(dst, sample::poison<float>(), all);
  rank.barrier();
  iris_kernels::all_gather<>::launch({sample::blocks_for(n, kBlock)}, rank.device_context(), src, dst,
                                     static_cast<int32_t>(n));
  rank.barrier();
  const std::vector<float> got = sample::read(dst, all);
  for (int r = 0; r < world; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = static_cast<std::size_t>(r) * n + i;
      check.expect("all_gather dst", at, got[at], sample::value_of(r, i));
    }
  rank.free(dst);
  rank.free(src);
}

void ring(iris::Rank& rank, std::size_t n, sample::Checker& check) {
  const int me = rank.rank(), world = rank.world_size();
  const int next = (me + 1) % world, prev = (me + world - 1) % world;
  const int blocks = sample::blocks_for(n, kBlock);
  float* src = rank.allocate<float>(n);
  float* buffer = rank.allocate<float>(n);
  float* out = rank.allocate<float>(n);
  int32_t* flags = rank.allocate<int32_t>(static_cast<std::size_t>(blocks));
  sample::fill(flags, int32_t{0}, static_cast<std::size_t>(blocks));
  for (int32_t round = 1; round <= 3; ++round) {
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i) + static_cast<float>(round);
    sample::to_device(src, values.data(), n);
    sample::fill(out, sample::poison<float>(), n);
    // The previous round's payload is read (and this round's src written)
    // before anybody sends this round's.
    rank.barrier();
    iris_kernels::ring<>::launch({blocks}, rank.device_context(), src, buffer, flags, out, static_cast<int32_t>(n),
                                 next, round);
    const std::vector<float> got = sample::read(out, n);
    for (std::size_t i = 0; i < n; ++i)
      check.expect("ring out", i, got[i], sample::value_of(prev, i) + static_cast<float>(round));
  }
  rank.barrier();
  rank.free(flags);
  rank.free(out);
  rank.free(buffer);
  rank.free(src);
}

void all_reduce(iris::Rank& rank, std::size_t n, sample::Checker& check) {
  const int me = rank.rank(), world = rank.world_size();
  const int blocks = sample::blocks_for(n, kBlock);
  const std::size_t all = n * static_cast<std::size_t>(world);
  float* input = rank.allocate<float>(n);
  float* gathered = rank.allocate<float>(all);
  float* output = rank.allocate<float>(n);
  const std::size_t flag_count = static_cast<std::size_t>(blocks) * static_cast<std::size_t>(world);
  int32_t* flags = rank.allocate<int32_t>(flag_count);
  sample::fill(flags, int32_t{0}, flag_count);
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = sample::value_of(me, i);
  sample::to_device(input, values.data(), n);
  for (int32_t round = 1; round <= 2; ++round) {
    sample::fill(output, sample::poison<float>(), n);
    rank.barrier();
    iris_kernels::all_reduce<>::launch({blocks}, rank.device_context(), input, gathered, flags, output,
                                       static_cast<int32_t>(n), round);
    const std::vector<float> got = sample::read(output, n);
    for (std::size_t i = 0; i < n; ++i) {
      float want = 0;  // in rank order and in f32, as the kernel adds
      for (int r = 0; r < world; ++r) want += sample::value_of(r, i);
      check.expect("all_reduce output", i, got[i], want);
    }
  }
  rank.barrier();
  rank.free(flags);
  rank.free(output);
  rank.free(gathered);
  rank.free(input);
}

void gemm_all_scatter(iris::Rank& rank, const gemm_common::Shape& s, sample::Checker& check) {
  const int me = rank.rank(), world = rank.world_size();
  const std::int64_t ldc = s.N * world;
  std::vector<iris::bfloat16> a(static_cast<std::size_t>(s.M * s.lda())), b(static_cast<std::size_t>(s.K * s.ldb()));
  // A is the same on every rank; rank r's B is its own column block.
  for (std::int64_t i = 0; i < s.M; ++i)
    for (std::int64_t k = 0; k < s.K; ++k) a[static_cast<std::size_t>(i * s.lda() + k)] = gemm_common::element(0, 0, i, k);
  auto b_of = [&](int r, std::int64_t k, std::int64_t j) { return gemm_common::element(r, 1, k, j); };
  for (std::int64_t k = 0; k < s.K; ++k)
    for (std::int64_t j = 0; j < s.N; ++j) b[static_cast<std::size_t>(k * s.ldb() + j)] = b_of(me, k, j);
  iris::bfloat16* a_heap = rank.allocate<iris::bfloat16>(a.size());
  iris::bfloat16* b_heap = rank.allocate<iris::bfloat16>(b.size());
  iris::bfloat16* c_heap = rank.allocate<iris::bfloat16>(static_cast<std::size_t>(s.M * ldc));
  sample::to_device(a_heap, a.data(), a.size());
  sample::to_device(b_heap, b.data(), b.size());
  sample::fill(c_heap, sample::poison<iris::bfloat16>(), static_cast<std::size_t>(s.M * ldc));
  rank.barrier();
  const int tiles = static_cast<int>(((s.M + kTileM - 1) / kTileM) * ((s.N + kTileN - 1) / kTileN));
  iris_kernels::gemm_all_scatter<kTileM, kTileN, kTileK>::launch(
      {tiles}, rank.device_context(), a_heap, b_heap, c_heap, static_cast<int32_t>(s.M), static_cast<int32_t>(s.N),
      static_cast<int32_t>(s.K), static_cast<int32_t>(s.lda()), static_cast<int32_t>(s.ldb()),
      static_cast<int32_t>(ldc));
  rank.barrier();
  const std::vector<iris::bfloat16> got = sample::read(c_heap, static_cast<std::size_t>(s.M * ldc));
  for (int r = 0; r < world; ++r) {
    std::vector<iris::bfloat16> b_r(static_cast<std::size_t>(s.K * s.N));
    for (std::int64_t k = 0; k < s.K; ++k)
      for (std::int64_t j = 0; j < s.N; ++j) b_r[static_cast<std::size_t>(k * s.N + j)] = b_of(r, k, j);
    std::vector<double> ref, abs_sum;
    gemm_common::reference(a.data(), s.lda(), b_r.data(), s.N, s.M, s.N, s.K, ref, abs_sum);
    for (std::int64_t i = 0; i < s.M; ++i)
      for (std::int64_t j = 0; j < s.N; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * ldc + r * s.N + j), k = static_cast<std::size_t>(i * s.N + j);
        check.near("gemm_all_scatter c", at, static_cast<float>(got[at]), ref[k],
                   gemm_common::bound(ref[k], abs_sum[k], static_cast<double>(s.K)));
      }
  }
  rank.free(c_heap);
  rank.free(b_heap);
  rank.free(a_heap);
}

}  // namespace

int main(int argc, char** argv) {
  sample::Spec spec;
  spec.modes = {{"all_gather", "every rank's block, put into every rank"},
                {"ring", "a message to the next rank with put_signal, 3 rounds"},
                {"all_reduce", "put_signal to far ranks, loads from near ones, 2 rounds"},
                {"gemm_all_scatter", "each rank's column block of C = A x B, put into every rank (100x70x50)"}};
  sample::Options opt = sample::parse(argc, argv, "multinode: kernels for a world of several nodes", spec);
  std::atomic<std::size_t> errors{0};
  const gemm_common::Shape shape{100, 70, 50, 3};
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    sample::Checker check{rank.rank()};
    for (const std::string& mode : opt.modes) {
      if (mode == "gemm_all_scatter") {
        gemm_all_scatter(rank, shape, check);
        continue;
      }
      for (std::size_t n : opt.sizes) {
        if (mode == "all_gather") all_gather(rank, n, check);
        else if (mode == "ring") ring(rank, n, check);
        else all_reduce(rank, n, check);
      }
    }
    errors += check.errors;
  });
  return sample::report_modes("multinode", opt, leader, errors.load());
}
