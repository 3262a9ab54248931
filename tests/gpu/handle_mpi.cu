// The GPU's WorldHandle (run_mpi's world held open between calls, which
// iris_torch joins), under mpirun with any number of ranks on one node; run by
// scripts/gpu-check.sh. Exit status 0: pass.
//
//   1. run: each rank allocates a block and a kernel writes 100 + rank into it;
//   2. run: the ranks agree on strings that differ, which throws on every rank
//      and leaves the world open;
//   3. run: a kernel reads the block kept since call 1 on this rank and on the
//      next one (through translate), and the host compares both with 100 + rank;
//   then close() ends the world and MPI.
#include <iris/kernel.hpp>

#include <cstdio>
#include <string>

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

}  // namespace

int main() {
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
