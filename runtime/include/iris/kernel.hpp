// What every file that irisc generates includes: the target's primitives, the
// tile library and the launch of a kernel over a grid of program instances.
// The target follows the compiler (see target.hpp): the same generated file
// builds for the GPU with nvcc or clang -x hip, and for the CPU emulation,
// where every rank is a host thread, with any C++ compiler.
#pragma once

#include <algorithm>  // std::max of a kernel's dynamic_shared_bytes
#include <cstddef>

#include "iris/device.hpp"
#include "iris/numeric.hpp"
#include "iris/target.hpp"
#include "iris/tile.hpp"
#if !IRIS_GPU
#include "iris/launch_cpu.hpp"
#endif

#if IRIS_GPU
#include "iris/launch_gpu.hpp"
#else
namespace iris {

// A stream to launch on; kernels on the CPU run synchronously, so it is empty.
struct Stream {};

// Runs Kernel::run for every program instance of `grid` on the calling rank.
template <class Kernel, class... Args>
void launch_kernel(Grid grid, Stream, const DeviceContext& ctx, Args... args) {
  static_assert(dynamic_shared_bytes_of<Kernel>() <= kMaxDynamicSharedBytes);  // dynamic_shared()'s buffer
  detail::check_node_local<Kernel>(ctx);
  const int total = grid.x * grid.y * grid.z;
  launch(ctx, total, [&](int pid, int) {
    Program program{ctx, {pid % grid.x, (pid / grid.x) % grid.y, pid / (grid.x * grid.y)},
                    {grid.x, grid.y, grid.z}};
    Kernel::run(program, args...);
  });
}

}  // namespace iris
#endif
