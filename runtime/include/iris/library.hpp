// Iris runtime: what the host libraries over irisc-compiled kernels share --
// the fused operations (iris/fused.hpp, iris::ops) and the collectives
// (iris/ccl.hpp, iris::ccl). Both launch kernels that end with finish(sync,
// epoch) (iris/ccl.iris), so both keep their state in a Workspace: the words
// of finish() (whose epoch advances on the device), flags and scratch in the
// symmetric heap. One workspace may serve calls of both libraries, in one order
// on every rank. The argument checks that every operation makes the
// same way (iris::library) throw an iris::Error whose message starts with the
// operation's name, the same on every rank.
#pragma once

#include "iris/host.hpp"
#include "iris/kernel.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace iris {

// The state of one rank's library calls (fused operations, collectives): the
// synchronisation words of finish(), the flags and the scratch buffers, in the
// symmetric heap. The words hold the epoch, which every kernel advances by one
// on the device (begin_epoch and finish of iris/ccl.iris; flags are set to the
// epoch of the call that sets them, so they are never reset): no argument of a
// launch changes from call to call, so calls captured in a CUDA graph replay.
// Create one on every rank (collective), pass it to every call; the flags and
// scratch buffers grow, collectively, when a call needs more than the earlier
// ones (Rank::barrier() on every rank before and after, which a stream capture
// does not allow: make each call once before capturing it). Calls through one
// workspace are ordered: use one workspace per stream if calls run on several
// streams at once. Not copyable.
class Workspace {
 public:
  // Collective: allocates and zeroes the synchronisation words (2 + world_size:
  // finish() of iris/ccl.iris), then a host barrier.
  explicit Workspace(Rank& rank) : rank_(rank) {
    const std::size_t words = 2 + static_cast<std::size_t>(rank.world_size());
    sync_ = rank.allocate<std::int64_t>(words);
    zero(sync_, words * sizeof(std::int64_t));
    rank.barrier();
  }
  // Collective: a host barrier (the last call has completed on every rank), then
  // frees the workspace's heap memory. Errors (another rank failed) are dropped.
  ~Workspace() {
    try {
      rank_.barrier();
      rank_.free(scratch_);
      rank_.free(flags_);
      rank_.free(sync_);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the world is failing anyway
    }
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  Rank& rank() const { return rank_; }
  // Calls made through the workspace so far (launched or captured; a graph's
  // replays are not counted).
  std::int64_t calls() const { return calls_; }
  // Bytes of symmetric heap the workspace holds now (flags and scratch grow).
  std::size_t heap_bytes() const {
    return 2 * sizeof(std::int64_t) + flag_count_ * sizeof(std::int64_t) + scratch_bytes_;
  }

  // For the libraries (iris::ops, iris::ccl). Makes room for `flags` flags and
  // `scratch_bytes` of scratch for the call `op`: collective where it grows
  // (the same sizes on every rank, as the arguments of the calls are). A heap
  // too small for them is an iris::Error that names `op`.
  void reserve(const char* op, std::size_t flags, std::size_t scratch_bytes) {
    if (flags <= flag_count_ && scratch_bytes <= scratch_bytes_) return;
    rank_.barrier();  // every rank's earlier calls have completed: nobody uses the old buffers
    try {  // each old buffer forgotten once freed, so that a failed allocate leaves none to free twice
      if (flags > flag_count_) {
        rank_.free(flags_);
        flags_ = nullptr;
        flag_count_ = 0;
        flags_ = rank_.allocate<std::int64_t>(flags);
        flag_count_ = flags;
        zero(flags_, flags * sizeof(std::int64_t));  // below every epoch to come
      }
      if (scratch_bytes > scratch_bytes_) {
        rank_.free(scratch_);
        scratch_ = nullptr;
        scratch_bytes_ = 0;
        scratch_ = rank_.allocate(scratch_bytes);
        scratch_bytes_ = scratch_bytes;
      }
    } catch (const Error& e) {
      throw Error(std::string(op) + ": the workspace's " + std::to_string(flags) + " flags and " +
                  std::to_string(scratch_bytes) + " bytes of scratch do not fit in the symmetric heap: " + e.what());
    }
    rank_.barrier();  // every rank's flags are zero before any rank sets one
  }
  std::int64_t* sync() const { return sync_; }
  std::int64_t* flags() const { return flags_; }
  void* scratch() const { return scratch_; }
  void count_call() { ++calls_; }

 private:
  static void zero(void* p, std::size_t bytes) {
    if (bytes == 0) return;
#if IRIS_GPU
    if (hipMemsetAsync(p, 0, bytes, hipStreamPerThread) != hipSuccess ||
        hipStreamSynchronize(hipStreamPerThread) != hipSuccess) {
      throw Error("iris::Workspace: clearing " + std::to_string(bytes) + " bytes of heap memory failed");
    }
#else
    std::memset(p, 0, bytes);
#endif
  }

  Rank& rank_;
  std::int64_t* sync_ = nullptr;  // finish()'s words: a count, the epoch, the far ranks' epochs
  std::int64_t* flags_ = nullptr;
  std::size_t flag_count_ = 0;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  std::int64_t calls_ = 0;
};

namespace library {

[[noreturn]] inline void fail(const char* op, const std::string& why) { throw Error(std::string(op) + ": " + why); }

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The kernels take every pointer as mutable, inputs too.
template <class T>
T* mutable_ptr(const T* p) {
  return const_cast<T*>(p);
}

inline void check_pointer(const char* op, const char* name, const void* p) {
  if (p == nullptr) fail(op, std::string(name) + " is null");
}

inline bool in_heap(const Rank& rank, const void* p) noexcept {
  try {
    (void)rank.translate(p, rank.rank());
    return true;
  } catch (const Error&) {
    return false;
  }
}

// `p` (`bytes`) must lie in the calling rank's symmetric heap; `why` says who
// reaches it. The message names neither the address nor the rank, so that it
// is the same on every rank that makes the same call (agree_on_call compares
// the ranks' verdicts).
inline void check_heap(const char* op, const Rank& rank, const char* name, const void* p, std::size_t bytes,
                       const char* why) {
  const char* first = static_cast<const char*>(p);
  if (in_heap(rank, first) && in_heap(rank, first + bytes - 1)) return;
  fail(op, std::string(name) + " (" + std::to_string(bytes) + " bytes) " +
               (in_heap(rank, first) ? "runs past the end of" : "is not in") + " the calling rank's symmetric heap, but " +
               why + ": allocate it with Rank::allocate (the same call on every rank)");
}

// Whether the `a_bytes` at `a` and the `b_bytes` at `b` share a byte.
inline bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

// A buffer of `bytes` at `p`, where p is in the calling rank's symmetric
// heap, must lie in a live allocation, from p to no further than its end.
// (Elsewhere -- any memory of the device -- its size is not known.) The
// message names heap offsets, not addresses, so that it is the same on every
// rank that makes the same call.
inline void check_allocation(const char* op, const Rank& rank, const char* name, const void* p, std::size_t bytes) {
  const std::optional<Rank::Allocation> a = rank.allocation_of(p);
  if (!a || (a->number != 0 && bytes <= a->bytes - a->offset)) return;
  const std::string buffer = std::string(name) + " (" + std::to_string(bytes) + " bytes";
  if (a->number == 0) {
    fail(op, buffer + " at byte " + std::to_string(a->offset) +
                 " of the symmetric heap) is in no live allocation (freed, or past the end of one)");
  }
  fail(op, buffer + " from byte " + std::to_string(a->offset) + " of allocation #" + std::to_string(a->number) +
               ") runs past the end of the allocation (" + std::to_string(a->bytes) + " bytes)");
}

// What this rank's checks of a call say: the message of the iris::Error that
// check() throws, or nothing where it passes.
template <class Check>
std::string verdict_of(Check&& check) {
  try {
    check();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// After the checks of the call `op` through `ws` (`error`: this rank's
// verdict), where `compare`, the ranks compare `call` (the text that names the
// call and the arguments that must agree), the workspace (by the allocation of
// its words, the same on every rank for one workspace) and the verdict, so
// that a rank whose check failed where others passed shows (Rank::agree). Every
// rank then throws the same iris::Error: the comparison's where the ranks
// differ (naming each rank's call), else the checks' where they failed.
inline void agree_on_call(Workspace& ws, const char* op, const std::string& call, const std::string& error,
                          bool compare) {
  if (compare) {
    Rank& rank = ws.rank();
    try {
      const std::optional<Rank::Allocation> words = rank.allocation_of(ws.sync());
      const std::string text =
          call + " through the workspace at allocation #" + std::to_string(words ? words->number : 0);
      rank.agree(error.empty() ? text : text + " failing: " + error);
    } catch (const Error& e) {
      fail(op, e.what());
    }
  }
  if (!error.empty()) throw Error(error);
}

}  // namespace library

}  // namespace iris
