// Iris runtime, GPU backend: run_mpi -- one process per rank, started by mpirun
// (library iris_runtime_gpu_mpi; run_threads does not need MPI).
//
// Start-up, in steps that every process takes together (a step that fails on one
// process fails on all, with a message naming the ranks, so that nobody waits in a
// collective for a process that has given up):
//   1. world size and rank from MPI; all ranks must share one node (heaps are shared
//      through CUDA/HIP IPC) and ask for the same heap size;
//   2. the GPU: node-local rank % number of visible GPUs; the heap is hipMalloc'ed
//      there and zeroed;
//   3. every process publishes hipIpcGetMemHandle of its heap allocation and the
//      heap's offset in it (MPI_Allgather) and opens everybody else's handle with
//      hipIpcOpenMemHandle (its own heap: its own pointer), which gives the host
//      base table; the table is copied to the device for DeviceContext::heap_bases.
// Collectives: every process runs its own allocator through the same calls; each
// allocate/free/barrier/agree/from_rank0 is an MPI_Allgather of the call descriptors, compared with
// rank 0's on every process (same messages as run_threads), so a mismatch is an
// iris::Error on every rank and the allocators never diverge. The host barrier is
// a device synchronisation followed by that MPI_Allgather.
//
// run_mpi is MpiWorldHandle's constructor, one run(body) and close(), as on the
// CPU; the handle keeps the world open between calls for iris_torch.
#include <memory>
#include <optional>

#include "mpi_start.hpp"
#include "trace_mpi.hpp"
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

class MpiWorld final : public World {
 public:
  MpiWorld(MPI_Comm comm, int rank, int size, std::size_t heap_bytes);
  ~MpiWorld() override;

  std::uint64_t collective(int r, const CollectiveCall& call) override;
  const AllocationTable& allocation_table(int) const override { return allocator_.table(); }
  // Collective orderly shutdown; without it (an exception) nothing is released.
  void close();

  const int me;

 private:
  void agree(const std::string& step, const std::string& failure) { agree_step(comm_, step, failure); }

  MPI_Comm comm_;
  HeapAllocator allocator_;
  std::uint64_t calls_ = 0;
  std::vector<char*> opened_;  // IPC mappings of other ranks' allocations
  bool closed_ = false;
};

MpiWorld::MpiWorld(MPI_Comm comm, int rank, int size_, std::size_t heap_bytes)
    : World(size_, heap_bytes), me(rank), comm_(comm), allocator_(heap_bytes) {
  // 1. One node, one heap size.
  MPI_Comm node;
  IRIS_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node));
  int local_rank = 0, local_size = 0;
  IRIS_MPI(MPI_Comm_rank(node, &local_rank));
  IRIS_MPI(MPI_Comm_size(node, &local_size));
  IRIS_MPI(MPI_Comm_free(&node));
  if (local_size != size) {
    throw Error("iris: run_mpi: all " + std::to_string(size) + " ranks must run on one node (heaps are shared "
                "through GPU IPC); this node has " + std::to_string(local_size));
  }
  check_heap_sizes(comm_, heap_bytes);

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
  IRIS_MPI(MPI_Allgather(&info, sizeof(HeapInfo), MPI_BYTE, infos.data(), sizeof(HeapInfo), MPI_BYTE, comm_));
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

MpiWorld::~MpiWorld() {
  // Without close() (an exception left run_mpi) other ranks may still use this
  // heap, and kernels may still run: leave everything to the end of the process.
}

void MpiWorld::close() {
  if (closed_) return;
  closed_ = true;
  GpuRank& g = local(me);
  sync_device(me);
  if (trace_options) write_trace_mpi(comm_, take_trace(me), trace_options->path);
  IRIS_MPI(MPI_Barrier(comm_));  // nobody uses another rank's heap any more
  for (char* p : opened_) (void)hipIpcCloseMemHandle(p);
  opened_.clear();
  IRIS_MPI(MPI_Barrier(comm_));  // nobody maps this heap any more
  release(g);
}

std::uint64_t MpiWorld::collective(int r, const CollectiveCall& call) {
  std::uint64_t mine[CollectiveCall::kWords];
  call.to_words(mine);
  std::vector<std::uint64_t> all(CollectiveCall::kWords * static_cast<std::size_t>(size));
  IRIS_MPI(MPI_Allgather(mine, CollectiveCall::kWords, MPI_UINT64_T, all.data(), CollectiveCall::kWords,
                         MPI_UINT64_T, comm_));
  return call_result_of_words(++calls_, all, r, call, allocator_);
}

}  // namespace
}  // namespace detail

// The GPU's handle runs each work on the calling thread, with the rank's GPU
// current: MPI (initialised FUNNELED) is called by the thread that started it,
// and kernels go to that thread's streams, as in run_mpi's body.
struct MpiWorldHandle::State {
  detail::MpiSession mpi;
  std::optional<detail::MpiWorld> world;
  std::unique_ptr<Rank> rank;
  bool closed = false;

  explicit State(std::size_t heap_bytes) : mpi(MPI_THREAD_FUNNELED) {
    try {
      world.emplace(mpi.comm, mpi.rank, mpi.size, heap_bytes);
    } catch (const Error&) {
      mpi.end();  // every rank failed the same step
      throw;
    }
    rank = world->new_rank(mpi.rank);
  }
};

}  // namespace iris

#include "mpi_world_handle.hpp"

namespace iris {

void MpiWorldHandle::run(const std::function<void(Rank&)>& work) {
  if (state_->closed) throw Error("iris: MpiWorldHandle::run: the world has been closed");
  int main_thread = 0;
  IRIS_MPI(MPI_Is_thread_main(&main_thread));
  if (main_thread == 0 && state_->mpi.provided < MPI_THREAD_SERIALIZED) {
    throw Error("iris: MpiWorldHandle::run: called on a thread other than the one that started MPI, which MPI "
                "(initialised MPI_THREAD_FUNNELED) does not allow: call every run() on that thread");
  }
  const int me = state_->mpi.rank;
  const detail::DeviceGuard device(state_->world->local(me).device, me);
  work(*state_->rank);
}

void MpiWorldHandle::close() {
  if (state_->closed) return;
  state_->closed = true;  // also where the end fails
  state_->rank.reset();
  {
    const int me = state_->mpi.rank;
    const detail::DeviceGuard device(state_->world->local(me).device, me);  // the rank's streams
    state_->world->close();
  }
  state_->world.reset();
  state_->mpi.end();
}

void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  detail::check_run_mpi(heap_bytes, body);
  MpiWorldHandle world(heap_bytes);
  world.run(body);  // an exception leaves without any collective step (see host.hpp)
  world.close();
}

}  // namespace iris
