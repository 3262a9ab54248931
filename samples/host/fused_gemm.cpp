// fused_gemm: GEMMs that communicate tile by tile (fused_gemm.iris), one mode per
// kernel, on row-major bf16 matrices accumulated in f32. With W ranks, a split
// of L items gives rank r the items r * ceil(L / W) .. (fewer, or none, at the end):
//
//   all_scatter            A (MxK) on every rank, B split by columns; every rank
//   all_scatter_split      ends with all of C = A x B (MxN). _split: compute and
//                          communication programs in one persistent kernel
//                          (--comm of them communicate)
//   all_reduce             K split (A's columns, B's rows); every rank ends with
//                          C = sum of the ranks' partial products
//   reduce_scatter         K split; rank r ends with its rows of C (bf16), through
//                          scratch and a flag per tile and source rank
//   reduce_scatter_atomic  the same by tile-wide remote atomic_add (f32 output)
//   all_gather_pull        A split by rows, every rank has its own B_r (KxN);
//   all_gather_push        rank r computes C_r = all_gather(A) x B_r (MxN), loading
//                          the peers' A tiles, or through push programs (--comm)
//                          and a ready flag per piece of A (C tiled per owner)
//
// Shapes are the whole problem's (--shape MxNxK[+P], as in gemm: lda = K + P,
// ldb = N + 2P, ldc = N + 3P, also for the slices); every slice starts at row and
// column 0 of the rank's buffer. Grids: min(tiles, --programs) instances, which
// walk the tiles; the role-split kernels' grid is --comm communication programs
// (default: programs / 8, at least 1) and min(tiles, programs - comm) others.
// Kernels that wait for other ranks are correct on a GPU only when the grids of
// all ranks on the GPU are resident together (fused_gemm.iris, top), so
// --programs defaults to multiprocessor_count() divided by the number of ranks
// that share the GPU (gpu-check runs up to 4 ranks on one GPU; a kernel of 256
// threads and more than 128 registers a thread fits once per multiprocessor);
// on the CPU it is 1.
//
// Inputs. A and B are the same matrices on every rank (gemm_common::value, in
// [-1, 1), bf16), and each rank takes its slice; all_gather's B_r differ per
// rank. The padding of every input, and whatever lies past a rank's slice, is
// NaN, so a kernel that reads it makes NaNs; outputs are poisoned (NaN; the
// atomic one is zeroed), as are the scratch buffers.
//
// Two calls back to back. Each mode zeroes its flags and finish()'s sync,
// passes a host barrier, and then calls its kernel twice in a row (which takes
// epochs 1 and 2 from sync, on the device), with no host barrier between the
// calls or before the checks: call 2 has its own inputs (other matrices) and
// outputs but shares the flags, scratch buffers and sync with call 1, so a flag
// that is not ahead of the previous call, or a call that returns before its
// peers have delivered, shows as a wrong or poisoned element (and, in checked
// builds, as a race).
//
// Tolerance. As in gemm (gemm.cpp derives it): the reference is the product in
// double of the same bf16 inputs, ref = sum_k a_ik b_kj with S = sum_k |a_ik b_kj|,
// and |c - ref| <= 2^-8 |ref| + (1 + 2^-8) E + 2^-126 with E = n 2^-23 S, where n
// bounds the f32 additions any product goes through. One rank's accumulator over
// all of K (all_scatter, all_gather): n = K, as in gemm. A sum of the ranks'
// partial products (all_reduce, reduce_scatter) adds f32 additions: a product
// passes at most ceil(K / W) - 1 additions in its rank's accumulator, and then at
// most W - 1 more when the W partials (kept in f32) are summed, in rank order
// starting from rank 0's partial (all_reduce), from the owner's partial
// (reduce_scatter) or by atomics onto zero, whose first addition is exact:
// n = ceil(K / W) + W. The atomic output stays f32 and is not rounded to bf16: |c - ref| <= E
// + 2^-126. Summing the partials in rank order (all_reduce) gives every rank the
// same bits.
//
// --bench prints, per mode, the median of --repeats calls (each with a fresh
// epoch) and TFLOP/s: "rank" counts the flops one rank computes (all_scatter,
// all_reduce, reduce_scatter: 2 M N K / W; all_gather: 2 M N K), "all" those
// of all ranks together.
#include "fused_gemm.iris.hpp"  // irisc of runtime/include/iris/fused/fused_gemm.iris
#include "gemm_common.hpp"
#include "sample.hpp"

#include <iris/autotune.hpp>  // iris::Tiles

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using gemm_common::Shape;
using bf16 = iris::bfloat16;

// Rows of tiles per group of the grouped tile order (gemm.iris's GROUP_M).
constexpr int32_t kGroupM = 8;

const char* const kDefaultShapes = "1x1x1,100x70x45+3,70x90x7,600x130x96+1";

const char* const kWhat =
    "fused_gemm: GEMMs fused with all-scatter, all-reduce, reduce-scatter and all-gather\n"
    "  (runtime/include/iris/fused/fused_gemm.iris), bf16 inputs accumulated in f32\n"
    "\n"
    "SHAPES (default 1x1x1,100x70x45+3,70x90x7,600x130x96+1), of the whole problem:\n"
    "  --shape LIST   MxNxK[+P], comma-separated: A is MxK, B is KxN, C is MxN; +P pads\n"
    "                 the rows: lda = K + P, ldb = N + 2P, ldc = N + 3P (default P = 0)\n"
    "  With W ranks, rank r's slice of L items (B's columns, K, or A's and C's rows) is\n"
    "  r * ceil(L/W) .. min((r+1) * ceil(L/W), L) - 1.\n"
    "\n"
    "Each mode runs its kernel twice back to back (epochs 1 and 2, other inputs and\n"
    "outputs, the same flags; no host barrier in between or before the check).\n"
    "VALIDATION: every element of C within 2^-8 |ref| + (1 + 2^-8) E + 2^-126 of ref, the\n"
    "  product in double of the same bf16 inputs, E = n 2^-23 sum_k |a_ik b_kj| with n = K,\n"
    "  or ceil(K/W) + W where partial products of the ranks are summed in f32; the f32 output\n"
    "  of reduce_scatter_atomic within E + 2^-126. Elements a rank does not own, and the\n"
    "  padding, must keep their poison. --bench: TFLOP/s per rank and of all ranks.";

// Rank r's slice of `length` items: first .. first + count - 1, count <= chunk.
struct Slice {
  std::int64_t chunk = 0, first = 0, count = 0;
};
Slice slice_of(std::int64_t length, int world, int r) {
  Slice s;
  s.chunk = (length + world - 1) / world;
  s.first = r * s.chunk;
  s.count = std::clamp<std::int64_t>(length - s.first, 0, s.chunk);
  return s;
}

// The matrices of gemm_common::value: A and B of call 0 and 1, and rank r's B_r
// of the all-gather modes.
std::uint64_t matrix_a(int call) { return 1000 + 100 * static_cast<std::uint64_t>(call); }
std::uint64_t matrix_b(int call) { return 1001 + 100 * static_cast<std::uint64_t>(call); }
std::uint64_t matrix_b_of(int call, int r) { return 1002 + 100 * static_cast<std::uint64_t>(call) + static_cast<std::uint64_t>(r); }

int ceil_div(std::int64_t n, std::int64_t d) { return static_cast<int>((n + d - 1) / d); }

// The kernels' tiles: their defaults on a GPU (128x256x64, the fastest on an
// H200); 64x64x32 on the CPU, so that the test shapes span several tiles.
#if IRIS_GPU
using Tiles = iris::Tiles<128, 256, 64>;
#else
using Tiles = iris::Tiles<64, 64, 32>;
#endif

// How many ranks share this rank's GPU, at most: run_threads puts rank r on GPU
// r % GPUs (run_mpi: the node-local rank's; the whole world is the upper bound).
// Their kernels run side by side, so each gets a share of the multiprocessors.
int ranks_per_device([[maybe_unused]] const iris::Rank& rank) {
#if IRIS_GPU
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices < 1) return 1;
  return (rank.world_size() + devices - 1) / devices;
#else
  return 1;  // the CPU emulation: one instance at a time per rank anyway
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::vector<char*> rest = gemm_common::take_shapes(argc, argv, kDefaultShapes, shapes);

  sample::Spec spec = gemm_common::gemm_spec();
  spec.modes = {
      {"all_scatter", "gemm_all_scatter: column slabs of C stored into every rank's C"},
      {"all_scatter_split", "gemm_all_scatter_split: compute programs + --comm programs that copy tiles out"},
      {"all_reduce", "gemm_all_reduce: K split, partial tiles + a flag per tile and rank, sum on every rank"},
      {"reduce_scatter", "gemm_reduce_scatter: K split, partials into the owner's scratch, owner sums its rows"},
      {"reduce_scatter_atomic", "gemm_reduce_scatter_atomic: K split, tile-wide atomic_add into the owner (f32)"},
      {"all_gather_pull", "all_gather_gemm_pull: A's rows split, A tiles loaded from their owners"},
      {"all_gather_push", "all_gather_gemm_push: --comm programs push A tiles, a ready flag per piece of A"}};
  spec.options = {{"--programs", "N", "instances of each kernel (at most its tiles); 0: multiprocessor_count() / ranks per GPU", 0},
                  {"--comm", "N", "communication programs of the _split and _push kernels; 0: programs / 8, >= 1", 0}};
  sample::Options opt = sample::parse(static_cast<int>(rest.size()), rest.data(), kWhat, spec);
  const long long programs_option = opt.value("--programs");
  const long long comm_option = opt.value("--comm");

  std::atomic<std::size_t> errors{0};
  if (opt.bench)
    std::printf("%-22s %20s %6s %6s %6s %12s %12s %12s\n", "mode", "shape", "ranks", "grid", "comm", "time [ms]",
                "TFLOP/s rank", "TFLOP/s all");
  const bool leader = sample::run(opt, errors, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size();
    const iris::DeviceContext ctx = rank.device_context();
    const bf16 poison = sample::poison<bf16>();
    // Grids that are resident together: every waiting kernel needs it (fused_gemm.iris, top).
    const long long programs =
        programs_option > 0 ? programs_option : std::max(1, rank.multiprocessor_count() / ranks_per_device(rank));
    const long long comm = comm_option > 0 ? comm_option : std::max<long long>(1, programs / 8);
    for (const Shape& s : shapes) {
      const std::int64_t M = s.M, N = s.N, K = s.K, lda = s.lda(), ldb = s.ldb(), ldc = s.ldc();
      const Slice cols = slice_of(N, world, me), ks = slice_of(K, world, me), rows = slice_of(M, world, me);
      // The scratch buffers hold W slots of MxN (all_reduce) or m_local x N
      // (reduce_scatter) f32, indexed with i32.
      if (static_cast<std::int64_t>(world) * std::max(M, rows.chunk * world) * N > INT32_MAX)
        throw iris::Error("fused_gemm: shape " + s.text() + " needs scratch offsets past 2^31 - 1 with " +
                          std::to_string(world) + " ranks");
      const auto size_a = static_cast<std::size_t>(M * lda), size_b = static_cast<std::size_t>(K * ldb),
                 size_c = static_cast<std::size_t>(M * ldc), size_c32 = static_cast<std::size_t>(rows.chunk * ldc),
                 size_scratch = static_cast<std::size_t>(world * M * N);
      const int tiles_m = ceil_div(M, Tiles::m), tiles_n = ceil_div(N, Tiles::n), tiles_k = ceil_div(K, Tiles::k);
      const int tiles_scatter = tiles_m * ceil_div(cols.chunk, Tiles::n), tiles_c = tiles_m * tiles_n,
                tiles_reduce = world * ceil_div(rows.chunk, Tiles::m) * tiles_n;
      // Flags: one per tile (all_scatter_split), per tile and source rank (all_reduce,
      // reduce_scatter), per piece of A tiled per owner (all_gather_push).
      const auto size_flags = static_cast<std::size_t>(
          std::max({tiles_scatter, world * std::max(tiles_c, tiles_reduce), tiles_reduce / tiles_n * tiles_k}));

      // Two calls' inputs and outputs; the flags, scratch and sync are shared.
      bf16 *a[2], *b[2], *c[2];
      float* c32[2];
      for (int call = 0; call < 2; ++call) {
        a[call] = rank.allocate<bf16>(size_a);
        b[call] = rank.allocate<bf16>(size_b);
        c[call] = rank.allocate<bf16>(size_c);
        c32[call] = rank.allocate<float>(size_c32);
      }
      float* scratch = rank.allocate<float>(size_scratch);
      bf16* a_full = rank.allocate<bf16>(size_a);
      int64_t* flags = rank.allocate<int64_t>(size_flags);
      int64_t* sync = rank.allocate<int64_t>(2);

      // The whole matrices (dense: row lengths K and N) and the references.
      std::vector<bf16> whole_a[2], whole_b[2], own_b[2];
      for (int call = 0; call < 2; ++call) {
        whole_a[call].resize(static_cast<std::size_t>(M * K));
        whole_b[call].resize(static_cast<std::size_t>(K * N));
        own_b[call].resize(static_cast<std::size_t>(K * N));
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t k = 0; k < K; ++k)
            whole_a[call][static_cast<std::size_t>(i * K + k)] = gemm_common::value(matrix_a(call), i, k);
        for (std::int64_t k = 0; k < K; ++k)
          for (std::int64_t j = 0; j < N; ++j) {
            whole_b[call][static_cast<std::size_t>(k * N + j)] = gemm_common::value(matrix_b(call), k, j);
            own_b[call][static_cast<std::size_t>(k * N + j)] = gemm_common::value(matrix_b_of(call, me), k, j);
          }
      }
      // ref = A x B (every mode but all_gather's), A x B_r (all_gather's); made when first needed.
      std::vector<double> ref[2], abs_sum[2], own_ref[2], own_abs_sum[2];
      auto reference = [&](bool own, int call) -> std::pair<const std::vector<double>*, const std::vector<double>*> {
        std::vector<double>& r = own ? own_ref[call] : ref[call];
        std::vector<double>& sum = own ? own_abs_sum[call] : abs_sum[call];
        if (r.empty())
          gemm_common::reference(whole_a[call].data(), K, (own ? own_b : whole_b)[call].data(), N, M, N, K, r, sum);
        return {&r, &sum};
      };

      for (const std::string& mode : opt.modes) {
        const bool scatter = mode.rfind("all_scatter", 0) == 0, gather = mode.rfind("all_gather", 0) == 0;
        const bool split = mode == "all_scatter_split" || mode == "all_gather_push";
        // Every rank is done with the previous mode (finish() returned everywhere,
        // but a peer may not have read this rank's sync yet) before it is reset.
        rank.barrier();
        for (int call = 0; call < 2; ++call) {
          // This rank's slices, NaN everywhere else.
          std::vector<bf16> host_a(size_a, poison), host_b(size_b, poison);
          const std::vector<bf16>& wa = whole_a[call];
          const std::vector<bf16>& wb = gather ? own_b[call] : whole_b[call];
          if (scatter) {  // all of A; B's columns cols
            for (std::int64_t i = 0; i < M; ++i)
              std::copy_n(&wa[static_cast<std::size_t>(i * K)], K, &host_a[static_cast<std::size_t>(i * lda)]);
            for (std::int64_t k = 0; k < K; ++k)
              std::copy_n(&wb[static_cast<std::size_t>(k * N + cols.first)], cols.count,
                          &host_b[static_cast<std::size_t>(k * ldb)]);
          } else if (gather) {  // A's rows `rows`; all of B_r
            for (std::int64_t i = 0; i < rows.count; ++i)
              std::copy_n(&wa[static_cast<std::size_t>((rows.first + i) * K)], K,
                          &host_a[static_cast<std::size_t>(i * lda)]);
            for (std::int64_t k = 0; k < K; ++k)
              std::copy_n(&wb[static_cast<std::size_t>(k * N)], N, &host_b[static_cast<std::size_t>(k * ldb)]);
          } else {  // A's columns ks, B's rows ks
            for (std::int64_t i = 0; i < M; ++i)
              std::copy_n(&wa[static_cast<std::size_t>(i * K + ks.first)], ks.count,
                          &host_a[static_cast<std::size_t>(i * lda)]);
            for (std::int64_t k = 0; k < ks.count; ++k)
              std::copy_n(&wb[static_cast<std::size_t>((ks.first + k) * N)], N,
                          &host_b[static_cast<std::size_t>(k * ldb)]);
          }
          sample::to_device(a[call], host_a.data(), size_a);
          sample::to_device(b[call], host_b.data(), size_b);
          sample::fill(c[call], poison, size_c);
          sample::fill(c32[call], 0.0f, size_c32);
        }
        sample::fill(scratch, std::numeric_limits<float>::quiet_NaN(), size_scratch);
        sample::fill(a_full, poison, size_a);
        sample::fill(flags, int64_t{0}, size_flags);
        sample::fill(sync, int64_t{0}, 2);
        rank.barrier();

        const int32_t m32 = static_cast<int32_t>(M), n32 = static_cast<int32_t>(N), k32 = static_cast<int32_t>(K);
        const int32_t lda32 = static_cast<int32_t>(lda), ldb32 = static_cast<int32_t>(ldb),
                      ldc32 = static_cast<int32_t>(ldc);
        const int32_t n_local = static_cast<int32_t>(cols.chunk), k_mine = static_cast<int32_t>(ks.count),
                      m_local = static_cast<int32_t>(rows.chunk);
        // (The all-gathers tile C's rows per owner, as the reduce-scatters do.)
        const int tiles = scatter ? tiles_scatter : mode.rfind("reduce_scatter", 0) == 0 || gather ? tiles_reduce
                                                                                                 : tiles_c;
        // The role-split kernels: min(tiles, programs - comm) (at least 1) workers and comm communicators.
        const int comm32 = split ? static_cast<int>(comm) : 0;
        const int grid = split ? static_cast<int>(std::clamp<long long>(programs - comm, 1, tiles)) + comm32
                               : static_cast<int>(std::min<long long>(tiles, programs));
        std::function<void(int)> launch;  // launch(call); the kernels' default tiles
        if (mode == "all_scatter") {
          launch = [&](int call) {
            iris_kernels::gemm_all_scatter<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], m32, n32, k32, n_local,
                                                     lda32, ldb32, ldc32, kGroupM, sync);
          };
        } else if (mode == "all_scatter_split") {
          launch = [&](int call) {
            iris_kernels::gemm_all_scatter_split<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], m32, n32, k32,
                                                           n_local, lda32, ldb32, ldc32, kGroupM, flags, comm32, sync);
          };
        } else if (mode == "all_reduce") {
          launch = [&](int call) {
            iris_kernels::gemm_all_reduce<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], scratch, flags, m32, n32,
                                                    k_mine, lda32, ldb32, ldc32, kGroupM, sync);
          };
        } else if (mode == "reduce_scatter") {
          launch = [&](int call) {
            iris_kernels::gemm_reduce_scatter<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], scratch, flags, m32,
                                                        n32, k_mine, m_local, lda32, ldb32, ldc32, kGroupM, sync);
          };
        } else if (mode == "reduce_scatter_atomic") {
          launch = [&](int call) {
            iris_kernels::gemm_reduce_scatter_atomic<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c32[call], m32, n32,
                                                               k_mine, m_local, lda32, ldb32, ldc32, kGroupM, sync);
          };
        } else if (mode == "all_gather_pull") {
          launch = [&](int call) {
            iris_kernels::all_gather_gemm_pull<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], m32, n32, k32,
                                                         m_local, lda32, ldb32, ldc32, kGroupM, sync);
          };
        } else {  // all_gather_push
          launch = [&](int call) {
            iris_kernels::all_gather_gemm_push<Tiles::m, Tiles::n, Tiles::k>::launch({grid}, ctx, a[call], b[call], c[call], a_full, flags, m32,
                                                         n32, k32, m_local, lda32, ldb32, ldc32, kGroupM, comm32, sync);
          };
        }

        // Back to back: no host barrier between the calls, nor before the checks.
        launch(0);
        launch(1);

        if (opt.validate) {
          const bool reduced = !scatter && !gather;
          const double additions = reduced ? static_cast<double>(ks.chunk + world) : static_cast<double>(K);
          for (int call = 0; call < 2; ++call) {
            const auto [want, sums] = reference(gather, call);
            std::size_t wrong = 0;
            // Row i of this rank's C is row first + i of the whole C, for i < count.
            const bool own_rows = mode.rfind("reduce_scatter", 0) == 0;
            const std::int64_t first = own_rows ? rows.first : 0, count = own_rows ? rows.count : M;
            auto report = [&](std::int64_t i, std::int64_t j, double value, const char* expected) {
              if (wrong++ < 5)
                std::fprintf(stderr, "rank %d: %s %s call %d: %s[%" PRId64 "][%" PRId64 "] = %.9g, expected %s\n", me,
                             mode.c_str(), s.text().c_str(), call + 1, own_rows ? "local C" : "C", i, j, value,
                             expected);
            };
            auto near = [&](std::int64_t i, std::int64_t j, double value, bool to_bf16) {
              const std::size_t e = static_cast<std::size_t>((first + i) * N + j);
              const double tolerance = gemm_common::bound((*want)[e], (*sums)[e], additions, to_bf16);
              if (std::fabs(value - (*want)[e]) <= tolerance) return;  // false for NaN: poison fails
              char expected[96];
              std::snprintf(expected, sizeof expected, "%.9g +- %.3g", (*want)[e], tolerance);
              report(i, j, value, expected);
            };
            if (mode == "reduce_scatter_atomic") {
              const std::vector<float> got = sample::read(c32[call], size_c32);
              for (std::int64_t i = 0; i < rows.chunk; ++i)
                for (std::int64_t j = 0; j < ldc; ++j) {
                  const float value = got[static_cast<std::size_t>(i * ldc + j)];
                  if (i < count && j < N) near(i, j, value, false);
                  else if (value != 0.0f || std::signbit(value)) report(i, j, value, "0 (not this rank's)");
                }
            } else {
              const std::vector<bf16> got = sample::read(c[call], size_c);
              for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < ldc; ++j) {
                  const bf16 value = got[static_cast<std::size_t>(i * ldc + j)];
                  if (i < count && j < N) near(i, j, static_cast<float>(value), true);
                  else if (gemm_common::bits_of(value) != gemm_common::bits_of(poison))
                    report(i, j, static_cast<float>(value), "the poison (not written)");
                }
            }
            errors += wrong;
          }
        }
        if (opt.bench) {
          const double t = sample::median_seconds(rank, opt.repeats, [&] { launch(0); });
          const double all = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) *
                             (gather ? world : 1);
          if (me == 0)
            std::printf("%-22s %20s %6d %6d %6d %12.3f %12.4g %12.4g\n", mode.c_str(), s.text().c_str(), world, grid,
                        comm32, t * 1e3, all / world / t / 1e12, all / t / 1e12);
        }
      }
      rank.free(sync);
      rank.free(flags);
      rank.free(a_full);
      rank.free(scratch);
      for (int call = 1; call >= 0; --call) {
        rank.free(c32[call]);
        rank.free(c[call]);
        rank.free(b[call]);
        rank.free(a[call]);
      }
    }
  });
  return sample::report_modes("fused_gemm", opt, leader, errors.load());
}
