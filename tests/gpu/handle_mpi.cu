// The GPU's WorldHandle (run_mpi's world held open between calls, which
// iris_torch joins), under mpirun with any number of ranks on one node; run by
// scripts/gpu-check.sh. Exit status 0: pass.
//
//   iris_gpu_handle_mpi
//   1. run: each rank allocates a block and a kernel writes 100 + rank into it;
//   2. run: the ranks agree on strings that differ, which throws on every rank
//      and leaves the world open;
//   3. run: a kernel reads the block kept since call 1 on this rank and on the
//      next one (through translate), and the host compares both with 100 + rank;
//   then close() ends the world and MPI.
//
//   iris_gpu_handle_mpi --hang
//   a checked wait (iris::Checked at hang.iris:7) for a flag that nobody sets,
//   on every rank, with IRIS_HANG_TIMEOUT=1: every rank reports its own hang
//   (its line, the flag's place and value, where it waits) as the iris::Error
//   of its next barrier, which it checks; then every rank ends MPI itself (its
//   GPU context is gone with the trap: close() cannot run).
#include <mpi.h>

#include <iris/kernel.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Fill {
  IRIS_DEVICE static void run(const iris::Program& p, int* block) {
    if (p.id[0] == 0 && iris::thread_index() == 0) *block = 100 + iris::rank(p);
  }
};

struct ReadBoth {
  IRIS_DEVICE static void run(const iris::Program& p, const int* block, int* seen) {
    if (p.id[0] != 0 || iris::thread_index() != 0) return;
    const int next = (iris::rank(p) + 1) % iris::world_size(p);
    seen[0] = *block;
    seen[1] = *iris::translate(block, next, p.ctx);
  }
};

// A missing signal: every rank waits for its own flag, which nobody sets.
struct NeverSignalled {
  IRIS_DEVICE static void run(const iris::Program& p, int* flag) {
    iris::wait<iris::Sem::acquire, iris::Scope::sys>(flag, iris::Cmp::eq, 1, iris::Checked{p, "hang.iris", 7});
  }
};

int hang_test() {
  setenv("IRIS_HANG_TIMEOUT", "1", 1);
  iris::WorldHandle world(std::size_t{8} << 20);
  const int me = world.rank();
  try {
    world.run([](iris::Rank& r) {
      int* flag = r.allocate<int>(1);
      if (hipMemset(flag, 0, sizeof(int)) != hipSuccess) throw iris::Error("hipMemset failed");
      r.barrier();
      iris::launch_kernel<NeverSignalled>({1}, {}, r.device_context(), flag);
      // Where each rank is, for a run where one never reports (gpu-check's
      // mpirun row with 4 processes on one H100, twice): launched, then in the
      // barrier that must fail.
      std::printf("rank %d: kernel launched, waiting in the barrier\n", r.rank());
      r.barrier();
    });
  } catch (const iris::Error& e) {
    const std::string what = e.what();
    std::printf("rank %d: iris::Error: %s\n", me, what.c_str());
    const std::vector<std::string> expected = {
        "hang.iris:7: error: hang in wait_until(*",
        " == 1): the condition is still false after 1 s (IRIS_HANG_TIMEOUT); the flag, at offset 0 of rank " +
            std::to_string(me) + "'s heap, in allocation #1 (heap offset 0, 4 bytes), holds 0",
        "rank " + std::to_string(me) + " waits in wait_until at hang.iris:7 (program 0)"};
    bool ok = true;
    for (const std::string& part : expected) {
      if (what.find(part) != std::string::npos) continue;
      std::printf("rank %d: the report lacks: %s\n", me, part.c_str());
      ok = false;
    }
    std::printf("rank %d: hang reported: %s\n", me, ok ? "ok" : "FAILED");
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  std::printf("rank %d: FAILED: the wait did not end\n", me);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each rank's lines show even if it never exits
  if (argc == 2 && std::strcmp(argv[1], "--hang") == 0) return hang_test();
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--hang]\n", argv[0]);
    return 2;
  }
  int failures = 0;
  const auto expect = [&](bool ok, const std::string& what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  };
  try {
    iris::WorldHandle world(std::size_t{8} << 20);
    const int me = world.rank(), size = world.world_size(), next = (me + 1) % size;
    int* block = nullptr;
    world.run([&](iris::Rank& r) {
      block = r.allocate<int>(1);
      iris::launch_kernel<Fill>({1}, {}, r.device_context(), block);
      r.barrier();
    });
    bool thrown = false;
    try {
      world.run([](iris::Rank& r) { r.agree("the call of rank " + std::to_string(r.rank())); });
    } catch (const iris::Error&) {
      thrown = true;
    }
    expect(thrown == (size > 1), "agree on calls that differ throws where there are several ranks");
    int seen[2] = {-1, -1};
    world.run([&](iris::Rank& r) {
      int* out = r.allocate<int>(2);
      iris::launch_kernel<ReadBoth>({1}, {}, r.device_context(), block, out);
      r.barrier();
      expect(hipMemcpy(seen, out, sizeof seen, hipMemcpyDeviceToHost) == hipSuccess, "hipMemcpy");
      r.free(out);
      r.free(block);
    });
    expect(seen[0] == 100 + me, "rank " + std::to_string(me) + "'s block holds " + std::to_string(seen[0]));
    expect(seen[1] == 100 + next, "rank " + std::to_string(next) + "'s block, read from rank " + std::to_string(me) +
                                      ", holds " + std::to_string(seen[1]));
    world.close();
    std::printf("handle (rank %d of %d): %s\n", me, size, failures == 0 ? "ok" : "FAILED");
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
