// Iris runtime: the host collectives, iris::ccl (NCCL's calls, over Iris's
// symmetric heap). Every rank calls them, in the same order and with the same
// arguments (they are collective, like Rank::allocate):
//
//   all_reduce      every rank's output: the ranks' inputs, reduced
//   all_gather      every rank's output: the ranks' inputs, one after the other
//   reduce_scatter  rank r's output: block r of the ranks' inputs, reduced
//   all_to_all      block q of rank r's input lands in block r of rank q's output
//   broadcast       every rank's buffer becomes the root's
//   barrier         completes once every rank has made the call
//
// Elements are float, iris::bfloat16, iris::half, int32_t or int64_t (a
// template argument, deduced from the buffers: another type does not
// compile); reductions are Op::sum, max or min, in the element type. Counts
// are elements of the larger buffer of a call with W = world_size() ranks:
// all_gather's output (W blocks of count / W), reduce_scatter's input (W
// blocks; the output is one) and each of all_to_all's buffers (W blocks), so
// that these counts must be multiples of W. The kernels are those of
// iris/ccl/ccl_kernels.iris (installed next to this header), as irisc made
// them (iris/ccl/ccl_kernels.iris.hpp; ccl_kernels_checked.iris.hpp where
// IRIS_CCL_CHECKED is 1, which iris_add_kernels(... CHECKED ...) defines;
// otherwise ccl_kernels_traced.iris.hpp, whose kernels record device traces,
// where IRIS_CCL_TRACED is 1, which iris_add_kernels(... TRACE ...) defines);
// the file's header comment describes the algorithms.
//
// Algorithms. Config::algorithm forces one. Algorithm::automatic (default)
// with block 0 (default) measures on a GPU: the first call of a collective
// with a type, operation, count, root and world size runs it with every
// algorithm of the collective and every compiled block (those whose checks
// the buffers fail left out) and keeps the fastest (iris/autotune.hpp: rank
// 0's choice for every rank, cached in memory and in IRIS_TUNE_CACHE's file);
// later calls take the kept one. That first call synchronises the stream and
// makes host barriers: make it before capturing a graph. On the CPU, in place
// (all_reduce's push and two_shot, which the runs would sum again) and where
// the config fixes the algorithm or the block, Algorithm::automatic takes the
// first row of kSelectionTable that matches the collective, the world size,
// the element size and the bytes of the larger buffer. Each
// algorithm asks for its own buffers in the symmetric heap (Rank::allocate,
// the same call on every rank), those that other ranks reach:
//
//                  one_shot (loads)   push (stores)         two_shot        ring
//   all_reduce     input              -- (scratch)          input, output   output (scratch)
//   all_gather     input              output
//   reduce_scatter input              -- (scratch)
//   all_to_all     input              output
//   broadcast      buffer             buffer
//
// Other buffers may be any memory of the device. Input and output may overlap
// (in place) only for all_reduce's push and two_shot (automatic picks one of
// them then). The flags, scratch and synchronisation words belong to an
// iris::Workspace (iris/library.hpp), which the fused operations share.
//
// Completion (NCCL's semantics). A call launches one kernel on `stream` (on the
// CPU it runs before the call returns). When that kernel has completed on a
// rank, every rank has done its part of the call: outputs are complete
// everywhere, and inputs may be overwritten (the kernels end with
// finish(sync, epoch), epochs advancing by one per call on the device). So
// calls may follow each other on one stream without a host barrier between
// them, an output of one the input of the next; the host reads an output once
// the stream is done (Rank::barrier() waits for it, or hipStreamSynchronize).
// Two rules remain, as for the fused operations: what the host writes into a
// buffer that other ranks read must be done on every rank before any rank
// starts the call (a host barrier after writing it); and an output that other
// ranks write (push's all_gather and all_to_all, broadcast, two_shot, ring) may
// receive their data as soon as any rank has started the call, so the host
// must be done with it before then.
//
// Errors. Every argument is checked before anything is launched, and then the
// ranks compare their calls (Rank::agree: the collective, type, operation,
// count, root, algorithm and block, and each rank's check's verdict), so that
// every rank throws the same iris::Error, whose message starts with the
// call's name ("iris::ccl::all_gather: ..."), or, where the ranks' calls
// differ, names what each rank called. The comparison is a host rendezvous per
// call (no wait for the device); Config::compare_calls = false leaves it out.
//
// CUDA graphs. The calls may be captured on a stream (hipStreamBeginCapture
// with hipStreamCaptureModeThreadLocal or Relaxed, on every rank, the same
// calls) and the graph replayed: no argument of a launch changes from call to
// call, since each kernel takes its epoch from the workspace's words on the
// device (begin_epoch of iris/ccl.iris) and raises it when it completes, so
// that a replay waits for the peers' replays as the captured calls did. The
// checks and the comparison across ranks happen once, at capture. Before
// capturing, make each call once outside the capture (or reserve the
// workspace), since a workspace that grows synchronises the device. A replay
// (hipGraphLaunch) is not a launch of the runtime: Rank::barrier() does not
// wait for it, hipStreamSynchronize does.
#pragma once

#include "iris/autotune.hpp"
#include "iris/host.hpp"
#include "iris/kernel.hpp"
#include "iris/library.hpp"
#include "iris/numeric.hpp"

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// The kernels of the variant that IRIS_CCL_CHECKED and IRIS_CCL_TRACED choose.
#define IRIS_LIBRARY_CHECKED IRIS_CCL_CHECKED
#define IRIS_LIBRARY_TRACED IRIS_CCL_TRACED
#include "iris/library_variant.hpp"
#include IRIS_LIBRARY_VARIANT("iris/ccl/ccl_kernels.iris.hpp", "iris/ccl/ccl_kernels_checked.iris.hpp", \
                              "iris/ccl/ccl_kernels_traced.iris.hpp")

namespace iris::ccl {

enum class Op { sum, max, min };
enum class Algorithm { automatic, one_shot, push, two_shot, ring };
enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, barrier };

// The enumerators' names, in the order of their declarations.
inline constexpr const char* kOpNames[] = {"sum", "max", "min"};
inline constexpr const char* kAlgorithmNames[] = {"automatic", "one_shot", "push", "two_shot", "ring"};
inline constexpr const char* kCollectiveNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                                   "all_to_all", "broadcast",  "barrier"};
constexpr const char* name_of(Op op) { return kOpNames[static_cast<int>(op)]; }
constexpr const char* name_of(Algorithm a) { return kAlgorithmNames[static_cast<int>(a)]; }
constexpr const char* name_of(Collective c) { return kCollectiveNames[static_cast<int>(c)]; }

// Whether `collective` has algorithm `a` (a kernel of ccl_kernels.iris), and
// whether that one takes overlapping input and output.
constexpr bool offers(Collective collective, Algorithm a) {
  switch (collective) {
    case Collective::all_reduce: return a != Algorithm::automatic;
    case Collective::barrier: return a == Algorithm::one_shot;
    default: return a == Algorithm::one_shot || a == Algorithm::push;
  }
}
// Whether algorithm `a` of `collective` runs on a world of several nodes: its
// kernel is a `multinode kernel` of ccl_kernels.iris (push and the ring put and
// wait on local flags; the barrier only completes), where one_shot and
// two_shot load from their peers, which only near ranks allow.
constexpr bool crosses_nodes(Collective collective, Algorithm a) {
  return a == Algorithm::push || a == Algorithm::ring || collective == Collective::barrier;
}
constexpr bool works_in_place(Collective collective, Algorithm a) {
  return collective == Collective::all_reduce && (a == Algorithm::push || a == Algorithm::two_shot);
}

// The tile sizes (elements per program instance) the header compiles.
inline constexpr int kBlocks[] = {256, 1024, 4096};

struct Config {
  Algorithm algorithm = Algorithm::automatic;
  // 0: the selection table's; else one of kBlocks.
  int block = 0;
  // Compare the call across the ranks before launching (Rank::agree): a host
  // rendezvous per call. Leave it on until a program is known to be correct.
  bool compare_calls = true;
};

// A row of the selection table: `algorithm` with tiles of `block` elements for
// `collective` on at most `max_world` ranks, on elements of `element_bytes`
// (0: any type) and messages of at most `max_bytes` (the larger buffer of the
// call).
struct Selection {
  Collective collective;
  int max_world;
  std::size_t element_bytes;
  std::size_t max_bytes;
  Algorithm algorithm;
  int block;
};

inline constexpr int kAnyWorld = INT_MAX;
inline constexpr std::size_t kAnyType = 0;
inline constexpr std::size_t kAnySize = SIZE_MAX;
inline constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB;

// What Algorithm::automatic picks: the first row that matches (and, in place,
// whose algorithm works in place; on a world of several nodes, whose algorithm
// crosses nodes). Every collective has a row that matches anything, in place
// too, and one that crosses nodes: the last rows of all_reduce and
// reduce_scatter are reached only on several nodes. The thresholds are placeholders, to be
// measured on the GPU machine (scripts/multi-gpu.sh runs bench/nccl_bench:
// every algorithm and the automatic choice against NCCL): what
// docs/performance.md says so far is that loads are latency-bound where stores
// are not (push for small messages) and that one_shot reaches half of NCCL's
// bus bandwidth at 1 GiB, where two_shot and the ring move 2 / W of one_shot's
// data per rank.
inline constexpr Selection kSelectionTable[] = {
    {Collective::all_reduce, 1, kAnyType, kAnySize, Algorithm::one_shot, 1024},
    {Collective::all_reduce, kAnyWorld, kAnyType, 64 * kKiB, Algorithm::push, 1024},
    {Collective::all_reduce, kAnyWorld, kAnyType, 1 * kMiB, Algorithm::one_shot, 1024},
    {Collective::all_reduce, 4, kAnyType, kAnySize, Algorithm::two_shot, 4096},
    {Collective::all_reduce, kAnyWorld, kAnyType, 256 * kMiB, Algorithm::two_shot, 4096},
    {Collective::all_reduce, kAnyWorld, kAnyType, kAnySize, Algorithm::ring, 4096},
    {Collective::all_reduce, kAnyWorld, kAnyType, kAnySize, Algorithm::two_shot, 4096},
    {Collective::all_reduce, kAnyWorld, kAnyType, kAnySize, Algorithm::push, 4096},
    {Collective::all_gather, kAnyWorld, kAnyType, kAnySize, Algorithm::push, 1024},
    {Collective::reduce_scatter, kAnyWorld, kAnyType, 1 * kMiB, Algorithm::push, 1024},
    {Collective::reduce_scatter, kAnyWorld, kAnyType, kAnySize, Algorithm::one_shot, 4096},
    {Collective::reduce_scatter, kAnyWorld, kAnyType, kAnySize, Algorithm::push, 4096},
    {Collective::all_to_all, kAnyWorld, kAnyType, kAnySize, Algorithm::push, 1024},
    {Collective::broadcast, kAnyWorld, kAnyType, 1 * kMiB, Algorithm::one_shot, 1024},
    {Collective::broadcast, kAnyWorld, kAnyType, kAnySize, Algorithm::push, 4096},
    {Collective::barrier, kAnyWorld, kAnyType, kAnySize, Algorithm::one_shot, 1024},
};

constexpr Selection select(Collective collective, int world, std::size_t element_bytes, std::size_t bytes,
                           bool in_place = false, bool several_nodes = false) {
  for (const Selection& row : kSelectionTable) {
    if (row.collective == collective && world <= row.max_world &&
        (row.element_bytes == kAnyType || row.element_bytes == element_bytes) && bytes <= row.max_bytes &&
        (!in_place || works_in_place(collective, row.algorithm)) &&
        (!several_nodes || crosses_nodes(collective, row.algorithm))) {
      return row;
    }
  }
  return kSelectionTable[0];  // never: every collective has a row for anything (tests/ccl_host checks)
}

namespace detail {

using library::fail;

// Whether `e` is one of the enumerators `names` names (a cast may make any value).
template <class E, std::size_t N>
constexpr bool enumerated(E e, const char* const (&)[N]) {
  const auto value = static_cast<long long>(e);
  return value >= 0 && value < static_cast<long long>(N);
}
// An enumerator's name, or "Op(99)" for a value that is none.
template <class E, std::size_t N>
std::string text_of(E e, const char* const (&names)[N], const char* type) {
  return enumerated(e, names) ? names[static_cast<int>(e)]
                              : std::string(type) + "(" + std::to_string(static_cast<long long>(e)) + ")";
}
inline std::string text_of(Op op) { return text_of(op, kOpNames, "Op"); }
inline std::string text_of(Algorithm a) { return text_of(a, kAlgorithmNames, "Algorithm"); }

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, bfloat16>) return "bf16";
  if constexpr (std::is_same_v<T, half>) return "f16";
  if constexpr (std::is_same_v<T, std::int32_t>) return "i32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "i64";
  return nullptr;
}

// The kernels index with i32: a buffer (and push's scratch) holds at most this
// many elements, which leaves room for the offsets of a partial last tile.
inline constexpr std::int64_t kMaxElements = INT32_MAX - 2 * 4096;

// A buffer of a call: `elements` of `element_bytes` at `p`, and whether other
// ranks reach it under the call's algorithm.
struct Buffer {
  const char* name;
  const void* p;
  std::size_t elements;
  bool shared;
};

// What a call is, as the ranks compare it.
struct Call {
  const char* op;  // "iris::ccl::all_reduce"
  Collective collective;
  const char* type;
  std::size_t element_bytes;
  std::size_t count;
  std::optional<Op> reduction;  // of the reductions
  int root = -1;                    // broadcast's
};

// How a call runs: resolved from the config and the selection table.
struct Plan {
  Algorithm algorithm;
  int block;
};

inline bool overlap(const Buffer& a, const Buffer& b, std::size_t element_bytes) {
  return library::overlap(a.p, a.elements * element_bytes, b.p, b.elements * element_bytes);
}

inline std::string describe(const Call& call, const Plan& plan) {
  std::string text = std::string(call.op) + "(" + call.type;
  if (call.reduction) text += ", " + text_of(*call.reduction);
  text += ", " + std::to_string(call.count) + " elements";
  if (call.root >= 0) text += ", root " + std::to_string(call.root);
  return text + ", " + text_of(plan.algorithm) + ", block " + std::to_string(plan.block) + ")";
}

// The checks every call makes, then the plan: the config's algorithm and
// block, or the table's. `buffers(plan)` lists the call's buffers under a plan
// (which of them peers reach depends on the algorithm); `divides`: count must
// be a multiple of the world size; `scratch_elements(plan)`: push's scratch.
template <class Buffers, class Scratch>
Plan checked_plan(const Rank& rank, const Call& call, const Config& config, bool divides, Buffers&& buffers,
                  Scratch&& scratch_elements) {
  const int world = rank.world_size();
  const char* op = call.op;
  if (!enumerated(config.algorithm, kAlgorithmNames)) {
    fail(op, "config.algorithm = " + text_of(config.algorithm) + " is not an iris::ccl::Algorithm");
  }
  if (call.reduction && !enumerated(*call.reduction, kOpNames)) {
    fail(op, "op = " + text_of(*call.reduction) + " is not an iris::ccl::Op (sum, max or min)");
  }
  if (config.algorithm != Algorithm::automatic && !offers(call.collective, config.algorithm)) {
    fail(op, std::string("config.algorithm = ") + name_of(config.algorithm) + " is not one of " +
                 name_of(call.collective) + "'s algorithms");
  }
  bool block_compiled = config.block == 0;
  for (int b : kBlocks) block_compiled = block_compiled || config.block == b;
  if (!block_compiled) {
    fail(op, "config.block = " + std::to_string(config.block) + " is not 0 (the table's) or a compiled tile size " +
                 "(256, 1024, 4096)");
  }
  if (divides && call.count % static_cast<std::size_t>(world) != 0) {
    fail(op, "count = " + std::to_string(call.count) + " does not divide over " + std::to_string(world) +
                 " ranks: every rank's block holds count / " + std::to_string(world) + " elements");
  }
  if (call.count > static_cast<std::size_t>(kMaxElements)) {
    fail(op, "count = " + std::to_string(call.count) + " is more than the kernels index (" +
                 std::to_string(kMaxElements) + " elements)");
  }
  if (call.root >= world || (call.collective == Collective::broadcast && call.root < 0)) {
    fail(op, "root = " + std::to_string(call.root) + " is not a rank of the " + std::to_string(world) +
                 "-rank world");
  }
  const int node_size = rank.device_context().node_size;
  const bool several_nodes = node_size < world;
  if (several_nodes && config.algorithm != Algorithm::automatic &&
      !crosses_nodes(call.collective, config.algorithm)) {
    fail(op, std::string("config.algorithm = ") + name_of(config.algorithm) +
                 " loads from the peers' memory, which only ranks of one node share, and this world's " +
                 std::to_string(world) + " ranks are on nodes of " + std::to_string(node_size) +
                 ": use push" + (call.collective == Collective::all_reduce ? ", ring" : "") + " or automatic");
  }

  const Plan requested{config.algorithm, config.block};
  auto listed = buffers(requested);
  bool in_place = false;
  // Iterators, not indices: a barrier lists no buffers, and nvcc rejects an
  // index compared with a size of 0.
  for (auto i = listed.begin(); i != listed.end(); ++i)
    for (auto j = std::next(i); j != listed.end(); ++j)
      in_place = in_place || overlap(*i, *j, call.element_bytes);
  const Selection row = select(call.collective, world, call.element_bytes, call.count * call.element_bytes,
                               in_place && call.collective == Collective::all_reduce, several_nodes);
  const Plan plan{config.algorithm == Algorithm::automatic ? row.algorithm : config.algorithm,
                  config.block == 0 ? row.block : config.block};
  if (call.count == 0) return plan;

  for (const Buffer& b : buffers(plan)) library::check_pointer(op, b.name, b.p);
  for (auto i = listed.begin(); i != listed.end(); ++i) {
    for (auto j = std::next(i); j != listed.end(); ++j) {
      if (overlap(*i, *j, call.element_bytes) && (i->p != j->p || i->elements != j->elements)) {
        fail(op, std::string(i->name) + " and " + j->name + " overlap without being the same buffer: " +
                     "in place, " + j->name + " must be " + i->name);
      }
    }
  }
  if (in_place && !works_in_place(call.collective, plan.algorithm)) {
    fail(op, std::string(listed[0].name) + " and " + listed[1].name + " overlap: in place (" +
                 name_of(plan.algorithm) + ") is not allowed; " +
                 (call.collective == Collective::all_reduce ? "all_reduce's push and two_shot work in place"
                                                            : "use separate buffers"));
  }
  if (static_cast<std::int64_t>(scratch_elements(plan)) > kMaxElements) {
    fail(op, "the scratch of " + std::to_string(scratch_elements(plan)) + " elements (" + name_of(plan.algorithm) +
                 ") is more than the kernels index (" + std::to_string(kMaxElements) + " elements)");
  }
  for (const Buffer& b : buffers(plan)) {
    if (b.shared) {
      library::check_heap(op, rank, b.name, b.p, b.elements * call.element_bytes,
                          (std::string("other ranks reach it (") + name_of(plan.algorithm) + ")").c_str());
    }
    library::check_allocation(op, rank, b.name, b.p, b.elements * call.element_bytes);
  }
  return plan;
}

// The checks, then the ranks' comparison of the call and its workspace
// (library::agree_on_call): every rank returns the same plan or throws the
// same error.
template <class Buffers, class Scratch>
Plan agreed_plan(Workspace& ws, const Call& call, const Config& config, bool divides, Buffers&& buffers,
                 Scratch&& scratch_elements) {
  std::optional<Plan> checked;
  const std::string error = library::verdict_of(
      [&] { checked = checked_plan(ws.rank(), call, config, divides, buffers, scratch_elements); });
  // A failed check describes the call as the config asked for it.
  const Plan plan = checked.value_or(Plan{config.algorithm, config.block});
  library::agree_on_call(ws, call.op, describe(call, plan), error, config.compare_calls);
  return plan;
}

// The config a call with the automatic config (Algorithm::automatic, block
// 0) runs with on a GPU where `repeatable` (a second run reads what the first
// read): the algorithm and block measured fastest for this call, rank 0's
// choice on every rank (iris/autotune.hpp). run(config) makes the call with
// a candidate; those whose checks fail are left out. Nothing (the selection
// table's plan stands) elsewhere.
template <class Run>
std::optional<Config> tuned([[maybe_unused]] Rank& rank, [[maybe_unused]] const Call& call, const Config& config,
                            bool repeatable, [[maybe_unused]] Stream stream, [[maybe_unused]] Run&& run) {
  if (config.algorithm != Algorithm::automatic || config.block != 0 || !repeatable || call.count == 0) {
    return std::nullopt;
  }
#if IRIS_GPU
  std::vector<Config> candidates;
  for (std::size_t a = 1; a < std::size(kAlgorithmNames); ++a) {
    if (!offers(call.collective, static_cast<Algorithm>(a))) continue;
    for (int block : kBlocks) candidates.push_back({static_cast<Algorithm>(a), block, config.compare_calls});
  }
  std::string key = std::string(call.op) + "(" + call.type;
  if (call.reduction) key += ", " + text_of(*call.reduction);
  key += ", " + std::to_string(call.count) + " elements";
  if (call.root >= 0) key += ", root " + std::to_string(call.root);
  key += ", " + std::to_string(rank.world_size()) + " ranks)";
  const int index = autotune_index(
      rank, key, static_cast<int>(candidates.size()), [&](int i) { run(candidates[static_cast<std::size_t>(i)]); },
      stream);
  return candidates[static_cast<std::size_t>(index)];
#else
  return std::nullopt;
#endif
}

// Calls f(std::integral_constant<std::int32_t, BLOCK>{}) for a block of kBlocks.
template <class F>
void with_block(int block, F&& f) {
  switch (block) {
    case 256: f(std::integral_constant<std::int32_t, 256>{}); break;
    case 1024: f(std::integral_constant<std::int32_t, 1024>{}); break;
    default: f(std::integral_constant<std::int32_t, 4096>{}); break;
  }
}

// Calls f(std::integral_constant<std::int32_t, OP>{}, std::integral_constant<
// std::int32_t, BLOCK>{}) with the kernels' OP of `op` and a block of kBlocks.
template <class OpConstants, class F>
void with_op_and_block(Op op, int block, F&& f) {
  const auto with = [&](auto op_constant) {
    with_block(block, [&](auto block_constant) { f(op_constant, block_constant); });
  };
  switch (op) {
    case Op::sum: with(std::integral_constant<std::int32_t, OpConstants::sum>{}); break;
    case Op::max: with(std::integral_constant<std::int32_t, OpConstants::max>{}); break;
    case Op::min: with(std::integral_constant<std::int32_t, OpConstants::min>{}); break;
  }
}

inline Grid grid_of(std::int64_t elements, int block) {
  return {static_cast<int>(library::ceil_div(elements, block))};
}

// all_gather and all_to_all, which differ in their kernels and their input's
// size only: one_shot loads from the peers' inputs, push stores into their
// outputs, each rank's block of count / W elements; no scratch.
template <template <class, std::int32_t> class Push, template <class, std::int32_t> class OneShot, class T>
void exchange(Workspace& ws, const Call& call, const T* input, std::size_t input_count, T* output, Stream stream,
              const Config& config) {
  Rank& rank = ws.rank();
  const Plan plan = agreed_plan(
      ws, call, config, true,
      [&](const Plan& p) {
        return std::array<Buffer, 2>{{{"input", input, input_count, p.algorithm == Algorithm::one_shot},
                                      {"output", output, call.count, p.algorithm == Algorithm::push}}};
      },
      [](const Plan&) { return std::size_t(0); });
  const auto rerun = [&](const Config& c) { exchange<Push, OneShot>(ws, call, input, input_count, output, stream, c); };
  if (const std::optional<Config> chosen = tuned(rank, call, config, true, stream, rerun)) return rerun(*chosen);
  if (call.count == 0) return;
  ws.count_call();
  const int n = static_cast<int>(call.count / static_cast<std::size_t>(rank.world_size()));
  with_block(plan.block, [&](auto block_constant) {
    constexpr std::int32_t B = decltype(block_constant)::value;
    auto launch = plan.algorithm == Algorithm::push ? &Push<T, B>::launch : &OneShot<T, B>::launch;
    launch(grid_of(n, B), rank.device_context(), library::mutable_ptr(input), output, n, ws.sync(), stream);
  });
}

}  // namespace detail

// Each call lives in an inline namespace of its kernel variant: code built with
// IRIS_CCL_CHECKED (or IRIS_CCL_TRACED) and code built without it never share
// an instantiation.
inline namespace IRIS_LIBRARY_VARIANT(ccl_unchecked, ccl_checked, ccl_traced) {
namespace kernels =
    ::iris_kernels::IRIS_LIBRARY_VARIANT(ccl_kernels_iris, ccl_kernels_checked_iris, ccl_kernels_traced_iris);
#undef IRIS_LIBRARY_VARIANT

struct KernelOps {
  static constexpr std::int32_t sum = kernels::iris_module_ccl::OP_SUM;
  static constexpr std::int32_t max = kernels::iris_module_ccl::OP_MAX;
  static constexpr std::int32_t min = kernels::iris_module_ccl::OP_MIN;
};

#define IRIS_CCL_ELEMENT_CHECK(T)                                                                      \
  static_assert(detail::type_name<T>() != nullptr,                                                    \
                "iris::ccl: the collectives take float, iris::bfloat16, iris::half, int32_t or int64_t " \
                "elements")

// output = input reduced over the ranks, `count` elements each.
template <class T>
void all_reduce(Workspace& ws, const T* input, T* output, std::size_t count, Op op = Op::sum, Stream stream = {},
                const Config& config = {}) {
  IRIS_CCL_ELEMENT_CHECK(T);
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const std::size_t chunk = static_cast<std::size_t>(library::ceil_div(static_cast<std::int64_t>(count), world));
  const detail::Call call{"iris::ccl::all_reduce", Collective::all_reduce, detail::type_name<T>(), sizeof(T), count,
                          op};
  const detail::Plan plan = detail::agreed_plan(
      ws, call, config, false,
      [&](const detail::Plan& p) {
        const bool loads = p.algorithm == Algorithm::one_shot || p.algorithm == Algorithm::two_shot;
        const bool stores = p.algorithm == Algorithm::two_shot || p.algorithm == Algorithm::ring;
        return std::array<detail::Buffer, 2>{{{"input", input, count, loads}, {"output", output, count, stores}}};
      },
      [&](const detail::Plan& p) {
        return p.algorithm == Algorithm::push ? world * count : p.algorithm == Algorithm::ring ? (world - 1) * chunk : 0;
      });
  const auto rerun = [&](const Config& c) { all_reduce(ws, input, output, count, op, stream, c); };
  const bool in_place = detail::overlap({"input", input, count, false}, {"output", output, count, false}, sizeof(T));
  if (const std::optional<Config> chosen = detail::tuned(rank, call, config, !in_place, stream, rerun)) {
    return rerun(*chosen);
  }
  if (count == 0) return;
  const std::int64_t tiles = library::ceil_div(static_cast<std::int64_t>(
                                                  plan.algorithm == Algorithm::two_shot || plan.algorithm == Algorithm::ring
                                                      ? chunk
                                                      : count),
                                              plan.block);
  if (plan.algorithm == Algorithm::push) {
    ws.reserve(call.op, static_cast<std::size_t>(world * tiles), world * count * sizeof(T));
  } else if (plan.algorithm == Algorithm::ring) {
    ws.reserve(call.op, static_cast<std::size_t>(2 * (world - 1) * tiles), (world - 1) * chunk * sizeof(T));
  }
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  const int n = static_cast<int>(count);
  const Grid grid{static_cast<int>(tiles)};
  T* in = library::mutable_ptr(input);
  T* scratch = static_cast<T*>(ws.scratch());
  detail::with_op_and_block<KernelOps>(op, plan.block, [&](auto op_constant, auto block_constant) {
    constexpr std::int32_t OP = decltype(op_constant)::value, B = decltype(block_constant)::value;
    switch (plan.algorithm) {
      case Algorithm::push:
        kernels::ccl_all_reduce_push<T, OP, B>::launch(grid, ctx, in, output, n, scratch, ws.flags(), ws.sync(),
                                                        stream);
        break;
      case Algorithm::two_shot:
        kernels::ccl_all_reduce_two_shot<T, OP, B>::launch(grid, ctx, in, output, n, static_cast<int>(chunk),
                                                            ws.sync(), stream);
        break;
      case Algorithm::ring:
        kernels::ccl_all_reduce_ring<T, OP, B>::launch(grid, ctx, in, output, n, static_cast<int>(chunk), scratch,
                                                        ws.flags(), ws.sync(), stream);
        break;
      default:
        kernels::ccl_all_reduce_one_shot<T, OP, B>::launch(grid, ctx, in, output, n, ws.sync(), stream);
        break;
    }
  });
}

// output (count elements) = the ranks' inputs of count / W elements each, rank
// p's in block p.
template <class T>
void all_gather(Workspace& ws, const T* input, T* output, std::size_t count, Stream stream = {},
                const Config& config = {}) {
  IRIS_CCL_ELEMENT_CHECK(T);
  detail::exchange<kernels::ccl_all_gather_push, kernels::ccl_all_gather_one_shot>(
      ws, {"iris::ccl::all_gather", Collective::all_gather, detail::type_name<T>(), sizeof(T), count}, input,
      count / static_cast<std::size_t>(ws.rank().world_size()), output, stream, config);
}

// Rank r's output (count / W elements) = block r of the ranks' inputs (count
// elements each), reduced over the ranks.
template <class T>
void reduce_scatter(Workspace& ws, const T* input, T* output, std::size_t count, Op op = Op::sum, Stream stream = {},
                    const Config& config = {}) {
  IRIS_CCL_ELEMENT_CHECK(T);
  Rank& rank = ws.rank();
  const int world = rank.world_size();
  const std::size_t block = count / static_cast<std::size_t>(world);
  const detail::Call call{"iris::ccl::reduce_scatter", Collective::reduce_scatter, detail::type_name<T>(), sizeof(T),
                          count, op};
  const detail::Plan plan = detail::agreed_plan(
      ws, call, config, true,
      [&](const detail::Plan& p) {
        return std::array<detail::Buffer, 2>{
            {{"input", input, count, p.algorithm == Algorithm::one_shot}, {"output", output, block, false}}};
      },
      [&](const detail::Plan& p) { return p.algorithm == Algorithm::push ? count : 0; });
  const auto rerun = [&](const Config& c) { reduce_scatter(ws, input, output, count, op, stream, c); };
  if (const std::optional<Config> chosen = detail::tuned(rank, call, config, true, stream, rerun)) {
    return rerun(*chosen);
  }
  if (count == 0) return;
  const std::int64_t tiles = library::ceil_div(static_cast<std::int64_t>(block), plan.block);
  if (plan.algorithm == Algorithm::push) ws.reserve(call.op, static_cast<std::size_t>(world * tiles), count * sizeof(T));
  ws.count_call();
  const DeviceContext ctx = rank.device_context();
  const int n = static_cast<int>(block);
  const Grid grid{static_cast<int>(tiles)};
  detail::with_op_and_block<KernelOps>(op, plan.block, [&](auto op_constant, auto block_constant) {
    constexpr std::int32_t OP = decltype(op_constant)::value, B = decltype(block_constant)::value;
    if (plan.algorithm == Algorithm::push) {
      kernels::ccl_reduce_scatter_push<T, OP, B>::launch(grid, ctx, library::mutable_ptr(input), output, n,
                                                          static_cast<T*>(ws.scratch()), ws.flags(), ws.sync(),
                                                          stream);
    } else {
      kernels::ccl_reduce_scatter_one_shot<T, OP, B>::launch(grid, ctx, library::mutable_ptr(input), output, n,
                                                              ws.sync(), stream);
    }
  });
}

// Block q of this rank's input (count / W of its count elements) lands in
// block rank() of rank q's output (count elements).
template <class T>
void all_to_all(Workspace& ws, const T* input, T* output, std::size_t count, Stream stream = {},
                const Config& config = {}) {
  IRIS_CCL_ELEMENT_CHECK(T);
  detail::exchange<kernels::ccl_all_to_all_push, kernels::ccl_all_to_all_one_shot>(
      ws, {"iris::ccl::all_to_all", Collective::all_to_all, detail::type_name<T>(), sizeof(T), count}, input, count,
      output, stream, config);
}

// Every rank's buffer (count elements) becomes root's.
template <class T>
void broadcast(Workspace& ws, T* buffer, std::size_t count, int root, Stream stream = {}, const Config& config = {}) {
  IRIS_CCL_ELEMENT_CHECK(T);
  Rank& rank = ws.rank();
  detail::Call call{"iris::ccl::broadcast", Collective::broadcast, detail::type_name<T>(), sizeof(T), count};
  call.root = root;
  const detail::Plan plan = detail::agreed_plan(
      ws, call, config, false,
      [&](const detail::Plan&) { return std::array<detail::Buffer, 1>{{{"buffer", buffer, count, true}}}; },
      [](const detail::Plan&) { return std::size_t(0); });
  // (Repeatable: the root's buffer does not change.)
  const auto rerun = [&](const Config& c) { broadcast(ws, buffer, count, root, stream, c); };
  if (const std::optional<Config> chosen = detail::tuned(rank, call, config, true, stream, rerun)) {
    return rerun(*chosen);
  }
  if (count == 0) return;
  ws.count_call();
  const int n = static_cast<int>(count);
  detail::with_block(plan.block, [&](auto block_constant) {
    constexpr std::int32_t B = decltype(block_constant)::value;
    auto launch = plan.algorithm == Algorithm::push ? &kernels::ccl_broadcast_push<T, B>::launch
                                                    : &kernels::ccl_broadcast_one_shot<T, B>::launch;
    launch(detail::grid_of(n, B), rank.device_context(), buffer, n, root, ws.sync(), stream);
  });
}

// Completes on a rank once every rank has made the call (a device barrier in
// stream order: no host wait).
inline void barrier(Workspace& ws, Stream stream = {}, const Config& config = {}) {
  Rank& rank = ws.rank();
  const detail::Call call{"iris::ccl::barrier", Collective::barrier, "-", 1, 0};
  (void)detail::agreed_plan(
      ws, call, config, false, [](const detail::Plan&) { return std::array<detail::Buffer, 0>{}; },
      [](const detail::Plan&) { return std::size_t(0); });
  ws.count_call();
  kernels::ccl_barrier::launch({1}, rank.device_context(), ws.sync(), stream);
}

#undef IRIS_CCL_ELEMENT_CHECK

}  // inline namespace ccl_checked / ccl_unchecked

}  // namespace iris::ccl
