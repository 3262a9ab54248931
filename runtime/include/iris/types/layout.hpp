// Layouts of tiles: which elements each thread of a program instance holds. A
// program instance runs on kThreads threads (a GPU thread block; on the CPU
// one thread that holds every element). A layout is part of a tile's type
// (types/tile.hpp), so that tiles laid out differently (tensor-core fragments,
// whose layout may depend on the element type) cannot be mixed by accident.
// The default layout, Blocked, is what every tile of generated code has.
//
// Tiles have one or two dimensions. Every layout numbers a tile's elements by
// their row-major flat index (f = r * cols + c; a 1-D tile is one row), and
// index(j) returns that flat index, so that operations that pair up elements
// (elementwise ones, loads, stores, atomics) never look at the shape: a 2-D
// tile is a 1-D tile of rows * cols elements whose type also carries the shape.
#pragma once

#include <concepts>
#include <type_traits>

#include "iris/numeric.hpp"
#include "iris/target.hpp"

#ifndef IRIS_THREADS
#define IRIS_THREADS 256
#endif

namespace iris {

// The row and the column of flat index f in a tile of Cols columns. f is
// never negative, which the C++ compiler cannot see: divided as unsigned, a
// power of two costs one shift or mask, where int division adds a sign
// fix-up to each (a GEMM's store spilled registers for them).
template <int Cols>
IRIS_HD constexpr int flat_row(int f) {
  return static_cast<int>(static_cast<unsigned>(f) / Cols);
}
template <int Cols>
IRIS_HD constexpr int flat_col(int f) {
  return static_cast<int>(static_cast<unsigned>(f) % Cols);
}

#if IRIS_GPU
inline constexpr int kThreads = IRIS_THREADS;
// Host and device: the tile functions that use it are IRIS_HD (their host
// instantiations, which never run, see thread 0).
IRIS_HD inline int thread_index() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}
#else
inline constexpr int kThreads = 1;
inline int thread_index() { return 0; }
#endif

constexpr bool is_tile_size(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// What a layout of N elements tells: its shape (rank 1 or 2, rows and cols; a
// 1-D tile of N has rows 1 and cols N), how many elements each thread holds
// (per_thread), the flat index of this thread's element j (index), whether
// this thread holds any (active), and vec, a divisor of per_thread: each run of
// vec elements of a thread, from a multiple of vec on, is consecutive in the
// tile, so that a contiguous access can move it with one vector load or store
// (1 where no two are).
template <class L, int N>
concept LayoutOf = L::size == N && L::rows * L::cols == N && (L::rank == 1 || L::rank == 2) &&
                   (L::rank == 2 || L::rows == 1) && requires(int j) {
  { L::per_thread } -> std::convertible_to<int>;
  { L::vec } -> std::convertible_to<int>;
  { L::index(j) } -> std::same_as<int>;
  { L::active() } -> std::same_as<bool>;
};

// The blocked layout of a tile of shape Dims (Blocked<N>, Blocked<M, N>): a
// thread holds runs of `vec` consecutive elements (4 when the tile is large
// enough), so a contiguous access becomes 16-byte vector loads and stores for
// 32-bit types. It depends on the number of elements only, never on the
// element type, so tiles of different types line up element for element, nor
// on the shape, so that tiles of one size but different shapes do too:
// reshaping a tile, or giving it an axis of 1, is a change of its type alone.
template <int... Dims>
struct Blocked {
  static_assert(sizeof...(Dims) == 1 || sizeof...(Dims) == 2, "tiles have one or two dimensions");
  static_assert((is_tile_size(Dims) && ...), "tile dimensions are positive powers of two");
  static constexpr int rank = sizeof...(Dims);
  static constexpr int size = (Dims * ...);
  static constexpr int shape[rank] = {Dims...};
  static constexpr int cols = shape[rank - 1];
  static constexpr int rows = size / cols;
  static constexpr int per_thread = size >= kThreads ? size / kThreads : 1;
  static constexpr int vec = per_thread < 4 ? per_thread : 4;
  IRIS_HD static int index(int j) {
    return (j / vec) * (kThreads * vec) + thread_index() * vec + (j % vec);
  }
  // Small tiles leave threads beyond size idle.
  IRIS_HD static bool active() { return size >= kThreads || thread_index() < size; }
};

// The layout of copy_async's pointers and masks for tiles of T: the blocked
// layout's order with runs of 16 bytes of T per thread (8 half or bfloat16
// elements), so that each run is one 16-byte cp.async; fewer where a thread
// holds fewer elements.
template <class T, int R, int C>
struct CopyLayout {
  static_assert(is_tile_size(R) && is_tile_size(C), "tile dimensions are positive powers of two");
  static constexpr int rank = 2;
  static constexpr int rows = R;
  static constexpr int cols = C;
  static constexpr int size = R * C;
  static constexpr int per_thread = size >= kThreads ? size / kThreads : 1;
  static constexpr int run = 16 / static_cast<int>(sizeof(T)) > 0 ? 16 / static_cast<int>(sizeof(T)) : 1;
  static constexpr int vec = per_thread < run ? per_thread : run;
  IRIS_HD static int index(int j) {
    return (j / vec) * (kThreads * vec) + thread_index() * vec + (j % vec);
  }
  IRIS_HD static bool active() { return size >= kThreads || thread_index() < size; }
};

template <class L> inline constexpr bool is_blocked = false;
template <int... Dims> inline constexpr bool is_blocked<Blocked<Dims...>> = true;

// A layout class of any size (what the layout-parameterised operations take:
// zeros<T, L>(), arange<L>(), broadcast_to<L>(x), convert_layout<L>(x)).
template <class L>
concept Layout = requires { L::size; } && LayoutOf<L, L::size>;

// ---------------------------------------------------------------- MmaAcc
// The accumulator fragments of NVIDIA's mma.sync.m16n8k16 (sm_80 and later)
// over an (M, N) tile. The Threads / 32 warps of the program instance form a
// grid of WM x WN warps (WM = min(4, M / 16, warps), WN = warps / WM); warp
// (wm, wn) = (warp / WN, warp % WN) owns the (TM, TN) = (M / WM, N / WN)
// sub-tile at (wm * TM, wn * TN), MI x NI mma tiles of 16 x 8. Element j of a
// thread (lane = thread % 32): i = j / 4 is mma tile (mi, ni) = (i / NI,
// i % NI) and q = j % 4 is its register, at row mi * 16 + lane / 4 + 8 * (q / 2)
// and column ni * 8 + (lane % 4) * 2 + q % 2 of the sub-tile: q and q + 1 are
// adjacent columns (vec 2). Every thread holds elements (active).
//
// Where IRIS_WGMMA is 1 (a build for sm_90a, whose device pass has Hopper's
// wgmma: CMake defines it from the target's CUDA architectures, the same in
// both passes), a shape that wgmma computes in one instruction per warpgroup
// and step of K (M = 16 rows per warp, N 64, 128 or 256) takes the grid of
// wgmma's accumulator instead: WM = every warp, WN = 1, so that warpgroup g's
// 4 warps hold rows 64 g to 64 g + 63 as m64nNk16 lays them out, which is the
// same per-warp pattern. mma.sync serves that grid too (on the other
// architectures of the same build).
#ifndef IRIS_WGMMA
#define IRIS_WGMMA 0
#endif
namespace detail {
// The grid of a matrix instruction's accumulator over an (M, N) tile, which
// MmaGrid and MfmaGrid specialise: the Threads / Group groups of a program
// instance (warps, wavefronts) as WM = Rows by WN = groups / WM; group
// (wm, wn) = (g / WN, g % WN) owns the (TM, TN) = (M / WM, N / WN) sub-tile
// at (wm * TM, wn * TN), MI x NI instruction tiles of 16 x TileN, each thread
// holding 4 registers of each.
template <int M, int N, int Threads, int Group, int TileN, int Rows>
struct GroupGrid {
  static constexpr int groups = Threads / Group;
  static constexpr int WM = Rows;
  static constexpr int WN = WM > 0 ? groups / WM : 0;
  // WM and WN as divisors: never 0, even where `fits` fails before a division
  // (nvcc warns about a zero divisor anywhere in a constant expression).
  static constexpr int DM = WM > 0 ? WM : 1, DN = WN > 0 ? WN : 1;
  // Whether the grid tiles (M, N) exactly with 16 x TileN instruction tiles.
  static constexpr bool fits = Threads % Group == 0 && WM > 0 && WN > 0 && groups % DM == 0 &&
                               M % (16 * DM) == 0 && N % (TileN * DN) == 0;
  static constexpr int TM = fits ? M / DM : 16, TN = fits ? N / DN : TileN;
  static constexpr int MI = TM / 16, NI = TN / TileN;
  static constexpr int per_thread = MI * NI * 4;
};

constexpr bool mma_warpgroup_rows(int m, int n, int threads) {
  const int warps = threads / 32;
  return IRIS_WGMMA && warps % 4 == 0 && m == 16 * warps && (n == 64 || n == 128 || n == 256);
}
constexpr int mma_grid_rows(int m, int n, int threads) {
  const int warps = threads / 32;
  return mma_warpgroup_rows(m, n, threads) ? warps
         : m / 16 < 4                      ? (m / 16 < warps ? m / 16 : warps)
                                           : (4 < warps ? 4 : warps);
}

template <int M, int N, int Threads>
struct MmaGrid : GroupGrid<M, N, Threads, 32, 8, mma_grid_rows(M, N, Threads)> {
  using Shape = GroupGrid<M, N, Threads, 32, 8, mma_grid_rows(M, N, Threads)>;
  static constexpr bool warpgroup_rows = mma_warpgroup_rows(M, N, Threads);
  // The flat index of element j of thread t.
  IRIS_HD static constexpr int index(int t, int j) {
    const int warp = t / 32, lane = t % 32;
    const int wm = warp / Shape::DN, wn = warp % Shape::DN;
    const int i = j / 4, q = j % 4;
    const int row = wm * Shape::TM + (i / Shape::NI) * 16 + lane / 4 + 8 * (q / 2);
    const int col = wn * Shape::TN + (i % Shape::NI) * 8 + (lane % 4) * 2 + q % 2;
    return row * N + col;
  }
  // A thread's elements lie on 2 MI rows: element j is row_head(j), the
  // first of its row, plus column_after_head(j) columns, whatever the thread
  // (index), so an access whose pointers advance by one element along each
  // row needs one pointer a row, not one an element.
  IRIS_HD static constexpr int row_head(int j) { return j / 4 / Shape::NI * Shape::NI * 4 + j % 4 / 2 * 2; }
  IRIS_HD static constexpr int column_after_head(int j) { return j / 4 % Shape::NI * 8 + j % 2; }
};
}  // namespace detail

namespace detail {
// What the accumulators of matrix instructions share: an (M, N) layout whose
// grid G of warps or wavefronts places every element (G::index(thread, j)),
// each thread holding G::per_thread of them in runs of Vec adjacent columns.
template <class G, int M, int N, int Vec>
struct GridLayout {
  static_assert(is_tile_size(M) && is_tile_size(N), "tile dimensions are positive powers of two");
  using Grid = G;
  static constexpr int rank = 2;
  static constexpr int rows = M;
  static constexpr int cols = N;
  static constexpr int size = M * N;
  static constexpr int per_thread = G::per_thread;
  static constexpr int vec = Vec;
  IRIS_HD static int index(int j) { return G::index(thread_index(), j); }
  IRIS_HD static bool active() { return true; }
};
}  // namespace detail

template <int M, int N>
struct MmaAcc : detail::GridLayout<detail::MmaGrid<M, N, kThreads>, M, N, 2> {
  using Grid = detail::MmaGrid<M, N, kThreads>;
  static_assert(Grid::fits,
                "MmaAcc<M, N>: the warps of a program instance must tile (M, N) with 16 x 8 mma tiles "
                "(M a multiple of 16 * WM, N of 8 * WN); DotLayout<T, M, N> picks Blocked<M, N> where they do not");
  // One pointer a row for accesses through contiguous rows (ops/memory.hpp).
  IRIS_HD static constexpr int row_head(int j) { return Grid::row_head(j); }
  IRIS_HD static constexpr int column_after_head(int j) { return Grid::column_after_head(j); }
};

template <class L> inline constexpr bool is_mma_acc = false;
template <int M, int N> inline constexpr bool is_mma_acc<MmaAcc<M, N>> = true;

// Layouts that give each thread's elements as a few rows' heads and columns
// after them (MmaAcc::row_head).
template <class L>
concept RowHeads = requires {
  L::row_head(0);
  L::column_after_head(0);
};

// ---------------------------------------------------------------- FragmentRows
// The layout of the pointers and mask of a store of Acc's fragments (MmaAcc)
// in runs of rows (ops/store_nvidia.hpp): each warp passes 8 rows x 32
// columns of its fragments through shared memory at a time, and each lane
// comes out with one run of 8 adjacent columns of one row. Thread t's
// elements 8 s to 8 s + 7 are the run it writes at step s, steps ordered
// (mi, half, group), group fastest: the run of row mi * 16 + 8 half + lane / 4
// and columns (4 group + lane % 4) * 8 + 0..7 of its warp's sub-tile. So a
// thread computes the pointer and the mask of the runs it writes itself,
// where the fragments' layout would hand them to other lanes. Acc's grid
// holds whole groups of 4 mma tiles along each row (NI % 4 == 0).
namespace detail {
// FragmentRows' placement over the mma grid G of an (M, N) tile: the flat
// index of element j of thread t.
template <class G, int N>
IRIS_HD constexpr int fragment_rows_index(int t, int j) {
  constexpr int groups = G::NI / 4;  // runs of 32 columns in a row of mma tiles
  const int warp = t / 32, lane = t % 32;
  const int wm = warp / G::DN, wn = warp % G::DN;
  const int step = j / 8, group = step % groups, half = step / groups % 2, mi = step / groups / 2;
  const int row = wm * G::TM + mi * 16 + 8 * half + lane / 4;
  const int col = wn * G::TN + (4 * group + lane % 4) * 8 + j % 8;
  return row * N + col;
}
}  // namespace detail

template <class Acc>
struct FragmentRows {
  using Grid = typename Acc::Grid;
  static_assert(is_mma_acc<Acc> && Grid::NI % 4 == 0, "FragmentRows<Acc>: Acc's warps hold groups of 4 mma tiles");
  static constexpr int rank = 2;
  static constexpr int rows = Acc::rows;
  static constexpr int cols = Acc::cols;
  static constexpr int size = Acc::size;
  static constexpr int per_thread = Acc::per_thread;
  static constexpr int vec = 8;
  IRIS_HD static int index(int j) { return detail::fragment_rows_index<Grid, cols>(thread_index(), j); }
  IRIS_HD static bool active() { return true; }
};

template <class L> inline constexpr bool is_fragment_rows = false;
template <class Acc> inline constexpr bool is_fragment_rows<FragmentRows<Acc>> = true;

// ---------------------------------------------------------------- MfmaAcc
// The accumulators of AMD's MFMA instructions v_mfma_f32_16x16x16f16 and
// v_mfma_f32_16x16x16bf16_1k (gfx90a and gfx942: CDNA 2 and 3, wavefronts of
// 64 lanes) over an (M, N) tile. The Threads / 64 wavefronts of the program
// instance form a grid of WM x WN waves (WM = min(M / 16, waves / 2), at least
// 1; WN = waves / WM: square sub-tiles load the fewest operands per
// instruction); wave (wm, wn) = (wave / WN, wave % WN) owns the (TM, TN) =
// (M / WM, N / WN) sub-tile at (wm * TM, wn * TN), MI x NI instruction tiles
// of 16 x 16. Element j of a thread (lane = thread % 64): i = j / 4 is
// instruction tile (mi, ni) = (i / NI, i % NI) and v = j % 4 its register, at
// row mi * 16 + lane % 16 and column ni * 16 + 4 * (lane / 16) + v of the
// sub-tile: v = 0 to 3 are adjacent columns (vec 4, one 16-byte store of
// floats). Every thread holds elements (active).
//
// That is the instruction's result transposed: its lane l holds rows
// 4 (l / 16) to 4 (l / 16) + 3 of column l % 16 of D = A x B. ops/mfma_amd.hpp
// computes b^T x a^T instead, b's fragment as the instruction's A operand and
// a's as its B, so that a thread's registers lie along a row of the result.
// The operands of a step of 16 along K, k0: lane l's 4 registers of a's
// fragment of instruction row mi are a(a_row(wave, l, mi), k0 + fragment_k(l)
// + v), consecutive in a row-major a; of b's fragment of instruction column
// ni, b(k0 + fragment_k(l) + v, b_col(wave, l, ni)).
namespace detail {
constexpr int mfma_grid_rows(int m, int threads) {
  const int waves = threads / 64;
  const int half_waves = waves / 2 > 0 ? waves / 2 : waves;  // one wave: 1
  return m / 16 < half_waves ? m / 16 : half_waves;
}

template <int M, int N, int Threads>
struct MfmaGrid : GroupGrid<M, N, Threads, 64, 16, mfma_grid_rows(M, Threads)> {
  using Shape = GroupGrid<M, N, Threads, 64, 16, mfma_grid_rows(M, Threads)>;
  IRIS_HD static constexpr int a_row(int wave, int lane, int mi) {
    return (wave / Shape::DN) * Shape::TM + mi * 16 + lane % 16;
  }
  IRIS_HD static constexpr int b_col(int wave, int lane, int ni) {
    return (wave % Shape::DN) * Shape::TN + ni * 16 + lane % 16;
  }
  IRIS_HD static constexpr int fragment_k(int lane) { return 4 * (lane / 16); }
  // The flat index of element j of thread t.
  IRIS_HD static constexpr int index(int t, int j) {
    const int wave = t / 64, lane = t % 64;
    const int i = j / 4, v = j % 4;
    const int row = a_row(wave, lane, i / Shape::NI);  // the row of a that the lane feeds
    const int col = (wave % Shape::DN) * Shape::TN + (i % Shape::NI) * 16 + fragment_k(lane) + v;
    return row * N + col;
  }
};
}  // namespace detail

template <int M, int N>
struct MfmaAcc : detail::GridLayout<detail::MfmaGrid<M, N, kThreads>, M, N, 4> {
  static_assert(detail::MfmaGrid<M, N, kThreads>::fits,
                "MfmaAcc<M, N>: the wavefronts of a program instance must tile (M, N) with 16 x 16 MFMA tiles "
                "(M a multiple of 16 * WM, N of 16 * WN); DotLayout<T, M, N> picks Blocked<M, N> where they do not");
};

template <class L> inline constexpr bool is_mfma_acc = false;
template <int M, int N> inline constexpr bool is_mfma_acc<MfmaAcc<M, N>> = true;

// The layout of dot's accumulator and result for inputs of type T and a
// result of shape (M, N), which generated code gives the accumulator it
// creates (zeros<float, DotLayout<T, M, N>>()): the accumulator of the
// target's matrix instructions where dot uses them for T (half and bfloat16),
// the shape fitting their grid of warps or wavefronts -- MmaAcc<M, N> on an
// NVIDIA GPU, MfmaAcc<M, N> on an AMD one -- and Blocked<M, N> everywhere else
// (the CPU, float and int8_t inputs, small shapes). It depends on macros that
// are the same in a GPU compilation's host and device passes, never on the
// device architecture: on an NVIDIA GPU older than sm_80, or an AMD GPU
// without MFMA (ops/mfma_amd.hpp), dot takes such an accumulator through its
// generic path.
namespace detail {
template <class T>
inline constexpr bool is_mma_input = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
enum class DotAccumulator { blocked, mma, mfma };
template <class T, int M, int N>
inline constexpr DotAccumulator dot_accumulator_kind =
    !is_mma_input<T>                                   ? DotAccumulator::blocked
    : IRIS_NVIDIA_GPU && MmaGrid<M, N, kThreads>::fits ? DotAccumulator::mma
    : IRIS_AMD_GPU && MfmaGrid<M, N, kThreads>::fits   ? DotAccumulator::mfma
                                                       : DotAccumulator::blocked;
template <DotAccumulator Kind, int M, int N> struct dot_layout { using type = Blocked<M, N>; };
template <int M, int N> struct dot_layout<DotAccumulator::mma, M, N> { using type = MmaAcc<M, N>; };
template <int M, int N> struct dot_layout<DotAccumulator::mfma, M, N> { using type = MfmaAcc<M, N>; };
}  // namespace detail

template <class T, int M, int N>
using DotLayout = typename detail::dot_layout<detail::dot_accumulator_kind<T, M, N>, M, N>::type;

}  // namespace iris
