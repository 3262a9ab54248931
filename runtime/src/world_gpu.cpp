// Iris runtime, GPU backend: heaps in device memory, Rank, and run_threads (ranks as
// threads of this process, placed round-robin on the visible GPUs). See world_gpu.hpp.
#include "world_gpu.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "hang_timeout.hpp"
#include "rank_methods.hpp"
#include "rank_threads.hpp"

namespace iris {
namespace detail {
namespace {

// Kernels of different ranks wait for each other, so they must be able to run at
// the same time. With lazy module loading (the default since CUDA 12.2) the first
// launch of a kernel may wait for the kernels that are running: a rank whose kernel
// waits for another rank's kernel that has not been loaded yet would deadlock. So
// modules are loaded eagerly, unless the user has chosen otherwise. The setting is
// read when the driver starts, hence a static initialiser (it runs before main,
// before the program's first CUDA call).
const bool eager_module_loading = [] {
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  setenv("HIP_ENABLE_DEFERRED_LOADING", "0", 0);
  return true;
}();

// Host-mapped words through which the host reads the GPU's trace clock.
struct ClockPings {
  static constexpr int kRounds = 16;
  int ping;      // the host's round, written just after it reads its clock
  int answered;  // the last round the GPU answered
  std::uint64_t clock[kRounds];  // the GPU's clock when it saw each round
};

// One thread answers each of the host's pings with the trace clock.
__global__ void answer_clock_pings(volatile ClockPings* pings) {
  for (int round = 1; round <= ClockPings::kRounds; ++round) {
    while (pings->ping < round) {
    }
    pings->clock[round - 1] = trace_clock();
    __threadfence_system();
    pings->answered = round;
  }
}

}  // namespace

// ------------------------------------------------------------------ errors

void hip_fail(const char* call, hipError_t error, int rank, int device) {
  std::ostringstream s;
  s << "iris: " << call << " failed";
  if (rank >= 0) s << " on rank " << rank;
  if (device >= 0) s << " (GPU " << device << ")";
  s << ": " << hipGetErrorName(error) << ": " << hipGetErrorString(error);
  throw Error(s.str());
}

int device_count(const char* who) {
  int count = 0;
  const hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count < 1) {
    std::string why = e != hipSuccess ? std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e)
                                      : std::string("no device is visible");
    throw Error(std::string("iris: ") + who + ": no usable GPU (hipGetDeviceCount: " + why +
                "; check the driver and CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES)");
  }
  return count;
}

DeviceGuard::DeviceGuard(int device, int rank) {
  if (hipGetDevice(&previous_) != hipSuccess) previous_ = -1;
  IRIS_HIP(rank, device, hipSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)hipSetDevice(previous_);
}

// ------------------------------------------------------------------ collectives

// ------------------------------------------------------------------ world

namespace {
unsigned long long hang_timeout_ns_setting() {
  std::string failure;
  const double seconds = hang_timeout_setting("the GPU world", failure);
  if (!failure.empty()) throw Error(failure);
  return static_cast<unsigned long long>(seconds * 1e9);
}
}  // namespace

World::World(int size_, std::size_t heap_bytes)
    : hang_timeout_ns(hang_timeout_ns_setting()),
      size(size_),
      heap_size(heap_bytes),
      node_size(size_),
      bases(static_cast<std::size_t>(size_), nullptr) {
  locals_.resize(static_cast<std::size_t>(size_));
}

void World::throw_aborted(int r) const {
  throw Error("iris: rank " + std::to_string(r) + " stopped because another rank failed");
}

void World::create_heap(GpuRank& g) {
  constexpr std::size_t align = HeapAllocator::kMaxAlignment;
  if (heap_size > SIZE_MAX - kRuntimeAreaBytes - align) {
    throw Error("iris: cannot allocate a symmetric heap of " + std::to_string(heap_size) + " bytes: too large");
  }
  void* p = allocate_heap(heap_size + kRuntimeAreaBytes, align);
  if (p == nullptr) {
    std::size_t free_bytes = 0, total_bytes = 0;
    const hipError_t e = hipGetLastError();
    (void)hipMemGetInfo(&free_bytes, &total_bytes);
    throw Error("iris: cannot allocate the symmetric heap of rank " + std::to_string(g.rank) + " (" +
                std::to_string(heap_size) + " bytes and a runtime area of " + std::to_string(kRuntimeAreaBytes) +
                " bytes) on GPU " + std::to_string(g.device) + ": " +
                (e != hipSuccess ? std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e)
                                 : std::string("the provider's symmetric heap is full")) +
                " (" + std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free on the GPU)");
  }
  g.allocation = static_cast<char*>(p);
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  g.base = g.allocation + ((addr + align - 1) / align * align - addr);
  // A fresh heap reads as zero, as on the CPU; the runtime area must start zeroed.
  IRIS_HIP(g.rank, g.device, hipMemset(g.base, 0, heap_size + kRuntimeAreaBytes));
  for (ErrorReport** buffer : {&g.report, &g.waiting}) {
    void* p = nullptr;
    IRIS_HIP(g.rank, g.device, hipHostMalloc(&p, sizeof(ErrorReport), hipHostMallocMapped | hipHostMallocPortable));
    std::memset(p, 0, sizeof(ErrorReport));
    *buffer = static_cast<ErrorReport*>(p);
  }
  void* table = nullptr;
  IRIS_HIP(g.rank, g.device, hipMalloc(&table, sizeof(char*) * static_cast<std::size_t>(size)));
  g.device_bases = static_cast<char**>(table);
  if (trace_options) {
    const std::size_t capacity = trace_options->events_per_rank;
    void* trace = nullptr;
    IRIS_HIP(g.rank, g.device, hipMalloc(&trace, sizeof(TraceBuffer) + capacity * sizeof(TraceEvent)));
    g.trace = static_cast<TraceBuffer*>(trace);
    const TraceBuffer header{reinterpret_cast<TraceEvent*>(g.trace + 1), capacity, 0, 0};
    IRIS_HIP(g.rank, g.device, hipMemcpy(g.trace, &header, sizeof header, hipMemcpyHostToDevice));
    // A slot claimed and never filled must read as one (its end 0).
    IRIS_HIP(g.rank, g.device, hipMemset(g.trace + 1, 0, capacity * sizeof(TraceEvent)));
    g.trace_clock_offset = trace_clock_offset(g.rank, g.device);
  }
}

std::int64_t World::trace_clock_offset(int rank, int device) {
  const auto known = trace_clock_offsets_.find(device);
  if (known != trace_clock_offsets_.end()) return known->second;
  // Cristian's method over host-mapped memory: the host notes its clock, pings
  // the running kernel, and notes its clock again when the answer arrives; the
  // GPU's reading is taken as half-way, so the error is at most half the round
  // trip (about a microsecond across PCIe, where a launch and a copy would take
  // ten). The shortest of the rounds is kept.
  void* mapped = nullptr;
  IRIS_HIP(rank, device, hipHostMalloc(&mapped, sizeof(ClockPings), hipHostMallocMapped | hipHostMallocPortable));
  auto* pings = static_cast<volatile ClockPings*>(mapped);
  pings->ping = 0;
  pings->answered = 0;
  void* device_pings = nullptr;
  hipError_t e = hipHostGetDevicePointer(&device_pings, mapped, 0);
  if (e == hipSuccess) {
    answer_clock_pings<<<1, 1>>>(static_cast<volatile ClockPings*>(device_pings));
    e = hipGetLastError();
  }
  std::int64_t best_trip = INT64_MAX, offset = 0;
  const std::int64_t give_up = steady_now() + 10'000'000'000;  // the kernel never started
  for (int round = 1; e == hipSuccess && round <= ClockPings::kRounds; ++round) {
    const std::int64_t before = steady_now();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    pings->ping = round;
    while (pings->answered < round && steady_now() < give_up) {
    }
    const std::int64_t after = steady_now();
    if (pings->answered < round) {  // (the words stay allocated: the kernel may still read them)
      throw Error("iris: rank " + std::to_string(rank) + " could not read the clock of GPU " +
                  std::to_string(device) + " for its trace (IRIS_TRACE): the GPU did not answer in 10 s");
    }
    if (after - before < best_trip) {
      best_trip = after - before;
      offset = before + best_trip / 2 - static_cast<std::int64_t>(pings->clock[round - 1]);
    }
  }
  if (e == hipSuccess) e = hipDeviceSynchronize();
  (void)hipHostFree(mapped);
  IRIS_HIP(rank, device, e);
  trace_clock_offsets_.emplace(device, offset);
  return offset;
}

RankTrace World::take_trace(int r) {
  GpuRank& g = local(r);
  DeviceGuard on(g.device, r);
  TraceBuffer header{};
  IRIS_HIP(r, g.device, hipMemcpy(&header, g.trace, sizeof header, hipMemcpyDeviceToHost));
  const unsigned long long claimed = std::min(header.claimed, header.capacity);
  std::vector<TraceEvent> events(claimed);
  IRIS_HIP(r, g.device, hipMemcpy(events.data(), g.trace + 1, claimed * sizeof(TraceEvent), hipMemcpyDeviceToHost));
  header.events = events.data();
  RankTrace trace = detail::take_trace(r, header);
  trace.clock_offset = g.trace_clock_offset;
  return trace;
}

void World::publish(GpuRank& g) {
  IRIS_HIP(g.rank, g.device,
           hipMemcpy(g.device_bases, bases.data(), sizeof(char*) * bases.size(), hipMemcpyHostToDevice));
  void* device_report = nullptr;
  IRIS_HIP(g.rank, g.device, hipHostGetDevicePointer(&device_report, g.report, 0));
  auto* area = reinterpret_cast<BarrierState*>(g.base + heap_size);
  ErrorReport* value = static_cast<ErrorReport*>(device_report);
  IRIS_HIP(g.rank, g.device, hipMemcpy(&area->report, &value, sizeof value, hipMemcpyHostToDevice));
  IRIS_HIP(g.rank, g.device, hipMemcpy(&area->trace, &g.trace, sizeof g.trace, hipMemcpyHostToDevice));
  void* device_waiting = nullptr;
  IRIS_HIP(g.rank, g.device, hipHostGetDevicePointer(&device_waiting, g.waiting, 0));
  IRIS_HIP(g.rank, g.device, hipMemcpy(&area->waiting, &device_waiting, sizeof device_waiting, hipMemcpyHostToDevice));
  IRIS_HIP(g.rank, g.device,
           hipMemcpy(&area->hang_timeout_ns, &hang_timeout_ns, sizeof hang_timeout_ns, hipMemcpyHostToDevice));
  IRIS_HIP(g.rank, g.device, hipDeviceSynchronize());
}

void* World::allocate_heap(std::size_t bytes, std::size_t alignment) {
  void* p = nullptr;
  return hipMalloc(&p, bytes + alignment) == hipSuccess ? p : nullptr;
}

void World::free_heap(void* allocation) { (void)hipFree(allocation); }

void World::release(GpuRank& g) {
  if (g.device >= 0) (void)hipSetDevice(g.device);
  if (g.device_bases != nullptr) (void)hipFree(g.device_bases);
  if (g.allocation != nullptr) free_heap(g.allocation);
  if (g.report != nullptr) (void)hipHostFree(g.report);
  if (g.waiting != nullptr) (void)hipHostFree(g.waiting);
  g.waiting = nullptr;
  if (g.trace != nullptr) (void)hipFree(g.trace);
  g.trace = nullptr;
  g.device_bases = nullptr;
  g.allocation = nullptr;
  g.base = nullptr;
  g.report = nullptr;
}

DeviceContext World::context(int r) const {
  const GpuRank& g = local(r);
  auto* area = reinterpret_cast<BarrierState*>(g.base + heap_size);
  return {g.device_bases, heap_size, r, size, node_first, node_size, area, &area->allocations, far_slots, slot_stride};
}

void World::publish_allocations(int r) {
  GpuRank& g = local(r);
  g.allocations = allocation_table(r);
  auto* area = reinterpret_cast<BarrierState*>(g.base + heap_size);
  // From pageable memory: the source is consumed before the call returns.
  IRIS_HIP(r, g.device, hipMemcpyAsync(&area->allocations, &g.allocations, sizeof g.allocations,
                                       hipMemcpyHostToDevice, hipStreamPerThread));
}

void World::device_failed(int r, const char* call, hipError_t error) {
  std::ostringstream s;
  s << "iris: a kernel of rank " << r << " (GPU " << local(r).device << ") failed: " << call << ": "
    << hipGetErrorName(error) << ": " << hipGetErrorString(error);
  fail_with_reports(s.str());
}

void World::report_without_end(int r) {
  std::ostringstream s;
  s << "iris: a kernel of rank " << r << " (GPU " << local(r).device << ") failed: it wrote a checked-mode report "
    << "and trapped, but its stream still runs " << kTrapGrace.count() << " s later (the trap's end was not "
    << "reported to this process)";
  fail_with_reports(s.str());
}

void World::fail_with_reports(const std::string& what) {
  std::ostringstream s;
  s << what;
  // Checked mode left its message in host memory, which stays readable after a trap.
  std::string reports;
  for (const auto& l : locals_) {
    if (l == nullptr || l->report == nullptr) continue;
    const unsigned length = l->report->length;
    if (length == 0) continue;
    reports += reports.empty() ? "" : "; ";
    reports.append(l->report->text, std::min<std::size_t>(length, ErrorReport::kCapacity - 1));
  }
  if (!reports.empty()) s << " -- checked mode: " << reports;
  // Where the ranks of this process waited when the kernels stopped (checked
  // waits say so after a millisecond).
  for (const auto& l : locals_) {
    if (l == nullptr || l->waiting == nullptr) continue;
    const unsigned length = l->waiting->length;
    if (length == 0) continue;
    s << "; rank " << l->rank << " waits in ";
    s.write(l->waiting->text, static_cast<std::streamsize>(std::min<std::size_t>(length, ErrorReport::kCapacity - 1)));
  }
  throw Error(s.str());
}

namespace {

// An event and the GPU it was created on, the only one whose streams can record it.
struct TrackedEvent {
  hipEvent_t event;
  int device;
};

// Launches of the calling thread (= rank) on streams other than its own since its
// last sync_device: an event recorded after each, oldest first, and finished
// events for reuse.
struct TrackedLaunches {
  std::deque<TrackedEvent> pending;
  std::vector<TrackedEvent> spare;
  ~TrackedLaunches() {
    for (const TrackedEvent& e : spare) (void)hipEventDestroy(e.event);  // pending ones may still run: left alone
  }
};
thread_local TrackedLaunches tracked;

}  // namespace

void track_launch(hipStream_t stream) {
  // A launch into a stream capture only adds a node to a graph: nothing runs to
  // wait for, and an event recorded in a capture cannot be waited for (the
  // graph's replays are the caller's to synchronise).
  hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
  IRIS_HIP(-1, -1, hipStreamIsCapturing(stream, &capture));
  if (capture != hipStreamCaptureStatusNone) return;
  // A caller that never reaches a barrier (a library launching on its own
  // stream outside run_threads and run_mpi) would otherwise hold one event per
  // launch it ever made: the finished launches' events go back to the spares
  // here, oldest first, up to the first one not finished (an error is left
  // for sync_device to report). What stays pending is the launches from the
  // oldest unfinished one on.
  while (!tracked.pending.empty() && hipEventQuery(tracked.pending.front().event) == hipSuccess) {
    tracked.spare.push_back(tracked.pending.front());
    tracked.pending.pop_front();
  }
  // The launch ran on the current GPU, so the stream is that GPU's: a spare
  // created on another one cannot record there.
  int device = -1;
  IRIS_HIP(-1, -1, hipGetDevice(&device));
  const auto same_gpu = std::find_if(tracked.spare.rbegin(), tracked.spare.rend(),
                                     [&](const TrackedEvent& e) { return e.device == device; });
  TrackedEvent event{nullptr, device};
  if (same_gpu != tracked.spare.rend()) {
    event = *same_gpu;
    tracked.spare.erase(std::next(same_gpu).base());
  } else {
    IRIS_HIP(-1, -1, hipEventCreateWithFlags(&event.event, hipEventDisableTiming));
  }
  const hipError_t e = hipEventRecord(event.event, stream);
  if (e != hipSuccess) {
    tracked.spare.push_back(event);
    hip_fail("hipEventRecord (after a launch on a user stream)", e, -1, -1);
  }
  tracked.pending.push_back(event);
}

std::size_t tracked_launches() { return tracked.pending.size(); }

int World::multiprocessor_count(int r) const {
  const int device = local(r).device;
  int count = 0;
  IRIS_HIP(r, device, hipDeviceGetAttribute(&count, hipDeviceAttributeMultiprocessorCount, device));
  return count;
}

void World::sync_device(int r) {
  // First poll the rank's own work rather than block, so that a rank whose kernels
  // wait for a failed rank can still be released by the abort flag.
  const auto done = [&](hipError_t e, const char* call) {
    if (e == hipSuccess) return true;
    if (e != hipErrorNotReady) device_failed(r, call, e);
    return false;
  };
  // When the rank's own kernel reported: the time the host first saw the report.
  std::optional<std::chrono::steady_clock::time_point> reported;
  for (int round = 0;; ++round) {
    bool all = done(hipStreamQuery(hipStreamPerThread), "hipStreamQuery(rank stream)");
    while (all && !tracked.pending.empty()) {
      if (!done(hipEventQuery(tracked.pending.back().event), "hipEventQuery(launch on a user stream)")) {
        all = false;
        break;
      }
      tracked.spare.push_back(tracked.pending.back());
      tracked.pending.pop_back();
    }
    if (all) break;
    if (is_aborted()) throw_aborted(r);
    // A checked kernel traps right after writing its report, which ends the
    // stream in an error within microseconds. Under mpirun with processes
    // sharing a GPU, the error has been seen not to arrive at all (gpu.md): the
    // report itself then ends the wait.
    if (const ErrorReport* report = local(r).report; report != nullptr && report->length != 0) {
      const auto now = std::chrono::steady_clock::now();
      if (!reported) reported = now;
      if (now - *reported > kTrapGrace) report_without_end(r);
    }
    if (round < 100) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(round < 10000 ? 20 : 200));
  }
  // Then everything else on the GPU: copies on the legacy null stream (a plain
  // hipMemcpy from pageable memory may return before its DMA is done), other
  // streams, and the kernels of other ranks that share the GPU. This one blocks; a
  // correct program's work always finishes (what a rank launched before the barrier
  // cannot wait for anything done after it).
  if (is_aborted()) throw_aborted(r);
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) device_failed(r, "hipDeviceSynchronize", e);
}

namespace {

// ------------------------------------------------------------------ threads mode

class ThreadsWorld final : public World {
 public:
  ThreadsWorld(int size, std::size_t heap_bytes);
  ~ThreadsWorld() override;

  void run_rank(int r, const std::function<void(Rank&)>& body);
  std::uint64_t collective(int r, const CollectiveCall& call) override;
  const AllocationTable& allocation_table(int) const override { return allocator_.table(); }
  bool is_aborted() const override { return aborted_.load(std::memory_order_acquire); }
  void abort(std::exception_ptr e) override;
  // Waits for every GPU (after the rank threads are joined).
  void finish();

  std::exception_ptr first_error;

 private:
  struct PerRank {
    std::atomic<bool> finished{false};
    std::uint64_t collectives = 0;  // written by the rank's thread only
  };

  std::atomic<bool> aborted_{false};
  std::vector<PerRank> ranks_;
  ThreadRendezvous rendezvous_;  // its lock also guards first_error
  HeapAllocator allocator_;
};

ThreadsWorld::ThreadsWorld(int size_, std::size_t heap_bytes)
    : World(size_, heap_bytes), ranks_(static_cast<std::size_t>(size_)), rendezvous_(size_), allocator_(heap_bytes) {
  const int devices = device_count("run_threads");
  const int used = size < devices ? size : devices;
  try {
    // Heaps, round-robin over the GPUs (several ranks may share one).
    for (int r = 0; r < size; ++r) {
      auto g = std::make_unique<GpuRank>();
      g->rank = r;
      g->device = r % devices;
      GpuRank& ref = *g;
      locals_[static_cast<std::size_t>(r)] = std::move(g);
      DeviceGuard on(ref.device, r);
      create_heap(ref);
      bases[static_cast<std::size_t>(r)] = ref.base;
    }
    // Every GPU in use must reach every other one's memory.
    for (int a = 0; a < used; ++a) {
      DeviceGuard on(a, -1);
      for (int b = 0; b < used; ++b) {
        if (a == b) continue;
        int can = 0;
        IRIS_HIP(-1, a, hipDeviceCanAccessPeer(&can, a, b));
        if (can == 0) {
          throw Error("iris: run_threads: GPU " + std::to_string(a) + " cannot access the memory of GPU " +
                      std::to_string(b) + " (no peer access); run fewer ranks than GPUs or select GPUs with "
                      "peer access (CUDA_VISIBLE_DEVICES)");
        }
        const hipError_t e = hipDeviceEnablePeerAccess(b, 0);
        if (e == hipErrorPeerAccessAlreadyEnabled) {
          (void)hipGetLastError();  // not an error here: a previous world enabled it
        } else if (e != hipSuccess) {
          hip_fail(("hipDeviceEnablePeerAccess(" + std::to_string(b) + ", 0)").c_str(), e, -1, a);
        }
      }
    }
    for (int r = 0; r < size; ++r) {
      GpuRank& g = local(r);
      DeviceGuard on(g.device, r);
      publish(g);
    }
  } catch (...) {
    for (auto& g : locals_) {
      if (g != nullptr) release(*g);
    }
    throw;
  }
}

ThreadsWorld::~ThreadsWorld() {
  // After an abort, kernels of the surviving ranks may still spin (waiting for a
  // rank that failed); hipFree would wait for them. The memory then goes with the
  // process.
  if (is_aborted()) return;
  for (auto& g : locals_) {
    if (g != nullptr) release(*g);
  }
}

void ThreadsWorld::run_rank(int r, const std::function<void(Rank&)>& body) {
  try {
    IRIS_HIP(r, local(r).device, hipSetDevice(local(r).device));
    Rank rank = make_rank(r);
    body(rank);
    sync_device(r);  // kernels still running belong to the rank: report their failure here
  } catch (...) {
    abort(std::current_exception());
  }
  ranks_[static_cast<std::size_t>(r)].finished.store(true, std::memory_order_release);
  rendezvous_.wake([] {});  // ranks asleep in a collective call give up
}

void ThreadsWorld::abort(std::exception_ptr e) {
  rendezvous_.wake([&] {
    if (!first_error) first_error = std::move(e);
    aborted_.store(true, std::memory_order_release);
  });
}

void ThreadsWorld::finish() {
  // After an abort kernels may still spin: there is no trace to read then.
  if (is_aborted()) return;
  // Ranks are placed round-robin, so rank d is the first rank on GPU d.
  for (int d = 0; d < size; ++d) {
    const GpuRank& g = local(d);
    if (g.device != d) break;
    DeviceGuard on(g.device, -1);
    const hipError_t e = hipDeviceSynchronize();
    if (e != hipSuccess) {
      try {
        device_failed(d, "hipDeviceSynchronize at the end of run_threads", e);
      } catch (...) {
        abort(std::current_exception());
      }
    }
  }
  if (!trace_options || is_aborted()) return;
  try {
    std::vector<RankTrace> traces;
    for (int r = 0; r < size; ++r) traces.push_back(take_trace(r));
    write_trace(trace_options->path, std::move(traces));
  } catch (...) {
    abort(std::current_exception());
  }
}

std::uint64_t ThreadsWorld::collective(int r, const CollectiveCall& call) {
  PerRank& me = ranks_[static_cast<std::size_t>(r)];
  // A rank that returned from its body will never arrive.
  struct Hooks {
    ThreadsWorld& world;
    int r;
    bool aborted() const { return world.is_aborted(); }
    bool returned(int o) const {
      return world.ranks_[static_cast<std::size_t>(o)].finished.load(std::memory_order_acquire);
    }
    std::string describe(int o) const { return "rank " + std::to_string(o) + " has returned from its body"; }
    void arrived(int, std::uint64_t) {}
    void last(std::uint64_t) {}
    void throw_aborted() const { world.throw_aborted(r); }
    [[noreturn]] void fail(const std::string& message) {
      Error error(message);
      world.abort(std::make_exception_ptr(error));
      throw error;
    }
    void entered(std::uint64_t) {}
    void left() {}
    void completed(std::uint64_t) {}
  } hooks{*this, r};
  return rendezvous_.collective(r, me.collectives, call, allocator_, hooks);
}

}  // namespace
}  // namespace detail

// ------------------------------------------------------------------ run_threads

void run_threads(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  detail::run_threads_in<detail::ThreadsWorld>(ranks, heap_bytes, body);
}

}  // namespace iris
