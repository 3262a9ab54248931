// Iris runtime, GPU backend: the world of one run_threads or run_mpi call.
//
// The host API (Rank) is the same as on the CPU; what differs:
//  * heaps are device memory (hipMalloc on the rank's GPU), each followed by the
//    runtime area of device_gpu.hpp (device barrier counters, checked-mode report);
//  * DeviceContext::heap_bases is a device copy of the base table (one per rank);
//    the host keeps its own copy for Rank::translate;
//  * Rank::barrier() first waits for the rank's device work, then meets the others;
//  * two ways to start: run_threads (ranks are threads of this process, round-robin
//    on the visible GPUs, one shared allocator behind a lock, like the CPU backend)
//    and run_mpi (one process per rank; collectives are allgathers of its Bootstrap, and every
//    process runs its own copy of the allocator through the same sequence of calls).
//
// What it shares with the CPU world: Rank's methods (rank_methods.hpp, over the
// hooks below), run_threads (rank_threads.hpp), the collective call of ranks that
// are threads (ThreadRendezvous::collective) and the allocator. Its heaps,
// device barrier and hang detection are its own: the CPU world allocates all heaps
// on one thread without a device, publishes a host base table to kernels, and its
// device barrier and hang detection are host code.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective.hpp"
#include "heap_allocator.hpp"
#include "iris/device_gpu.hpp"
#include "iris/host.hpp"
#include "trace.hpp"

namespace iris::detail {

// Throws iris::Error "iris: <call> failed on rank R (GPU d): <name>: <text>".
[[noreturn]] void hip_fail(const char* call, hipError_t error, int rank, int device);

// Checks a HIP call made for rank `rank` on GPU `device`; the message names the call.
#define IRIS_HIP(rank, device, call)                                                \
  do {                                                                              \
    const hipError_t iris_hip_error_ = (call);                                      \
    if (iris_hip_error_ != hipSuccess) {                                            \
      ::iris::detail::hip_fail(#call, iris_hip_error_, (rank), (device));           \
    }                                                                               \
  } while (0)

// Device resources of one rank hosted by this process.
struct GpuRank {
  int rank = -1;
  int device = -1;
  char* allocation = nullptr;     // from hipMalloc (or the world's allocate_heap): heap + runtime area + slack
  char* base = nullptr;           // heap base, aligned to HeapAllocator::kMaxAlignment
  char** device_bases = nullptr;  // device copy of the heap base table
  ErrorReport* report = nullptr;  // host-mapped checked-mode report buffer
  ErrorReport* waiting = nullptr;  // host-mapped: where a checked wait of the rank waits long
  TraceBuffer* trace = nullptr;   // device memory, while the run records a trace: the header, then the events
  std::int64_t trace_clock_offset = 0;  // from the GPU's trace clock to the host's steady clock
  AllocationTable allocations{};  // the source of the last copy to the runtime area
};

struct World {
  World(int size, std::size_t heap_bytes);
  virtual ~World() = default;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // One host collective call of rank r; returns the offset (allocate) or throws.
  virtual std::uint64_t collective(int r, const CollectiveCall& call) = 0;
  // The allocator's table of live blocks after rank r's last collective call (the
  // same on every rank); stable until r makes its next one.
  virtual const AllocationTable& allocation_table(int r) const = 0;
  // Copies it into rank r's runtime area, in the order of r's stream (after an
  // allocate or free, so that kernels launched later check against it).
  void publish_allocations(int r);
  virtual bool is_aborted() const { return false; }
  [[noreturn]] void throw_aborted(int r) const;
  // Records a fatal error of rank r (threads mode: raises the abort flag).
  virtual void abort(std::exception_ptr) {}

  // Waits until rank r's GPU work is done: first its own stream (hipStreamPerThread
  // of the calling thread) and every launch on another stream since the last call
  // (see track_launch), polling so that an abort can release it; then the whole GPU
  // (hipDeviceSynchronize). Throws if a kernel failed. On the rank's thread only.
  void sync_device(int r);
  // What Rank's methods (rank_methods.hpp) ask of every backend's world: after
  // an allocate or free, kernels launched later check against the new table;
  // kernels launched before a host barrier are complete after it.
  void heap_changed(int r) { publish_allocations(r); }
  void before_barrier(int r) {
    sync_device(r);
    complete_puts(r);
  }
  // Once rank r's kernels are done: their puts to far ranks complete at their
  // targets (a provider of worlds of several nodes).
  virtual void complete_puts(int) {}
  int multiprocessor_count(int r) const;
  // Throws the Error for a failed device call of rank r, with the checked-mode
  // reports of the ranks of this process.
  [[noreturn]] void device_failed(int r, const char* call, hipError_t error);
  // How long a kernel that wrote its checked-mode report may still run before
  // sync_device reports it without the trap's error.
  static constexpr std::chrono::seconds kTrapGrace{2};
  // The same for rank r's kernel that wrote its report kTrapGrace ago and still runs.
  [[noreturn]] void report_without_end(int r);
  // Throws `what`, followed by the checked-mode reports of the ranks of this
  // process and where each of them waited.
  [[noreturn]] void fail_with_reports(const std::string& what);

  DeviceContext context(int r) const;
  // The Rank object handed to the body (Rank's constructor is for World only).
  Rank make_rank(int r) { return Rank(this, r); }
  // The same on the heap, for a world held open between calls (WorldHandle).
  std::unique_ptr<Rank> new_rank(int r) { return std::unique_ptr<Rank>(new Rank(this, r)); }
  GpuRank& local(int r) { return *locals_[static_cast<std::size_t>(r)]; }
  const GpuRank& local(int r) const { return *locals_[static_cast<std::size_t>(r)]; }

  // Allocates rank r's heap on `device` (current device set here), zeroes heap and
  // runtime area, and creates its report buffer. Does not fill the base tables.
  void create_heap(GpuRank& g);
  // Where create_heap takes the heap's memory, `bytes` that it places at the
  // next multiple of `alignment` (hipMalloc'ed with `alignment` bytes more), and
  // how release gives it back: hipMalloc and hipFree unless a provider has its
  // own (NVSHMEM's symmetric heap). Null: out of memory.
  virtual void* allocate_heap(std::size_t bytes, std::size_t alignment);
  virtual void free_heap(void* allocation);
  // Once bases[] is complete: the device base table and the runtime area's report
  // pointer of a local rank.
  void publish(GpuRank& g);
  // Frees a local rank's device resources (errors ignored: used on teardown).
  void release(GpuRank& g);
  // What a local rank recorded, once its kernels are done (the run records a trace).
  RankTrace take_trace(int r);
  // The offset from `device`'s trace clock to the host's steady clock (current
  // device set here), measured once per device: ranks that share a GPU share its
  // clock, so their spans must share the offset too, or they misalign by the
  // measurement's error.
  std::int64_t trace_clock_offset(int rank, int device);

  // IRIS_TRACE's settings, while the run records a trace.
  const std::optional<TraceSettings> trace_options = trace_settings();
  // IRIS_HANG_TIMEOUT in nanoseconds: how long a checked kernel's wait spins
  // before it reports a hang.
  const unsigned long long hang_timeout_ns;
  std::map<int, std::int64_t> trace_clock_offsets_;  // by device, once measured

  const int size;
  const std::size_t heap_size;
  // My node team and the far ranks' slots (DeviceContext): one node unless a
  // provider reaches far ranks.
  int node_first = 0;
  int node_size;
  const char* far_slots = nullptr;
  std::size_t slot_stride = 0;
  std::vector<char*> bases;  // heap base of every rank, as addressed from this process
  std::vector<std::unique_ptr<GpuRank>> locals_;  // by rank; null for ranks of other processes
};

// Sets the calling thread's current device for its lifetime, then restores it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device, int rank);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Number of visible GPUs; throws "<who>: no usable GPU ..." if there is none.
int device_count(const char* who);

// Records an event after a launch on a stream other than the calling thread's own
// (declared for launch_kernel in launch_gpu.hpp); sync_device waits for it.
void track_launch(hipStream_t stream);

}  // namespace iris::detail
