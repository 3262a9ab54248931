// Iris runtime: run_threads, the same on every backend whose ranks are threads
// (the CPU world and the GPU world's threads mode): its checks of the
// arguments, one thread per rank running the body, and the world's end. Also
// the rank's thread of a world that lives between calls (WorldHandle).
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "iris/host.hpp"

namespace iris::detail {

inline void check_run_threads(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  if (ranks < 1) throw Error("iris: run_threads: need at least 1 rank, got " + std::to_string(ranks));
  if (heap_bytes == 0 || heap_bytes % 4096 != 0) {
    throw Error("iris: run_threads: heap size must be a positive multiple of 4096 bytes, got " +
                std::to_string(heap_bytes));
  }
  if (!body) throw Error("iris: run_threads: empty body");
}

// The stack of a rank's thread. A program instance on the CPU keeps its
// tiles on the stack, and at the GPU's tile sizes (a 128×256 f32 accumulator
// is 128 KiB, its tiles of pointers 256 KiB, more in checked builds) a fused
// kernel's frame passes the 8 MiB that a thread gets by default. Pages are
// only reserved until they are touched.
inline constexpr std::size_t kRankStackBytes = std::size_t{256} << 20;

// Runs world.run_rank(r, body) on a thread of its own (kRankStackBytes of
// stack) for every rank and joins them. A thread that cannot be started aborts
// the world, which releases the ranks already started.
template <class World>
void run_rank_threads(World& world, int ranks, const std::function<void(Rank&)>& body) {
  struct RankThread {
    World* world;
    const std::function<void(Rank&)>* body;
    int rank;
    pthread_t handle;
  };
  std::vector<RankThread> threads(static_cast<std::size_t>(ranks));
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, kRankStackBytes);
  int started = 0;
  for (; started < ranks; ++started) {
    RankThread& thread = threads[static_cast<std::size_t>(started)];
    thread = {&world, &body, started, {}};
    const auto start = [](void* argument) -> void* {
      auto* self = static_cast<RankThread*>(argument);
      self->world->run_rank(self->rank, *self->body);
      return nullptr;
    };
    if (const int error = pthread_create(&thread.handle, &attributes, start, &thread); error != 0) {
      world.abort(std::make_exception_ptr(Error("iris: run_threads: cannot start the thread of rank " +
                                                std::to_string(started) + ": " + std::strerror(error))));
      break;
    }
  }
  pthread_attr_destroy(&attributes);
  for (int r = 0; r < started; ++r) pthread_join(threads[static_cast<std::size_t>(r)].handle, nullptr);
}

// A rank's thread that outlives one call (WorldHandle): kRankStackBytes of
// stack, as run_rank_threads' threads have; it runs the jobs it is given one at
// a time (run() waits for its job and rethrows what it threw) until it is
// destroyed, which waits for the job it runs.
class LastingRankThread {
 public:
  // `prepare` runs first on the thread (its thread-local state).
  explicit LastingRankThread(std::function<void()> prepare) : prepare_(std::move(prepare)) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, kRankStackBytes);
    const int error = pthread_create(&handle_, &attributes, &LastingRankThread::main, this);
    pthread_attr_destroy(&attributes);
    if (error != 0) throw Error(std::string("iris: cannot start the rank's thread: ") + std::strerror(error));
  }
  ~LastingRankThread() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    pthread_join(handle_, nullptr);
  }
  LastingRankThread(const LastingRankThread&) = delete;
  LastingRankThread& operator=(const LastingRankThread&) = delete;

  void run(const std::function<void()>& job) {
    std::unique_lock lock(mutex_);
    job_ = &job;
    changed_.notify_all();
    changed_.wait(lock, [&] { return job_ == nullptr; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static void* main(void* argument) {
    auto* self = static_cast<LastingRankThread*>(argument);
    self->prepare_();
    std::unique_lock lock(self->mutex_);
    for (;;) {
      self->changed_.wait(lock, [&] { return self->job_ != nullptr || self->stopping_; });
      if (self->job_ == nullptr) return nullptr;  // stopping, and no job left
      lock.unlock();
      std::exception_ptr error;
      try {
        (*self->job_)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      self->error_ = error;
      self->job_ = nullptr;
      self->changed_.notify_all();
    }
  }

  std::function<void()> prepare_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* job_ = nullptr;  // the job to run, null once it has
  std::exception_ptr error_;                    // what the last job threw
  bool stopping_ = false;
  pthread_t handle_{};
};

// run_threads over a World(ranks, heap_bytes) that runs rank r's body in
// run_rank(r, body), records the first failure in first_error and aborts in
// abort(e), and waits in finish() for what its ranks left running.
template <class World>
void run_threads_in(int ranks, std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  check_run_threads(ranks, heap_bytes, body);
  World world(ranks, heap_bytes);
  run_rank_threads(world, ranks, body);
  world.finish();
  if (world.first_error) std::rethrow_exception(world.first_error);
}

}  // namespace iris::detail
