// Iris runtime, every backend: the host collective calls (allocate, free,
// barrier, agree, from_rank0), which every rank must make in the same order with the same
// arguments. Each backend's world brings the ranks' calls together (threads
// of one process, or processes under MPI); what a call is, how the calls of
// the ranks are compared and how an agreed call changes the heap are the same
// everywhere and live here.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "heap_allocator.hpp"
#include "iris/host.hpp"

namespace iris::detail {

enum class CollectiveOp : std::uint64_t { allocate, free, barrier, agree, from_rank0 };

// Plain 64-bit fields: MPI ranks send it as words.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::barrier;
  std::uint64_t bytes = 0;        // allocate
  std::uint64_t alignment = 0;    // allocate
  std::uint64_t offset = 0;       // free: heap offset, kNullOffset or kOutsideHeap; agree: hash of the text
  std::uint64_t value = 0;        // from_rank0: this rank's value (not compared: rank 0's is the result)
  const void* pointer = nullptr;  // free: as passed (messages only; differs per rank, never sent)
  const std::string* text = nullptr;  // agree: as passed (messages only; never sent, so MPI ranks compare hashes)

  static constexpr std::uint64_t kNullOffset = UINT64_MAX;
  static constexpr std::uint64_t kOutsideHeap = UINT64_MAX - 1;

  static CollectiveCall allocate(std::size_t bytes, std::size_t alignment);
  // free(p) by a rank whose heap of heap_size bytes starts at base.
  static CollectiveCall free(const void* p, const char* base, std::size_t heap_size);
  static CollectiveCall barrier();
  // Rank::agree(text): `text` must outlive the call.
  static CollectiveCall agree(const std::string& text);
  static CollectiveCall from_rank0(std::uint64_t value);

  // MPI ranks send a call as kWords words (pointer and text stay home).
  static constexpr int kWords = 5;
  void to_words(std::uint64_t* words) const;
  static CollectiveCall from_words(const std::uint64_t* words);

  bool same_as(const CollectiveCall& o) const {
    return op == o.op && bytes == o.bytes && alignment == o.alignment && offset == o.offset;
  }
  // "allocate(1024 bytes, alignment 256)", for messages.
  std::string describe() const;
};

// "collective call #N differs between ranks: rank 0 called ...; rank 2 called ..."
// for calls[r] of every rank, or "" if they agree.
std::string compare_calls(std::uint64_t seq, const std::vector<CollectiveCall>& calls);

// Applies an agreed call to the allocator; returns the offset (allocate) or throws.
std::uint64_t apply_call(HeapAllocator& allocator, const CollectiveCall& call);

// The result of an agreed call (calls[r]: rank r's) for rank `self`:
// from_rank0's is rank 0's value, every other call's apply_call's.
std::uint64_t call_result(HeapAllocator& allocator, const std::vector<CollectiveCall>& calls, int self);

// The result of host collective call #seq of MPI rank `self`, whose call is
// `call`, from the words of every rank's call (kWords each, in rank order): the
// calls compared with rank 0's (compare_calls), then call_result on this
// process's copy of the allocator. Throws the mismatch, or the allocator's
// error, on every rank alike, so that the copies never diverge.
std::uint64_t call_result_of_words(std::uint64_t seq, const std::vector<std::uint64_t>& words, int self,
                                   const CollectiveCall& call, HeapAllocator& allocator);

// Rank::heap_offset: the offset of p in the heap of `rank` (heap_size bytes at
// base), after checking that to_rank names a rank of the world and p lies in
// that heap (iris::Error otherwise).
std::uintptr_t checked_heap_offset(const void* p, int to_rank, int rank, int world_size, const char* base,
                                   std::size_t heap_size);

// Ranks that are threads of one process meet here at their collective calls:
// each rank posts its call; the last to arrive compares the calls and applies
// the agreed one to the allocator, once; the others sleep until it has, or
// until they can tell that it never will (the world was aborted, or a rank
// has returned and will never arrive), and then withdraw their call. Used by
// the CPU world and the GPU world's threads mode; MPI ranks meet through MPI.
class ThreadRendezvous {
 public:
  explicit ThreadRendezvous(int ranks) : posted_(static_cast<std::size_t>(ranks)) {}

  // Runs `change` under the lock, then wakes the sleeping ranks to look again:
  // how a world tells them that it was aborted or that a rank has returned
  // (a rank about to sleep sees the change).
  template <class F>
  void wake(F change) {
    {
      std::lock_guard lock(mutex_);
      change();
    }
    cv_.notify_all();
  }

  struct Result {
    bool met = false;          // false: withdrawn, the call can never complete
    std::uint64_t offset = 0;  // allocate's heap offset, from_rank0's value
    std::string error;         // the ranks' calls differ, or the allocator refused
  };

  // Rank r's call number seq (1, 2, ...). What the world adds, through `hooks`:
  //   aborted()        the world was aborted;
  //   returned(o)      rank o has returned from its body (it will never arrive);
  //   describe(o)      what rank o did, for unmet()'s message;
  //   arrived(r, seq)  after r has posted, under the lock;
  //   last(seq)        on the last arrival, before the calls are compared.
  // The call can never complete once the world is aborted or a rank returned.
  template <class Hooks>
  Result meet(int r, std::uint64_t seq, const CollectiveCall& call, HeapAllocator& allocator, Hooks&& hooks) {
    const auto stopped = [&] {
      if (hooks.aborted()) return true;
      for (int o = 0; o < static_cast<int>(posted_.size()); ++o)
        if (hooks.returned(o)) return true;
      return false;
    };
    std::unique_lock lock(mutex_);
    if (stopped()) return {};
    posted_[static_cast<std::size_t>(r)] = call;
    hooks.arrived(r, seq);
    if (++arrived_ == static_cast<int>(posted_.size())) {
      arrived_ = 0;
      hooks.last(seq);
      offset_ = 0;
      error_ = compare_calls(seq, posted_);
      if (error_.empty()) {
        try {
          offset_ = call_result(allocator, posted_, r);
        } catch (const Error& e) {
          error_ = e.what();
        }
      }
      ++completed_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return completed_ >= seq || stopped(); });
      if (completed_ < seq) {
        --arrived_;
        return {};
      }
    }
    return {true, offset_, error_};
  }

  // A whole host collective call of rank r: its number (calls_made, the rank's
  // count of its calls, advanced here and taken back if the call is
  // withdrawn), meet(), and the result (the offset, or an Error thrown). What
  // the world adds to meet()'s hooks:
  //   throw_aborted()  throws the error of a rank that another's failure stopped;
  //   fail(message)    aborts the world with Error(message) and throws it;
  //   entered(seq)     before meeting; left() after, however the call ends;
  //   completed(seq)   once the call has met.
  template <class Hooks>
  std::uint64_t collective(int r, std::uint64_t& calls_made, const CollectiveCall& call, HeapAllocator& allocator,
                           Hooks& hooks) {
    if (hooks.aborted()) hooks.throw_aborted();
    const std::uint64_t seq = ++calls_made;
    hooks.entered(seq);
    struct Left {
      Hooks& hooks;
      ~Left() { hooks.left(); }
    } left{hooks};
    const Result result = meet(r, seq, call, allocator, hooks);
    if (!result.met) {
      --calls_made;
      if (hooks.aborted()) hooks.throw_aborted();
      hooks.fail(unmet(r, seq, call, hooks));
    }
    hooks.completed(seq);
    if (!result.error.empty()) throw Error(result.error);
    return result.offset;
  }

  // The error of rank r's call #seq after meet() withdrew it: the call, and
  // the ranks that returned and so will never make it.
  template <class Hooks>
  std::string unmet(int r, std::uint64_t seq, const CollectiveCall& call, Hooks&& hooks) const {
    std::string gone;
    for (int o = 0; o < static_cast<int>(posted_.size()); ++o)
      if (hooks.returned(o)) gone += "; " + hooks.describe(o);
    return "iris: deadlock: rank " + std::to_string(r) + " waits in collective call #" + std::to_string(seq) + " (" +
           call.describe() + ") that can never complete" + gone;
  }

 private:
  std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::vector<CollectiveCall> posted_;  // each rank's latest call
  int arrived_ = 0;                     // ranks posted in the call now gathering
  std::uint64_t completed_ = 0;         // calls completed so far
  std::uint64_t offset_ = 0;            // the last completed call's result
  std::string error_;
};

}  // namespace iris::detail
