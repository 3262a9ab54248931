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
#include <mpi.h>

#include <cstdlib>

#include "world_gpu.hpp"

namespace iris {
namespace detail {
namespace {

void mpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("iris: run_mpi: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}
#define IRIS_MPI(call) mpi_check((call), #call)

// What every process tells the others about its heap.
struct HeapInfo {
  hipIpcMemHandle_t handle;
  std::uint64_t offset;  // of the heap base in the allocation
  std::int32_t device;
  std::int32_t pad;
};

// A program linked against one MPI and started by another MPI's launcher runs as
// N independent one-rank worlds. The launchers say how many ranks they started.
void check_launcher(int size) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long launched = std::strtol(value, &end, 10);
    if (*end != '\0' || launched == size) continue;
    throw Error("iris: run_mpi: MPI reports " + std::to_string(size) + " rank(s) but the launcher started " + value +
                " (" + var + "): is the program linked against the MPI library of this mpirun?");
  }
}

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
  // Every process reports whether its part of a start-up step failed (`failure`
  // non-empty); if any did, every process throws, naming the failed ranks.
  void agree(const std::string& step, const std::string& failure);

  MPI_Comm comm_;
  HeapAllocator allocator_;
  std::uint64_t calls_ = 0;
  std::vector<char*> opened_;  // IPC mappings of other ranks' allocations
  bool closed_ = false;
};

void MpiWorld::agree(const std::string& step, const std::string& failure) {
  int mine = failure.empty() ? 0 : 1;
  std::vector<int> all(static_cast<std::size_t>(size));
  IRIS_MPI(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm_));
  std::string failed;
  for (int r = 0; r < size; ++r) {
    if (all[static_cast<std::size_t>(r)] != 0) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  }
  if (failed.empty()) return;
  if (!failure.empty()) throw Error(failure + " (run_mpi: " + step + " failed on rank(s) " + failed + ")");
  throw Error("iris: run_mpi: " + step + " failed on rank(s) " + failed + " (see their messages)");
}

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
  std::uint64_t bytes = heap_bytes;
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size));
  IRIS_MPI(MPI_Allgather(&bytes, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_));
  for (int r = 1; r < size; ++r) {
    if (sizes[static_cast<std::size_t>(r)] != sizes[0]) {
      throw Error("iris: run_mpi: the heap size differs between ranks: rank 0 asked for " + std::to_string(sizes[0]) +
                  " bytes, rank " + std::to_string(r) + " for " + std::to_string(sizes[static_cast<std::size_t>(r)]));
    }
  }

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
  IRIS_MPI(MPI_Barrier(comm_));  // nobody uses another rank's heap any more
  for (char* p : opened_) (void)hipIpcCloseMemHandle(p);
  opened_.clear();
  IRIS_MPI(MPI_Barrier(comm_));  // nobody maps this heap any more
  release(g);
}

std::uint64_t MpiWorld::collective(int r, const CollectiveCall& call) {
  constexpr int kWords = 5;
  const std::uint64_t mine[kWords] = {static_cast<std::uint64_t>(call.op), call.bytes, call.alignment, call.offset,
                                      call.value};
  std::vector<std::uint64_t> all(kWords * static_cast<std::size_t>(size));
  IRIS_MPI(MPI_Allgather(mine, kWords, MPI_UINT64_T, all.data(), kWords, MPI_UINT64_T, comm_));
  const std::uint64_t seq = ++calls_;
  std::vector<CollectiveCall> calls(static_cast<std::size_t>(size));
  for (std::size_t o = 0; o < calls.size(); ++o) {
    const std::uint64_t* words = &all[kWords * o];
    calls[o].op = static_cast<CollectiveOp>(words[0]);
    calls[o].bytes = words[1];
    calls[o].alignment = words[2];
    calls[o].offset = words[3];
    calls[o].value = words[4];
  }
  calls[static_cast<std::size_t>(r)].pointer = call.pointer;
  calls[static_cast<std::size_t>(r)].text = call.text;
  const std::string error = compare_calls(seq, calls);
  if (!error.empty()) throw Error(error);
  return call_result(allocator_, calls, r);  // the same on every process, errors included
}

}  // namespace
}  // namespace detail

void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  if (heap_bytes == 0 || heap_bytes % 4096 != 0) {
    throw Error("iris: run_mpi: heap size must be a positive multiple of 4096 bytes, got " +
                std::to_string(heap_bytes));
  }
  if (!body) throw Error("iris: run_mpi: empty body");
  int initialized = 0, finalized = 0;
  detail::IRIS_MPI(MPI_Initialized(&initialized));
  detail::IRIS_MPI(MPI_Finalized(&finalized));
  if (finalized != 0) throw Error("iris: run_mpi: MPI has already been finalised (run_mpi can run once per process)");
  bool own_mpi = false;
  if (initialized == 0) {
    int provided = 0;
    detail::IRIS_MPI(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
    own_mpi = true;
  }
  MPI_Comm comm;
  detail::IRIS_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));  // the runtime's traffic apart from the program's
  int rank = 0, size = 0;
  detail::IRIS_MPI(MPI_Comm_rank(comm, &rank));
  detail::IRIS_MPI(MPI_Comm_size(comm, &size));
  detail::check_launcher(size);

  {
    detail::MpiWorld world(comm, rank, size, heap_bytes);
    Rank r = world.make_rank(rank);
    body(r);  // an exception leaves without any collective step (see host.hpp)
    world.close();
  }
  detail::IRIS_MPI(MPI_Comm_free(&comm));
  if (own_mpi) detail::IRIS_MPI(MPI_Finalize());
}

}  // namespace iris
