// Iris runtime: what every backend's run_mpi does alike with MPI (one process
// per rank, started by mpirun): MPI's start and end, the checks of what the
// processes were started with, and MPI as the world's Bootstrap (the steps
// over any Bootstrap are bootstrap_steps.hpp's). Included by world_gpu_mpi.cpp
// and world_cpu_mpi.cpp.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "iris/host.hpp"

namespace iris::detail {

// run_mpi's heap size (WorldHandle's too).
inline void check_run_mpi_heap(std::size_t heap_bytes) {
  if (heap_bytes == 0 || heap_bytes % 4096 != 0) {
    throw Error("iris: run_mpi: heap size must be a positive multiple of 4096 bytes, got " +
                std::to_string(heap_bytes));
  }
}

// run_mpi's arguments.
inline void check_run_mpi(std::size_t heap_bytes, const std::function<void(Rank&)>& body) {
  check_run_mpi_heap(heap_bytes);
  if (!body) throw Error("iris: run_mpi: empty body");
}

inline void mpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("iris: run_mpi: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}
#define IRIS_MPI(call) ::iris::detail::mpi_check((call), #call)

// A program linked against one MPI and started by another MPI's launcher runs as
// N independent one-rank worlds. The launchers say how many ranks they started.
inline void check_launcher(int size) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long launched = std::strtol(value, &end, 10);
    if (*end != '\0' || launched == size) continue;
    throw Error("iris: run_mpi: MPI reports " + std::to_string(size) + " rank(s) but the launcher started " + value +
                " (" + var + "): is the program linked against the MPI library of this mpirun?");
  }
}

// MPI for one run_mpi call: initialised here unless the program did (then also
// finalised by end()), and the runtime's own communicator, a duplicate of
// MPI_COMM_WORLD that keeps its traffic apart from the program's.
class MpiSession {
 public:
  // `thread_level`: what MPI is initialised with when the program has not
  // (MPI_THREAD_FUNNELED, ...); `provided` says what it gives.
  explicit MpiSession(int thread_level) {
    int initialized = 0, finalized = 0;
    IRIS_MPI(MPI_Initialized(&initialized));
    IRIS_MPI(MPI_Finalized(&finalized));
    if (finalized != 0) throw Error("iris: run_mpi: MPI has already been finalised (run_mpi can run once per process)");
    if (initialized == 0) {
      IRIS_MPI(MPI_Init_thread(nullptr, nullptr, thread_level, &provided));
      own_mpi_ = true;
    } else {
      IRIS_MPI(MPI_Query_thread(&provided));
    }
    IRIS_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    IRIS_MPI(MPI_Comm_rank(comm, &rank));
    IRIS_MPI(MPI_Comm_size(comm, &size));
    check_launcher(size);
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // Collective orderly end; without it (an exception) MPI is left as it is.
  void end() {
    IRIS_MPI(MPI_Comm_free(&comm));
    if (own_mpi_) IRIS_MPI(MPI_Finalize());
  }

  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  int provided = 0;  // MPI's thread support level

 private:
  bool own_mpi_ = false;
};

// MPI as a Bootstrap: run_mpi's, and WorldHandle's without one of the
// program's. Its communicator is also the one the CPU's MPI RMA window uses.
class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(int thread_level) : session(thread_level) {}
  int rank() const override { return session.rank; }
  int size() const override { return session.size; }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    if (bytes > static_cast<std::size_t>(INT_MAX)) throw Error("iris: MpiBootstrap::allgather: more than INT_MAX bytes");
    const int count = static_cast<int>(bytes);
    IRIS_MPI(MPI_Allgather(mine, count, MPI_BYTE, all, count, MPI_BYTE, session.comm));
  }

  MpiSession session;
};

// A WorldHandle's Bootstrap, into `boot`: the program's (`given`), else MPI's,
// started with `thread_level`, which is then also returned (else null).
inline MpiBootstrap* take_bootstrap(std::unique_ptr<Bootstrap>& boot, std::unique_ptr<Bootstrap> given,
                                    int thread_level) {
  if (given) {
    boot = std::move(given);
    return nullptr;
  }
  auto mpi = std::make_unique<MpiBootstrap>(thread_level);
  MpiBootstrap* taken = mpi.get();
  boot = std::move(mpi);
  return taken;
}

}  // namespace iris::detail
