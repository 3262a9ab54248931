// Iris runtime, CPU backend: the non-template device functions -- device barrier,
// the slow path of wait_until (abort check, hang detection), program bookkeeping for
// launch, and checked mode.
#include "iris/device_cpu.hpp"

#include <cstdio>
#include <sstream>

#include "transport.hpp"
#include "world.hpp"

namespace iris {
namespace detail {
namespace {

// Sets the rank's activity word for the lifetime of the object, back to running after.
class ActivityScope {
 public:
  ActivityScope(ThreadWorld& w, int r, Activity a, std::uint64_t count) : w_(w), r_(r) {
    w_.set_activity(r_, a, count);
  }
  ~ActivityScope() { w_.set_activity(r_, Activity::running, 0); }
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  ThreadWorld& w_;
  int r_;
};

std::string where(int rank, int program_id) {
  return "(rank " + std::to_string(rank) + ", program " + std::to_string(program_id) + ")";
}

// Checked-mode report: one line on stderr, then the same text as an iris::Error.
[[noreturn]] void report(const char* file, int line, const DeviceContext& ctx, int program_id, const Text& what) {
  const std::string msg = std::string(file != nullptr ? file : "<unknown>") + ":" + std::to_string(line) +
                          ": error: " + what.buf + " " + where(ctx.rank, program_id);
  std::fprintf(stderr, "%s\n", msg.c_str());  // one call, so lines of different ranks do not interleave
  throw Error(msg);
}

// The transport of a context's world (a run_mpi world's; the far_* functions
// are called only where a world has far ranks).
Transport& transport_of(const DeviceContext& ctx) { return *ctx.barrier->transport; }

}  // namespace

TraceBuffer* trace_buffer(const DeviceContext& ctx) {
  const std::vector<TraceBuffer*>& traces = ctx.barrier->traces;
  return traces.empty() ? nullptr : traces[static_cast<std::size_t>(ctx.rank)];
}

thread_local Transport* tls_transport = nullptr;
thread_local Transport* tls_unfinished_puts = nullptr;

void complete_puts() {
  Transport* transport = tls_unfinished_puts;
  tls_unfinished_puts = nullptr;
  transport->quiet();
}

void far_put(const DeviceContext& ctx, int rank, std::uint64_t offset, const void* from, std::size_t bytes) {
  Transport& transport = transport_of(ctx);
  transport.put(rank, offset, from, bytes);
  tls_unfinished_puts = &transport;
}

void far_get(const DeviceContext& ctx, int rank, std::uint64_t offset, void* to, std::size_t bytes) {
  transport_of(ctx).get(rank, offset, to, bytes);
}

void far_fetch_op(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op, FarElement type,
                  const void* value, void* old) {
  transport_of(ctx).fetch_op(rank, offset, op, type, value, old);
}

void far_compare_swap(const DeviceContext& ctx, int rank, std::uint64_t offset, FarElement type, const void* compare,
                      const void* value, void* old) {
  transport_of(ctx).compare_swap(rank, offset, type, compare, value, old);
}

void far_accumulate(const DeviceContext& ctx, int rank, std::uint64_t offset, FarOp op, FarElement type,
                    const void* value) {
  transport_of(ctx).accumulate(rank, offset, op, type, value);
}

WaitScope::WaitScope(const char* file, int line) {
  if (tls_transport != nullptr) tls_transport->wait_begins(file, line);
  if (tls_world != nullptr) {
    PerRank& me = tls_world->ranks[tls_rank];
    me.wait_file.store(file, std::memory_order_relaxed);  // published by set_activity's store
    me.wait_line.store(line, std::memory_order_relaxed);
    me.wait_program.store(tls_program, std::memory_order_relaxed);
    tls_world->set_activity(tls_rank, Activity::waiting, ++me.waits);
    me.moves_read = tls_world->moves.load(std::memory_order_seq_cst);  // before the wait's next read of its condition
  }
}

WaitScope::~WaitScope() {
  if (tls_world != nullptr) tls_world->set_activity(tls_rank, Activity::running, 0);
}

// The hang check (docs/runtime.md, "Hang detection"). Every change of a rank's
// activity first counts one in ThreadWorld::moves, then stores the word; a rank in
// wait_until publishes in `confirmed` the count it read before it last read
// its condition false. The caller is stuck if, with moves at the same value m
// before and after, every other rank is returned or blocked in a collective
// call or device barrier that needs the caller first, or waits in wait_until
// having confirmed m. Then every rank stopped before moves reached m, so
// everything anyone wrote was written before the count m that each waiting
// rank (and the caller, re-reading its condition after this) acquired before
// reading its condition false: no condition can become true any more. A rank
// that moved in between (left a wait, entered a collective call) changed m;
// when nobody moves, every waiting rank confirms m within two polls.
bool wait_poll() {
  if (tls_transport != nullptr) return tls_transport->wait_poll();
  ThreadWorld* w = tls_world;
  if (w == nullptr) return false;  // not a rank thread: nothing to check against
  if (w->is_aborted()) w->throw_aborted(tls_rank);
  PerRank& me = w->ranks[tls_rank];
  me.confirmed.store(me.moves_read, std::memory_order_seq_cst);  // the caller read its condition false since
  const std::uint64_t moves = w->moves.load(std::memory_order_seq_cst);
  me.moves_read = moves;
  for (int o = 0; o < w->size; ++o) {
    if (o == tls_rank) continue;
    const std::uint64_t word = w->activity_of(o);
    if (kind_of(word) == Activity::waiting) {
      if (w->ranks[o].confirmed.load(std::memory_order_seq_cst) != moves) return false;
    } else if (!w->blocked_on(tls_rank, word, false)) {
      return false;
    }
  }
  return w->moves.load(std::memory_order_seq_cst) == moves;
}

namespace {

// "the flag, at offset 64 of rank 1's heap, in allocation #2 (...), holds 3".
std::string flag_report(const DeviceContext& ctx, const void* p, const std::string& seen) {
  Text place;
  describe_flag(ctx, p, place);
  return std::string("the flag, ") + place.buf + ", holds " + seen;
}

}  // namespace

void wait_deadlock(const void* p, Cmp op, const std::string& value, const std::string& seen) {
  if (Transport* t = tls_transport) {
    std::ostringstream s;
    s << "iris: hang in wait_until(*" << p << " " << cmp_text(op) << " " << value << ")" << t->hang_report(tls_program)
      << "; " << flag_report(t->context_of_rank(), p, seen);
    throw Error(s.str());
  }
  ThreadWorld* w = tls_world;  // a rank's: wait_poll finds no deadlock elsewhere
  std::ostringstream s;
  s << "iris: deadlock in wait_until(*" << p << " " << cmp_text(op) << " " << value << ")"
    << w->wait_location(tls_rank) << " " << where(tls_rank, tls_program)
    << ": the condition is false and no other rank can change memory any more; "
    << flag_report(w->context(tls_rank), p, seen);
  for (int o = 0; o < w->size; ++o) {
    if (o != tls_rank) s << "; " << w->describe_activity(o);
  }
  if (w->size == 1) s << " (this is the only rank)";
  w->fail(s.str());
}

void begin_program(const DeviceContext& ctx, int program_id) {
  if (tls_world != nullptr) {
    if (tls_world->is_aborted()) tls_world->throw_aborted(tls_rank);
    if (ctx.rank != tls_rank) {
      throw Error("iris: launch: the DeviceContext of rank " + std::to_string(ctx.rank) +
                  " is used on the thread of rank " + std::to_string(tls_rank));
    }
  }
  tls_program = program_id;
}

void end_program() noexcept { tls_program = -1; }

void check_translate(const DeviceContext& ctx, const void* p, int to_rank, const char* file, int line,
                     int program_id) {
  check_rank(ctx, to_rank, file, line, program_id);
  if (!in_heap(ctx, ctx.rank, reinterpret_cast<std::uintptr_t>(p), 1)) {
    Text what;
    describe_bad_translate(p, to_rank, what);
    report(file, line, ctx, program_id, what);
  }
}

// The detector of the world a context belongs to; null for a context made by hand.
RaceDetector* races_of(const DeviceContext& ctx) {
  return ctx.barrier != nullptr && ctx.barrier->world != nullptr ? &ctx.barrier->world->races : nullptr;
}

void race_check(const DeviceContext& ctx, const void* p, std::size_t bytes, bool store, const char* file, int line,
                int program_id) {
  RaceDetector* races = races_of(ctx);
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const int heap = heap_of(ctx, addr, bytes);
  if (races == nullptr || heap < 0) return;
  const std::uint64_t offset = heap_offset(ctx, heap, addr);
  Conflict other{};
  if (!races->access(ctx.rank, heap, offset, bytes, store, {file, line, program_id}, other)) return;
  Text what;
  what.add("data race: this ").add(store ? "store" : "load").add(" of ").add_unsigned(bytes);
  what.add(" bytes at offset ").add_unsigned(offset).add(" of rank ").add(static_cast<long long>(heap));
  what.add("'s heap");
  const AllocationTable* t = ctx.allocations;
  const int block = t != nullptr && t->count >= 0 ? allocation_before(*t, offset) : -1;
  if (block >= 0 && offset < t->end[block]) {
    what.add(" (allocation #").add_unsigned(t->number[block]).add(", byte ").add_unsigned(offset - t->begin[block]);
    what.add(")");
  }
  what.add(" and a ").add(other.store ? "store" : "load").add(" by rank ").add(static_cast<long long>(other.rank));
  what.add(", program ").add(static_cast<long long>(other.site.program)).add(", at ").add(other.site.file).add(":");
  what.add(static_cast<long long>(other.site.line));
  what.add(" are not ordered by a barrier or by a release/acquire pair at system scope");
  report(file, line, ctx, program_id, what);
}

void sync_atomic_write(const DeviceContext& ctx, const void* p, bool release) {
  if (RaceDetector* races = races_of(ctx)) races->atomic_write(ctx.rank, p, release);
}

void sync_atomic_read(const DeviceContext& ctx, const void* p, bool acquire) {
  if (RaceDetector* races = races_of(ctx)) races->atomic_read(ctx.rank, p, acquire);
}

void sync_fence(const DeviceContext& ctx, bool acquire, bool release) {
  if (RaceDetector* races = races_of(ctx)) races->fence(ctx.rank, acquire, release);
}

}  // namespace detail

// ------------------------------------------------------------------ device barrier
//
// Centralised sense-free barrier: read the generation, count in; the last rank to
// arrive resets the count and bumps the generation, the others spin until it changes.
// The count is an RMW chain (acq_rel), so the last rank has acquired every rank's
// writes, and its release store of the generation hands them all to the waiters.

void barrier(const DeviceContext& ctx, int program_id) {
  BarrierState& b = *ctx.barrier;
  if (b.transport != nullptr) return b.transport->barrier(program_id);
  detail::ThreadWorld& w = *b.world;
  detail::PerRank& me = w.ranks[ctx.rank];
  const std::uint64_t number = ++me.barriers;
  detail::ActivityScope blocked(w, ctx.rank, detail::Activity::device_barrier, number);

  b.program_ids[ctx.rank].store(program_id, std::memory_order_relaxed);
  const std::uint64_t gen = b.generation.load(std::memory_order_acquire);
  // The race detector's clocks meet here too (ordered by the counter and the
  // generation); leaving, on every way out, joins what all ranks brought.
  w.races.barrier_arrive(ctx.rank, gen);
  struct Leave {
    detail::ThreadWorld& w;
    int rank;
    std::uint64_t gen;
    ~Leave() { w.races.barrier_leave(rank, gen); }
  } leave{w, ctx.rank, gen};
  if (b.arrived.fetch_add(1, std::memory_order_acq_rel) == ctx.world_size - 1) {
    for (int r = 0; r < ctx.world_size; ++r) {
      const int other = b.program_ids[r].load(std::memory_order_relaxed);
      if (other != program_id) {
        w.fail("iris: device barrier #" + std::to_string(number) + " mismatch: rank " + std::to_string(ctx.rank) +
               " arrived from program " + std::to_string(program_id) + ", rank " + std::to_string(r) +
               " from program " + std::to_string(other) +
               " (every rank's program instances must call barrier in the same order)");
      }
    }
    b.arrived.store(0, std::memory_order_relaxed);
    w.races.barrier_reset_next(gen);
    b.generation.store(gen + 1, std::memory_order_release);
    return;
  }
  detail::Backoff backoff;
  while (b.generation.load(std::memory_order_acquire) == gen) {
    if (!backoff.pause()) continue;
    if (w.is_aborted()) w.throw_aborted(ctx.rank);
    // One rank that cannot arrive any more is enough to deadlock a barrier.
    for (int o = 0; o < ctx.world_size; ++o) {
      if (o == ctx.rank || !w.blocked_on(ctx.rank, w.activity_of(o), true)) continue;
      if (b.generation.load(std::memory_order_acquire) != gen) return;  // released meanwhile after all
      w.fail("iris: deadlock in device barrier #" + std::to_string(number) + " " +
             detail::where(ctx.rank, program_id) + ": " + w.describe_activity(o));
    }
  }
}

// ------------------------------------------------------------------ checked mode

void check_access(const DeviceContext& ctx, const void* lowest, const void* highest, std::size_t bytes,
                  const char* file, int line, int program_id) {
  const auto lo = reinterpret_cast<std::uintptr_t>(lowest);
  const auto hi = reinterpret_cast<std::uintptr_t>(highest);
  const detail::AccessFault fault = detail::classify_access(ctx, lo, hi, bytes);
  if (fault.kind == detail::AccessFault::none) return;
  detail::Text what;
  detail::describe_access(ctx, fault, lo, hi, bytes, what);
  detail::report(file, line, ctx, program_id, what);
}

void detail::check_near(const DeviceContext& ctx, const void* p, std::size_t bytes, const char* file, int line,
                        int program_id) {
  if (detail::one_node(ctx)) return;
  const int r = detail::far_rank_of(ctx, p);
  if (r < 0) return;
  detail::Text what;
  what.add("access of ").add_unsigned(bytes).add(" bytes at offset ").add_unsigned(detail::far_offset(ctx, r, p));
  what.add(" of rank ").add(static_cast<long long>(r)).add("'s heap: rank ").add(static_cast<long long>(r));
  what.add(" is on another node, whose memory takes no loads and stores (reach it with put and get, or guard the ");
  what.add("access with near(r))");
  detail::report(file, line, ctx, program_id, what);
}

int check_rank(const DeviceContext& ctx, int r, const char* file, int line, int program_id) {
  if (r < 0 || r >= ctx.world_size) {
    detail::Text what;
    detail::describe_bad_rank(ctx, r, what);
    detail::report(file, line, ctx, program_id, what);
  }
  return r;
}

}  // namespace iris
