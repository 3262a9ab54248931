// Calls of iris::ccl replayed with the same launch arguments, which is what a
// CUDA graph does: a sequence of calls is made once, then run again and again
// with other inputs written between the runs, every run checked against a
// reference computed here on the host. Since no argument changes, only the
// epochs that the kernels advance on the device (begin_epoch and finish of
// iris/ccl.iris) keep the runs apart: a run whose epoch did not advance would
// find the flags and finish()'s words of the run before already set, and
// reduce stale scratch data or end before its peers.
//
// On the GPU (IRIS_GPU) the first run is the calls themselves on a stream of
// the rank's, the next ones replays of a graph captured from the same calls
// (hipStreamBeginCapture, thread-local mode: every rank is a thread of this
// process capturing its own stream), each followed by hipStreamSynchronize. On
// the CPU, which has no graphs, every run makes the calls again: the same
// launches with the same arguments. Built plain and checked (the race detector
// reports a run that overlaps the one before on the CPU).
//
// The calls, on f32 values that stay exact (small integers; sums of at most 8
// ranks' values), with algorithms whose waits compare with the epoch:
//   all_reduce  push      y = sum over ranks of x          (flags, scratch)
//   all_gather  one_shot  g = the ranks' y[0 .. n / W)
//   all_reduce  ring      h = sum over ranks of g          (flags, scratch)
//   broadcast   push      x = rank W-1's x
//
//   ccl_host_graph [ranks...]   (default 1 2 3 4) prints "<checks> checks, <failures> failure(s)"
#include <iris/ccl.hpp>

#include "sample.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

using iris::ccl::Algorithm;
using iris::ccl::Op;

constexpr std::size_t kCount = 840;  // elements of x, y, g, h: a multiple of 1 .. 8 ranks, not of the tile
constexpr int kRuns = 5;              // the calls, then 4 replays

std::mutex report_lock;  // ranks are threads
int failures = 0;
long checks = 0;

// Element j of rank p's x in run `run`: other values in every run.
float input_of(int p, std::size_t j, int run) {
  return static_cast<float>(static_cast<int>((p * 7 + j * 3 + static_cast<std::size_t>(run) * 5) % 23) - 11);
}

void expect(const std::string& what, int rank, const std::vector<float>& got, const std::vector<float>& want) {
  std::lock_guard<std::mutex> lock(report_lock);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ++checks;
    if (got[i] == want[i]) continue;
    if (failures++ < 40) {
      std::fprintf(stderr, "FAILED %s: rank %d, element %zu = %g, expected %g\n", what.c_str(), rank, i,
                   static_cast<double>(got[i]), static_cast<double>(want[i]));
    }
  }
}

iris::ccl::Config forced(Algorithm a) {
  iris::ccl::Config config;
  config.algorithm = a;
  config.block = 256;  // several program instances per call
  return config;
}

void test(iris::Rank& rank) {
  const int me = rank.rank(), world = rank.world_size();
  const std::size_t block = kCount / static_cast<std::size_t>(world);
  iris::Workspace ws(rank);
  float* x = rank.allocate<float>(kCount);
  float* y = rank.allocate<float>(kCount);
  float* g = rank.allocate<float>(kCount);
  float* h = rank.allocate<float>(kCount);
#if IRIS_GPU
  hipStream_t stream = nullptr;
  sample::gpu_check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreate");
#else
  const iris::Stream stream{};
#endif
  const auto calls = [&] {
    iris::ccl::all_reduce(ws, x, y, kCount, Op::sum, stream, forced(Algorithm::push));
    iris::ccl::all_gather(ws, y, g, kCount, stream, forced(Algorithm::one_shot));
    iris::ccl::all_reduce(ws, g, h, kCount, Op::sum, stream, forced(Algorithm::ring));
    iris::ccl::broadcast(ws, x, kCount, world - 1, stream, forced(Algorithm::push));
  };
#if IRIS_GPU
  hipGraphExec_t replay = nullptr;
#endif
  for (int run = 0; run < kRuns; ++run) {
    std::vector<float> mine(kCount);
    for (std::size_t j = 0; j < kCount; ++j) mine[j] = input_of(me, j, run);
    sample::to_device(x, mine.data(), kCount);
    rank.barrier();  // every rank's x is written before any rank's run reads it (or broadcasts into it)
#if IRIS_GPU
    if (run == 0) {
      calls();  // outside the capture: the workspace grows here, which synchronises the device
      hipGraph_t graph = nullptr;
      sample::gpu_check(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal), "hipStreamBeginCapture");
      calls();
      sample::gpu_check(hipStreamEndCapture(stream, &graph), "hipStreamEndCapture");
      sample::gpu_check(hipGraphInstantiateWithFlags(&replay, graph, 0), "hipGraphInstantiate");
      sample::gpu_check(hipGraphDestroy(graph), "hipGraphDestroy");
    } else {
      sample::gpu_check(hipGraphLaunch(replay, stream), "hipGraphLaunch");
    }
    sample::gpu_check(hipStreamSynchronize(stream), "hipStreamSynchronize");
#else
    calls();
#endif
    // The reference, from the inputs of this run.
    std::vector<float> sum(kCount), gathered(kCount), summed(kCount), root(kCount);
    for (std::size_t j = 0; j < kCount; ++j) {
      for (int p = 0; p < world; ++p) sum[j] += input_of(p, j, run);
      root[j] = input_of(world - 1, j, run);
    }
    for (std::size_t j = 0; j < kCount; ++j) {
      gathered[j] = sum[j % block];
      summed[j] = static_cast<float>(world) * gathered[j];  // every rank's g is the same
    }
    const std::string what = "run " + std::to_string(run) + " on " + std::to_string(world) + " rank(s): ";
    expect(what + "all_reduce push", me, sample::read(y, kCount), sum);
    expect(what + "all_gather one_shot", me, sample::read(g, kCount), gathered);
    expect(what + "all_reduce ring", me, sample::read(h, kCount), summed);
    expect(what + "broadcast push", me, sample::read(x, kCount), root);
    rank.barrier();  // every rank has read its outputs before any rank's next run writes into them
  }
#if IRIS_GPU
  sample::gpu_check(hipGraphExecDestroy(replay), "hipGraphExecDestroy");
  sample::gpu_check(hipStreamDestroy(stream), "hipStreamDestroy");
#endif
  rank.free(h);
  rank.free(g);
  rank.free(y);
  rank.free(x);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> worlds;
  for (int i = 1; i < argc; ++i) worlds.push_back(std::atoi(argv[i]));
  if (worlds.empty()) worlds = {1, 2, 3, 4};
  for (int world : worlds) {
    try {
      iris::run_threads(world, 1 << 22, test);
    } catch (const iris::Error& e) {  // a checked-mode report, or a hang
      std::fprintf(stderr, "FAILED on %d rank(s): iris::Error: %s\n", world, e.what());
      ++failures;
      break;
    }
  }
  std::printf("%ld checks, %d failure(s)\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
