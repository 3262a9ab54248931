// fused_bench: the fused operations of <iris/fused.hpp> (iris::ops, issue 15)
// against the plain .iris GEMM, at the same shapes and the same tiles.
//
// Each mode is one operation (or its role-split variant, FusedConfig::
// comm_programs != 0). With W ranks (one per GPU; several may share one) the
// shape M×N×K is the whole problem, as the operation takes it (every dimension
// a multiple of W), and every rank computes one GEMM, its "local GEMM":
//
//   mode               the rank's local GEMM     result on rank r
//   all_scatter(_split)  M × N/W × K             all of C
//   all_reduce          M × N × K/W              all of C
//   reduce_scatter      M × N × K/W              rows r·M/W .. of C
//   all_gather(_push)   M × N × K                all_gather(A) × B
//
// With one rank every local GEMM is the whole problem, and the fused kernel
// against the plain GEMM is the cost of the communication path (issue 15's
// "single-GPU cost", target ≤ 5%). Two plain GEMMs of bench/gemm.iris run the
// local GEMM with the operation's tiles (FusedConfig's block_m × block_n ×
// block_k) and GROUP_M:
//   gemm        matmul (bf16), one program per tile: the GEMM a program would run
//               alone, the peer of the target;
//   persistent  matmul_persistent (bf16), with as many programs as the fused
//               kernels (FusedConfig::programs: by default the multiprocessors
//               divided among the ranks that share the GPU), walking the tiles
//               as they do: the fused kernels must be persistent (their
//               programs wait for each other), so fused / persistent is the
//               communication alone and persistent / gemm the schedule.
// Their K loop is the fused kernels' (fused_gemm.iris repeats it).
//
// Inputs: A (M×K) and B (K×N), the same on every rank (gemm_common::value, in
// [-1, 1), bf16), of which each rank takes its slice; all_gather's weight
// shard B_r is the whole B on every rank. Every operand lives in the symmetric
// heap, each slice in an allocation of its own: all_gather reads the peers'
// slices at the address of its own.
//
// Validation (--validate): the whole product C = A × B by the plain GEMM with
// the same tiles is the reference; every element of the rank's part of every
// fused result, and of the persistent GEMM's C, must be within
// 2^-7 |ref| + K 2^-22 of it (as in bench/gemm_bench.py: two bf16 roundings,
// f32 accumulation in another order, |a|, |b| < 1). The output is poisoned
// (NaN) before each call, so a kernel that skips a tile fails. "max rel" is
// max |c - ref| / max |ref| over every rank's part.
//
// Timing (--bench): bench/gpu_timer.hpp on each rank's stream, the ranks
// meeting at a host barrier before each timing; rank 0's time is printed (a
// fused call ends on a rank only when every rank has finished it: finish() in
// fused_gemm.iris). Per mode the fused call, the two plain GEMMs and, where the
// build has cuBLAS (cublas_ms: the library torch.matmul calls, at the local
// GEMM's shape), cuBLAS are timed side by side: half a second of them in turn
// first, then rounds that go round them (GpuTimer::medians_us), since an H200
// lowers its clocks within milliseconds of full load and whatever ran first
// would otherwise run faster (docs/performance.md). TFLOP/s counts the flops of
// the rank's local GEMM. In the CPU emulation build the times are the
// emulator's (its CTest validates only).
//
// bench/fused_bench.py runs this program, and torch.matmul + NCCL on the same
// shapes, and writes the tables, CSV and plots (scripts/fused-bench.sh for one
// GPU, scripts/multi-gpu.sh for several).
#include "gemm.iris.hpp"    // bench/gemm.iris: the plain GEMMs
#include "gemm_common.hpp"  // samples/host: shapes, bf16 inputs
#include "gpu_timer.hpp"
#include "sample.hpp"  // samples/host: command line, heap copies, run

#include <iris/fused.hpp>

#if IRIS_BENCH_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using bf16 = iris::bfloat16;
using gemm_common::Shape;
using iris::ops::FusedConfig;
namespace detail = iris::ops::detail;

// GROUP_M of the plain GEMMs: the fused operations' default group_m.
constexpr int kGroupM = FusedConfig{}.group_m;

const char* const kDefaultShapes = "4096x4096x4096,8192x8192x8192,8192x3584x8192";
const char* const kDefaultTiles = "64x64x32,128x128x64,128x256x64";  // every compiled shape

const char* const kWhat =
    "fused_bench: the fused operations of <iris/fused.hpp> against the plain .iris GEMM\n"
    "  (bench/gemm.iris) at the same shapes and tiles, bf16; see the top of bench/fused_bench.cpp\n"
    "\n"
    "  --shape LIST   MxNxK,... the whole problem (default 4096x4096x4096,8192x8192x8192,8192x3584x8192);\n"
    "                 M, N and K multiples of the ranks\n"
    "  --tiles LIST   BMxBNxBK,... FusedConfig tiles (default: every compiled shape)\n"
    "  The heap grows to what the largest shape needs; --repeats is not used (bench/gpu_timer.hpp\n"
    "  takes the median of five timings).\n"
    "\n"
    "VALIDATION: every element of every rank's result within 2^-7 |ref| + K 2^-22 of the\n"
    "  plain GEMM's C = A x B at the same tiles. --bench: ms per call (median, GPU events),\n"
    "  TFLOP/s of the rank's local GEMM, fused / gemm and fused / persistent.";

enum class Op { all_scatter, all_reduce, reduce_scatter, all_gather };

struct Variant {
  Op op;
  bool split;  // comm_programs != 0
};

Variant variant_of(const std::string& mode) {
  if (mode == "all_scatter") return {Op::all_scatter, false};
  if (mode == "all_scatter_split") return {Op::all_scatter, true};
  if (mode == "all_reduce") return {Op::all_reduce, false};
  if (mode == "reduce_scatter") return {Op::reduce_scatter, false};
  if (mode == "all_gather") return {Op::all_gather, false};
  return {Op::all_gather, true};  // all_gather_push
}

// --tiles, taken out of the arguments that sample::parse gets (like --shape).
std::vector<FusedConfig> take_tiles(std::vector<char*>& args) {
  std::vector<Shape> shapes;
  for (auto it = args.begin() + 1; it != args.end();) {
    if (std::string(*it) != "--tiles") {
      ++it;
      continue;
    }
    if (it + 1 == args.end()) {
      std::fprintf(stderr, "%s: --tiles needs a value (see --help)\n", args[0]);
      std::exit(2);
    }
    gemm_common::add_shapes(args[0], *(it + 1), false, shapes);
    it = args.erase(it, it + 2);
  }
  if (shapes.empty()) gemm_common::add_shapes(args[0], kDefaultTiles, false, shapes);
  std::vector<FusedConfig> configs;
  for (const Shape& s : shapes) {
    FusedConfig c;
    c.block_m = static_cast<int>(s.M);
    c.block_n = static_cast<int>(s.N);
    c.block_k = static_cast<int>(s.K);
    if (!detail::FusedShapes::with(c, [](auto) {})) {
      std::fprintf(stderr, "%s: --tiles %s is not one of the compiled shapes: %s\n", args[0], s.text().c_str(),
                   detail::FusedShapes::names().c_str());
      std::exit(2);
    }
    configs.push_back(c);
  }
  return configs;
}

std::string tiles_name(const FusedConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" + std::to_string(c.block_k);
}

// C = A × B (dense, row-major) by bench/gemm.iris at the config's tiles: with
// one program per tile (persistent_grid 0), or persistent with that many.
void plain_gemm(const iris::Rank& rank, const FusedConfig& config, int persistent_grid, bf16* a, bf16* b, bf16* c,
                int m, int n, int k) {
  const iris::DeviceContext ctx = rank.device_context();
  detail::with_tiles(config, [&](auto tiles) {
    using S = decltype(tiles);
    if (persistent_grid > 0) {
      iris_kernels::matmul_persistent<iris::bfloat16, S::m, S::n, S::k, kGroupM>::launch({persistent_grid}, ctx, a,
                                                                                          b, c, m, n, k);
    } else {
      const int grid = static_cast<int>(detail::ceil_div(m, S::m) * detail::ceil_div(n, S::n));
      iris_kernels::matmul<iris::bfloat16, S::m, S::n, S::k, kGroupM>::launch({grid}, ctx, a, b, c, m, n, k);
    }
  });
}

#if IRIS_BENCH_CUBLAS
// C = A × B (bf16, row-major, f32 accumulation) by cuBLAS, the library
// torch.matmul calls, on this thread's device and the stream the fused
// operations use: the peer timed in the same rounds as ours.
class Cublas {
 public:
  Cublas() {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, hipStreamPerThread), "cublasSetStream");
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C = A × B is column-major Cᵀ = Bᵀ × Aᵀ.
  void gemm(const bf16* a, const bf16* b, bf16* c, int m, int n, int k) {
    const float one = 1, zero = 0;
    check(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, n, a, CUDA_R_16BF, k,
                       &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

 private:
  static void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) throw iris::Error(std::string("fused_bench: ") + what + " failed");
  }
  cublasHandle_t handle_ = nullptr;
};
#endif

// Rows [row0, row0 + rows) and columns [col0, col0 + cols) of a dense matrix
// with `width` columns, dense.
std::vector<bf16> block(const std::vector<bf16>& whole, std::int64_t width, std::int64_t row0, std::int64_t rows,
                        std::int64_t col0, std::int64_t cols) {
  std::vector<bf16> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    std::copy_n(&whole[static_cast<std::size_t>((row0 + i) * width + col0)], cols,
                &out[static_cast<std::size_t>(i * cols)]);
  return out;
}

// Symmetric heap per rank for a shape with W ranks: the operands below, and
// the workspace's scratch at its largest (all_reduce's W partial products in
// f32, all_gather_push's gathered A), twice over for the allocator's layout as
// shapes come and go.
std::size_t heap_for(const Shape& s, int world) {
  const std::size_t M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N),
                    K = static_cast<std::size_t>(s.K), W = static_cast<std::size_t>(world);
  const std::size_t operands = (M * K + K * N + 2 * M * K / W + K * N / W + 3 * M * N) * sizeof(bf16);
  const std::size_t scratch = std::max(W * M * N * sizeof(float), M * K * sizeof(bf16));
  return 2 * (operands + scratch) + (std::size_t{64} << 20);
}

// What rank 0 prints per mode, from every rank's check.
struct Result {
  double max_error = 0, max_ref = 0;
  std::size_t wrong = 0;
};

// `got`, rows from first_row on of an N-column C, against the reference:
// every element within 2^-7 |ref| + K 2^-22 (the top of this file); the
// first five that are not, on stderr after `what`.
Result compare(const std::vector<bf16>& got, const std::vector<bf16>& host_ref, std::size_t first_row, int N, int K,
               const std::string& what) {
  Result result;
  const double slack = K * 0x1p-22;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double want = static_cast<float>(host_ref[first_row * N + e]);
    const double error = std::fabs(static_cast<float>(got[e]) - want);
    if (!(error <= 0x1p-7 * std::fabs(want) + slack)) {  // NaN fails
      if (result.wrong++ < 5)
        std::fprintf(stderr, "%s: C[%zu][%zu] = %g, expected %g\n", what.c_str(), first_row + e / N, e % N,
                     static_cast<double>(static_cast<float>(got[e])), want);
    }
    result.max_error = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(result.max_error, error);
    result.max_ref = std::max(result.max_ref, std::fabs(want));
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::vector<char*> rest = gemm_common::take_shapes(argc, argv, kDefaultShapes, shapes);
  const std::vector<FusedConfig> tile_configs = take_tiles(rest);
  sample::Spec spec = gemm_common::gemm_spec();
  spec.bench_help = "print a table of ms per call and TFLOP/s (above; --repeats is not used)";
  spec.modes = {{"all_scatter", "matmul_all_scatter: B's columns split, every rank all of C"},
                {"all_scatter_split", "the same, --comm of the programs copying finished tiles to the peers"},
                {"all_reduce", "matmul_all_reduce: K split, every rank all of C"},
                {"reduce_scatter", "matmul_reduce_scatter: K split, rank r its rows of C"},
                {"all_gather", "all_gather_matmul: A's rows split, loaded from the peers"},
                {"all_gather_push", "the same, --comm programs pushing A's tiles with ready flags"}};
  spec.options = {{"--programs", "N", "FusedConfig::programs (0: multiprocessor_count() / ranks per GPU)", 0},
                  {"--comm", "N",
                   "FusedConfig::comm_programs of the _split and _push modes (0: automatic_comm, chosen by measurement)",
                   0}};
  sample::Options opt = sample::parse(static_cast<int>(rest.size()), rest.data(), kWhat, spec);
  for (const Shape& s : shapes) {
    if (s.pad != 0 || s.M % opt.ranks != 0 || s.N % opt.ranks != 0 || s.K % opt.ranks != 0) {
      std::fprintf(stderr, "%s: shape %s: M, N and K must be multiples of the %d ranks, with no padding\n", argv[0],
                   s.text().c_str(), opt.ranks);
      return 2;
    }
    opt.heap_bytes = std::max(opt.heap_bytes, heap_for(s, opt.ranks));
  }
  const int programs_option = static_cast<int>(opt.value("--programs"));
  const int comm_option = static_cast<int>(opt.value("--comm"));

  if (opt.bench && !IRIS_GPU) std::printf("# CPU emulation: the times are the emulator's, not a GPU's\n");
  std::printf("%-18s %-9s %-16s %5s %5s %4s %9s %10s %9s %9s %8s %10s %13s %12s %9s %5s\n", "mode", "tiles", "shape",
              "ranks", "grid", "comm", "gemm_ms", "persist_ms", "cublas_ms", "fused_ms", "TFLOP/s", "fused/gemm",
              "fused/persist", "fused/cublas", "max_rel", "check");
  std::atomic<std::size_t> errors{0};
  std::vector<Result> results(static_cast<std::size_t>(opt.ranks));
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const bf16 poison = sample::poison<bf16>();
    iris::ops::FusedWorkspace workspace(rank);
#if IRIS_GPU
    bench::GpuTimer timer(hipStreamPerThread);  // the stream of the default iris::Stream{}
#if IRIS_BENCH_CUBLAS
    Cublas cublas;
#endif
#else
    bench::GpuTimer timer(iris::Stream{});
#endif
    const int comm = comm_option > 0 ? comm_option : FusedConfig::automatic_comm;
    for (const Shape& s : shapes) {
      const int M = static_cast<int>(s.M), N = static_cast<int>(s.N), K = static_cast<int>(s.K);
      const int m_local = M / world, n_local = N / world, k_local = K / world;
      const std::size_t MN = std::size_t(M) * std::size_t(N);
      std::vector<bf16> host_a(std::size_t(M) * std::size_t(K)), host_b(std::size_t(K) * std::size_t(N));
      for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) host_a[std::size_t(i) * K + k] = gemm_common::value(0, i, k);
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) host_b[std::size_t(k) * N + j] = gemm_common::value(1, k, j);
      auto upload = [&](const std::vector<bf16>& host) {
        bf16* p = rank.allocate<bf16>(host.size());
        sample::to_device(p, host.data(), host.size());
        return p;
      };
      bf16* const a = upload(host_a);
      bf16* const b = upload(host_b);
      bf16* const a_cols = upload(block(host_a, K, 0, M, me * k_local, k_local));  // K split
      bf16* const a_rows = upload(block(host_a, K, me * m_local, m_local, 0, K));  // all_gather's slice
      bf16* const b_cols = upload(block(host_b, N, 0, K, me * n_local, n_local));  // all_scatter's slice
      bf16* const b_rows = b + std::size_t(me) * k_local * N;                     // K split: read locally only
      bf16* const ref = rank.allocate<bf16>(MN);
      bf16* const c = rank.allocate<bf16>(MN);
      bf16* const c_gemm = rank.allocate<bf16>(MN);

      for (const FusedConfig& tiles : tile_configs) {
        plain_gemm(rank, tiles, 0, a, b, ref, M, N, K);
        const std::vector<bf16> host_ref = opt.validate ? sample::read(ref, MN) : std::vector<bf16>{};
        if (opt.validate) {
          // The persistent GEMM (the fused kernels' schedule, timed beside them) against it.
          FusedConfig persistent = tiles;
          persistent.programs = programs_option;
          const std::int64_t all_tiles = detail::ceil_div(M, tiles.block_m) * detail::ceil_div(N, tiles.block_n);
          sample::fill(c_gemm, poison, MN);
          plain_gemm(rank, tiles, detail::grid_of("fused_bench", rank, persistent, all_tiles, false), a, b, c_gemm, M,
                     N, K);
          errors += compare(sample::read(c_gemm, MN), host_ref, 0, N, K,
                            "rank " + std::to_string(me) + ": persistent " + tiles_name(tiles) + " " + s.text())
                        .wrong;
        }
        for (const std::string& mode : opt.modes) {
          const Variant v = variant_of(mode);
          FusedConfig config = tiles;
          config.programs = programs_option;
          config.comm_programs = v.split ? comm : 0;
          config.compare_calls = false;  // the kernels' time, without a host rendezvous per call (as nccl_bench's ccl rows)
          // The local GEMM, the call, and where the rank's result sits in C.
          struct Local {
            int m, n, k;
            bf16 *a, *b;
          };
          Local local{};
          std::function<void()> call;
          std::size_t first_row = 0, rows = std::size_t(M);
          std::int64_t op_tiles = 0;  // the tiles of C the operation's kernel walks
          switch (v.op) {
            case Op::all_scatter:
              local = {M, n_local, K, a, b_cols};
              call = [&] { iris::ops::matmul_all_scatter(workspace, a, b_cols, c, M, N, K, {}, config); };
              break;
            case Op::all_reduce:
              local = {M, N, k_local, a_cols, b_rows};
              call = [&] { iris::ops::matmul_all_reduce(workspace, a_cols, b_rows, c, M, N, K, {}, config); };
              break;
            case Op::reduce_scatter:
              local = {M, N, k_local, a_cols, b_rows};
              call = [&] { iris::ops::matmul_reduce_scatter(workspace, a_cols, b_rows, c, M, N, K, {}, config); };
              first_row = std::size_t(me) * m_local;
              rows = std::size_t(m_local);
              // Numbered per owner, so that no tile straddles two (fused_gemm.iris).
              op_tiles = world * detail::ceil_div(m_local, tiles.block_m) * detail::ceil_div(N, tiles.block_n);
              break;
            case Op::all_gather:
              local = {M, N, K, a, b};
              call = [&] { iris::ops::all_gather_matmul(workspace, a_rows, b, c, M, N, K, {}, config); };
              break;
          }
          // The grids the operation takes (for the table) and the persistent GEMM gets.
          const std::int64_t local_tiles =
              detail::ceil_div(local.m, tiles.block_m) * detail::ceil_div(local.n, tiles.block_n);
          if (op_tiles == 0) op_tiles = local_tiles;
          const int grid = detail::grid_of("fused_bench", rank, config, op_tiles, false);
          FusedConfig unsplit = config;
          unsplit.comm_programs = 0;
          const int persistent_grid = detail::grid_of("fused_bench", rank, unsplit, local_tiles, false);

          sample::fill(c, poison, MN);
          rank.barrier();  // every rank's c poisoned before any rank's tiles arrive
          call();
          Result& mine = results[std::size_t(me)];
          mine = {};
          if (opt.validate) {
            mine = compare(sample::read(c, rows * std::size_t(N)), host_ref, first_row, N, K,
                           "rank " + std::to_string(me) + ": " + mode + " " + tiles_name(tiles) + " " + s.text());
            errors += mine.wrong;
          }
          double gemm_us = 0, persistent_us = 0, fused_us = 0, cublas_us = 0;
          if (opt.bench) {
            const std::size_t bytes =
                (std::size_t(local.m) * local.k + std::size_t(local.k) * local.n + std::size_t(local.m) * local.n) *
                sizeof(bf16);
            std::vector<std::function<void()>> side_by_side = {
                call, [&] { plain_gemm(rank, tiles, 0, local.a, local.b, c_gemm, local.m, local.n, local.k); },
                [&] { plain_gemm(rank, tiles, persistent_grid, local.a, local.b, c_gemm, local.m, local.n, local.k); }};
#if IRIS_BENCH_CUBLAS
            side_by_side.push_back([&] { cublas.gemm(local.a, local.b, c_gemm, local.m, local.n, local.k); });
#endif
            constexpr double kWarmMs = IRIS_GPU ? 500 : 0;  // the emulator has no clocks to settle
            const std::vector<double> us = timer.medians_us(bytes, side_by_side, [&] { rank.barrier(); }, kWarmMs);
            fused_us = us[0];
            gemm_us = us[1];
            persistent_us = us[2];
            if (us.size() > 3) cublas_us = us[3];
          }
          rank.barrier();  // every rank's Result is in
          if (me == 0) {
            Result all;
            for (const Result& r : results) {
              all.wrong += r.wrong;
              all.max_error = std::max(all.max_error, r.max_error);
              all.max_ref = std::max(all.max_ref, r.max_ref);
            }
            const double flops = 2.0 * local.m * local.n * local.k;
            // A figure of the table, "-" where it was not measured.
            auto figure = [](bool measured, const char* format, double value) {
              char text[32] = "-";
              if (measured) std::snprintf(text, sizeof text, format, value);
              return std::string(text);
            };
            const std::string comm_text = detail::automatic_comm(config) ? "auto" : std::to_string(config.comm_programs);
            std::printf("%-18s %-9s %-16s %5d %5d %4s %9s %10s %9s %9s %8s %10s %13s %12s %9s %5s\n", mode.c_str(),
                        tiles_name(tiles).c_str(), s.text().c_str(), world, grid, comm_text.c_str(),
                        figure(opt.bench, "%.3f", gemm_us / 1e3).c_str(),
                        figure(opt.bench, "%.3f", persistent_us / 1e3).c_str(),
                        figure(cublas_us > 0, "%.3f", cublas_us / 1e3).c_str(),
                        figure(opt.bench, "%.3f", fused_us / 1e3).c_str(),
                        figure(opt.bench, "%.1f", flops / fused_us / 1e6).c_str(),
                        figure(opt.bench, "%.3f", fused_us / gemm_us).c_str(),
                        figure(opt.bench, "%.3f", fused_us / persistent_us).c_str(),
                        figure(cublas_us > 0, "%.3f", fused_us / cublas_us).c_str(),
                        figure(opt.validate, "%.2e", all.max_error / all.max_ref).c_str(),
                        !opt.validate ? "-" : all.wrong ? "WRONG" : "ok");
            std::fflush(stdout);
          }
          rank.barrier();  // rank 0 has read every Result before the next mode resets them
        }
      }
      rank.free(c_gemm);
      rank.free(c);
      rank.free(ref);
      rank.free(b_cols);
      rank.free(a_rows);
      rank.free(a_cols);
      rank.free(b);
      rank.free(a);
    }
  });
  return sample::report_modes("fused_bench", opt, leader, errors.load());
}
