// Iris runtime: run_threads, Rank and the host collectives (see world.hpp).
#include "world.hpp"

#include <utility>

#include "rank_methods.hpp"
#include "rank_threads.hpp"

namespace iris {
namespace detail {

thread_local ThreadWorld* tls_world = nullptr;
thread_local int tls_rank = -1;
thread_local int tls_program = -1;

ThreadWorld::ThreadWorld(int size_, std::size_t heap_bytes)
    : World(size_, heap_bytes),
      ranks(static_cast<std::size_t>(size_)),
      races(size_, heap_bytes),
      rendezvous(size_),
      allocator(heap_bytes) {
  heaps.reserve(ranks.size());
  for (int r = 0; r < size; ++r) {
    heaps.emplace_back(heap_bytes);
    bases.push_back(heaps.back().base());
  }
  device_barrier.world = this;
  device_barrier.program_ids = std::vector<std::atomic<int>>(ranks.size());
  if (trace_options) {
    trace_buffers.emplace(size, trace_options->events_per_rank);
    for (int r = 0; r < size; ++r) device_barrier.traces.push_back(trace_buffers->buffer(r));
  }
}

void ThreadWorld::finish() {
  if (!trace_buffers) return;
  std::vector<RankTrace> traces;
  for (int r = 0; r < size; ++r) traces.push_back(trace_buffers->take(r));
  // A failed run's trace is written too: it shows where the ranks were. Its
  // first error stays the one reported.
  try {
    write_trace(trace_options->path, std::move(traces));
  } catch (const Error&) {
    if (!first_error) first_error = std::current_exception();
  }
}

void ThreadWorld::run_rank(int r, const std::function<void(Rank&)>& body) {
  tls_world = this;
  tls_rank = r;
  tls_program = -1;
  try {
    Rank rank = make_rank(r);
    body(rank);
  } catch (...) {
    abort(std::current_exception());
  }
  // From here on this rank writes no memory: blocked ranks waiting on it may give up.
  set_activity(r, Activity::finished, 0);
  rendezvous.wake([] {});  // ranks asleep in a collective call give up
  tls_world = nullptr;
  tls_rank = -1;
}

void ThreadWorld::abort(std::exception_ptr e) {
  rendezvous.wake([&] {
    if (!first_error) first_error = std::move(e);
    aborted.store(true, std::memory_order_release);
  });
}

void ThreadWorld::fail(const std::string& message) {
  Error error(message);
  abort(std::make_exception_ptr(error));
  throw error;
}

void ThreadWorld::throw_aborted(int r) const {
  throw Error("iris: rank " + std::to_string(r) + " stopped because another rank failed");
}

bool ThreadWorld::blocked_on(int me, std::uint64_t word, bool me_in_barrier) const {
  switch (kind_of(word)) {
    case Activity::finished:
      return true;
    case Activity::host_collective:  // waits for a collective call `me` has not made yet
      return count_of(word) > ranks[me].collectives;
    case Activity::device_barrier:  // waits for a barrier `me` has not arrived at yet
      return !me_in_barrier && count_of(word) > ranks[me].barriers;
    case Activity::running:
    case Activity::waiting:
      break;
  }
  return false;
}

std::string ThreadWorld::describe_activity(int r) const {
  const std::uint64_t word = activity_of(r);
  const std::string who = "rank " + std::to_string(r);
  switch (kind_of(word)) {
    case Activity::finished: return who + " has returned from its body";
    case Activity::host_collective: return who + " waits in host collective call #" + std::to_string(count_of(word));
    case Activity::device_barrier: return who + " waits in device barrier #" + std::to_string(count_of(word));
    case Activity::waiting:
      return who + " waits in wait_until" + wait_location(r) + " (program " +
             std::to_string(ranks[r].wait_program.load(std::memory_order_relaxed)) + ")";
    case Activity::running: break;
  }
  return who + " is running";
}

std::string ThreadWorld::wait_location(int r) const {
  const char* file = ranks[r].wait_file.load(std::memory_order_relaxed);
  if (file == nullptr) return "";
  return " at " + std::string(file) + ":" + std::to_string(ranks[r].wait_line.load(std::memory_order_relaxed));
}

std::uint64_t ThreadWorld::collective(int r, const CollectiveCall& call) {
  // A rank that returned from its body will never arrive (nobody else can be
  // waited for here: the call needs everybody). While in the call the rank
  // says so (hang detection), and the race detector sees every rank meet:
  // everything before is ordered before everything after.
  struct Hooks {
    ThreadWorld& world;
    int r;
    bool aborted() const { return world.is_aborted(); }
    bool returned(int o) const { return kind_of(world.activity_of(o)) == Activity::finished; }
    std::string describe(int o) const { return world.describe_activity(o); }
    void arrived(int rank, std::uint64_t n) { world.races.collective_arrive(rank, n); }
    void last(std::uint64_t n) { world.races.collective_reset_next(n); }
    void throw_aborted() const { world.throw_aborted(r); }
    void fail(const std::string& message) { world.fail(message); }
    void entered(std::uint64_t n) { world.set_activity(r, Activity::host_collective, n); }
    void left() { world.set_activity(r, Activity::running, 0); }
    void completed(std::uint64_t n) { world.races.collective_leave(r, n); }
  } hooks{*this, r};
  return rendezvous.collective(r, ranks[r].collectives, call, allocator, hooks);
}

}  // namespace detail

// ------------------------------------------------------------------ run_threads

void run_threads(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  detail::run_threads_in<detail::ThreadWorld>(ranks, heap_bytes, body);
}

}  // namespace iris
