// Iris runtime: host API. Identical for every backend (the CPU emulation and the GPUs).
//
// A program runs `world_size` ranks. Every rank owns a *symmetric heap* of the same
// size; the base addresses of all heaps are known to every rank, so a pointer p into
// my heap names the same object on rank r as heap_bases[r] + (p - heap_bases[me]).
//
// Memory in the heap is handed out by a *collective* allocator: every rank calls
// allocate/free/barrier in the same order with the same arguments, and every
// allocation lands at the same offset in every heap. Each collective call is a
// rendezvous of all ranks; the calls are compared, so a sequence that differs between
// ranks is reported as an iris::Error (on every rank) instead of silently handing
// out different offsets.
//
// The CPU backend runs the ranks as threads of one process (run_threads) or as
// processes (run_mpi; the GPU backend has both too, see docs/gpu.md). A shared
// "world" holds the heaps, the allocator and an abort flag: when a rank's body throws,
// the flag is raised and every rank that blocks (host barrier, allocate, device
// barrier, wait_until) wakes up and throws, so a failure never turns into a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace iris {

// Every runtime failure (bad arguments, out of heap memory, mismatched collectives,
// checked-mode violations, detected deadlocks, abort after another rank failed).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opaque state of the device-side barrier; defined by the backend.
struct BarrierState;
// The live allocations of the heaps, for checked mode (iris/checked.hpp).
struct AllocationTable;

// Everything a kernel needs to address the symmetric heaps. Passed by value to every
// kernel launch; it only holds pointers into the world, which outlives the kernels.
struct DeviceContext {
  char* const* heap_bases;  // world_size entries, heap base of each rank
  std::size_t heap_size;
  int rank;
  int world_size;
  // My node team: the ranks whose heaps this rank reaches with loads and stores,
  // node_first .. node_first + node_size - 1 (node teams are contiguous blocks of
  // ranks). Every other rank is far, reached through the transport (ops/transport.hpp).
  // A world of one node (run_threads, the GPU's worlds) has 0 and world_size.
  int node_first;
  int node_size;
  BarrierState* barrier;  // shared state for the device-side barrier (opaque to kernels)
  const AllocationTable* allocations;  // live allocations (null: checked mode checks heap bounds only)
  // In a world of several nodes, the addresses of the far ranks' heaps: rank r's
  // heap_bases[r] is far_slots + r * slot_stride, in one range that takes no
  // loads and stores, by which the remote accesses (ops/transport.hpp) know a far
  // element and its rank from its address alone. Null in a world of one node.
  const char* far_slots = nullptr;
  std::size_t slot_stride = 0;
};

namespace detail {
struct World;
}

// One per rank, handed to the user's body by run_threads. Not copyable: it is the
// rank's identity in the world. All methods must be called from the rank's own thread.
class Rank {
 public:
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  int rank() const { return rank_; }
  int world_size() const;
  std::size_t heap_size() const;

  // Collective: every rank must make the same sequence of allocate/free/barrier calls
  // with the same arguments. Returns the block at the same offset on every rank.
  // `alignment` must be a power of two; blocks are always aligned to at least 256
  // bytes (smaller alignments are raised to 256) and at most 2 MiB is supported.
  // Heap memory is not cleared by allocate (a fresh CPU heap starts zeroed).
  void* allocate(std::size_t bytes, std::size_t alignment = 256);

  // Typed helper: room for `count` objects of T, aligned to max(256, alignof(T)).
  template <class T>
  T* allocate(std::size_t count) {
    if (count != 0 && sizeof(T) > SIZE_MAX / count) {
      throw Error("iris: allocate<T>(" + std::to_string(count) + "): size overflows");
    }
    const std::size_t align = alignof(T) > 256 ? alignof(T) : 256;
    return static_cast<T*>(allocate(count * sizeof(T), align));
  }

  // Collective. `p` must be a block returned by allocate (nullptr is a collective no-op).
  void free(void* p);

  // Collective host barrier across all ranks; also orders memory (everything written
  // before the barrier on any rank is visible after it on every rank).
  void barrier();

  // Collective: every rank states the collective operation it is about to
  // start, as a text that names it and its arguments (a library's check that
  // the ranks' calls match, "iris::ccl::all_reduce(f32, sum, 1000 elements)").
  // Throws iris::Error on every rank, naming each rank's text, when they
  // differ; waits for every rank, as barrier() does, but not for the device.
  void agree(const std::string& call);

  // Collective: every rank gets rank 0's `value` (the others' are ignored), as
  // the host decides something once for all ranks (iris::autotune's choice).
  // Waits for every rank, as agree() does; passes through the world's own
  // rendezvous (MPI for processes), never through device memory.
  std::uint64_t from_rank0(std::uint64_t value);

  DeviceContext device_context() const;

  // The live heap allocation that holds `p`, by which the host libraries
  // check their buffers: its number (1 for the run's first allocate call, 2
  // for the second, ...), p's byte offset in it and its size as asked of
  // allocate; number 0 where p is in this rank's heap but in no live
  // allocation (freed, or in the padding after one), with p's offset in the
  // heap. Nothing where p is not in this rank's heap, or while more
  // allocations are live than the runtime keeps a table of
  // (AllocationTable::kCapacity).
  struct Allocation {
    std::uint64_t number;
    std::size_t offset;
    std::size_t bytes;
  };
  std::optional<Allocation> allocation_of(const void* p) const;

  // How many program instances run at once on this rank's device: its
  // multiprocessor count (SMs, CUs), the grid size of a persistent kernel
  // (`for t in program_id(0) .. tiles step num_programs(0)`). The CPU
  // emulation runs a rank's instances one after another on one thread: 1.
  int multiprocessor_count() const;

  // Host-side translation, for validation code: the address of *p on `to_rank`.
  // Throws iris::Error if p is not inside this rank's heap or to_rank is invalid.
  // (On a GPU the result is a device address, for hipMemcpy and friends.)
  template <class T>
  T* translate(T* p, int to_rank) const {
    const std::uintptr_t off = heap_offset(p, to_rank);
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(heap_base(to_rank)) + off);
  }

 private:
  friend struct detail::World;
  Rank(detail::World* world, int rank) : world_(world), rank_(rank) {}
  std::uintptr_t heap_offset(const void* p, int to_rank) const;  // validates, throws
  // Base of rank r's heap in this process, from the host's copy of the base table
  // (DeviceContext::heap_bases is device memory on a GPU). r must be valid.
  char* heap_base(int r) const;

  detail::World* world_;
  int rank_;
};

// Starts `ranks` ranks as host threads of this process, each with a symmetric heap of
// heap_bytes (a multiple of 4096; memory is reserved lazily, so 1 GiB per rank is
// fine), runs body(rank) on each and joins. If any rank throws, the others are
// released (they throw from their next blocking call) and the first exception is
// rethrown here.
void run_threads(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body);

// One process per rank, started by mpirun. Rank and world size come from MPI (MPI is
// initialised if needed, and then finalised on return).
//  * CPU (library iris_runtime_cpu_mpi): any number of hosts; the ranks of a node
//    share their heaps, far ranks are reached through MPI RMA (docs/multi-node.md).
//    The body runs on a thread of its own; if it throws, the error is printed and
//    MPI_Abort ends the job.
//  * GPU (library iris_runtime_gpu_mpi): one node; the rank uses GPU (node-local rank
//    % GPUs per node); heaps are shared through IPC handles. If a rank's body throws,
//    the exception leaves run_mpi without finalising MPI: the process should exit,
//    and mpirun ends the others.
void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body);

// How the processes of a world, one rank each, find each other and meet: the
// one thing a world of processes needs from whatever started them. MPI's
// (MPI_COMM_WORLD) is the default; a program started some other way (torchrun,
// a job script) passes its own to WorldHandle, for example one over
// torch.distributed (python/iris_torch).
//  * rank() and size() are fixed: 0 <= rank() < size().
//  * allgather is collective: every process calls it with the same `bytes`, in
//    the same order, and gets every process's `bytes` bytes at `all` (size() *
//    bytes), in rank order. It is called from the thread that runs the rank's
//    work (WorldHandle::run), and during the constructor and close() from the
//    thread that calls them; a failure is an exception.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
};

// run_mpi's world held open between calls, for a program that cannot hand its
// work over as one body: a Python module's init() ... ops ... finalize()
// (python/iris_torch). run_mpi is this handle's constructor, one run(body) and
// close(), so the two start, meet and end the world alike.
//  * The constructor is collective (every process of the job makes one). With
//    heap_bytes alone it starts MPI and the world as run_mpi does. With a
//    Bootstrap the processes meet through it instead and MPI is not used: they
//    must all run on one host (heaps are shared through the host's IPC; a far
//    rank needs MPI RMA), and a start-up failure names the step. On the CPU it
//    also starts the rank's thread (run_threads' stack size), on which every
//    run() then runs its work. A start-up failure is thrown on every rank
//    alike, after MPI has been ended.
//  * run(work) runs work(rank) on the rank's thread and returns once it has;
//    the Rank and everything work allocated live on until close(). What work
//    throws is rethrown here and leaves the world open: usable where every
//    rank threw at the same call (the checks of Rank::agree, iris::ccl and
//    iris::ops throw on every rank alike), else the job should end.
//  * close() is collective: the world's end, and MPI's where the constructor
//    started it. The destructor of a handle not closed ends the rank's thread
//    only and leaves MPI to the end of the process (the other ranks may still
//    wait for this one), as run_mpi does after a failure.
//  * The CPU's rank's thread (iris_runtime_cpu_mpi) is the GPU's calling
//    thread (iris_runtime_gpu_mpi): run(work) runs work there, with the rank's
//    GPU current for the call, and with MPI it must be the thread that made
//    the handle (MPI is initialised MPI_THREAD_FUNNELED; run throws on another
//    thread unless the program gave MPI more); kernels go to its streams.
class WorldHandle {
 public:
  explicit WorldHandle(std::size_t heap_bytes);
  WorldHandle(std::size_t heap_bytes, std::unique_ptr<Bootstrap> bootstrap);
  ~WorldHandle();
  WorldHandle(const WorldHandle&) = delete;
  WorldHandle& operator=(const WorldHandle&) = delete;

  int rank() const;
  int world_size() const;
  void run(const std::function<void(Rank&)>& work);
  void close();

 private:
  struct State;
  friend void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body);
  std::unique_ptr<State> state_;
};

}  // namespace iris
