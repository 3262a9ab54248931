// The host collectives (iris/ccl.hpp, iris::ccl) on the CPU target: every
// collective with every element type, reduction and algorithm (and the
// automatic choice, and in place where allowed), with 1, 2, 3, 4 and 8 ranks,
// each result against the collective computed here on the host from its
// definition, never from a kernel's output. Then the completion semantics: a
// chain of calls that feed each other, with no host barrier and no comparison
// of the calls between them (so that only the kernels' finish() orders the
// ranks), run twice on the same buffers, and a barrier that a late rank holds.
// Built twice: plain and with the checked kernels (IRIS_CCL_CHECKED), whose
// race detector reports any access of one rank racing with another's, a
// missing completion included. tests/gpu builds the same source for one GPU
// (nvcc): heap memory is device memory there, so the host fills and reads it
// with copies (sample.hpp), and the ranks are threads or, with
// IRIS_CCL_TEST_MPI, the processes of mpirun. tests/CMakeLists.txt builds
// that for the CPU too (iris_runtime_cpu_mpi) and runs it on 2 fake nodes of 2:
// there the algorithms that load from peers must refuse the call (an
// iris::Error on every rank, counted as a check) and the others run across
// nodes.
//
//   ccl_host_validation [ranks...]   (default 1 2 3 4 8; under mpirun: mpirun's)
//   prints "<checks> checks, <failures> failure(s)"
//
// Element j of rank r's input is value_of(r, j): small integers, so that sums
// over 8 ranks are exact in every type (bf16 holds integers up to 256) and
// results compare exactly. Counts are odd and not multiples of the tile size,
// so last tiles are masked and two_shot's and the ring's chunks are uneven.
// Buffers are padded and poisoned past their end, so a write past it shows.
// First of all, the selection table gives every call a usable algorithm.
#include <iris/ccl.hpp>

#include "sample.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using iris::ccl::Algorithm;
using iris::ccl::Op;

constexpr std::size_t kPad = 64;   // poisoned elements past every buffer
constexpr double kPoison = 1024;   // exact in every type tested, and no value_of
constexpr std::size_t kBlockCount = 301;  // elements per rank's block (all_gather, reduce_scatter, all_to_all)
constexpr std::size_t kReduceCount = 613; // all_reduce's and broadcast's count

std::mutex report_lock;  // ranks are threads
int failures = 0;
long checks = 0;

std::int64_t value_of(int rank, std::int64_t j) { return (rank * 37 + j * 11) % 29 - 14; }

std::int64_t combine(Op op, std::int64_t a, std::int64_t b) {
  return op == Op::sum ? a + b : op == Op::max ? std::max(a, b) : std::min(a, b);
}

// value(p) reduced over the ranks, in rank order.
std::int64_t reduce(Op op, int world, const std::function<std::int64_t(int)>& value) {
  std::int64_t acc = value(0);
  for (int p = 1; p < world; ++p) acc = combine(op, acc, value(p));
  return acc;
}

// got[0 .. want.size()) against want, and the padding after it still poisoned.
template <class T>
void expect(const std::string& what, int rank, const T* heap, const std::vector<std::int64_t>& want) {
  const std::vector<T> got = sample::read(heap, want.size() + kPad);
  std::lock_guard<std::mutex> lock(report_lock);
  for (std::size_t i = 0; i < want.size() + kPad; ++i) {
    ++checks;
    const double expected = i < want.size() ? static_cast<double>(want[i]) : kPoison;
    const double value = static_cast<double>(static_cast<float>(got[i]));
    if (value == expected) continue;
    if (failures++ < 40) {
      std::fprintf(stderr, "FAILED %s: rank %d, element %zu = %g, expected %g\n", what.c_str(), rank, i, value,
                   expected);
    }
  }
}

// `count` elements of `value`, then the poisoned padding.
template <class T>
void fill(T* heap, std::size_t count, const std::function<double(std::int64_t)>& value) {
  std::vector<T> staging(count + kPad);
  for (std::size_t i = 0; i < count + kPad; ++i)
    staging[i] = T(static_cast<float>(i < count ? value(static_cast<std::int64_t>(i)) : kPoison));
  sample::to_device(heap, staging.data(), staging.size());
}

double poison(std::int64_t) { return kPoison; }

// The buffers of one rank, in the symmetric heap (so that every algorithm may
// take them), reused by every case of a type. Freed by release(), not by a
// destructor: Rank::free throws once another rank has failed, and a
// destructor must not throw while that failure unwinds the stack.
template <class T>
struct Buffers {
  iris::Rank& rank;
  std::size_t elements;
  T* input = rank.allocate<T>(elements + kPad);
  T* output = rank.allocate<T>(elements + kPad);
  void release() {
    rank.free(output);
    rank.free(input);
  }
};

// Every rank's buffers are written before any rank's call, and every rank's
// call is done before any check.
template <class Call>
void collective(iris::Rank& rank, Call&& call) {
  rank.barrier();
  call();
  rank.barrier();
}

// "all_reduce f32 push on 3 rank(s)"; `type` may be empty (already in `collective`).
std::string label(const std::string& collective, const std::string& type, Algorithm a, int world) {
  return collective + (type.empty() ? "" : " " + type) + " " + iris::ccl::name_of(a) + " on " +
         std::to_string(world) + " rank(s)";
}

constexpr Algorithm kAllReduceAlgorithms[] = {Algorithm::automatic, Algorithm::one_shot, Algorithm::push,
                                              Algorithm::two_shot, Algorithm::ring};
constexpr Algorithm kOtherAlgorithms[] = {Algorithm::automatic, Algorithm::one_shot, Algorithm::push};
constexpr Op kOps[] = {Op::sum, Op::max, Op::min};

// Whether the world's ranks are on several nodes, where only the algorithms
// that cross nodes run (iris::ccl::crosses_nodes).
bool several_nodes(const iris::Rank& rank) { return rank.device_context().node_size < rank.world_size(); }

// The call under algorithm a: on several nodes, one that does not cross them
// must throw on every rank, before anything is launched (and then nothing is
// checked but the error). Returns whether the call ran.
template <class Call>
bool call_or_refusal(iris::Rank& rank, iris::ccl::Collective c, Algorithm a, const std::string& what, Call&& call) {
  if (!several_nodes(rank) || a == Algorithm::automatic || iris::ccl::crosses_nodes(c, a)) {
    collective(rank, call);
    return true;
  }
  std::string error;
  rank.barrier();
  try {
    call();
  } catch (const iris::Error& e) {
    error = e.what();
  }
  std::lock_guard<std::mutex> lock(report_lock);
  ++checks;
  if (error.find("only ranks of one node share") == std::string::npos && failures++ < 40) {
    std::fprintf(stderr, "FAILED %s: rank %d, expected the refusal of an algorithm that does not cross nodes, got '%s'\n",
                 what.c_str(), rank.rank(), error.c_str());
  }
  return false;
}

// A forced algorithm runs with small tiles, so that calls have several program
// instances; the automatic choice with the table's.
iris::ccl::Config config_of(Algorithm a) {
  iris::ccl::Config config;
  config.algorithm = a;
  config.block = a == Algorithm::automatic ? 0 : 256;
  return config;
}

template <class T>
void test_all_reduce(iris::Workspace& ws, Buffers<T>& b, const char* type) {
  iris::Rank& rank = ws.rank();
  const int me = rank.rank(), world = rank.world_size();
  for (Op op : kOps) {
    std::vector<std::int64_t> want;
    for (std::size_t j = 0; j < kReduceCount; ++j)
      want.push_back(reduce(op, world, [&](int p) { return value_of(p, static_cast<std::int64_t>(j)); }));
    for (Algorithm a : kAllReduceAlgorithms) {
      const std::string what = label("all_reduce", type, a, world) + " " + iris::ccl::name_of(op);
      fill(b.input, kReduceCount, [&](std::int64_t j) { return value_of(me, j); });
      fill(b.output, kReduceCount, poison);
      if (!call_or_refusal(rank, iris::ccl::Collective::all_reduce, a, what, [&] {
            iris::ccl::all_reduce(ws, b.input, b.output, kReduceCount, op, {}, config_of(a));
          }))
        continue;
      expect(what, me, b.output, want);
      if (a != Algorithm::automatic && !iris::ccl::works_in_place(iris::ccl::Collective::all_reduce, a)) continue;
      fill(b.output, kReduceCount, [&](std::int64_t j) { return value_of(me, j); });
      collective(rank, [&] { iris::ccl::all_reduce(ws, b.output, b.output, kReduceCount, op, {}, config_of(a)); });
      expect(what + " in place", me, b.output, want);
    }
  }
}

// Every algorithm but all_reduce's: this rank's input of in_count elements
// (value_of), its output poisoned, the call, the output against want.
template <class T, class Call>
void each_algorithm(iris::Rank& rank, iris::ccl::Collective c, Buffers<T>& b, const std::string& what,
                    std::size_t in_count, std::size_t out_count, const std::vector<std::int64_t>& want, Call&& call) {
  const int me = rank.rank();
  for (Algorithm a : kOtherAlgorithms) {
    fill(b.input, in_count, [&](std::int64_t k) { return value_of(me, k); });
    fill(b.output, out_count, poison);
    const std::string labelled = label(what, "", a, rank.world_size());
    if (call_or_refusal(rank, c, a, labelled, [&] { call(config_of(a)); })) expect(labelled, me, b.output, want);
  }
}

template <class T>
void test_reduce_scatter(iris::Workspace& ws, Buffers<T>& b, const char* type) {
  iris::Rank& rank = ws.rank();
  const int me = rank.rank(), world = rank.world_size();
  const std::size_t count = kBlockCount * static_cast<std::size_t>(world);
  for (Op op : kOps) {
    std::vector<std::int64_t> want;
    for (std::size_t j = 0; j < kBlockCount; ++j) {
      want.push_back(
          reduce(op, world, [&](int p) { return value_of(p, static_cast<std::int64_t>(me * kBlockCount + j)); }));
    }
    each_algorithm(rank, iris::ccl::Collective::reduce_scatter, b, std::string("reduce_scatter ") + iris::ccl::name_of(op) + " " + type, count, kBlockCount,
                   want, [&](const iris::ccl::Config& config) {
                     iris::ccl::reduce_scatter(ws, b.input, b.output, count, op, {}, config);
                   });
  }
}

template <class T>
void test_all_gather(iris::Workspace& ws, Buffers<T>& b, const char* type) {
  iris::Rank& rank = ws.rank();
  const int world = rank.world_size();
  const std::size_t count = kBlockCount * static_cast<std::size_t>(world);
  std::vector<std::int64_t> want;
  for (int p = 0; p < world; ++p)
    for (std::size_t j = 0; j < kBlockCount; ++j) want.push_back(value_of(p, static_cast<std::int64_t>(j)));
  each_algorithm(rank, iris::ccl::Collective::all_gather, b, std::string("all_gather ") + type, kBlockCount, count, want,
                 [&](const iris::ccl::Config& config) { iris::ccl::all_gather(ws, b.input, b.output, count, {}, config); });
}

template <class T>
void test_all_to_all(iris::Workspace& ws, Buffers<T>& b, const char* type) {
  iris::Rank& rank = ws.rank();
  const int me = rank.rank(), world = rank.world_size();
  const std::size_t count = kBlockCount * static_cast<std::size_t>(world);
  std::vector<std::int64_t> want;  // block p: block me of rank p's input
  for (int p = 0; p < world; ++p)
    for (std::size_t j = 0; j < kBlockCount; ++j)
      want.push_back(value_of(p, static_cast<std::int64_t>(me * kBlockCount + j)));
  each_algorithm(rank, iris::ccl::Collective::all_to_all, b, std::string("all_to_all ") + type, count, count, want,
                 [&](const iris::ccl::Config& config) { iris::ccl::all_to_all(ws, b.input, b.output, count, {}, config); });
}

template <class T>
void test_broadcast(iris::Workspace& ws, Buffers<T>& b, const char* type) {
  iris::Rank& rank = ws.rank();
  const int me = rank.rank(), world = rank.world_size();
  for (int root : {0, world - 1}) {
    std::vector<std::int64_t> want;
    for (std::size_t j = 0; j < kReduceCount; ++j) want.push_back(value_of(root, static_cast<std::int64_t>(j)));
    for (Algorithm a : kOtherAlgorithms) {
      fill(b.output, kReduceCount, [&](std::int64_t j) { return value_of(me, j); });
      const std::string what = label("broadcast", type, a, world) + " from root " + std::to_string(root);
      if (call_or_refusal(rank, iris::ccl::Collective::broadcast, a, what, [&] {
            iris::ccl::broadcast(ws, b.output, kReduceCount, root, {}, config_of(a));
          }))
        expect(what, me, b.output, want);
    }
  }
}

template <class T>
void test_type(iris::Workspace& ws, const char* type) {
  Buffers<T> b{ws.rank(), std::max(kReduceCount, kBlockCount * static_cast<std::size_t>(ws.rank().world_size()))};
  test_all_reduce(ws, b, type);
  test_reduce_scatter(ws, b, type);
  test_all_gather(ws, b, type);
  test_all_to_all(ws, b, type);
  test_broadcast(ws, b, type);
  b.release();
}

// Calls that feed each other on f32 data, one after the other with no host
// barrier and without comparing the calls (a host rendezvous): every call
// reads what the one before wrote on other ranks, and overwrites what the one
// before read there, so a rank that ran ahead of another's part would read
// stale data or clobber live data (and the race detector would see it). The
// values stay exact in f32 (W³ × 112 at most). Twice, on the same buffers.
// On several nodes, the algorithms that load from peers give way to push and
// the ring.
void test_back_to_back(iris::Workspace& ws) {
  iris::Rank& rank = ws.rank();
  const int me = rank.rank(), world = rank.world_size();
  const std::size_t count = kBlockCount * static_cast<std::size_t>(world);
  Buffers<float> b{rank, count};
  const bool across = several_nodes(rank);
  auto config = [across](Algorithm a) {
    if (across && a == Algorithm::one_shot) a = Algorithm::push;
    if (across && a == Algorithm::two_shot) a = Algorithm::ring;
    iris::ccl::Config c = config_of(a);
    c.compare_calls = false;
    return c;
  };
  const std::int64_t w = world;
  auto total = [&](std::int64_t j) { return reduce(Op::sum, world, [&](int p) { return value_of(p, j); }); };
  std::vector<std::int64_t> want;  // after the chain: block p of rank W-1's y, on every rank
  for (int p = 0; p < world; ++p)
    for (std::size_t j = 0; j < kBlockCount; ++j)
      want.push_back(w * w * w * total(static_cast<std::int64_t>((world - 1) * kBlockCount + j)));
  for (int round = 0; round < 2; ++round) {
    float* x = b.input;
    float* y = b.output;
    fill(x, count, [&](std::int64_t j) { return value_of(me, j); });
    fill(y, count, poison);
    rank.barrier();
    iris::ccl::all_reduce(ws, x, y, count, Op::sum, {}, config(Algorithm::one_shot));  // y = S
    iris::ccl::all_reduce(ws, y, x, count, Op::sum, {}, config(Algorithm::push));      // x = W S
    iris::ccl::all_reduce(ws, x, y, count, Op::sum, {}, config(Algorithm::two_shot));  // y = W² S
    iris::ccl::all_reduce(ws, y, x, count, Op::sum, {}, config(Algorithm::ring));      // x = W³ S
    iris::ccl::reduce_scatter(ws, x, y, count, Op::max, {}, config(Algorithm::push));  // y: block me of x
    iris::ccl::all_gather(ws, y, x, count, {}, config(Algorithm::one_shot));           // x = W³ S again
    iris::ccl::all_to_all(ws, x, y, count, {}, config(Algorithm::push));  // y: W copies of block me of x
    iris::ccl::broadcast(ws, y, count, world - 1, {}, config(Algorithm::one_shot));  // rank W-1's y
    iris::ccl::barrier(ws, {}, config_of(Algorithm::one_shot));
    rank.barrier();
    expect("back to back, round " + std::to_string(round) + " on " + std::to_string(world) + " rank(s)", me, y,
           want);
  }
  b.release();
}

// barrier: rank 0 arrives late (after a sleep, having set a flag in its heap
// to 1); no rank may leave the call before it has arrived, so every rank reads
// the flag as 1 after the call (through rank 0's heap: ranks may be processes;
// the ranks of rank 0's node, whose heap takes host reads).
// Without the comparison of the calls (a host rendezvous), only the kernel's
// finish() holds the ranks.
void test_barrier(iris::Workspace& ws) {
  iris::Rank& rank = ws.rank();
  iris::ccl::Config config;
  config.compare_calls = false;
  std::int32_t* arrived = rank.allocate<std::int32_t>(1);
  sample::fill(arrived, std::int32_t{0}, 1);
  rank.barrier();
  if (rank.rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sample::fill(arrived, std::int32_t{1}, 1);
  }
  iris::ccl::barrier(ws, {}, config);
  if (rank.device_context().node_first != 0) {  // rank 0 is far: its heap takes no host reads
    rank.barrier();
    rank.free(arrived);
    return;
  }
  // On the GPU the read waits for the barrier's kernel: the same stream.
  const bool late_seen = sample::read(rank.translate(arrived, 0), 1)[0] == 1;
  {
    std::lock_guard<std::mutex> lock(report_lock);
    ++checks;
    if (!late_seen && failures++ < 40) {
      std::fprintf(stderr, "FAILED barrier on %d rank(s): rank %d left before rank 0 arrived\n", rank.world_size(),
                   rank.rank());
    }
  }
  rank.barrier();  // every rank has read the flag
  rank.free(arrived);
}

// The selection table: for every collective, world size, element size and
// message size (in place too, for all_reduce), a row matches, with an
// algorithm the collective has (and that works in place where it must) and a
// compiled tile; on several nodes, an algorithm that crosses them.
void test_selection() {
  using iris::ccl::Collective;
  for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                       Collective::all_to_all, Collective::broadcast, Collective::barrier}) {
    for (int world = 1; world <= 16; ++world) {
      for (std::size_t element : {2, 4, 8}) {
        for (std::size_t bytes = 0; bytes <= (std::size_t{16} << 30); bytes = bytes * 2 + 512) {
          for (bool in_place : {false, c == Collective::all_reduce})
          for (bool across : {false, world > 1}) {
            const iris::ccl::Selection row = iris::ccl::select(c, world, element, bytes, in_place, across);
            const bool matches = row.collective == c && world <= row.max_world && bytes <= row.max_bytes;
            const bool usable = iris::ccl::offers(c, row.algorithm) &&
                                (!in_place || iris::ccl::works_in_place(c, row.algorithm)) &&
                                (!across || iris::ccl::crosses_nodes(c, row.algorithm)) &&
                                std::find(std::begin(iris::ccl::kBlocks), std::end(iris::ccl::kBlocks), row.block) !=
                                    std::end(iris::ccl::kBlocks);
            ++checks;
            if (matches && usable) continue;
            if (failures++ < 40) {
              std::fprintf(stderr, "FAILED selection: %s on %d rank(s), %zu-byte elements, %zu bytes%s%s: %s, block %d\n",
                           iris::ccl::name_of(c), world, element, bytes, in_place ? " in place" : "",
                           across ? " across nodes" : "", iris::ccl::name_of(row.algorithm), row.block);
            }
          }
        }
      }
    }
  }
}

// Every test on one world of ranks.
void test_world(iris::Rank& rank) {
  iris::Workspace ws(rank);
  test_barrier(ws);
  test_type<float>(ws, "f32");
  test_type<iris::bfloat16>(ws, "bf16");
  test_type<iris::half>(ws, "f16");
  test_type<std::int32_t>(ws, "i32");
  test_type<std::int64_t>(ws, "i64");
  test_back_to_back(ws);
}

}  // namespace

int main(int argc, char** argv) {
  test_selection();
  constexpr std::size_t kHeapBytes = 1 << 22;
#if IRIS_CCL_TEST_MPI
  (void)argc;
  (void)argv;
  try {
    iris::run_mpi(kHeapBytes, test_world);
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "FAILED: iris::Error: %s\n", e.what());
    ++failures;
  }
#else
  std::vector<int> worlds;
  for (int i = 1; i < argc; ++i) worlds.push_back(std::atoi(argv[i]));
  if (worlds.empty()) worlds = {1, 2, 3, 4, 8};
  for (int world : worlds) {
    try {
      iris::run_threads(world, kHeapBytes, test_world);
    } catch (const iris::Error& e) {  // a checked-mode report, or a hang: the other worlds would only repeat it
      std::fprintf(stderr, "FAILED on %d rank(s): iris::Error: %s\n", world, e.what());
      ++failures;
      break;
    }
  }
#endif
  std::printf("%ld checks, %d failure(s)\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
