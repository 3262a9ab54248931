// GPU smoke test of the Iris runtime (no irisc needed): run it on a machine with a
// GPU after building here. Exit status 0: pass; 1: fail; 77: no usable GPU (ctest
// counts that as skipped).
//
//   iris_gpu_smoke [--ranks N]   (default 2; ranks are placed round-robin on the GPUs,
//                                 so on one GPU they all share it)
//     1. raw: two heaps on GPU 0 built by hand, two DeviceContexts, two kernels on
//        two streams: rank 0 stores through translate() into rank 1's heap and
//        raises a flag (release, system scope); rank 1, launched first, waits for it
//        (acquire) and copies the payload. Checked on the host.
//     2. run_threads with N ranks: put (translate + store to the next rank), remote
//        atomics (every block of every rank adds to one counter on rank 0), a ring
//        of signals (signal_set / wait_until), and 200 rounds of the device barrier
//        over 8 program instances with a write-barrier-read-barrier pattern that
//        fails if the barrier lets anybody through early or does not order memory.
//   iris_gpu_smoke --abort
//        rank 1 throws on the host while rank 0's kernel waits for it forever:
//        run_threads must rethrow rank 1's error (no hang), and the process exit.
//   iris_gpu_smoke --checked-failure
//        a kernel calls check_rank with a bad rank: the device prints the
//        "file:line: error: ..." line and traps, and Rank::barrier must throw an
//        iris::Error that carries that line. Exits 0 if it did.
//   iris_gpu_smoke --hang [--ranks N]
//        a checked wait (iris::Checked at hang.iris:7) for a flag that nobody
//        sets, on every rank, with IRIS_HANG_TIMEOUT=1: the first to time out
//        reports the hang and traps, and the iris::Error must carry the wait's
//        line, the flag's place and value, and where every rank waits. Exits 0
//        if it did.
//   iris_gpu_smoke --barrier-hang [--ranks N]   (N >= 2)
//        every rank but the last enters a checked device barrier (hang.iris:12)
//        that the last never reaches: the same, with how many ranks arrived.
//   iris_gpu_smoke --report-without-end
//        a kernel writes a checked-mode report and, instead of trapping, runs
//        on for 6 s, as one process's kernel seemed to under mpirun
//        (docs/gpu.md): the Rank::barrier must throw, after
//        World::kTrapGrace, an iris::Error that says so and carries the report.
#include <iris/kernel.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "FAIL: %s: %s\n", what, hipGetErrorString(e));
    std::exit(1);
  }
}

// Host access to heap memory goes through the rank's own stream: the legacy null
// stream (plain hipMemset/hipMemcpy) would wait for the kernels of every rank on
// the GPU, including kernels that wait for this rank.
void zero(void* p, std::size_t bytes) {
  check(hipMemsetAsync(p, 0, bytes, hipStreamPerThread), "hipMemsetAsync");
  check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
}
template <class T>
T read(const T* p) {
  T value{};
  check(hipMemcpyAsync(&value, p, sizeof(T), hipMemcpyDeviceToHost, hipStreamPerThread), "hipMemcpyAsync");
  check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
  return value;
}

// ------------------------------------------------------------------ 1. raw

__global__ void raw_send(iris::DeviceContext ctx, int* payload, int* flag, int n) {
  int* remote = iris::translate(payload, 1, ctx);
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) remote[i] = 7 * i + 1;
  __syncthreads();
  if (threadIdx.x == 0) iris::signal_set<iris::Sem::release, iris::Scope::sys>(iris::translate(flag, 1, ctx), 1);
}

__global__ void raw_receive(iris::DeviceContext, const int* payload, int* flag, int* out, int n) {
  if (threadIdx.x == 0) iris::wait_until<iris::Sem::acquire, iris::Scope::sys>(flag, iris::Cmp::eq, 1);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) out[i] = payload[i];
}

void raw_test() {
  constexpr std::size_t heap = std::size_t{4} << 20;
  constexpr int n = 4096;
  check(hipSetDevice(0), "hipSetDevice");
  char* heaps[2];
  for (auto& h : heaps) {
    check(hipMalloc(&h, heap + iris::detail::kRuntimeAreaBytes), "hipMalloc heap");
    check(hipMemset(h, 0, heap + iris::detail::kRuntimeAreaBytes), "hipMemset heap");
  }
  char** table = nullptr;
  check(hipMalloc(&table, sizeof heaps), "hipMalloc table");
  check(hipMemcpy(table, heaps, sizeof heaps, hipMemcpyHostToDevice), "hipMemcpy table");
  iris::DeviceContext ctx[2];
  for (int r = 0; r < 2; ++r) {
    ctx[r] = {table, heap, r, 2, 0, 2, reinterpret_cast<iris::BarrierState*>(heaps[r] + heap), nullptr};
  }
  // The same offsets in both heaps: payload at 0, flag at 64 KiB, out at 128 KiB.
  auto at = [&](int r, std::size_t off) { return reinterpret_cast<int*>(heaps[r] + off); };
  hipStream_t s0, s1;
  check(hipStreamCreateWithFlags(&s0, hipStreamNonBlocking), "hipStreamCreate");
  check(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking), "hipStreamCreate");
  std::printf("raw: launching\n");
  raw_receive<<<1, 256, 0, s1>>>(ctx[1], at(1, 0), at(1, 65536), at(1, 131072), n);
  raw_send<<<1, 256, 0, s0>>>(ctx[0], at(0, 0), at(0, 65536), n);
  check(hipGetLastError(), "launch");
  check(hipDeviceSynchronize(), "hipDeviceSynchronize (raw)");
  std::vector<int> out(n);
  check(hipMemcpy(out.data(), at(1, 131072), n * sizeof(int), hipMemcpyDeviceToHost), "hipMemcpy out");
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += out[i] != 7 * i + 1;
  expect(wrong == 0, "raw: " + std::to_string(wrong) + " of " + std::to_string(n) + " elements wrong");
  (void)hipStreamDestroy(s0);
  (void)hipStreamDestroy(s1);
  (void)hipFree(table);
  for (char* h : heaps) (void)hipFree(h);
  std::printf("raw translate + signal: %s\n", wrong == 0 ? "ok" : "FAILED");
}

// ------------------------------------------------------------------ 2. runtime
// Kernels in the shape irisc generates: a struct with a static run(program, args...).

struct Put {
  IRIS_DEVICE static void run(const iris::Program& p, int* data, int n) {
    const int me = iris::rank(p), next = (me + 1) % iris::world_size(p);
    int* remote = iris::translate(data, next, p.ctx);
    for (int i = p.id[0] * iris::kThreads + iris::thread_index(); i < n; i += iris::kThreads * p.count[0]) {
      remote[i] = me * 1000000 + i;
    }
  }
};

struct Count {
  IRIS_DEVICE static void run(const iris::Program& p, unsigned long long* counter) {
    iris::single([&] {
      iris::atomic_add<iris::Sem::relaxed, iris::Scope::sys>(iris::translate(counter, 0, p.ctx), 1ull);
    });
  }
};

struct Ring {
  // Every instance raises the flag of its peer on the next rank, then waits for its own.
  IRIS_DEVICE static void run(const iris::Program& p, int* flags, int round) {
    const int next = (iris::rank(p) + 1) % iris::world_size(p);
    iris::single([&] {
      iris::signal_set<iris::Sem::release, iris::Scope::sys>(iris::translate(flags + p.id[0], next, p.ctx), round);
      iris::wait_until<iris::Sem::acquire, iris::Scope::sys>(flags + p.id[0], iris::Cmp::ge, round);
    });
  }
};

struct Barriers {
  // Round k: write k into the next rank's slot, barrier, read my slot (must be k,
  // written by the previous rank before its barrier), barrier (nobody overwrites
  // before everybody has read).
  IRIS_DEVICE static void run(const iris::Program& p, int* slots, int* errors, int rounds) {
    const int next = (iris::rank(p) + 1) % iris::world_size(p);
    for (int k = 1; k <= rounds; ++k) {
      iris::single([&] { *iris::translate(slots + p.id[0], next, p.ctx) = k; });
      iris::device_barrier(p);
      iris::single([&] {
        if (*reinterpret_cast<volatile int*>(slots + p.id[0]) != k) atomicAdd(errors, 1);
      });
      iris::device_barrier(p);
    }
  }
};

struct BadRank {
  IRIS_DEVICE static void run(const iris::Program& p, int r) {
    iris::check_rank(p.ctx, r, "smoke.iris", 42, p.linear_id());
  }
};

void runtime_test(int ranks) {
  constexpr int n = 100000, programs = 8, rounds = 200;
  std::vector<int> errors(static_cast<std::size_t>(ranks));
  iris::run_threads(ranks, std::size_t{64} << 20, [&](iris::Rank& rank) {
    const int me = rank.rank(), world = rank.world_size(), prev = (me + world - 1) % world;
    const iris::DeviceContext ctx = rank.device_context();
    int bad = 0;

    int* data = rank.allocate<int>(n);
    zero(data, n * sizeof(int));
    rank.barrier();
    if (me == 0) std::printf("runtime: %d ranks started\n", world);

    // The persistent grid size, against CUDA's own count for the rank's device.
    int device = -1, sms = 0;
    check(hipGetDevice(&device), "hipGetDevice");
    expect(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess && sms > 0,
           "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    expect(rank.multiprocessor_count() == sms, "multiprocessor_count() " + std::to_string(rank.multiprocessor_count()) +
                                                    ", CUDA says " + std::to_string(sms));
    if (me == 0) std::printf("multiprocessor_count: %d (CUDA: %d)\n", rank.multiprocessor_count(), sms);
    iris::launch_kernel<Put>({64}, {}, ctx, data, n);
    rank.barrier();
    std::vector<int> got(n);
    check(hipMemcpyAsync(got.data(), data, n * sizeof(int), hipMemcpyDeviceToHost, hipStreamPerThread),
          "hipMemcpyAsync");
    check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
    for (int i = 0; i < n; ++i) bad += got[i] != prev * 1000000 + i;
    if (me == 0) std::printf("put (%d ranks): %s\n", world, bad == 0 ? "ok" : "FAILED");

    // The same on a stream of the program's own: Rank::barrier must wait for it too.
    hipStream_t stream = nullptr;
    check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
    zero(data, n * sizeof(int));
    rank.barrier();
    iris::launch_kernel<Put>({64}, stream, ctx, data, n);
    rank.barrier();
    check(hipMemcpyAsync(got.data(), data, n * sizeof(int), hipMemcpyDeviceToHost, hipStreamPerThread),
          "hipMemcpyAsync");
    check(hipStreamSynchronize(hipStreamPerThread), "hipStreamSynchronize");
    int bad_stream = 0;
    for (int i = 0; i < n; ++i) bad_stream += got[i] != prev * 1000000 + i;
    bad += bad_stream;
    check(hipStreamDestroy(stream), "hipStreamDestroy");
    if (me == 0) std::printf("put on a user stream: %s\n", bad_stream == 0 ? "ok" : "FAILED");

    auto* counter = rank.allocate<unsigned long long>(1);
    zero(counter, sizeof *counter);
    rank.barrier();
    iris::launch_kernel<Count>({1000}, {}, ctx, counter);
    rank.barrier();
    if (me == 0) {
      const unsigned long long total = read(counter);
      const bool ok = total == 1000ull * static_cast<unsigned long long>(world);
      bad += !ok;
      std::printf("remote atomic_add: %llu (expected %llu): %s\n", total, 1000ull * world, ok ? "ok" : "FAILED");
    }

    int* flags = rank.allocate<int>(programs);
    zero(flags, programs * sizeof(int));
    rank.barrier();
    for (int round = 1; round <= 20; ++round) iris::launch_kernel<Ring>({programs}, {}, ctx, flags, round);
    rank.barrier();
    if (me == 0) std::printf("signal ring, 20 rounds: done\n");

    int* slots = rank.allocate<int>(programs);
    int* count = rank.allocate<int>(1);
    zero(slots, programs * sizeof(int));
    zero(count, sizeof(int));
    rank.barrier();
    iris::launch_kernel<Barriers>({programs}, {}, ctx, slots, count, rounds);
    iris::launch_kernel<Barriers>({programs}, {}, ctx, slots, count, rounds);  // reuse across kernels
    rank.barrier();
    const int barrier_errors = read(count);
    bad += barrier_errors;
    if (me == 0 || barrier_errors != 0) {
      std::printf("device barrier, %d x 2 rounds x %d programs (rank %d): %s\n", rounds, programs, me,
                  barrier_errors == 0 ? "ok" : "FAILED");
    }
    errors[static_cast<std::size_t>(me)] = bad;
  });
  for (int r = 0; r < ranks; ++r) {
    expect(errors[static_cast<std::size_t>(r)] == 0,
           "runtime: rank " + std::to_string(r) + ": " + std::to_string(errors[static_cast<std::size_t>(r)]) +
               " errors");
  }
}

// A kernel of one program instance that sets *flag.
struct SetFlag {
  IRIS_DEVICE static void run(const iris::Program&, int* flag) {
    iris::single([&] { *flag = 1; });
  }
};

// Launches on a user stream by a caller outside any world (a library, as
// bench/gemm_bench.cpp is) stay tracked only until they are seen finished:
// 3000 launches, the stream synchronised after every 100, never leave more
// than 101 tracked (one per launch ever made before the runtime swept
// finished ones). With a second GPU, launches alternate between the two GPUs'
// streams, so that a finished event of one GPU is never recorded on the
// other's stream (which fails).
void outside_world_test(int devices) {
  const int gpus = devices >= 2 ? 2 : 1;
  std::vector<int*> flags(gpus);
  std::vector<hipStream_t> streams(gpus);
  for (int g = 0; g < gpus; ++g) {
    check(hipSetDevice(g), "hipSetDevice");
    check(hipMalloc(&flags[g], sizeof(int)), "hipMalloc");
    check(hipStreamCreateWithFlags(&streams[g], hipStreamNonBlocking), "hipStreamCreateWithFlags");
  }
  const iris::DeviceContext no_heap{nullptr, 0, 0, 1, 0, 1, nullptr, nullptr};
  std::size_t most = 0;
  for (int i = 0; i < 3000; ++i) {
    const int g = i % gpus;
    check(hipSetDevice(g), "hipSetDevice");
    iris::launch_kernel<SetFlag>({1}, streams[g], no_heap, flags[g]);
    most = std::max(most, iris::detail::tracked_launches());
    if (i % 100 == 99) {
      for (hipStream_t stream : streams) check(hipStreamSynchronize(stream), "hipStreamSynchronize");
    }
  }
  for (int g = 0; g < gpus; ++g) {
    check(hipSetDevice(g), "hipSetDevice");
    check(hipStreamDestroy(streams[g]), "hipStreamDestroy");
    check(hipFree(flags[g]), "hipFree");
  }
  check(hipSetDevice(0), "hipSetDevice");
  expect(most <= 101, "launches on a user stream outside a world: at most 101 tracked, saw " + std::to_string(most));
  std::printf("launches outside a world on %d GPU(s), tracked at most: %zu\n", gpus, most);
}

// Rank 1 fails on the host while rank 0's kernel waits for a signal from rank 1 that
// never comes: run_threads must still return (rank 0 polls its stream and sees the
// abort) and rethrow rank 1's error, and the process must be able to exit with the
// kernel still spinning.
int abort_test() {
  try {
    iris::run_threads(2, std::size_t{4} << 20, [&](iris::Rank& rank) {
      int* flags = rank.allocate<int>(1);
      zero(flags, sizeof(int));
      rank.barrier();
      if (rank.rank() == 1) throw iris::Error("rank 1 gives up");
      iris::launch_kernel<Ring>({1}, {}, rank.device_context(), flags, 1);
      rank.barrier();
    });
  } catch (const iris::Error& e) {
    const bool ok = std::string(e.what()) == "rank 1 gives up";
    std::printf("abort with a spinning kernel: %s (%s)\n", ok ? "ok" : "FAILED", e.what());
    return ok ? 0 : 1;
  }
  std::printf("FAILED: run_threads returned normally\n");
  return 1;
}

// A missing signal: every rank waits for its own flag, which nobody sets.
struct NeverSignalled {
  IRIS_DEVICE static void run(const iris::Program& p, int* flag) {
    iris::wait<iris::Sem::acquire, iris::Scope::sys>(flag, iris::Cmp::eq, 1, iris::Checked{p, "hang.iris", 7});
  }
};

// A missing arrival: every rank but `skipper` enters a checked device barrier.
struct SkippedBarrier {
  IRIS_DEVICE static void run(const iris::Program& p, int skipper) {
    if (p.ctx.rank != skipper) iris::device_barrier(p, iris::Checked{p, "hang.iris", 12});
  }
};

// Runs `launch(rank, flag)` on every rank with IRIS_HANG_TIMEOUT=1 (flag: a
// zeroed int of the heap); passes if run_threads throws an iris::Error that
// holds every part of `expected`.
template <class Launch>
int hang_test(int ranks, Launch launch, const std::vector<std::string>& expected) {
  setenv("IRIS_HANG_TIMEOUT", "1", 1);
  try {
    iris::run_threads(ranks, std::size_t{4} << 20, [&](iris::Rank& rank) {
      int* flag = rank.allocate<int>(1);
      zero(flag, sizeof(int));
      rank.barrier();
      launch(rank, flag);
      rank.barrier();
    });
  } catch (const iris::Error& e) {
    const std::string what = e.what();
    std::printf("iris::Error: %s\n", what.c_str());
    bool ok = true;
    for (const std::string& part : expected) {
      if (what.find(part) == std::string::npos) {
        std::printf("the report lacks: %s\n", part.c_str());
        ok = false;
      }
    }
    std::printf("hang reported: %s\n", ok ? "ok" : "FAILED (the message lacks a part of the report)");
    return ok ? 0 : 1;
  }
  std::printf("FAILED: the wait did not end\n");
  return 1;
}

int wait_hang_test(int ranks) {
  std::vector<std::string> expected = {
      "hang.iris:7: error: hang in wait_until(*",
      " == 1): the condition is still false after 1 s (IRIS_HANG_TIMEOUT); the flag, at offset 0 of rank ",
      "'s heap, in allocation #1 (heap offset 0, 4 bytes), holds 0 (rank "};
  for (int r = 0; r < ranks; ++r)
    expected.push_back("rank " + std::to_string(r) + " waits in wait_until at hang.iris:7 (program 0)");
  return hang_test(
      ranks, [](iris::Rank& rank, int* flag) {
        iris::launch_kernel<NeverSignalled>({1}, {}, rank.device_context(), flag);
      },
      expected);
}

int barrier_hang_test(int ranks) {
  const int skipper = ranks - 1;
  std::vector<std::string> expected = {"hang.iris:12: error: hang in barrier(): " + std::to_string(ranks - 1) +
                                       " of " + std::to_string(ranks) +
                                       " ranks have arrived after 1 s (IRIS_HANG_TIMEOUT) (rank "};
  for (int r = 0; r < skipper; ++r)
    expected.push_back("rank " + std::to_string(r) + " waits in barrier at hang.iris:12 (program 0)");
  return hang_test(
      ranks, [skipper](iris::Rank& rank, int*) {
        iris::launch_kernel<SkippedBarrier>({1}, {}, rank.device_context(), skipper);
      },
      expected);
}

// Writes a report as a failing checked access does (iris::detail::report), then
// runs on for run_ns instead of trapping.
struct ReportsAndRuns {
  IRIS_DEVICE static void run(const iris::Program& p, unsigned long long run_ns) {
    if (p.id[0] != 0 || iris::thread_index() != 0) return;
    iris::detail::Text text;
    text.add("smoke.iris:60: error: planted report");
    iris::detail::publish(p.ctx.barrier->report, text);
    const unsigned long long start = iris::detail::trace_clock();
    while (iris::detail::trace_clock() - start < run_ns) {
    }
  }
};

int report_without_end_test() {
  try {
    iris::run_threads(1, std::size_t{4} << 20, [&](iris::Rank& rank) {
      iris::launch_kernel<ReportsAndRuns>({1}, {}, rank.device_context(), 6'000'000'000ull);
      rank.barrier();
    });
  } catch (const iris::Error& e) {
    const std::string what = e.what();
    std::printf("iris::Error: %s\n", what.c_str());
    const bool ok = what.find("wrote a checked-mode report and trapped, but its stream still runs") !=
                        std::string::npos &&
                    what.find("-- checked mode: smoke.iris:60: error: planted report") != std::string::npos;
    std::printf("report without the kernel's end: %s\n", ok ? "ok" : "FAILED (the message lacks a part)");
    return ok ? 0 : 1;
  }
  std::printf("FAILED: the report did not end the wait\n");
  return 1;
}

int checked_failure() {
  try {
    iris::run_threads(2, std::size_t{4} << 20, [&](iris::Rank& rank) {
      iris::launch_kernel<BadRank>({4}, {}, rank.device_context(), 7);
      rank.barrier();
    });
  } catch (const iris::Error& e) {
    const std::string what = e.what();
    std::printf("iris::Error: %s\n", what.c_str());
    const bool ok = what.find("smoke.iris:42: error: rank 7 is out of range [0, 2)") != std::string::npos;
    std::printf("checked failure reported: %s\n", ok ? "ok" : "FAILED (message lacks the device report)");
    return ok ? 0 : 1;
  }
  std::printf("FAILED: the bad kernel did not fail\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int ranks = 2;
  bool failure_mode = false, abort_mode = false, hang_mode = false, barrier_hang_mode = false,
       report_mode = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
      ranks = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--checked-failure") == 0) {
      failure_mode = true;
    } else if (std::strcmp(argv[i], "--abort") == 0) {
      abort_mode = true;
    } else if (std::strcmp(argv[i], "--hang") == 0) {
      hang_mode = true;
    } else if (std::strcmp(argv[i], "--barrier-hang") == 0) {
      barrier_hang_mode = true;
    } else if (std::strcmp(argv[i], "--report-without-end") == 0) {
      report_mode = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--ranks N] [--checked-failure] [--abort] [--hang] [--barrier-hang] "
                   "[--report-without-end]\n",
                   argv[0]);
      return 2;
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows even if a kernel hangs
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) {
    std::printf("no usable GPU: skipped\n");
    return 77;
  }
  hipDeviceProp_t prop;
  check(hipGetDeviceProperties(&prop, 0), "hipGetDeviceProperties");
  std::printf("%d GPU(s), GPU 0: %s (sm_%d%d)\n", devices, prop.name, prop.major, prop.minor);
  try {
    if (failure_mode) return checked_failure();
    if (abort_mode) return abort_test();
    if (hang_mode) return wait_hang_test(ranks);
    if (barrier_hang_mode) return barrier_hang_test(ranks);
    if (report_mode) return report_without_end_test();
    raw_test();
    runtime_test(ranks);
    outside_world_test(devices);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: exception: %s\n", e.what());
    return 1;
  }
  std::printf(failures == 0 ? "smoke: all passed\n" : "smoke: %d FAILED\n", failures);
  return failures == 0 ? 0 : 1;
}
