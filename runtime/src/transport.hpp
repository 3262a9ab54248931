// Iris runtime, CPU backend: what the device functions (device_cpu.cpp) ask of
// a world whose ranks are processes (run_mpi, world_cpu_mpi.cpp): the far
// memory of the remote accesses (ops/transport.hpp), the device barrier, and
// what a wait_until does while it spins. The threads of run_threads need none
// of it: every rank is near, and their barrier and waits are ThreadWorld's.
//
// The world of a context is found through its BarrierState (world.hpp); a wait,
// which has no context, finds the world of its thread in tls_transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "iris/device_cpu.hpp"

namespace iris::detail {

class Transport {
 public:
  virtual ~Transport() = default;

  // Far memory, as device_cpu.hpp's far_* functions describe it.
  virtual void put(int rank, std::uint64_t offset, const void* from, std::size_t bytes) = 0;
  virtual void get(int rank, std::uint64_t offset, void* to, std::size_t bytes) = 0;
  virtual void fetch_op(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value,
                        void* old) = 0;
  virtual void compare_swap(int rank, std::uint64_t offset, FarElement type, const void* compare, const void* value,
                            void* old) = 0;
  virtual void accumulate(int rank, std::uint64_t offset, FarOp op, FarElement type, const void* value) = 0;
  // Every put of this rank is complete at its target.
  virtual void quiet() = 0;

  // The device barrier of program instance program_id.
  virtual void barrier(int program_id) = 0;

  // A wait_until that blocks: wait_begins when it starts (its .iris location,
  // null and 0 when none was named), then wait_poll now and then while its
  // condition is false, which lets the transport progress (remote writes become
  // visible) and says whether the wait has outlasted the world's hang timeout;
  // hang_report then says where the wait is and why it is given up, after the
  // wait itself: " at k.iris:7 (rank 2, program 0): ...".
  virtual void wait_begins(const char* file, int line) = 0;
  virtual bool wait_poll() = 0;
  virtual std::string hang_report(int program_id) const = 0;
  // This rank's DeviceContext, which the report reads the heaps and allocations of.
  virtual DeviceContext context_of_rank() = 0;
};

// The world of the calling thread when it is a run_mpi rank's (else null).
extern thread_local Transport* tls_transport;

}  // namespace iris::detail
