// Iris runtime, GPU backend: run_mpi -- one process per rank, started by mpirun
// (library iris_runtime_gpu_mpi; run_threads does not need MPI) -- and
// WorldHandle, whose processes meet through MPI or the program's Bootstrap.
//
// Start-up, in steps that every process takes together (a step that fails on one
// process fails on all, with a message naming the ranks, so that nobody waits in a
// collective for a process that has given up):
//   1. world size and rank from the Bootstrap; all ranks must share one host
//      (heaps are shared through CUDA/HIP IPC) and ask for the same heap size;
//   2. the GPU: rank among the host's ranks % number of visible GPUs; the heap
//      is hipMalloc'ed there and zeroed;
//   3. every process publishes hipIpcGetMemHandle of its heap allocation and the
//      heap's offset in it (an allgather) and opens everybody else's handle with
//      hipIpcOpenMemHandle (its own heap: its own pointer), which gives the host
//      base table; the table is copied to the device for DeviceContext::heap_bases.
// Collectives: every process runs its own allocator through the same calls; each
// allocate/free/barrier/agree/from_rank0 is an allgather of the call descriptors, compared with
// rank 0's on every process (same messages as run_threads), so a mismatch is an
// iris::Error on every rank and the allocators never diverge. The host barrier is
// a device synchronisation followed by that allgather.
//
// run_mpi is WorldHandle's constructor, one run(body) and close(), as on the
// CPU; the handle keeps the world open between calls for iris_torch.
#include <memory>
#include <optional>

#include "bootstrap_steps.hpp"
#include "mpi_start.hpp"
#include "trace_processes.hpp"
#include "world_gpu.hpp"

namespace iris {
namespace detail {
namespace {

// What every process tells the others about its heap.
struct HeapInfo {
  hipIpcMemHandle_t handle;
  std::uint64_t offset;  // of the heap base in the allocation
  std::int32_t device;
  std::int32_t pad;
};

class ProcessWorld final : public World {
 public:
  ProcessWorld(Bootstrap& boot, std::size_t heap_bytes);
  ~ProcessWorld() override;

  std::uint64_t collective(int r, const CollectiveCall& call) override;
  const AllocationTable& allocation_table(int) const override { return allocator_.table(); }
  // Collective orderly shutdown; without it (an exception) nothing is released.
  void close();

  const int me;

 private:
  void agree(const std::string& step, const std::string& failure) { agree_step(boot_, step, failure); }

  Bootstrap& boot_;
  HeapAllocator allocator_;
  std::uint64_t calls_ = 0;
  std::vector<char*> opened_;  // IPC mappings of other ranks' allocations
  bool closed_ = false;
};

ProcessWorld::ProcessWorld(Bootstrap& boot, std::size_t heap_bytes)
    : World(boot.size(), heap_bytes), me(boot.rank()), boot_(boot), allocator_(heap_bytes) {
  // 1. One host, one heap size.
  const std::vector<int> host_ranks = ranks_of_my_host(boot_);
  if (static_cast<int>(host_ranks.size()) != size) {
    throw Error("iris: run_mpi: all " + std::to_string(size) + " ranks must run on one host (heaps are shared "
                "through GPU IPC); this host has " + std::to_string(host_ranks.size()));
  }
  check_heap_sizes(boot_, heap_bytes);
  const int local_rank = me;  // every rank is on this host

  // 2. GPU and heap.
  auto owned = std::make_unique<GpuRank>();
  GpuRank& g = *owned;
  g.rank = me;
  locals_[static_cast<std::size_t>(me)] = std::move(owned);
  HeapInfo info{};
  std::string failure;
  try {
    g.device = local_rank % device_count("run_mpi");
    IRIS_HIP(me, g.device, hipSetDevice(g.device));
    create_heap(g);
    bases[static_cast<std::size_t>(me)] = g.base;
    IRIS_HIP(me, g.device, hipIpcGetMemHandle(&info.handle, g.allocation));
    info.offset = static_cast<std::uint64_t>(g.base - g.allocation);
    info.device = g.device;
  } catch (const Error& e) {
    failure = e.what();
  }
  agree("allocating the heap", failure);

  // 3. Base table from the IPC handles.
  std::vector<HeapInfo> infos(static_cast<std::size_t>(size));
  boot_.allgather(&info, infos.data(), sizeof(HeapInfo));
  try {
    for (int r = 0; r < size; ++r) {
      if (r == me) continue;
      void* p = nullptr;
      const HeapInfo& other = infos[static_cast<std::size_t>(r)];
      const hipError_t e = hipIpcOpenMemHandle(&p, other.handle, hipIpcMemLazyEnablePeerAccess);
      if (e != hipSuccess) {
        throw Error("iris: run_mpi: rank " + std::to_string(me) + " (GPU " + std::to_string(g.device) +
                    ") cannot map the heap of rank " + std::to_string(r) + " (GPU " + std::to_string(other.device) +
                    "): hipIpcOpenMemHandle: " + hipGetErrorName(e) + ": " + hipGetErrorString(e));
      }
      opened_.push_back(static_cast<char*>(p));
      bases[static_cast<std::size_t>(r)] = static_cast<char*>(p) + other.offset;
    }
    publish(g);
  } catch (const Error& e) {
    failure = e.what();
  }
  agree("sharing the heaps", failure);
}

ProcessWorld::~ProcessWorld() {
  // Without close() (an exception left run_mpi) other ranks may still use this
  // heap, and kernels may still run: leave everything to the end of the process.
}

void ProcessWorld::close() {
  if (closed_) return;
  closed_ = true;
  GpuRank& g = local(me);
  sync_device(me);
  if (trace_options) write_trace_of_processes(boot_, take_trace(me), trace_options->path);
  barrier(boot_);  // nobody uses another rank's heap any more
  for (char* p : opened_) (void)hipIpcCloseMemHandle(p);
  opened_.clear();
  barrier(boot_);  // nobody maps this heap any more
  release(g);
}

std::uint64_t ProcessWorld::collective(int r, const CollectiveCall& call) {
  std::uint64_t mine[CollectiveCall::kWords];
  call.to_words(mine);
  std::vector<std::uint64_t> all(CollectiveCall::kWords * static_cast<std::size_t>(size));
  boot_.allgather(mine, all.data(), sizeof mine);
  return call_result_of_words(++calls_, all, r, call, allocator_);
}

}  // namespace
}  // namespace detail

// The GPU's handle runs each work on the calling thread, with the rank's GPU
// current: MPI (initialised FUNNELED) is called by the thread that started it,
// and kernels go to that thread's streams, as in run_mpi's body.
struct WorldHandle::State {
  std::unique_ptr<Bootstrap> boot;
  detail::MpiBootstrap* mpi = nullptr;  // boot, where the processes meet through MPI
  std::optional<detail::ProcessWorld> world;
  std::unique_ptr<Rank> rank;
  bool closed = false;

  State(std::size_t heap_bytes, std::unique_ptr<Bootstrap> given) {
    mpi = detail::take_bootstrap(boot, std::move(given), MPI_THREAD_FUNNELED);
    try {
      world.emplace(*boot, heap_bytes);
    } catch (const Error&) {
      if (mpi != nullptr) mpi->session.end();  // every rank failed the same step
      throw;
    }
    rank = world->new_rank(boot->rank());
  }
};

}  // namespace iris

#include "world_handle.hpp"

namespace iris {

void WorldHandle::run(const std::function<void(Rank&)>& work) {
  if (state_->closed) throw Error("iris: WorldHandle::run: the world has been closed");
  if (state_->mpi != nullptr) {
    int main_thread = 0;
    IRIS_MPI(MPI_Is_thread_main(&main_thread));
    if (main_thread == 0 && state_->mpi->session.provided < MPI_THREAD_SERIALIZED) {
      throw Error("iris: WorldHandle::run: called on a thread other than the one that started MPI, which MPI "
                  "(initialised MPI_THREAD_FUNNELED) does not allow: call every run() on that thread");
    }
  }
  const int me = rank();
  const detail::DeviceGuard device(state_->world->local(me).device, me);
  work(*state_->rank);
}

void WorldHandle::close() {
  if (state_->closed) return;
  state_->closed = true;  // also where the end fails
  state_->rank.reset();
  {
    const int me = rank();
    const detail::DeviceGuard device(state_->world->local(me).device, me);  // the rank's streams
    state_->world->close();
  }
  state_->world.reset();
  if (state_->mpi != nullptr) state_->mpi->session.end();
}

void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  detail::check_run_mpi(heap_bytes, body);
  WorldHandle world(heap_bytes);
  world.run(body);  // an exception leaves without any collective step (see host.hpp)
  world.close();
}

}  // namespace iris
