// Iris runtime, CPU backend: the data-race detector of checked mode.
//
// A data race is two accesses to the same heap bytes by different ranks, at least
// one of them a plain (non-atomic) store, that nothing orders. "Ordered" is
// happens-before as vector clocks compute it (the FastTrack family, simplified):
//
//  * every rank r has a clock C_r, one counter per rank; C_r[r] is r's epoch.
//    A plain access of r is stamped (r, C_r[r]). An earlier access (q, e) is
//    ordered before the current point of r iff e <= C_r[q].
//  * a release (an atomic write with release or acq_rel semantics at system
//    scope) joins C_r into the clock of the object written, L_p, then starts a new
//    epoch of r; an acquire (an atomic read with acquire or acq_rel at system
//    scope, wait_until included) joins L_p into C_r. L_p only grows, so reading an
//    older value than the last release over-approximates the order: races can be
//    missed that way, never invented.
//  * fences: a release fence remembers C_r (later relaxed atomic writes publish
//    it); relaxed atomic reads collect L_p, and an acquire fence joins what they
//    collected.
//  * the device barrier and every host collective (barrier, allocate, free) join
//    all clocks and start a new epoch of every rank.
//
// Narrower scopes (block, gpu) order nothing between ranks: on a GPU the ranks are
// on different devices. Program instances of one rank run in order on its
// thread, so they are one "thread" here; races between instances of the same
// rank (possible on a GPU) are not detected.
//
// Shadow memory: 32 bytes per 4-byte word of every heap (a reservation of 8 times
// the heap size, paid for only where kernels touch the heap), mapped at the first
// checked access. A word's cell holds the last plain store and the last plain load
// (rank, epoch, bytes of the word touched, site and program id). One store and one
// load per word is all that is kept, so accesses can be forgotten (races missed)
// but a reported pair always happened and was unordered. A cell is updated under a
// lock bit (atomics only, so ThreadSanitizer sees no race in the detector). The
// check comes before the access: a rank that finds a race reports it without
// making the racing access itself.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace iris::detail {

// Where a plain access was made: its .iris location and program instance.
struct AccessSite {
  const char* file;
  int line;
  int program;
};

// A race found by RaceDetector::access: the earlier access it conflicts with.
struct Conflict {
  int rank;
  bool store;
  AccessSite site;
};

class RaceDetector {
 public:
  RaceDetector(int ranks, std::size_t heap_size);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // A plain load or store of `bytes` bytes at `offset` in `heap`, by `rank`.
  // Returns true and fills `out` if it races with an earlier access.
  bool access(int rank, int heap, std::uint64_t offset, std::size_t bytes, bool store, const AccessSite& site,
              Conflict& out);

  // Atomics at system scope on `object`, by `rank` (before a write, after a read).
  void atomic_write(int rank, const void* object, bool release);
  void atomic_read(int rank, const void* object, bool acquire);
  void fence(int rank, bool acquire, bool release);

  // Points where every rank meets: the device barrier (number = its generation) and
  // the host collectives (number = the call's sequence number). arrive before the
  // meeting, leave after it; the last rank to arrive calls reset_next first.
  void barrier_arrive(int rank, std::uint64_t number) { meet(barrier_, rank, number, true); }
  void barrier_leave(int rank, std::uint64_t number) { meet(barrier_, rank, number, false); }
  void barrier_reset_next(std::uint64_t number) { reset(barrier_, number + 1); }
  void collective_arrive(int rank, std::uint64_t number) { meet(collective_, rank, number, true); }
  void collective_leave(int rank, std::uint64_t number) { meet(collective_, rank, number, false); }
  void collective_reset_next(std::uint64_t number) { reset(collective_, number + 1); }

 private:
  using Clock = std::vector<std::uint64_t>;
  struct alignas(64) RankState {  // touched by the rank's own thread only
    Clock clock;    // C_r
    Clock pending;  // joined by relaxed atomic reads, for the next acquire fence
    Clock fenced;   // C_r at the last release fence (empty: none yet)
  };
  // The join of the clocks of all ranks at one meeting point; two slots, since a
  // rank may arrive at meeting n+1 before another has left meeting n.
  struct Meeting {
    std::vector<std::atomic<std::uint64_t>> slot[2];
  };
  struct alignas(64) Stripe {
    std::mutex mutex;
    std::unordered_map<std::uintptr_t, Clock> clocks;  // L_p of the objects hashed here
  };

  void meet(Meeting& m, int rank, std::uint64_t number, bool arriving);
  void reset(Meeting& m, std::uint64_t number);
  void publish(const void* object, const Clock& clock);
  void collect(const void* object, Clock& into);
  std::uint64_t* cells(int heap);

  const int ranks_;
  const std::size_t heap_size_;
  std::vector<RankState> state_;
  Meeting barrier_, collective_;
  std::array<Stripe, 64> stripes_;
  std::once_flag shadow_once_;
  void* shadow_ = nullptr;
  std::size_t shadow_bytes_ = 0;
};

}  // namespace iris::detail
