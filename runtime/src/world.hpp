// Iris runtime, CPU backend: the world, what Rank's methods see of it (World), and
// the state shared by all ranks of one run_threads call (ThreadWorld).
//
// Two kinds of synchronisation live here:
//  * host collectives (allocate, free, host barrier) meet in a ThreadRendezvous
//    (collective.hpp, shared with the GPU world's threads mode): each rank posts its
//    call, the last to arrive compares all calls and applies the operation once to
//    the shared allocator; the others sleep. Host calls are rare, so a lock is the
//    simple choice.
//  * the device barrier and wait_until spin on atomics (no lock on the device path).
//
// Failure handling: `aborted` is raised when a rank's body throws (or a fatal error is
// found); every blocking loop checks it and throws, so nobody hangs. Each rank also
// publishes what it is doing in `activity`, each change counted in `moves`, which
// lets a blocked rank prove that it can never be released (hang detection, see
// docs/runtime.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collective.hpp"
#include "heap_allocator.hpp"
#include "heap_memory.hpp"
#include "iris/host.hpp"
#include "race_detector.hpp"
#include "trace.hpp"

namespace iris {
namespace detail {
struct ThreadWorld;
class Transport;
}

// The device barrier: a centralised counter barrier with a generation number
// (run_threads), or the transport's (run_mpi: `world` is null).
struct BarrierState {
  detail::ThreadWorld* world = nullptr;
  detail::Transport* transport = nullptr;
  alignas(64) std::atomic<int> arrived{0};
  alignas(64) std::atomic<std::uint64_t> generation{0};
  std::vector<std::atomic<int>> program_ids;  // program id each rank arrived with
  // Each rank's trace buffer while the run records a trace (IRIS_TRACE), by
  // rank (run_mpi's holds its own rank's only); empty otherwise.
  std::vector<TraceBuffer*> traces;
};

namespace detail {

// What a rank is doing, packed into one word (kind << 56 | count) so that it can be
// read atomically. `count` says *which* collective call / device barrier /
// wait_until a blocked rank is in, which is what tells a stale state from a real
// one, and a word read twice the same from a rank that moved on in between.
enum class Activity : std::uint64_t { running = 0, waiting = 1, device_barrier = 2, host_collective = 3, finished = 4 };
constexpr std::uint64_t pack(Activity a, std::uint64_t count) { return static_cast<std::uint64_t>(a) << 56 | count; }
constexpr Activity kind_of(std::uint64_t word) { return static_cast<Activity>(word >> 56); }
constexpr std::uint64_t count_of(std::uint64_t word) { return word & ((std::uint64_t{1} << 56) - 1); }

struct alignas(64) PerRank {
  // Written through ThreadWorld::set_activity only.
  std::atomic<std::uint64_t> activity{pack(Activity::running, 0)};
  // In wait_until: the value of ThreadWorld::moves that this rank read before it last
  // read its condition false (hang detection, wait_poll).
  std::atomic<std::uint64_t> confirmed{0};
  // In wait_until: where the wait is (its .iris file and line; null and 0 when
  // the caller named none) and the program instance, for the reports
  // (describe_activity). Stored before the activity word says `waiting`; a
  // report read while the rank moves on may mix two waits, but a deadlock is
  // reported only once nobody moves.
  std::atomic<const char*> wait_file{nullptr};
  std::atomic<int> wait_line{0};
  std::atomic<int> wait_program{-1};
  // Written only by the rank's own thread.
  std::uint64_t collectives = 0;  // host collective calls entered
  std::uint64_t barriers = 0;     // device barriers entered
  std::uint64_t waits = 0;        // wait_until calls that blocked
  std::uint64_t moves_read = 0;   // ThreadWorld::moves, read last in wait_until (before a read of its condition)
};

// What Rank's methods (rank_methods.hpp) see of a CPU world: the threads of one
// run_threads call (ThreadWorld, below) or the process of one rank of run_mpi
// (world_cpu_mpi.cpp).
struct World {
  World(int size, std::size_t heap_bytes) : size(size), heap_size(heap_bytes) {}
  virtual ~World() = default;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // One host collective call of rank r; returns the offset (allocate) or throws.
  virtual std::uint64_t collective(int r, const CollectiveCall& call) = 0;
  // The allocator's table of live blocks after rank r's last collective call.
  virtual const AllocationTable& allocation_table(int r) const = 0;
  virtual DeviceContext context(int r) = 0;
  // The heap and the host barrier need nothing more on the CPU, whose device
  // work runs on the rank's thread and whose kernels read the allocator's table.
  void heap_changed(int) {}
  void before_barrier(int) {}
  int multiprocessor_count(int) const { return 1; }
  // The Rank object handed to the body (Rank's constructor is for World only).
  Rank make_rank(int r) { return Rank(this, r); }

  const int size;
  const std::size_t heap_size;
  std::vector<char*> bases;  // heap base of every rank, as addressed from this process
};

struct ThreadWorld final : World {
  ThreadWorld(int size, std::size_t heap_bytes);

  // Body of rank r's thread.
  void run_rank(int r, const std::function<void(Rank&)>& body);
  std::uint64_t collective(int r, const CollectiveCall& call) override;
  const AllocationTable& allocation_table(int) const override { return allocator.table(); }
  DeviceContext context(int r) override {
    return {bases.data(), heap_size, r, size, 0, size, &device_barrier, &allocator.table()};
  }
  // After the rank threads have joined (run_rank_threads): nothing is left
  // running; writes the trace, if the run records one.
  void finish();

  // Records e as the run's error (if it is the first), raises the abort flag, wakes sleepers.
  void abort(std::exception_ptr e);
  // abort() with an Error that makes the run unrecoverable, then throws it.
  [[noreturn]] void fail(const std::string& message);
  [[noreturn]] void throw_aborted(int r) const;
  bool is_aborted() const { return aborted.load(std::memory_order_acquire); }

  // Rank r's activity becomes pack(a, count): counted in `moves` first, then stored.
  void set_activity(int r, Activity a, std::uint64_t count) {
    moves.fetch_add(1, std::memory_order_seq_cst);
    ranks[r].activity.store(pack(a, count), std::memory_order_seq_cst);
  }
  std::uint64_t activity_of(int r) const { return ranks[r].activity.load(std::memory_order_seq_cst); }
  // Hang detection: is a rank whose activity is `word` blocked until `me` does
  // something it has not done yet? `me` must be the calling rank (its own counters
  // are read without atomics). A rank in wait_until is not: whether it can still
  // leave is for wait_poll to find.
  bool blocked_on(int me, std::uint64_t word, bool me_in_barrier) const;
  std::string describe_activity(int r) const;
  // " at file:line" of rank r's wait_until, or "" when it named no location.
  std::string wait_location(int r) const;

  std::vector<HeapMemory> heaps;
  std::vector<PerRank> ranks;
  BarrierState device_barrier;
  RaceDetector races;  // checked mode's; the device barrier and host collectives keep its clocks
  std::optional<TraceSettings> trace_options = trace_settings();
  std::optional<HostTraceBuffers> trace_buffers;
  std::atomic<bool> aborted{false};
  // How many times a rank's activity has changed (set_activity): unchanged
  // between two reads, nobody entered or left a blocking call in between.
  std::atomic<std::uint64_t> moves{0};

  ThreadRendezvous rendezvous;  // of the host collective calls; its lock also guards first_error
  HeapAllocator allocator;
  std::exception_ptr first_error;
};

// The world and rank of the calling thread (null / -1 outside run_threads), and the
// program instance it runs (-1 outside launch). Lets wait_until, which gets no
// DeviceContext, find the world.
extern thread_local ThreadWorld* tls_world;
extern thread_local int tls_rank;
extern thread_local int tls_program;

}  // namespace detail
}  // namespace iris
