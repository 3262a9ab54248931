// Iris runtime: kernel launch for the CPU target.
//
// launch(ctx, grid, program) runs program(pid, grid) for pid = 0 .. grid-1, in order,
// on the calling rank's thread, and returns when all have finished (a launch is
// synchronous on the CPU). Running the instances of one rank in order is the CPU
// backend's documented execution model: a program instance that waits (wait_until,
// barrier) for something that only a *later* instance of the same or of another rank
// would provide deadlocks here -- the hang detector turns the simple cases of this
// into an iris::Error; see docs/runtime.md.
#pragma once

#include <string>

#include "iris/device_cpu.hpp"

namespace iris {

template <class F>
void launch(const DeviceContext& ctx, int grid, F&& program) {
  if (grid < 0) {
    throw Error("iris: launch on rank " + std::to_string(ctx.rank) + ": grid must not be negative, got " +
                std::to_string(grid));
  }
  // Clears the current program id also when a program instance throws.
  struct ProgramReset {
    ~ProgramReset() { detail::end_program(); }
  } reset;
  for (int pid = 0; pid < grid; ++pid) {
    detail::begin_program(ctx, pid);  // throws if another rank has failed
    program(pid, grid);
  }
}

}  // namespace iris
