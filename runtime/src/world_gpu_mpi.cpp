// Iris runtime, GPU backend: run_mpi -- one process per rank, started by mpirun
// (library iris_runtime_gpu_mpi, or iris_runtime_gpu_nvshmem built with NVSHMEM;
// run_threads does not need MPI) -- and WorldHandle, whose processes meet
// through MPI or the program's Bootstrap.
//
// Start-up, in steps that every process takes together (a step that fails on one
// process fails on all, with a message naming the ranks, so that nobody waits in a
// collective for a process that has given up):
//   1. world size and rank from the Bootstrap; IRIS_TRANSPORT, IRIS_RANKS_PER_NODE
//      and IRIS_HANG_TIMEOUT the same on every rank, and the same heap size;
//   2. the node teams (node_teams.hpp) and the provider: ipc for a world of one
//      node, nvshmem for several (only iris_runtime_gpu_nvshmem has it);
//   3. the GPU: rank among the host's ranks % number of visible GPUs;
//   4. the heaps, by provider:
//      ipc      hipMalloc'ed and zeroed; every process publishes
//               hipIpcGetMemHandle of its heap allocation (an allgather) and
//               opens everybody else's with hipIpcOpenMemHandle;
//      nvshmem  NVSHMEM starts from a unique id that rank 0 makes and the
//               Bootstrap spreads; every heap is one nvshmem_align'ed block of
//               NVSHMEM's symmetric heap, at the same offset on every PE; my
//               node team's bases are nvshmem_ptr's mappings of theirs, the far
//               ranks' slots of a reserved range that takes no loads and
//               stores, which the kernels' far path (device_nvshmem.hpp) turns
//               into NVSHMEM's puts, gets and atomics;
//      then the base table is copied to the device for DeviceContext::heap_bases.
// Collectives: every process runs its own allocator through the same calls; each
// allocate/free/barrier/agree/from_rank0 is an allgather of the call descriptors, compared with
// rank 0's on every process (same messages as run_threads), so a mismatch is an
// iris::Error on every rank and the allocators never diverge. The host barrier
// completes the rank's far puts, synchronises its device, then is that allgather.
//
// run_mpi is WorldHandle's constructor, one run(body) and close(), as on the
// CPU; the handle keeps the world open between calls for iris_torch.
#include <sys/mman.h>

#ifndef IRIS_NVSHMEM_RUNTIME
#define IRIS_NVSHMEM_RUNTIME 0  // iris_runtime_gpu_mpi: the ipc provider only
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "bootstrap_steps.hpp"
#include "mpi_start.hpp"
#include "node_teams.hpp"
#if IRIS_NVSHMEM_RUNTIME
#include "nvshmem_provider.hpp"
#endif
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

#if IRIS_NVSHMEM_RUNTIME
// A range of address space that takes no loads and stores: the far ranks' slots.
class ReservedRange {
 public:
  explicit ReservedRange(std::size_t bytes) : bytes_(bytes) {
    void* m = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      throw Error("iris: run_mpi: cannot reserve " + std::to_string(bytes) + " bytes of address space for the far "
                  "ranks' heaps: mmap: " + std::strerror(errno));
    }
    base_ = static_cast<char*>(m);
  }
  ~ReservedRange() { munmap(base_, bytes_); }
  ReservedRange(const ReservedRange&) = delete;
  ReservedRange& operator=(const ReservedRange&) = delete;
  char* base() const { return base_; }

 private:
  std::size_t bytes_;
  char* base_ = nullptr;
};
#endif

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
  // Step 4 by provider (see the top of the file).
  void share_heaps_ipc(GpuRank& g);
#if IRIS_NVSHMEM_RUNTIME
  void share_heaps_nvshmem(GpuRank& g);
  void* allocate_heap(std::size_t bytes, std::size_t slack) override;
  void free_heap(void* allocation) override;
  void complete_puts(int r) override;
#endif

  Bootstrap& boot_;
  HeapAllocator allocator_;
  Provider provider_ = Provider::ipc;
  std::uint64_t calls_ = 0;
  std::vector<char*> opened_;  // IPC mappings of other ranks' allocations
#if IRIS_NVSHMEM_RUNTIME
  std::unique_ptr<ReservedRange> far_range_;
#endif
  bool closed_ = false;
};

// The provider of this world: IRIS_TRANSPORT's, else ipc for one node and
// nvshmem for several; throws where the library or the world cannot have it.
Provider choose_provider(Provider asked, int nodes) {
  const Provider provider = asked != Provider::automatic ? asked : nodes == 1 ? Provider::ipc : Provider::nvshmem;
  if (provider == Provider::ipc && nodes > 1) {
    throw Error("iris: run_mpi: IRIS_TRANSPORT=ipc reaches the GPUs of one node only, and this world has " +
                std::to_string(nodes) + " nodes (IRIS_TRANSPORT=nvshmem reaches every rank)");
  }
  if (provider == Provider::nvshmem && !IRIS_NVSHMEM_RUNTIME) {
    throw Error("iris: run_mpi: " +
                (asked == Provider::nvshmem ? std::string("IRIS_TRANSPORT=nvshmem asks for NVSHMEM")
                                            : "this world has " + std::to_string(nodes) +
                                                  " nodes, whose far ranks only NVSHMEM reaches") +
                ", but this program's Iris GPU runtime is built without it: link Iris::runtime_gpu_nvshmem and "
                "build the kernels with iris_add_kernels(... NVSHMEM) (docs/multi-node.md)");
  }
  return provider;
}

ProcessWorld::ProcessWorld(Bootstrap& boot, std::size_t heap_bytes)
    : World(boot.size(), heap_bytes), me(boot.rank()), boot_(boot), allocator_(heap_bytes) {
  // 1. Settings and heap size.
  std::string failure;
  const Settings settings = read_settings("the GPU target's providers: ipc, nvshmem", failure);
  if (settings.provider == Provider::mpi) {
    failure = "iris: run_mpi: IRIS_TRANSPORT=mpi is a provider of the CPU target (MPI RMA); the GPU target's "
              "providers: ipc, nvshmem";
  }
  agree("reading IRIS_TRANSPORT, IRIS_RANKS_PER_NODE and IRIS_HANG_TIMEOUT", failure);
  check_same_settings(boot_, settings);
  check_heap_sizes(boot_, heap_bytes);

  // 2. Node teams and the provider.
  const NodeTeams teams = form_node_teams(boot_, settings.ranks_per_node);
  node_first = teams.first, node_size = teams.size;
  provider_ = choose_provider(settings.provider, teams.nodes);

  // 3. The GPU.
  auto owned = std::make_unique<GpuRank>();
  GpuRank& g = *owned;
  g.rank = me;
  locals_[static_cast<std::size_t>(me)] = std::move(owned);
  try {
    g.device = teams.host_rank % device_count("run_mpi");
    IRIS_HIP(me, g.device, hipSetDevice(g.device));
  } catch (const Error& e) {
    failure = e.what();
  }
  agree("choosing the GPU", failure);

  // 4. The heaps.
#if IRIS_NVSHMEM_RUNTIME
  if (provider_ == Provider::nvshmem) {
    share_heaps_nvshmem(g);
    return;
  }
#endif
  share_heaps_ipc(g);
}

void ProcessWorld::share_heaps_ipc(GpuRank& g) {
  HeapInfo info{};
  std::string failure;
  try {
    create_heap(g);
    bases[static_cast<std::size_t>(me)] = g.base;
    IRIS_HIP(me, g.device, hipIpcGetMemHandle(&info.handle, g.allocation));
    info.offset = static_cast<std::uint64_t>(g.base - g.allocation);
    info.device = g.device;
  } catch (const Error& e) {
    failure = e.what();
  }
  agree("allocating the heap", failure);

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

#if IRIS_NVSHMEM_RUNTIME
void ProcessWorld::share_heaps_nvshmem(GpuRank& g) {
  std::string failure;
  // NVSHMEM's symmetric heap must hold ours, and its own objects beside it:
  // its static heap (NVSHMEM_DISABLE_CUDA_VMM=1) is NVSHMEM_SYMMETRIC_SIZE
  // bytes; the default heap (CUDA VMM) grows as it is asked and ignores it.
  const std::size_t needed = heap_size + kRuntimeAreaBytes + HeapAllocator::kMaxAlignment + (std::size_t{256} << 20);
  if (std::getenv("NVSHMEM_SYMMETRIC_SIZE") == nullptr) {
    setenv("NVSHMEM_SYMMETRIC_SIZE", std::to_string(std::max(needed, std::size_t{1} << 30)).c_str(), 1);
  }
  nvshmem::UniqueId id{};
  if (me == 0 && !nvshmem::make_unique_id(id)) failure = "iris: run_mpi: NVSHMEM cannot make a unique id";
  agree("starting NVSHMEM (nvshmemx_get_uniqueid)", failure);
  id = allgather_values(boot_, id)[0];
  if (const std::string why = nvshmem::start(me, size, id); !why.empty()) {
    failure = "iris: run_mpi: NVSHMEM did not start on rank " + std::to_string(me) + ": " + why;
  }
  agree("starting NVSHMEM", failure);

  slot_stride = (heap_size + kRuntimeAreaBytes + HeapAllocator::kMaxAlignment - 1) / HeapAllocator::kMaxAlignment *
                HeapAllocator::kMaxAlignment;
  try {
    create_heap(g);  // collective in NVSHMEM: every rank allocates, in the same order
    bases[static_cast<std::size_t>(me)] = g.base;
    if (node_size != size) {
      far_range_ = std::make_unique<ReservedRange>(slot_stride * static_cast<std::size_t>(size));
      far_slots = far_range_->base();
    }
    for (int r = 0; r < size; ++r) {
      char*& base = bases[static_cast<std::size_t>(r)];
      if (r == me) continue;
      if (r < node_first || r >= node_first + node_size) {
        base = far_range_->base() + slot_stride * static_cast<std::size_t>(r);
        continue;
      }
      base = static_cast<char*>(nvshmem::ptr(g.base, r));
      if (base == nullptr) {
        throw Error("iris: run_mpi: rank " + std::to_string(me) + " (GPU " + std::to_string(g.device) +
                    ") cannot load from the heap of rank " + std::to_string(r) + ", in its node team: nvshmem_ptr "
                    "is null (no peer access between their GPUs); IRIS_RANKS_PER_NODE=1 makes every other rank far");
      }
    }
    publish(g);
  } catch (const Error& e) {
    failure = e.what();
  }
  agree("sharing the heaps through NVSHMEM", failure);
}

void* ProcessWorld::allocate_heap(std::size_t bytes, std::size_t alignment) {
  if (provider_ != Provider::nvshmem) return World::allocate_heap(bytes, alignment);
  return nvshmem::align(alignment, bytes);
}

void ProcessWorld::free_heap(void* allocation) {
  if (provider_ != Provider::nvshmem) return World::free_heap(allocation);
  nvshmem::free(allocation);
}

void ProcessWorld::complete_puts(int) {
  if (provider_ != Provider::nvshmem) return;
  nvshmem::quiet_on_stream(hipStreamPerThread);  // (a kernel where a network transport is connected)
  IRIS_HIP(me, local(me).device, hipStreamSynchronize(hipStreamPerThread));
}
#endif

ProcessWorld::~ProcessWorld() {
  // Without close() (an exception left run_mpi) other ranks may still use this
  // heap, and kernels may still run: leave everything to the end of the process.
}

void ProcessWorld::close() {
  if (closed_) return;
  closed_ = true;
  GpuRank& g = local(me);
  sync_device(me);
  complete_puts(me);
  if (trace_options) write_trace_of_processes(boot_, take_trace(me), trace_options->path);
  barrier(boot_);  // nobody uses another rank's heap any more
  for (char* p : opened_) (void)hipIpcCloseMemHandle(p);
  opened_.clear();
  barrier(boot_);  // nobody maps this heap any more
  release(g);
#if IRIS_NVSHMEM_RUNTIME
  if (provider_ == Provider::nvshmem) nvshmem::finalize();
#endif
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
