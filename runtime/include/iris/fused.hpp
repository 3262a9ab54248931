// Iris runtime: fused operations, host-callable GEMMs that communicate tile by
// tile while they compute (Iris's iris.ops). Every rank calls them, in the same
// order and with the same sizes and config (they are collective, like
// Rank::allocate):
//
//   matmul_all_scatter   C = A × B, B split by columns; every rank ends with all of C
//   matmul_all_reduce    C = A × B, K split; every rank ends with all of C
//   matmul_reduce_scatter  C = A × B, K split; rank r ends with its rows of C
//   all_gather_matmul    C = all_gather(A) × B, A split by rows, each rank its own B
//
// Matrices are row-major and dense (a row of an R×S matrix is S elements), of
// iris::bfloat16, multiplied with f32 accumulation and rounded to bf16 once.
// With W = world_size() ranks the dimension that is split must be a multiple of
// W, and rank r holds the r-th of the W equal parts: "columns r·N/W .." means
// columns r·N/W to (r+1)·N/W − 1. The kernels are those of
// iris/fused/fused_gemm.iris (installed next to this header), as irisc made them
// (iris/fused/fused_gemm.iris.hpp; fused_gemm_checked.iris.hpp where
// IRIS_FUSED_CHECKED is 1, which iris_add_kernels(... CHECKED ...) defines;
// otherwise fused_gemm_traced.iris.hpp, whose kernels record device traces,
// where IRIS_FUSED_TRACED is 1, which iris_add_kernels(... TRACE ...) defines).
//
// Memory. Inputs and outputs that no other rank reaches may be any memory of
// the device (heap memory included); those that other ranks read or write must
// be in the symmetric heap (Rank::allocate, the same call on every rank): each
// operation says which, and throws iris::Error when one is not. The flags,
// scratch buffers and synchronisation words belong to a FusedWorkspace (the
// iris::Workspace of iris/library.hpp, which the collectives share).
//
// Completion. A call launches one kernel on `stream` (on the CPU it runs before
// the call returns). When that kernel has completed on a rank, every rank has
// done its part of the call (the kernels end with finish(), fused_gemm.iris):
// the outputs are complete everywhere, and the inputs may be overwritten. So
// calls may follow each other, on the same stream, without a host barrier
// between them; the host reads an output once the stream is done
// (Rank::barrier() waits for it, or hipStreamSynchronize). Two rules remain: an
// output that other ranks write (matmul_all_scatter's c) may receive their
// tiles as soon as any rank has started the call, so the host must be done
// with it before then (before a host barrier, or take another buffer); and an
// input that other ranks read (all_gather_matmul's a, unless pushed) must be
// complete on every rank before any rank starts the call.
//
// Errors. Every argument is checked before anything is launched, the same way
// on every rank: a matrix in the symmetric heap must fit in the live allocation
// that holds it from its offset (Rank::allocation_of: not freed, not too
// small), and the output may overlap no input. Then the ranks compare their
// calls (Rank::agree: the operation, m, n, k, the config, the workspace by the
// allocation of its words, and each rank's check's verdict), so that every
// rank throws the same iris::Error, whose message starts with the operation's
// name ("iris::ops::matmul_all_scatter: ..."), or, where the ranks' calls
// differ (a k, a workspace, a call one rank skips), names what each rank
// called. The comparison is a host rendezvous per call (no wait for the
// device); FusedConfig::compare_calls = false leaves it out.
#pragma once

#include "iris/autotune.hpp"
#include "iris/host.hpp"
#include "iris/kernel.hpp"
#include "iris/library.hpp"
#include "iris/numeric.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

// The kernels of the variant that IRIS_FUSED_CHECKED and IRIS_FUSED_TRACED choose.
#define IRIS_LIBRARY_CHECKED IRIS_FUSED_CHECKED
#define IRIS_LIBRARY_TRACED IRIS_FUSED_TRACED
#include "iris/library_variant.hpp"
#include IRIS_LIBRARY_VARIANT("iris/fused/fused_gemm.iris.hpp", "iris/fused/fused_gemm_checked.iris.hpp", \
                              "iris/fused/fused_gemm_traced.iris.hpp")

namespace iris::ops {

// Tuning. The defaults suit any shape; every field is checked.
struct FusedConfig {
  // Tiles of C of block_m × block_n, accumulated over K in steps of block_k:
  // one of the shapes the header compiles, 64×64×32, 128×128×64 or 128×256×64
  // (the GEMM's fastest on an H200's wgmma), or all three 0
  // (default): automatic. On a GPU the first call of an operation with a
  // shape (m, n, k, ranks and the other fields) times every compiled shape and
  // keeps the fastest (iris/autotune.hpp: collective, rank 0's choice for
  // every rank, cached in memory and in IRIS_TUNE_CACHE's file); on the CPU
  // automatic tiles are 64×64×32, unmeasured.
  int block_m = 0;
  int block_n = 0;
  int block_k = 0;
  // Rows of tiles per group of the grouped tile order (programs running at once
  // share rows of A and columns of B); at least 1.
  int group_m = 8;
  // Program instances of the persistent kernel (at most one per tile are used).
  // 0: multiprocessor_count() divided among the ranks that share the GPU (1 on
  // the CPU). On a GPU the kernels that wait for each other need their whole grid
  // resident at once, so it may not exceed multiprocessor_count().
  int programs = 0;
  // matmul_all_scatter and all_gather_matmul: 0 runs the plain kernel, N > 0 the
  // role-split one, whose last (all-scatter) or first (all-gather) N programs
  // communicate while the others compute; the grid is then N + min(tiles,
  // programs − N) programs, at least N + 1. automatic_comm: the role split
  // with N chosen by measurement, as automatic tiles are (with them, both
  // together), among 1, 2, 4, ... automatic_comm_most that leave compute
  // programs; the CPU takes 1. The other operations take 0 only.
  int comm_programs = 0;
  static constexpr int automatic_comm = -1;
  static constexpr int automatic_comm_most = 32;
  // Compare the call across the ranks before launching (Rank::agree: the
  // operation, m, n, k, this config and the workspace): a host rendezvous per
  // call. Leave it on until a program is known to be correct.
  bool compare_calls = true;
};

using FusedWorkspace = Workspace;

namespace detail {

using library::ceil_div;
using library::check_heap;
using library::check_pointer;
using library::fail;
using library::mutable_ptr;

// The element types the kernels take.
template <class T>
inline constexpr bool fused_element = std::is_same_v<T, bfloat16>;

// A tile shape the header compiles: FusedConfig's block_m × block_n × block_k.
template <int M, int N, int K>
struct FusedTiles {
  static constexpr int m = M, n = N, k = K;
  static std::string name() { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }
};

// The shapes every operation is compiled for (each kernel once per shape).
template <class... Shapes>
struct FusedShapeList {
  // Calls f(Shape{}) for the config's shape; false if it is none of them.
  template <class F>
  static bool with(const FusedConfig& c, F&& f) {
    return ((c.block_m == Shapes::m && c.block_n == Shapes::n && c.block_k == Shapes::k ? (f(Shapes{}), true)
                                                                                        : false) ||
            ...);
  }
  static constexpr int count = sizeof...(Shapes);
  // `base` with the tiles of shape `index` of the list.
  static FusedConfig config(FusedConfig base, int index) {
    int i = 0;
    ((i++ == index ? (base.block_m = Shapes::m, base.block_n = Shapes::n, base.block_k = Shapes::k, true) : false) ||
     ...);
    return base;
  }
  static std::string name_of(const FusedConfig& c) {
    std::string out;
    with(c, [&](auto shape) { out = decltype(shape)::name(); });
    return out;
  }
  static std::string names() {
    std::string out;
    ((out += (out.empty() ? "" : ", ") + Shapes::name()), ...);
    return out;
  }
};
// (Three, as each shape compiles every kernel once more: 64×64×32 for small
// shapes and the CPU, the two that an H200's measurements choose at large ones.)
using FusedShapes = FusedShapeList<FusedTiles<64, 64, 32>, FusedTiles<128, 128, 64>, FusedTiles<128, 256, 64>>;

// Calls f(FusedTiles<...>{}) for the config's tile shape (checked before).
template <class F>
void with_tiles(const FusedConfig& config, F&& f) {
  FusedShapes::with(config, f);
}

inline bool power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

// How many ranks share this rank's GPU, at most (run_threads puts rank r on GPU
// r % GPUs; with run_mpi, the whole world is the upper bound).
inline int ranks_per_device([[maybe_unused]] const Rank& rank) {
#if IRIS_GPU
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices < 1) return 1;
  return (rank.world_size() + devices - 1) / devices;
#else
  return 1;
#endif
}

inline bool automatic_tiles(const FusedConfig& c) { return c.block_m == 0 && c.block_n == 0 && c.block_k == 0; }
inline bool automatic_comm(const FusedConfig& c) { return c.comm_programs == FusedConfig::automatic_comm; }
// Whether an operation (has_comm: one with communication programs) measures
// some of config's fields before its first call.
inline bool has_choices(const FusedConfig& c, bool has_comm) {
  return automatic_tiles(c) || (has_comm && automatic_comm(c));
}

// The config's fields, whatever the operation (automatic tiles are chosen
// before: every config checked here has its tiles).
inline void check_config(const char* op, const FusedConfig& c, bool has_comm) {
  const std::pair<const char*, int> blocks[] = {{"block_m", c.block_m}, {"block_n", c.block_n}, {"block_k", c.block_k}};
  for (const auto& [name, value] : blocks) {
    if (!power_of_two(value)) {
      fail(op, std::string("config.") + name + " = " + std::to_string(value) +
                   " is not a power of two (leave block_m, block_n and block_k all 0 for automatic tiles)");
    }
  }
  if (!FusedShapes::with(c, [](auto) {})) {
    fail(op, "config tiles " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
                 std::to_string(c.block_k) + " (block_m x block_n x block_k) are not one of the compiled shapes: " +
                 FusedShapes::names());
  }
  if (c.group_m < 1) fail(op, "config.group_m = " + std::to_string(c.group_m) + " must be at least 1");
  if (c.programs < 0) fail(op, "config.programs = " + std::to_string(c.programs) + " must not be negative");
  if (!has_comm && c.comm_programs != 0) {
    fail(op, "config.comm_programs = " + std::to_string(c.comm_programs) +
                 ": this operation has no communication programs (leave it 0)");
  }
  if (c.comm_programs < 0) {
    fail(op, "config.comm_programs = " + std::to_string(c.comm_programs) +
                 " must be 0 (no role split), a count of programs, or FusedConfig::automatic_comm (-1)");
  }
  if (c.comm_programs > 0 && c.programs > 0 && c.programs <= c.comm_programs) {
    fail(op, "config.programs = " + std::to_string(c.programs) +
                 " leaves no compute programs beside config.comm_programs = " + std::to_string(c.comm_programs) +
                 " (programs must be larger)");
  }
}

// The program instances the config asks for (FusedConfig::programs; 0: the
// rank's share of its GPU's multiprocessors).
inline int programs_of(const Rank& rank, const FusedConfig& c) {
  return c.programs > 0 ? c.programs : std::max(1, rank.multiprocessor_count() / ranks_per_device(rank));
}

// The grid: `tiles` tiles of C; waits: whether the kernel's programs wait for
// each other (then, on a GPU, the grid must be resident at once).
inline int grid_of(const char* op, const Rank& rank, const FusedConfig& c, std::int64_t tiles, bool waits) {
  const long long programs = programs_of(rank, c);
  long long grid = 0;
  if (c.comm_programs > 0) {
    grid = c.comm_programs + std::clamp<long long>(programs - c.comm_programs, 1, std::max<long long>(tiles, 1));
  } else {
    grid = std::clamp<long long>(programs, 1, std::max<long long>(tiles, 1));
  }
#if IRIS_GPU
  if (waits && grid > rank.multiprocessor_count()) {
    fail(op, "a grid of " + std::to_string(grid) + " programs exceeds the GPU's " +
                 std::to_string(rank.multiprocessor_count()) +
                 " multiprocessors: the programs of this kernel wait for each other, so all must be resident at once "
                 "(lower config.programs)");
  }
#else
  (void)op;
  (void)rank;
  (void)waits;
#endif
  return static_cast<int>(grid);
}

// The configs that config's automatic fields stand for (has_comm: the
// operation has communication programs), in the order they are measured:
// every compiled tile shape for automatic tiles, and for automatic_comm the
// counts 1, 2, 4, ... FusedConfig::automatic_comm_most that leave programs
// to compute (with one rank there is nothing to send: the fewest win).
inline std::vector<FusedConfig> candidates(const Rank& rank, const FusedConfig& config, bool has_comm) {
  std::vector<FusedConfig> tiles;
  for (int i = 0; i < (automatic_tiles(config) ? FusedShapes::count : 1); ++i)
    tiles.push_back(automatic_tiles(config) ? FusedShapes::config(config, i) : config);
  if (!has_comm || !automatic_comm(config)) return tiles;
  const int programs = programs_of(rank, config);
  std::vector<FusedConfig> out;
  for (const FusedConfig& t : tiles) {
    for (int comm = 1; comm <= FusedConfig::automatic_comm_most && (comm == 1 || comm < programs); comm *= 2) {
      FusedConfig c = t;
      c.comm_programs = comm;
      out.push_back(c);
    }
  }
  return out;
}

// `config` with its automatic fields chosen (has_choices): the candidate that
// call(candidate) runs fastest for this call, measured at the first call of
// `op` with these sizes and fields (see FusedConfig); on the CPU the first.
template <class Call>
FusedConfig with_choices_made(const char* op, Rank& rank, const FusedConfig& config, bool has_comm, int m, int n,
                              int k, [[maybe_unused]] Stream stream, [[maybe_unused]] Call&& call) {
  const std::vector<FusedConfig> choices = candidates(rank, config, has_comm);
#if IRIS_GPU
  const std::string key = std::string(op) + "(bf16, m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " +
                          std::to_string(k) + ", " + std::to_string(rank.world_size()) + " ranks, group_m " +
                          std::to_string(config.group_m) + ", programs " + std::to_string(config.programs) +
                          ", comm_programs " + std::to_string(config.comm_programs) +
                          (automatic_tiles(config) ? "" : ", tiles " + FusedShapes::name_of(config)) + ")";
  const int index = autotune_index(
      rank, key, static_cast<int>(choices.size()), [&](int i) { call(choices[static_cast<std::size_t>(i)]); }, stream);
  return choices[static_cast<std::size_t>(index)];
#else
  (void)op, (void)m, (void)n, (void)k;
  return choices.front();
#endif
}

inline void check_sizes(const char* op, int m, int n, int k) {
  if (m < 1 || n < 1 || k < 1) {
    fail(op, "m, n and k must be at least 1, got m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                 ", k = " + std::to_string(k));
  }
}

// `size` of the dimension `name` is split into world_size() equal parts.
inline void check_divides(const char* op, const char* name, int size, int world, const char* what) {
  if (size % world != 0) {
    fail(op, std::string(name) + " = " + std::to_string(size) + " does not divide over " + std::to_string(world) +
                 " ranks: every rank holds " + name + " / " + std::to_string(world) + " " + what);
  }
}

// The kernels index with i32: every buffer's elements must fit.
inline void check_elements(const char* op, const char* name, std::int64_t rows, std::int64_t cols) {
  if (rows * cols > INT32_MAX) {
    fail(op, std::string(name) + " (" + std::to_string(rows) + "x" + std::to_string(cols) +
                 ") has more than 2^31 - 1 elements, the most the kernels index");
  }
}

// An extent the kernels index with i32: `name`, rows × cols elements.
struct Extent {
  const char* name;
  std::int64_t rows, cols;
};

// A matrix of the call: `name`, rows × cols elements at `p`; `output`: the
// operation writes it; `shared`: why other ranks reach it (then it must be in
// the symmetric heap), or null.
struct Operand {
  const char* name;
  const void* p;
  std::int64_t rows, cols;
  bool output = false;
  const char* shared = nullptr;
};

// The checks of an operation's matrices (a, b, c), of `element_bytes` each, in
// the order every operation makes them: each one and each of `more` (the
// scratch's extents) fits i32 indexing, none is null, one that other ranks
// reach lies in the symmetric heap, one in the heap lies in a live allocation
// (iris::library::check_allocation), and the output overlaps no input (a GEMM
// does not work in place).
inline void check_operands(const char* op, const Rank& rank, std::size_t element_bytes,
                           std::initializer_list<Operand> operands, std::initializer_list<Extent> more = {}) {
  for (const Operand& o : operands) check_elements(op, o.name, o.rows, o.cols);
  for (const Extent& e : more) check_elements(op, e.name, e.rows, e.cols);
  const auto bytes = [&](const Operand& o) { return std::size_t(o.rows) * std::size_t(o.cols) * element_bytes; };
  for (const Operand& o : operands) check_pointer(op, o.name, o.p);
  for (const Operand& o : operands) {
    if (o.shared != nullptr) check_heap(op, rank, o.name, o.p, bytes(o), o.shared);
  }
  for (const Operand& o : operands) library::check_allocation(op, rank, o.name, o.p, bytes(o));
  for (const Operand& out : operands) {
    if (!out.output) continue;
    for (const Operand& in : operands) {
      if (!in.output && library::overlap(out.p, bytes(out), in.p, bytes(in))) {
        fail(op, std::string(out.name) + " and " + in.name + " overlap: the output may share no memory with an input " +
                     "(the operation does not work in place)");
      }
    }
  }
}

// The call as the ranks compare it: the operation, its sizes and config.
inline std::string describe(const char* op, int m, int n, int k, const FusedConfig& c) {
  return std::string(op) + "(bf16, m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " +
         std::to_string(k) + ", tiles " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
         std::to_string(c.block_k) + ", group_m " + std::to_string(c.group_m) + ", programs " +
         std::to_string(c.programs) + ", comm_programs " + std::to_string(c.comm_programs) + ")";
}

// The checks of a call (check(), which throws iris::Error), then the ranks'
// comparison of the call through `ws` (iris::library::agree_on_call): every
// rank goes on, or every rank throws the same error.
template <class Check>
void agreed_call(FusedWorkspace& ws, const char* op, int m, int n, int k, const FusedConfig& config, Check&& check) {
  library::agree_on_call(ws, op, describe(op, m, n, k, config), library::verdict_of(check), config.compare_calls);
}

}  // namespace detail

// The operations are templates over the element type, so that a wrong type is a
// compile-time error that names the supported one. Each lives in an inline
// namespace of its kernel variant: code built with IRIS_FUSED_CHECKED (or
// IRIS_FUSED_TRACED) and code built without it never share an instantiation.
inline namespace IRIS_LIBRARY_VARIANT(fused_unchecked, fused_checked, fused_traced) {
namespace kernels =
    ::iris_kernels::IRIS_LIBRARY_VARIANT(fused_gemm_iris, fused_gemm_checked_iris, fused_gemm_traced_iris);
#undef IRIS_LIBRARY_VARIANT

#define IRIS_FUSED_ELEMENT_CHECK(T)                                                                        \
  static_assert(detail::fused_element<T>,                                                                 \
                "iris::ops: the fused operations take iris::bfloat16 matrices only (accumulated in f32)")

// C = A × B, B split by columns; each finished tile of C is stored into every
// rank's C, so every rank ends with all of C. With W ranks (n a multiple of W):
//   a  m×k, the whole of A, the same on every rank (any device memory)
//   b  k×(n/W): rank r's columns r·n/W .. of B (any device memory)
//   c  m×n: the whole product on every rank (symmetric heap: the other ranks
//      store their tiles into it)
// comm_programs > 0: the role split (compute programs store the rank's tiles and
// raise a flag per tile; the last comm_programs programs copy them to the peers).
template <class T>
void matmul_all_scatter(FusedWorkspace& ws, const T* a, const T* b, T* c, int m, int n, int k, Stream stream = {},
                        const FusedConfig& config = {}) {
  IRIS_FUSED_ELEMENT_CHECK(T);
  constexpr const char* op = "iris::ops::matmul_all_scatter";
  if (detail::has_choices(config, true)) {
    const auto call = [&](const FusedConfig& chosen) { matmul_all_scatter(ws, a, b, c, m, n, k, stream, chosen); };
    return call(detail::with_choices_made(op, ws.rank(), config, true, m, n, k, stream, call));
  }
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const int n_local = n / world;
  const bool split = config.comm_programs > 0;
  std::int64_t tiles = 0;  // (the config's tiles checked first)
  int grid = 0;
  detail::agreed_call(ws, op, m, n, k, config, [&] {
    detail::check_sizes(op, m, n, k);
    detail::check_divides(op, "n", n, world, "columns of B");
    detail::check_config(op, config, true);
    detail::check_operands(
        op, rank, sizeof(T),
        {{"a", a, m, k}, {"b", b, k, n_local}, {"c", c, m, n, true, "the other ranks store their tiles of C into it"}});
    tiles = detail::ceil_div(m, config.block_m) * detail::ceil_div(n_local, config.block_n);
    grid = detail::grid_of(op, rank, config, tiles, split);
  });
  if (split) ws.reserve(op, static_cast<std::size_t>(tiles), 0);
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  detail::with_tiles(config, [&](auto tiles_type) {
    using S = decltype(tiles_type);
    if (split) {
      kernels::gemm_all_scatter_split<S::m, S::n, S::k>::launch(
          {grid}, ctx, detail::mutable_ptr(a), detail::mutable_ptr(b), c, m, n, k, n_local, k, n_local, n,
          config.group_m, ws.flags(), config.comm_programs, ws.sync(), stream);
    } else {
      kernels::gemm_all_scatter<S::m, S::n, S::k>::launch({grid}, ctx, detail::mutable_ptr(a), detail::mutable_ptr(b),
                                                          c, m, n, k, n_local, k, n_local, n, config.group_m,
                                                          ws.sync(), stream);
    }
  });
}

// C = A × B, K split; every rank ends with all of C (one shot: each rank pushes
// its partial tiles into every rank's scratch and sets a flag per tile, then
// sums the W partials in rank order, so every rank gets the same bits). With W
// ranks (k a multiple of W):
//   a  m×(k/W): rank r's columns r·k/W .. of A (any device memory)
//   b  (k/W)×n: rank r's rows r·k/W .. of B (any device memory)
//   c  m×n: the sum, on every rank (any device memory)
// The workspace's scratch holds W × m × n floats.
template <class T>
void matmul_all_reduce(FusedWorkspace& ws, const T* a, const T* b, T* c, int m, int n, int k, Stream stream = {},
                       const FusedConfig& config = {}) {
  IRIS_FUSED_ELEMENT_CHECK(T);
  constexpr const char* op = "iris::ops::matmul_all_reduce";
  if (detail::has_choices(config, false)) {
    const auto call = [&](const FusedConfig& chosen) { matmul_all_reduce(ws, a, b, c, m, n, k, stream, chosen); };
    return call(detail::with_choices_made(op, ws.rank(), config, false, m, n, k, stream, call));
  }
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const int k_local = k / world;
  std::int64_t tiles = 0;
  int grid = 0;
  detail::agreed_call(ws, op, m, n, k, config, [&] {
    detail::check_sizes(op, m, n, k);
    detail::check_divides(op, "k", k, world, "columns of A and rows of B");
    detail::check_config(op, config, false);
    detail::check_operands(op, rank, sizeof(T), {{"a", a, m, k_local}, {"b", b, k_local, n}, {"c", c, m, n, true}},
                           {{"the scratch of the ranks' partial products", std::int64_t(world) * m, n}});
    tiles = detail::ceil_div(m, config.block_m) * detail::ceil_div(n, config.block_n);
    grid = detail::grid_of(op, rank, config, tiles, true);
  });
  ws.reserve(op, static_cast<std::size_t>(tiles * world),
             std::size_t(world) * std::size_t(m) * std::size_t(n) * sizeof(float));
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  detail::with_tiles(config, [&](auto tiles_type) {
    using S = decltype(tiles_type);
    kernels::gemm_all_reduce<S::m, S::n, S::k>::launch({grid}, ctx, detail::mutable_ptr(a), detail::mutable_ptr(b), c,
                                                       static_cast<float*>(ws.scratch()), ws.flags(), m, n, k_local,
                                                       k_local, n, n, config.group_m, ws.sync(), stream);
  });
}

// C = A × B, K split; rank r ends with its rows r·m/W .. of C (each rank pushes
// its partial of a tile into the owner's scratch and sets the owner's flag; the
// owner sums the W partials). With W ranks (m and k multiples of W):
//   a  m×(k/W): rank r's columns r·k/W .. of A (any device memory)
//   b  (k/W)×n: rank r's rows r·k/W .. of B (any device memory)
//   c  (m/W)×n: rank r's rows r·m/W .. of the sum (any device memory)
// The workspace's scratch holds m × n floats (W slots of m/W rows).
template <class T>
void matmul_reduce_scatter(FusedWorkspace& ws, const T* a, const T* b, T* c, int m, int n, int k, Stream stream = {},
                           const FusedConfig& config = {}) {
  IRIS_FUSED_ELEMENT_CHECK(T);
  constexpr const char* op = "iris::ops::matmul_reduce_scatter";
  if (detail::has_choices(config, false)) {
    const auto call = [&](const FusedConfig& chosen) { matmul_reduce_scatter(ws, a, b, c, m, n, k, stream, chosen); };
    return call(detail::with_choices_made(op, ws.rank(), config, false, m, n, k, stream, call));
  }
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const int m_local = m / world, k_local = k / world;
  std::int64_t tiles = 0;
  int grid = 0;
  detail::agreed_call(ws, op, m, n, k, config, [&] {
    detail::check_sizes(op, m, n, k);
    detail::check_divides(op, "m", m, world, "rows of C");
    detail::check_divides(op, "k", k, world, "columns of A and rows of B");
    detail::check_config(op, config, false);
    detail::check_operands(op, rank, sizeof(T),
                           {{"a", a, m, k_local}, {"b", b, k_local, n}, {"c", c, m_local, n, true}},
                           {{"the scratch of the ranks' partial products", m, n}});
    tiles = world * detail::ceil_div(m_local, config.block_m) * detail::ceil_div(n, config.block_n);
    grid = detail::grid_of(op, rank, config, tiles, true);
  });
  ws.reserve(op, static_cast<std::size_t>(tiles * world), std::size_t(m) * std::size_t(n) * sizeof(float));
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  detail::with_tiles(config, [&](auto tiles_type) {
    using S = decltype(tiles_type);
    kernels::gemm_reduce_scatter<S::m, S::n, S::k>::launch(
        {grid}, ctx, detail::mutable_ptr(a), detail::mutable_ptr(b), c, static_cast<float*>(ws.scratch()), ws.flags(),
        m, n, k_local, m_local, k_local, n, n, config.group_m, ws.sync(), stream);
  });
}

// C = all_gather(A) × B: A split by rows, every rank its own B (a weight shard),
// every rank all of C's rows. With W ranks (m a multiple of W):
//   a  (m/W)×k: rank r's rows r·m/W .. of A
//   b  k×n: this rank's B (any device memory)
//   c  m×n: all_gather(A) × B (any device memory)
// comm_programs == 0 (default): the compute programs load the other ranks' A
// tiles from their heaps, so `a` must be in the symmetric heap. comm_programs >
// 0: the first comm_programs programs push this rank's A tiles into every rank's
// gathered A (the workspace's scratch, m × k elements) with a ready flag per
// tile, and the compute programs wait for them: `a` may be any device memory.
template <class T>
void all_gather_matmul(FusedWorkspace& ws, const T* a, const T* b, T* c, int m, int n, int k, Stream stream = {},
                       const FusedConfig& config = {}) {
  IRIS_FUSED_ELEMENT_CHECK(T);
  constexpr const char* op = "iris::ops::all_gather_matmul";
  if (detail::has_choices(config, true)) {
    const auto call = [&](const FusedConfig& chosen) { all_gather_matmul(ws, a, b, c, m, n, k, stream, chosen); };
    return call(detail::with_choices_made(op, ws.rank(), config, true, m, n, k, stream, call));
  }
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const int m_local = m / world;
  const bool push = config.comm_programs > 0;
  std::int64_t row_tiles = 0, tiles = 0;
  int grid = 0;
  detail::agreed_call(ws, op, m, n, k, config, [&] {
    detail::check_sizes(op, m, n, k);
    detail::check_divides(op, "m", m, world, "rows of A");
    detail::check_config(op, config, true);
    const char* pulled =
        push ? nullptr : "the other ranks load their A tiles from it (config.comm_programs > 0 pushes them instead)";
    detail::check_operands(op, rank, sizeof(T), {{"a", a, m_local, k, false, pulled}, {"b", b, k, n}, {"c", c, m, n, true}},
                           {{"the gathered a", m, k}});
    // C's rows are tiled per owner of A's rows (fused_gemm.iris).
    row_tiles = world * detail::ceil_div(m_local, config.block_m);
    tiles = row_tiles * detail::ceil_div(n, config.block_n);
    grid = detail::grid_of(op, rank, config, tiles, push);
  });
  if (push) {
    ws.reserve(op, static_cast<std::size_t>(row_tiles * detail::ceil_div(k, config.block_k)),
               std::size_t(m) * std::size_t(k) * sizeof(T));
  }
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  detail::with_tiles(config, [&](auto tiles_type) {
    using S = decltype(tiles_type);
    if (push) {
      kernels::all_gather_gemm_push<S::m, S::n, S::k>::launch(
          {grid}, ctx, detail::mutable_ptr(a), detail::mutable_ptr(b), c, static_cast<T*>(ws.scratch()), ws.flags(), m,
          n, k, m_local, k, n, n, config.group_m, config.comm_programs, ws.sync(), stream);
    } else {
      kernels::all_gather_gemm_pull<S::m, S::n, S::k>::launch({grid}, ctx, detail::mutable_ptr(a),
                                                              detail::mutable_ptr(b), c, m, n, k, m_local, k, n, n,
                                                              config.group_m, ws.sync(), stream);
    }
  });
}

#undef IRIS_FUSED_ELEMENT_CHECK

}  // inline namespace fused_checked / fused_unchecked

}  // namespace iris::ops
