// Iris runtime, CPU backend: run_mpi -- one process per rank, started by mpirun,
// on any number of hosts (library iris_runtime_cpu_mpi; docs/multi-node.md) --
// and WorldHandle, whose processes meet through MPI or, on one host, through
// the program's Bootstrap (host.hpp).
//
// Start-up, in steps that every process takes together (bootstrap_steps.hpp: a
// step that fails on one process fails on all, naming the ranks):
//   1. the settings (IRIS_TRANSPORT, IRIS_RANKS_PER_NODE, IRIS_HANG_TIMEOUT), the
//      same on every rank, and the heap size, the same on every rank;
//   2. the node teams: the ranks that share a host (its name, as MPI's SHARED),
//      cut into fake nodes of IRIS_RANKS_PER_NODE consecutive ranks where it is
//      set (tests: several nodes on one host); a team must be consecutive ranks.
//      The provider: ipc where the world is one node, mpi where it is more
//      (which needs the processes to have met through MPI);
//   3. the heaps, in one range of address space reserved (PROT_NONE) for all
//      of them: rank r's slot is at base + r * stride (the heap size rounded up
//      to 2 MiB, so that every heap base is aligned as run_threads' are). My
//      heap is a memfd mapped into my slot; the members of my team map each
//      other's (through /proc/<pid>/fd/<fd>, exchanged by allgather) into theirs.
//      Far slots stay PROT_NONE: a load from them faults;
//   4. provider mpi: an MPI window over my heap on the runtime's communicator
//      (MPI_Win_create), passive target for the whole run (MPI_Win_lock_all).
//
// Far memory (Transport): a put copies its data (MPI reads a put's buffer until
// it completes, and the tile it came from is gone when the put returns) and
// issues MPI_Put, completed by MPI_Win_flush_all at quiet; a get is MPI_Get and
// MPI_Win_flush_local; atomics are MPI_Fetch_and_op / MPI_Compare_and_swap /
// MPI_Accumulate, each followed by MPI_Win_flush of its target.
//
// Meetings: host collective calls, device barriers and the end of the body are
// one allgather each, of the same words (what the rank is doing, its
// number, its call), so that ranks doing different things find out and fail
// alike instead of waiting in different collectives for ever. Each meeting
// first completes the rank's puts and afterwards syncs the window
// (MPI_Win_sync): what any rank wrote before it is visible after it.
//
// Waits: a rank that spins in wait_until drives MPI's progress (MPI_Win_sync,
// MPI_Iprobe), which a target of osc pt2pt needs to apply what others put or
// accumulate into its heap; after IRIS_HANG_TIMEOUT seconds it gives up.
//
// The handle (WorldHandle): MPI, the world, the Rank and the rank's thread
// (run_threads' stack size), on which each run() runs its work; run_mpi is
// the handle's constructor, one run(body) and close().
//
// Failures: an exception that leaves run_mpi's body (a hang, a deadlock,
// anything else) is printed and ends the job with MPI_Abort, as nothing tells
// the other ranks, which may wait in MPI for this one. Start-up failures are
// thrown on every rank alike, after MPI has been ended.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "heap_allocator.hpp"
#include "heap_memory.hpp"
#include "bootstrap_steps.hpp"
#include "mpi_start.hpp"
#include "node_teams.hpp"
#include "rank_threads.hpp"
#include "trace_processes.hpp"
#include "transport.hpp"
#include "world.hpp"

namespace iris {
namespace detail {
namespace {

// ------------------------------------------------------------------ heap slots

constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// One range of address space for every rank's heap: slot r at base + r * stride,
// PROT_NONE until a heap is mapped into it.
class HeapSlots {
 public:
  HeapSlots(int ranks, std::size_t heap_bytes)
      : stride_(round_up(heap_bytes, HeapMemory::kBaseAlignment)), heap_bytes_(heap_bytes) {
    if (stride_ > (SIZE_MAX - HeapMemory::kBaseAlignment) / static_cast<std::size_t>(ranks)) {
      throw Error("iris: run_mpi: cannot reserve " + std::to_string(ranks) + " heaps of " + std::to_string(heap_bytes) +
                  " bytes: too large");
    }
    size_ = stride_ * static_cast<std::size_t>(ranks) + HeapMemory::kBaseAlignment;
    void* m = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      throw Error("iris: run_mpi: cannot reserve the address space of " + std::to_string(ranks) + " heaps of " +
                  std::to_string(heap_bytes) + " bytes: mmap: " + std::strerror(errno));
    }
    mapping_ = static_cast<char*>(m);
    const auto address = reinterpret_cast<std::uintptr_t>(m);
    base_ = mapping_ + (round_up(address, HeapMemory::kBaseAlignment) - address);
  }
  ~HeapSlots() { munmap(mapping_, size_); }
  HeapSlots(const HeapSlots&) = delete;
  HeapSlots& operator=(const HeapSlots&) = delete;

  char* slot(int r) const { return base_ + stride_ * static_cast<std::size_t>(r); }
  std::size_t stride() const { return stride_; }

  // Maps the heap memory `fd` (shared, read and write) into rank r's slot.
  void map(int r, int fd, const std::string& what) {
    if (mmap(slot(r), heap_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
      throw Error("iris: run_mpi: cannot map " + what + ": mmap: " + std::strerror(errno));
    }
  }

 private:
  std::size_t stride_;
  std::size_t heap_bytes_;
  std::size_t size_ = 0;
  char* mapping_ = nullptr;
  char* base_ = nullptr;
};

// A file descriptor, closed with its owner.
struct Descriptor {
  int fd = -1;
  Descriptor() = default;
  explicit Descriptor(int fd) : fd(fd) {}
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
};

// Where a process's heap can be opened by the other processes of its host.
struct HeapHandle {
  std::int64_t pid;
  std::int64_t fd;
};

// ------------------------------------------------------------------ put buffers

// Copies of the data of the puts not completed yet, released at quiet.
class PutBuffers {
 public:
  const void* keep(const void* from, std::size_t bytes) {
    if (blocks_.empty() || blocks_.back().size() - used_ < bytes) {
      blocks_.emplace_back(std::max(bytes, kBlockBytes));
      used_ = 0;
    }
    char* to = blocks_.back().data() + used_;
    std::memcpy(to, from, bytes);
    used_ += bytes;
    return to;
  }
  // Keeps one block as large as all of them were, for the next round of puts.
  void release() {
    if (blocks_.size() > 1) {
      std::size_t total = 0;
      for (const auto& block : blocks_) total += block.size();
      blocks_.clear();
      blocks_.emplace_back(total);
    }
    used_ = 0;
  }

 private:
  static constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  std::vector<std::vector<char>> blocks_;
  std::size_t used_ = 0;  // in the last block
};

MPI_Datatype mpi_type(FarElement type) {
  switch (type) {
    case FarElement::i32: return MPI_INT32_T;
    case FarElement::u32: return MPI_UINT32_T;
    case FarElement::i64: return MPI_INT64_T;
    case FarElement::u64: return MPI_UINT64_T;
    case FarElement::f32: return MPI_FLOAT;
    case FarElement::f64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

// MPI_Compare_and_swap takes integers only: floating-point elements are
// compared bit for bit, as std::atomic_ref's compare-exchange does.
MPI_Datatype mpi_bits_type(FarElement type) {
  switch (type) {
    case FarElement::f32: return MPI_UINT32_T;
    case FarElement::f64: return MPI_UINT64_T;
    default: return mpi_type(type);
  }
}

MPI_Op mpi_op(FarOp op) {
  switch (op) {
    case FarOp::sum: return MPI_SUM;
    case FarOp::band: return MPI_BAND;
    case FarOp::bor: return MPI_BOR;
    case FarOp::bxor: return MPI_BXOR;
    case FarOp::min: return MPI_MIN;
    case FarOp::max: return MPI_MAX;
    case FarOp::replace: return MPI_REPLACE;
    case FarOp::no_op: return MPI_NO_OP;
  }
  return MPI_OP_NULL;
}

// ------------------------------------------------------------------ the world

// What a rank is doing when it meets the others (ProcessWorld::meet).
enum class Doing : std::uint64_t { host_collective, device_barrier, returned };

class ProcessWorld final : public World, public Transport {
 public:
  // `mpi`: boot, where the processes meet through MPI (which far ranks need); else null.
  ProcessWorld(Bootstrap& boot, MpiBootstrap* mpi, std::size_t heap_bytes);

  // World
  std::uint64_t collective(int r, const CollectiveCall& call) override;
  const AllocationTable& allocation_table(int) const override { return allocator_.table(); }
  DeviceContext context(int r) override {
    DeviceContext ctx{bases.data(), heap_size, r, size, node_first_, node_size_, &barrier_state_, &allocator_.table()};
    if (node_size_ != size) ctx.far_slots = slots_->slot(0), ctx.slot_stride = slots_->stride();
    return ctx;
  }

  // Transport
  void put(int rank, std::uint64_t offset, const void* from, std::size_t bytes) override;
  void get(int rank, std::uint64_t offset, void* to, std::size_t bytes) override;
  void fetch_op(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value, void* old) override;
  void compare_swap(int rank, std::uint64_t offset, FarElement type, const void* compare, const void* value,
                    void* old) override;
  void accumulate(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value) override;
  void quiet() override;
  void barrier(int program_id) override;
  void wait_begins(const char* file, int line) override;
  bool wait_poll() override;
  std::string hang_report(int program_id) const override;
  DeviceContext context_of_rank() override { return context(me_); }

  // Every rank meets the others once more after its body: the end of the run.
  void close();
  // A failed rank's own events, to IRIS_TRACE's path + ".rank<r>" (the job
  // ends without the others'): where it was when it failed.
  void write_own_trace() const;

 private:
  // Every rank says what it does and gets everybody's words (kMeetingWords
  // each, in rank order); throws on every rank where they do different things.
  std::vector<std::uint64_t> meet(Doing doing, std::uint64_t number, const CollectiveCall& call);

  Bootstrap& boot_;
  const int me_;
  Settings settings_;
  int node_first_ = 0, node_size_ = 0;
  HeapAllocator allocator_;
  std::optional<HeapSlots> slots_;
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Comm window_comm_ = MPI_COMM_NULL;  // the window's, whose progress waits drive
  BarrierState barrier_state_;
  std::optional<TraceSettings> trace_options_;  // IRIS_TRACE's, while the run records a trace
  std::optional<HostTraceBuffers> trace_buffers_;  // this rank's
  std::uint64_t collectives_ = 0, barriers_ = 0;  // host collective calls and device barriers entered

  PutBuffers put_buffers_;
  bool unflushed_ = false;  // puts since the last MPI_Win_flush_all

  const char* wait_file_ = nullptr;
  int wait_line_ = 0;
  std::chrono::steady_clock::time_point wait_start_;
};

constexpr int kMeetingWords = 2 + CollectiveCall::kWords;

// "rank 2 waits in device barrier #3 (program 0)", from rank r's meeting words.
std::string describe_meeting(const std::uint64_t* words, int r) {
  const std::string who = "rank " + std::to_string(r);
  const CollectiveCall call = CollectiveCall::from_words(words + 2);
  switch (static_cast<Doing>(words[0])) {
    case Doing::host_collective:
      return who + " waits in host collective call #" + std::to_string(words[1]) + " (" + call.describe() + ")";
    case Doing::device_barrier:
      return who + " waits in device barrier #" + std::to_string(words[1]) + " (program " +
             std::to_string(call.value) + ")";
    case Doing::returned: return who + " has returned from its body";
  }
  return who + " does something unknown";
}

ProcessWorld::ProcessWorld(Bootstrap& boot, MpiBootstrap* mpi, std::size_t heap_bytes)
    : World(boot.size(), heap_bytes), boot_(boot), me_(boot.rank()), allocator_(heap_bytes) {
  // 1. Settings and heap size.
  std::string failure;
  settings_ = read_settings("the CPU target's providers: ipc, mpi", failure);
  if (settings_.provider == Provider::nvshmem) {
    failure = "iris: run_mpi: IRIS_TRANSPORT=nvshmem is a provider of the GPU target, which is not built for the "
              "CPU target (its providers: ipc, mpi)";
  }
  try {
    trace_options_ = trace_settings();
  } catch (const Error& e) {
    failure = e.what();
  }
  agree_step(boot, "reading IRIS_TRANSPORT, IRIS_RANKS_PER_NODE, IRIS_HANG_TIMEOUT and IRIS_TRACE_EVENTS", failure);
  check_same_settings(boot, settings_);
  check_heap_sizes(boot, heap_bytes);

  // 2. Node teams and the provider.
  const NodeTeams teams = form_node_teams(boot, settings_.ranks_per_node);
  node_first_ = teams.first, node_size_ = teams.size;
  const int nodes = teams.nodes;
  const Provider provider = settings_.provider != Provider::automatic ? settings_.provider
                            : nodes == 1                              ? Provider::ipc
                                                                      : Provider::mpi;
  if (provider == Provider::ipc && nodes > 1) {
    throw Error("iris: run_mpi: IRIS_TRANSPORT=ipc reaches the ranks of one node only, and this world has " +
                std::to_string(nodes) + " nodes (IRIS_TRANSPORT=mpi reaches every rank)");
  }
  if (provider == Provider::mpi && mpi == nullptr) {
    throw Error("iris: WorldHandle: the processes met through the program's Bootstrap, which reaches the ranks of one "
                "node only, and this world " +
                (nodes > 1 ? "has " + std::to_string(nodes) + " nodes" : std::string("asks for IRIS_TRANSPORT=mpi")) +
                ": far ranks are reached through MPI RMA, so start the processes with mpirun and join through MPI");
  }

  // 3. The heaps: my memfd in my slot, my team's in theirs.
  Descriptor memfd;
  try {
    slots_.emplace(size, heap_bytes);
    memfd.fd = memfd_create("iris-heap", MFD_CLOEXEC);
    if (memfd.fd < 0) {
      throw Error(std::string("iris: run_mpi: cannot create the heap: memfd_create: ") + std::strerror(errno));
    }
    if (ftruncate(memfd.fd, static_cast<off_t>(heap_bytes)) != 0) {
      throw Error("iris: run_mpi: cannot create a heap of " + std::to_string(heap_bytes) +
                  " bytes: ftruncate: " + std::strerror(errno));
    }
    slots_->map(me_, memfd.fd, "its own heap");
  } catch (const Error& e) {
    failure = e.what();
  }
  agree_step(boot, "creating the heaps", failure);
  const HeapHandle mine{static_cast<std::int64_t>(getpid()), memfd.fd};
  const std::vector<HeapHandle> handles = allgather_values(boot, mine);  // every rank's; my node's are read
  try {
    for (int i = 0; i < node_size_; ++i) {
      const int r = node_first_ + i;
      if (r == me_) continue;
      const HeapHandle& h = handles[static_cast<std::size_t>(r)];
      const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
      const std::string what = "the heap of rank " + std::to_string(r) + " (" + path + ")";
      const Descriptor opened(open(path.c_str(), O_RDWR | O_CLOEXEC));
      if (opened.fd < 0) throw Error("iris: run_mpi: cannot open " + what + ": " + std::strerror(errno));
      slots_->map(r, opened.fd, what);
    }
  } catch (const Error& e) {
    failure = e.what();
  }
  agree_step(boot, "mapping the heaps of the node teams", failure);  // then memfd may close
  for (int r = 0; r < size; ++r) bases.push_back(slots_->slot(r));

  // 4. The window of the far ranks.
  if (provider == Provider::mpi) {
    window_comm_ = mpi->session.comm;
    IRIS_MPI(MPI_Win_create(slots_->slot(me_), static_cast<MPI_Aint>(heap_bytes), 1, MPI_INFO_NULL, window_comm_,
                            &window_));
    IRIS_MPI(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN));
    int* model = nullptr;
    int found = 0;
    IRIS_MPI(MPI_Win_get_attr(window_, MPI_WIN_MODEL, &model, &found));
    if (found == 0 || *model != MPI_WIN_UNIFIED) {
      IRIS_MPI(MPI_Win_free(&window_));
      throw Error("iris: run_mpi: this MPI's windows have the separate memory model; the transport needs the "
                  "unified one (loads see what remote operations wrote, after MPI_Win_sync)");
    }
    IRIS_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_));
  }
  barrier_state_.transport = this;
  if (trace_options_) {
    trace_buffers_.emplace(size, trace_options_->events_per_rank);
    barrier_state_.traces.assign(static_cast<std::size_t>(size), nullptr);
    barrier_state_.traces[static_cast<std::size_t>(me_)] = trace_buffers_->buffer(me_);
  }
}

void ProcessWorld::close() {
  meet(Doing::returned, 0, CollectiveCall{});
  if (trace_buffers_) write_trace_of_processes(boot_, trace_buffers_->take(me_), trace_options_->path);
  if (window_ != MPI_WIN_NULL) {
    IRIS_MPI(MPI_Win_unlock_all(window_));
    IRIS_MPI(MPI_Win_free(&window_));
  }
}

void ProcessWorld::write_own_trace() const {
  if (!trace_buffers_) return;
  try {
    std::vector<RankTrace> mine;
    mine.push_back(trace_buffers_->take(me_));
    write_trace(trace_options_->path + ".rank" + std::to_string(me_), std::move(mine));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::vector<std::uint64_t> ProcessWorld::meet(Doing doing, std::uint64_t number, const CollectiveCall& call) {
  quiet();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::uint64_t mine[kMeetingWords] = {static_cast<std::uint64_t>(doing), number};
  call.to_words(mine + 2);
  std::vector<std::uint64_t> all(kMeetingWords * static_cast<std::size_t>(size));
  boot_.allgather(mine, all.data(), sizeof mine);
  if (window_ != MPI_WIN_NULL) IRIS_MPI(MPI_Win_sync(window_));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bool same = true;
  for (int r = 0; r < size; ++r) same = same && std::equal(mine, mine + 2, all.begin() + kMeetingWords * r);
  if (same) return all;
  std::string ranks;
  for (int r = 0; r < size; ++r)
    ranks += (r == 0 ? "" : "; ") + describe_meeting(&all[kMeetingWords * static_cast<std::size_t>(r)], r);
  throw Error("iris: deadlock: the ranks wait in different calls, which can never complete: " + ranks);
}

std::uint64_t ProcessWorld::collective(int r, const CollectiveCall& call) {
  const std::uint64_t seq = ++collectives_;
  const std::vector<std::uint64_t> all = meet(Doing::host_collective, seq, call);
  std::vector<std::uint64_t> calls;
  for (int o = 0; o < size; ++o) {
    const auto* words = &all[kMeetingWords * static_cast<std::size_t>(o)] + 2;
    calls.insert(calls.end(), words, words + CollectiveCall::kWords);
  }
  return call_result_of_words(seq, calls, r, call, allocator_);
}

// The device barrier orders memory like a meeting; the k-th barrier of every
// rank must come from the same program instance, as with run_threads.
void ProcessWorld::barrier(int program_id) {
  const std::uint64_t number = ++barriers_;
  CollectiveCall call;
  call.value = static_cast<std::uint64_t>(program_id);
  const std::vector<std::uint64_t> all = meet(Doing::device_barrier, number, call);
  for (int r = 0; r < size; ++r) {
    const auto* words = &all[kMeetingWords * static_cast<std::size_t>(r)];
    const auto other = static_cast<int>(CollectiveCall::from_words(words + 2).value);
    if (other != program_id) {
      throw Error("iris: device barrier #" + std::to_string(number) + " mismatch: rank " + std::to_string(me_) +
                  " arrived from program " + std::to_string(program_id) + ", rank " + std::to_string(r) +
                  " from program " + std::to_string(other) +
                  " (every rank's program instances must call barrier in the same order)");
    }
  }
}

// ------------------------------------------------------------------ far memory

void ProcessWorld::put(int rank, std::uint64_t offset, const void* from, std::size_t bytes) {
  const void* kept = put_buffers_.keep(from, bytes);
  IRIS_MPI(MPI_Put(kept, static_cast<int>(bytes), MPI_BYTE, rank, static_cast<MPI_Aint>(offset),
                   static_cast<int>(bytes), MPI_BYTE, window_));
  unflushed_ = true;
}

void ProcessWorld::quiet() {
  if (!unflushed_) return;
  IRIS_MPI(MPI_Win_flush_all(window_));
  put_buffers_.release();
  unflushed_ = false;
}

void ProcessWorld::get(int rank, std::uint64_t offset, void* to, std::size_t bytes) {
  IRIS_MPI(MPI_Get(to, static_cast<int>(bytes), MPI_BYTE, rank, static_cast<MPI_Aint>(offset), static_cast<int>(bytes),
                   MPI_BYTE, window_));
  IRIS_MPI(MPI_Win_flush_local(rank, window_));
}

void ProcessWorld::fetch_op(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value, void* old) {
  IRIS_MPI(MPI_Fetch_and_op(value, old, mpi_type(type), rank, static_cast<MPI_Aint>(offset), mpi_op(op), window_));
  IRIS_MPI(MPI_Win_flush(rank, window_));
}

void ProcessWorld::compare_swap(int rank, std::uint64_t offset, FarElement type, const void* compare, const void* value,
                            void* old) {
  IRIS_MPI(
      MPI_Compare_and_swap(value, compare, old, mpi_bits_type(type), rank, static_cast<MPI_Aint>(offset), window_));
  IRIS_MPI(MPI_Win_flush(rank, window_));
}

void ProcessWorld::accumulate(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value) {
  IRIS_MPI(MPI_Accumulate(value, 1, mpi_type(type), rank, static_cast<MPI_Aint>(offset), 1, mpi_type(type), mpi_op(op),
                          window_));
  IRIS_MPI(MPI_Win_flush(rank, window_));
}

// ------------------------------------------------------------------ waits

void ProcessWorld::wait_begins(const char* file, int line) {
  wait_file_ = file;
  wait_line_ = line;
  wait_start_ = std::chrono::steady_clock::now();
}

// A target of osc pt2pt applies the puts and accumulates of other ranks itself,
// in its MPI progress, which MPI_Iprobe drives; MPI_Win_sync then makes what
// they wrote visible to this rank's loads (the unified model's public and
// private copies are the same memory).
bool ProcessWorld::wait_poll() {
  if (window_ != MPI_WIN_NULL) {
    int flag = 0;
    IRIS_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, window_comm_, &flag, MPI_STATUS_IGNORE));
    IRIS_MPI(MPI_Win_sync(window_));
  }
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - wait_start_;
  return waited.count() > settings_.hang_timeout;
}

std::string ProcessWorld::hang_report(int program_id) const {
  std::ostringstream s;
  if (wait_file_ != nullptr) s << " at " << wait_file_ << ":" << wait_line_;
  s << " (rank " << me_ << ", program " << program_id << "): the condition is still false after "
    << settings_.hang_timeout << " s (IRIS_HANG_TIMEOUT); the ranks of run_mpi are processes that cannot watch "
    << "each other's waits, so a wait this long is taken for a hang and ends the job";
  return s.str();
}

}  // namespace
}  // namespace detail

struct WorldHandle::State {
  std::unique_ptr<Bootstrap> boot;
  detail::MpiBootstrap* mpi = nullptr;  // boot, where the processes meet through MPI
  std::optional<detail::ProcessWorld> world;
  std::unique_ptr<Rank> rank;
  std::optional<detail::LastingRankThread> thread;
  bool closed = false;

  State(std::size_t heap_bytes, std::unique_ptr<Bootstrap> given) {
    mpi = detail::take_bootstrap(boot, std::move(given), MPI_THREAD_SERIALIZED);
    // The work runs on the rank's thread, which makes the MPI calls from then on.
    if (mpi != nullptr && mpi->session.provided < MPI_THREAD_SERIALIZED) {
      throw Error("iris: run_mpi: MPI must support MPI_THREAD_SERIALIZED: the rank's work runs on a thread of its "
                  "own (as run_threads' ranks do, with their stack size); initialise MPI with MPI_Init_thread");
    }
    try {
      world.emplace(*boot, mpi, heap_bytes);
    } catch (const Error&) {
      if (mpi != nullptr) mpi->session.end();  // every rank failed the same step
      throw;
    }
    rank.reset(new Rank(world->make_rank(boot->rank())));
    thread.emplace([transport = &*world] { detail::tls_transport = transport; });
  }

  // run_mpi's end after a failure (through MPI): the error printed, the job ended.
  void abort_job(const std::exception_ptr& error) const {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "%s\niris: run_mpi: rank %d failed, which ends the job (MPI_Abort)\n", what.c_str(),
                 boot->rank());
    if (world) world->write_own_trace();
    std::fflush(stderr);
    MPI_Abort(mpi->session.comm, 1);
  }
};

}  // namespace iris

#include "world_handle.hpp"

namespace iris {

void WorldHandle::run(const std::function<void(Rank&)>& work) {
  if (state_->closed) throw Error("iris: WorldHandle::run: the world has been closed");
  Rank& rank = *state_->rank;
  state_->thread->run([&] { work(rank); });
}

void WorldHandle::close() {
  if (state_->closed) return;
  state_->closed = true;  // also where the end fails: the rank's thread is gone
  state_->thread.reset();
  state_->rank.reset();
  state_->world->close();
  state_->world.reset();
  if (state_->mpi != nullptr) state_->mpi->session.end();
}

void run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  detail::check_run_mpi(heap_bytes, body);
  WorldHandle world(heap_bytes);
  try {
    world.run(body);
    world.close();
  } catch (...) {
    world.state_->abort_job(std::current_exception());
  }
}

}  // namespace iris
