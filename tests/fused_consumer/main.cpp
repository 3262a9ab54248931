// A user's program of the fused operations (<iris/fused.hpp>), built against
// the installed Iris by the test package.fused.cpu (tests/package): every
// operation, plain and role-split, with every compiled tile shape, called back
// to back through one workspace with no host barrier between the calls; every
// element of every result checked against the product in double of the same
// bf16 inputs, within samples/host/gemm_common.hpp's error bound. Before that,
// every argument error, each against its whole message.
//
//   fused_consumer [ranks]   (default 2) prints "fused: <ranks> ranks, 48 calls,
//                            every element checked, 12 errors checked: ok"
#include <iris/fused.hpp>

#include "gemm_common.hpp"  // samples/host: the bf16 inputs, the reference product and its bound

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace {

using bf16 = iris::bfloat16;
using iris::ops::FusedConfig;

enum class Op { all_scatter, all_reduce, reduce_scatter, all_gather };
const char* const kOpNames[] = {"matmul_all_scatter", "matmul_all_reduce", "matmul_reduce_scatter",
                                "all_gather_matmul"};

struct Call {
  Op op;
  FusedConfig config;
};

// Every operation with every tile shape, and with automatic tiles (the
// default config: 64x64x32 on the CPU); the role split (comm_programs) where
// there is one. Grids of 3 programs walk the tiles on the CPU (its default
// grid is 1); the split ones have 2 communication programs, or with automatic
// tiles an automatic count (1 on the CPU; on a GPU 1, 2 or 4, measured).
std::vector<Call> calls_of_one_pass() {
  const int shapes[][3] = {{64, 64, 32}, {128, 128, 64}, {128, 256, 64}, {0, 0, 0}};
  std::vector<Call> calls;
  for (const auto& s : shapes) {
    FusedConfig plain;
    plain.block_m = s[0];
    plain.block_n = s[1];
    plain.block_k = s[2];
    plain.programs = 3;
    FusedConfig split = plain;
    split.programs = 5;
    split.comm_programs = s[0] == 0 ? FusedConfig::automatic_comm : 2;
    calls.push_back({Op::all_scatter, plain});
    calls.push_back({Op::all_scatter, split});
    calls.push_back({Op::all_reduce, plain});
    calls.push_back({Op::reduce_scatter, plain});
    calls.push_back({Op::all_gather, plain});
    calls.push_back({Op::all_gather, split});
  }
  return calls;
}

// Rank r's slice of `length` items split over `world` ranks.
struct Slice {
  int first, count;
};
Slice slice(int length, int world, int r) { return {r * (length / world), length / world}; }

// Memory for a matrix of one call. Where the operation allows any device memory
// it is ordinary host memory on the CPU target (showing that it needs no heap),
// heap memory on a GPU (this program keeps no other device memory).
class Buffers {
 public:
  explicit Buffers(iris::Rank& rank) : rank_(rank) {}
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {  // collective; dropped when another rank failed (run_threads reports that)
    try {
      for (auto it = heap_.rbegin(); it != heap_.rend(); ++it) rank_.free(*it);
    } catch (const iris::Error&) {
    }
  }
  bf16* get(std::size_t count, bool heap) {
#if IRIS_GPU
    heap = true;
#endif
    if (heap) {
      heap_.push_back(rank_.allocate<bf16>(count));
      return heap_.back();
    }
    host_.emplace_back(count);
    return host_.back().data();
  }

 private:
  iris::Rank& rank_;
  std::vector<bf16*> heap_;
  std::deque<std::vector<bf16>> host_;
};

// The matrices of call `id`: A (M×K), B (K×N), and rank r's own B of all_gather.
std::uint64_t matrix(int id, int which) { return 1000 + 100 * static_cast<std::uint64_t>(id) + which; }

// Rows [row0, row0 + rows) and columns [col0, col0 + cols) of matrix `stream`,
// dense.
std::vector<bf16> part(std::uint64_t stream, int row0, int rows, int col0, int cols) {
  std::vector<bf16> out(static_cast<std::size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      out[static_cast<std::size_t>(i) * cols + j] = gemm_common::value(stream, row0 + i, col0 + j);
  return out;
}

// The argument errors, each thrown by every rank with exactly this message.
std::size_t check_errors(iris::Rank& rank, iris::ops::FusedWorkspace& ws, int& checked) {
  const int world = rank.world_size(), me = rank.rank();
  std::size_t wrong = 0;
  auto expect = [&](const std::function<void()>& call, const std::string& message) {
    ++checked;
    try {
      call();
      std::fprintf(stderr, "rank %d: no error, expected: %s\n", me, message.c_str());
      ++wrong;
    } catch (const iris::Error& e) {
      if (e.what() != message) {
        std::fprintf(stderr, "rank %d: error\n  %s\nexpected\n  %s\n", me, e.what(), message.c_str());
        ++wrong;
      }
    }
  };
  const std::string w = std::to_string(world);
  const int m = 8 * world, n = 8 * world, k = 8 * world;
  bf16* heap = rank.allocate<bf16>(static_cast<std::size_t>(m) * n);
  std::vector<bf16> host(static_cast<std::size_t>(m) * n);
  using namespace iris::ops;

  // Memory that other ranks reach must be in the heap.
  expect([&] { matmul_all_scatter(ws, heap, heap, host.data(), m, n, k); },
         "iris::ops::matmul_all_scatter: c (" + std::to_string(m * n * 2) +
             " bytes) is not in the calling rank's symmetric heap, but the other ranks store their tiles of C into "
             "it: allocate it with "
             "Rank::allocate (the same call on every rank)");
  expect([&] { all_gather_matmul(ws, host.data(), heap, heap, m, n, k); },
         "iris::ops::all_gather_matmul: a (" + std::to_string(m / world * k * 2) +
             " bytes) is not in the calling rank's symmetric heap, but the other ranks load their A tiles from it "
             "(config.comm_programs > 0 pushes "
             "them instead): allocate it with Rank::allocate (the same call on every rank)");
  // Sizes that do not divide over the ranks (none with one rank).
  if (world > 1) {
    expect([&] { matmul_all_scatter(ws, heap, heap, heap, m, n + 1, k); },
           "iris::ops::matmul_all_scatter: n = " + std::to_string(n + 1) + " does not divide over " + w +
               " ranks: every rank holds n / " + w + " columns of B");
    expect([&] { matmul_all_reduce(ws, heap, heap, heap, m, n, k - 1); },
           "iris::ops::matmul_all_reduce: k = " + std::to_string(k - 1) + " does not divide over " + w +
               " ranks: every rank holds k / " + w + " columns of A and rows of B");
    expect([&] { matmul_reduce_scatter(ws, heap, heap, heap, m + 1, n, k); },
           "iris::ops::matmul_reduce_scatter: m = " + std::to_string(m + 1) + " does not divide over " + w +
               " ranks: every rank holds m / " + w + " rows of C");
    expect([&] { all_gather_matmul(ws, heap, heap, heap, m + 1, n, k); },
           "iris::ops::all_gather_matmul: m = " + std::to_string(m + 1) + " does not divide over " + w +
               " ranks: every rank holds m / " + w + " rows of A");
  } else {
    checked += 4;  // nothing to divide: counted, so that every world prints the same line
  }
  // The config.
  FusedConfig odd;
  odd.block_m = 48;
  expect([&] { matmul_all_reduce(ws, heap, heap, heap, m, n, k, {}, odd); },
         "iris::ops::matmul_all_reduce: config.block_m = 48 is not a power of two (leave block_m, block_n and block_k "
         "all 0 for automatic tiles)");
  FusedConfig small;
  small.block_m = small.block_n = small.block_k = 32;
  expect([&] { matmul_reduce_scatter(ws, heap, heap, heap, m, n, k, {}, small); },
         "iris::ops::matmul_reduce_scatter: config tiles 32x32x32 (block_m x block_n x block_k) are not one of the "
         "compiled shapes: 64x64x32, 128x128x64, 128x256x64");
  FusedConfig comm;
  comm.comm_programs = 2;
  expect([&] { matmul_all_reduce(ws, heap, heap, heap, m, n, k, {}, comm); },
         "iris::ops::matmul_all_reduce: config.comm_programs = 2: this operation has no communication programs "
         "(leave it 0)");
  comm.programs = 2;
  expect([&] { matmul_all_scatter(ws, heap, heap, heap, m, n, k, {}, comm); },
         "iris::ops::matmul_all_scatter: config.programs = 2 leaves no compute programs beside "
         "config.comm_programs = 2 (programs must be larger)");
  // Null pointers and empty sizes.
  expect([&] { matmul_reduce_scatter(ws, heap, static_cast<const bf16*>(nullptr), heap, m, n, k); },
         "iris::ops::matmul_reduce_scatter: b is null");
  expect([&] { all_gather_matmul(ws, heap, heap, heap, m, 0, k); },
         "iris::ops::all_gather_matmul: m, n and k must be at least 1, got m = " + std::to_string(m) +
             ", n = 0, k = " + std::to_string(k));
  rank.free(heap);
  return wrong;
}

// Runs every call on `ranks` ranks; the exit status.
int run(int ranks) {
  const std::vector<Call> pass = calls_of_one_pass();
  const int passes = 2;
  std::atomic<std::size_t> wrong{0};
  std::atomic<int> errors_checked{0};
  iris::run_threads(ranks, std::size_t{1} << 28, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    // The whole problem: every split dimension a multiple of the ranks, no size
    // a multiple of a tile, k / world below one K tile of 32 with 4 ranks.
    const int M = 50 * world, N = 34 * world, K = 24 * world;
    iris::ops::FusedWorkspace workspace(rank);  // collective: once per rank, before any call
    int checked = 0;
    wrong += check_errors(rank, workspace, checked);
    if (me == 0) errors_checked = checked;

    // Every call's inputs and its own output (poisoned), written before the
    // barrier: once the calls start, a rank's output may receive peers' tiles.
    struct Operands {
      const bf16 *a, *b;
      bf16* c;
      std::size_t c_count;
    };
    Buffers buffers(rank);
    std::vector<Operands> operands;
    const Slice cols = slice(N, world, me), ks = slice(K, world, me), rows = slice(M, world, me);
    for (int id = 0; id < passes * static_cast<int>(pass.size()); ++id) {
      const Call& call = pass[static_cast<std::size_t>(id) % pass.size()];
      std::vector<bf16> a, b;
      std::size_t c_count = static_cast<std::size_t>(M) * N;
      bool c_heap = false, a_heap = false;
      switch (call.op) {
        case Op::all_scatter:  // all of A, B's columns; C in the heap
          a = part(matrix(id, 0), 0, M, 0, K);
          b = part(matrix(id, 1), 0, K, cols.first, cols.count);
          c_heap = true;
          break;
        case Op::all_reduce:  // A's columns and B's rows of this rank's K slice
        case Op::reduce_scatter:
          a = part(matrix(id, 0), 0, M, ks.first, ks.count);
          b = part(matrix(id, 1), ks.first, ks.count, 0, N);
          if (call.op == Op::reduce_scatter) c_count = static_cast<std::size_t>(rows.count) * N;
          break;
        case Op::all_gather:  // A's rows (in the heap unless pushed), this rank's own B
          a = part(matrix(id, 0), rows.first, rows.count, 0, K);
          b = part(matrix(id, 2 + me), 0, K, 0, N);
          a_heap = call.config.comm_programs == 0;
          break;
      }
      bf16* a_mem = buffers.get(a.size(), a_heap);
      bf16* b_mem = buffers.get(b.size(), false);
      bf16* c_mem = buffers.get(c_count, c_heap);
      sample::to_device(a_mem, a.data(), a.size());
      sample::to_device(b_mem, b.data(), b.size());
      sample::fill(c_mem, sample::poison<bf16>(), c_count);
      operands.push_back({a_mem, b_mem, c_mem, c_count});
    }
    rank.barrier();

    // Back to back: no host barrier from here to the end of the checks (the
    // workspace grows, with barriers, in the first pass only).
    std::size_t heap_after_first_pass = 0;
    for (int id = 0; id < passes * static_cast<int>(pass.size()); ++id) {
      if (id == static_cast<int>(pass.size())) heap_after_first_pass = workspace.heap_bytes();
      const Call& call = pass[static_cast<std::size_t>(id) % pass.size()];
      const Operands& x = operands[static_cast<std::size_t>(id)];
      switch (call.op) {
        case Op::all_scatter: iris::ops::matmul_all_scatter(workspace, x.a, x.b, x.c, M, N, K, {}, call.config); break;
        case Op::all_reduce: iris::ops::matmul_all_reduce(workspace, x.a, x.b, x.c, M, N, K, {}, call.config); break;
        case Op::reduce_scatter:
          iris::ops::matmul_reduce_scatter(workspace, x.a, x.b, x.c, M, N, K, {}, call.config);
          break;
        case Op::all_gather: iris::ops::all_gather_matmul(workspace, x.a, x.b, x.c, M, N, K, {}, call.config); break;
      }
      // The product in double of the whole matrices (A × this rank's B for all_gather).
      const std::vector<bf16> whole_a = part(matrix(id, 0), 0, M, 0, K);
      const std::vector<bf16> whole_b = part(matrix(id, call.op == Op::all_gather ? 2 + me : 1), 0, K, 0, N);
      std::vector<double> ref, abs_sum;
      gemm_common::reference(whole_a.data(), K, whole_b.data(), N, M, N, K, ref, abs_sum);
      // The f32 additions a product passes: K in one accumulator, or its rank's
      // K slice and then the W partials (gemm_common::bound; host/fused_gemm.cpp).
      const bool summed = call.op == Op::all_reduce || call.op == Op::reduce_scatter;
      const double additions = summed ? ks.count + world : K;
      const int first_row = call.op == Op::reduce_scatter ? rows.first : 0;
      const std::vector<bf16> got = sample::read(static_cast<const bf16*>(x.c), x.c_count);
      std::size_t bad = 0;
      for (std::size_t e = 0; e < got.size(); ++e) {
        const std::size_t at = static_cast<std::size_t>(first_row) * N + e;
        const double value = static_cast<float>(got[e]);
        const double tolerance = gemm_common::bound(ref[at], abs_sum[at], additions);
        if (std::fabs(value - ref[at]) <= tolerance) continue;  // false for NaN: the poison fails
        if (bad++ < 3)
          std::fprintf(stderr, "rank %d: call %d (%s %dx%dx%d, comm %d): C[%zu][%zu] = %.9g, expected %.9g +- %.3g\n",
                       me, id, kOpNames[static_cast<int>(call.op)], call.config.block_m, call.config.block_n,
                       call.config.block_k, call.config.comm_programs, e / N + first_row, e % N, value, ref[at],
                       tolerance);
      }
      wrong += bad;
    }
    if (workspace.heap_bytes() != heap_after_first_pass) {
      std::fprintf(stderr, "rank %d: the workspace grew in the second pass (%zu -> %zu bytes)\n", me,
                   heap_after_first_pass, workspace.heap_bytes());
      ++wrong;
    }
    // On a GPU the first call of each automatic config (one per operation and
    // split) also times every compiled tile shape, and for an automatic count
    // of communication programs every count that leaves compute programs of
    // the 5 (1, 2 and 4): a warm-up and kTuneRepeats runs of each, made
    // through the workspace too.
    std::int64_t expected_calls = passes * static_cast<std::int64_t>(pass.size());
#if IRIS_GPU
    for (const Call& call : pass) {
      const int comm_counts = call.config.comm_programs == FusedConfig::automatic_comm ? 3 : 1;
      if (iris::ops::detail::automatic_tiles(call.config))
        expected_calls += iris::ops::detail::FusedShapes::count * comm_counts * (1 + iris::kTuneRepeats);
    }
#endif
    if (workspace.calls() != expected_calls) {
      std::fprintf(stderr, "rank %d: the workspace counted %lld calls\n", me,
                   static_cast<long long>(workspace.calls()));
      ++wrong;
    }
  });
  if (wrong) {
    std::printf("fused: FAILED, %zu wrong\n", wrong.load());
    return 1;
  }
  std::printf("fused: %d ranks, %d calls, every element checked, %d errors checked: ok\n", ranks,
              passes * static_cast<int>(pass.size()), errors_checked.load());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc > 1 ? std::atoi(argv[1]) : 2);
  } catch (const iris::Error& e) {  // a checked-mode report, a deadlock: the first rank's error
    std::printf("fused: FAILED: %s\n", e.what());
    return 1;
  }
}
