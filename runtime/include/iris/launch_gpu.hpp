// Iris runtime: kernel launch for the GPU target (included by kernel.hpp after
// tile.hpp when IRIS_GPU).
//
// launch_kernel<Kernel>(grid, stream, ctx, args...) launches one thread block of
// kThreads threads per program instance, on the calling rank's device (the runtime
// makes it current on the rank's thread) and on `stream`. The default Stream{} (a
// null stream) means the rank's own stream: the per-thread default stream of the
// calling thread (hipStreamPerThread). It is not the legacy null stream, which
// would serialise the kernels of ranks that share a GPU and deadlock any kernel
// that waits for another rank. Rank::barrier() waits for the rank's GPU (first its
// own stream and the launches on other streams, polling, then the whole device), so
// results are visible after it. A launch is asynchronous; a kernel that fails later
// (a trap in checked mode, a bad address) is reported as an iris::Error by the
// rank's next Rank::barrier() (or the next launch, or the end of run_threads /
// run_mpi), with the checked-mode message if there is one.
#pragma once

#include <hip/hip_runtime.h>

#include <atomic>
#include <climits>
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>  // conditional_t: the program type of an image

#include "iris/device_gpu.hpp"
#include "iris/host.hpp"
#include "iris/tile.hpp"

namespace iris {

using Stream = hipStream_t;

namespace detail {

// Whether Kernel has a copier slice (irisc writes Kernel::copies beside
// Kernel::run where its pipelined loops copy boxes, pass_split_copier.cpp)
// that a warpgroup of its own runs on this target: sm_90a, whose TMA it
// issues (ops/copy_box.hpp). Only where an instance's stages take more than
// half the multiprocessor's shared memory: the instance then has the
// multiprocessor to itself, whose registers setmaxnreg moves from the
// copier to the program. Where several instances fit, ptxas ignores
// setmaxnreg (C7508), and the copier's warpgroup would only take their room.
template <class Kernel>
constexpr bool runs_copier() {
#if IRIS_TMA
  return requires { Kernel::iris_copier; } && kThreads % 128 == 0 &&
         2 * dynamic_shared_bytes_of<Kernel>() > kMaxDynamicSharedBytes;
#else
  return false;
#endif
}

// The images of a kernel's entry (kernel_entry). A kernel that irisc gives
// iris_boxes_hold (pass_split_copier.cpp) has two, chosen at each launch:
// `boxes` where its arguments let TMA copy every box, whose instances run the
// copier's version of the box loops alone (one version, not two), and
// `no_copier` elsewhere, whose thread 0 issues the boxes where the runs are
// uniform. Every other kernel has `usual`: a copier where runs_copier says so.
enum class Image { usual, boxes, no_copier };

// The threads of an instance: the program's kThreads, and the copier
// warpgroup's 128 where there is one.
inline constexpr int kCopierThreads = 128;
template <class Kernel, Image I>
constexpr bool image_has_copier() {
  return runs_copier<Kernel>() && I != Image::no_copier;
}
template <class Kernel, Image I>
constexpr int instance_threads() {
  return kThreads + (image_has_copier<Kernel, I>() ? kCopierThreads : 0);
}

// Registers per thread once the copier warpgroup has given back all but
// kCopierRegisters of its share (setmaxnreg): the program's threads take the
// rest of the multiprocessor's 64 Ki, in the multiples of 8 that setmaxnreg
// takes, 256 at most (cuBLAS's Hopper GEMMs split them 232/40 the same way).
inline constexpr int kCopierRegisters = 40;
inline constexpr int kProgramRegisters =
    std::min(256, (65536 - kCopierThreads * kCopierRegisters) / (kThreads > 0 ? kThreads : 1) / 8 * 8);

// (The bounds in parentheses: HIP's __launch_bounds__ is a macro, which would
// split them at the template's comma.)
template <class Kernel, Image I, class... Args>
__global__ __launch_bounds__((instance_threads<Kernel, I>())) void kernel_entry(DeviceContext ctx, Args... args) {
  const Program program{ctx,
                        {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)},
                        {static_cast<int>(gridDim.x), static_cast<int>(gridDim.y), static_cast<int>(gridDim.z)}};
  // Only kernels with pipelined loops (dynamic shared memory) may copy boxes
  // (ops/copy_box.hpp): their instances set up the barriers first, and free
  // their tensor maps at the end.
  constexpr bool pipelined = dynamic_shared_bytes_of<Kernel>() > 0;
  if constexpr (pipelined) detail::boxes_begin();
  if constexpr (image_has_copier<Kernel, I>()) {
    // The copier warpgroup (this image's launch bounds admit it, so
    // launch_kernel launched it): one warp runs the copier slice with few
    // registers, the program's threads get the rest. Without it the program,
    // compiled for a copier, would wait for copies forever: a launch of
    // kThreads threads fails instead.
#if IRIS_TMA
    if (blockDim.x != static_cast<unsigned>(instance_threads<Kernel, I>())) __trap();
#endif
    const std::conditional_t<I == Image::boxes, CopierBoxesProgram, CopierProgram> copier_program{program};
    if (threadIdx.x >= static_cast<unsigned>(kThreads)) {
      asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kCopierRegisters));
      if (threadIdx.x / 32 == static_cast<unsigned>(kThreads / 32)) Kernel::copies(copier_program, args...);
      return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kProgramRegisters));
    Kernel::run(copier_program, args...);
  } else {
    // (launch_kernel launches the boxes image only where its launch bounds
    // admit a copier; elsewhere it is the no_copier image's twin.)
    Kernel::run(program, args...);
  }
  if constexpr (pipelined) detail::boxes_end();
}

// "iris_kernels::all_gather<1024>" for messages, from the compiler's function signature.
template <class Kernel>
std::string kernel_name() {
  const std::string_view sig = __PRETTY_FUNCTION__;
  const std::string_view key = "Kernel = ";
  const std::size_t start = sig.find(key);
  if (start == std::string_view::npos) return std::string(sig);
  const std::size_t from = start + key.size();
  const std::size_t end = sig.find_first_of(";]", from);
  return std::string(sig.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from));
}

// Lets launches of Kernel's entry on the current device use `bytes` of dynamic
// shared memory: an opt-in per function and device, made once per kernel and
// device (devices 0 to 63) in each translation unit. Without it a kernel's
// static and dynamic shared memory together may not pass 48 KiB; the device
// refuses more than it has (227 KiB on an H200). Static, as launch_threads: an
// inline template's static is one object for the whole process (GCC's
// STB_GNU_UNIQUE), so a second shared library holding the same kernel would
// skip its own opt-in, and its launches fail (tests/gpu/two_libraries.cu).
// (Not a visibility attribute: nvcc rejects one on an instantiation for a
// kernel of internal linkage.)
template <class Kernel, Image I, class... Args, class Where>
static void allow_dynamic_shared(std::size_t bytes, Where where) {
  if (bytes == 0) return;
  static std::atomic<unsigned long long> allowed{0};  // a bit per device, for this kernel
  int device = 0;
  hipError_t e = hipGetDevice(&device);
  const unsigned long long bit = 1ull << (device & 63);
  if (e == hipSuccess && (allowed.load(std::memory_order_relaxed) & bit)) return;
  if (e == hipSuccess)
    e = hipFuncSetAttribute(reinterpret_cast<const void*>(&kernel_entry<Kernel, I, Args...>),
                            hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (e != hipSuccess) {
    throw Error(where() + ": its pipelined loops need " + std::to_string(bytes) +
                " bytes of shared memory, which device " + std::to_string(device) +
                " does not grant (use smaller tiles): " + hipGetErrorString(e));
  }
  allowed.fetch_or(bit, std::memory_order_relaxed);
}

// The threads to launch Kernel's entry with: kThreads, and its copier
// warpgroup's where the device's image of it has one (compiled for sm_90a
// with a copier slice: its launch bounds then admit kThreads +
// kCopierThreads), asked once per kernel (not per entry's function type,
// which kernels of the same parameters share).
template <class Kernel, Image I, class... Args>
static int launch_threads() {
  static const int threads = [] {
    hipFuncAttributes attributes{};
    if (hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&kernel_entry<Kernel, I, Args...>)) ==
            hipSuccess &&
        attributes.maxThreadsPerBlock >= kThreads + kCopierThreads)
      return kThreads + kCopierThreads;
    return kThreads;
  }();
  return threads;
}

// Remembers a launch on a stream other than the rank's own, so that the rank's next
// Rank::barrier() waits for it too (runtime library; records an event), unless
// the stream is capturing a graph.
void track_launch(hipStream_t stream);
// How many of the calling thread's launches on such streams it still tracks:
// those not yet seen finished (tests/gpu/smoke.cu checks that it stays bounded).
std::size_t tracked_launches();

}  // namespace detail

// Runs Kernel::run for every program instance of `grid` on the calling rank's device.
template <class Kernel, class... Args>
void launch_kernel(Grid grid, Stream stream, const DeviceContext& ctx, Args... args) {
  const auto where = [&] {
    return "iris: launch of " + detail::kernel_name<Kernel>() + " on rank " + std::to_string(ctx.rank);
  };
  detail::check_node_local<Kernel>(ctx);
  if (grid.x < 0 || grid.y < 0 || grid.z < 0) {
    throw Error(where() + ": grid must not be negative, got (" + std::to_string(grid.x) + ", " +
                std::to_string(grid.y) + ", " + std::to_string(grid.z) + ")");
  }
  if (grid.y > 65535 || grid.z > 65535) {
    throw Error(where() + ": grid dimensions y and z are limited to 65535, got (" + std::to_string(grid.x) + ", " +
                std::to_string(grid.y) + ", " + std::to_string(grid.z) + ")");
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;  // no program instances
  if (stream == nullptr) stream = hipStreamPerThread;
  const dim3 blocks(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z));
  constexpr std::size_t shared = dynamic_shared_bytes_of<Kernel>();
  const auto launch = [&]<detail::Image I>() {
    detail::allow_dynamic_shared<Kernel, I, Args...>(shared, where);
    detail::kernel_entry<Kernel, I, Args...><<<blocks, dim3(detail::launch_threads<Kernel, I, Args...>()), shared,
                                               stream>>>(ctx, args...);
  };
  // (Whether it has one asks for the function's address, not for a call: nvcc's
  // device pass judges the call ill-formed where the launch comes from a function
  // of internal linkage, and would compile the usual image where the host
  // launches the other two, which then have no device code.)
  if constexpr (requires { &Kernel::iris_boxes_hold; }) {
    // (The program it gets is the launch's: its rank and world, never an instance's id.)
    const Program launch_program{ctx, {0, 0, 0}, {grid.x, grid.y, grid.z}};
    if (detail::launch_threads<Kernel, detail::Image::boxes, Args...>() > kThreads &&
        Kernel::iris_boxes_hold(launch_program, args...))
      launch.template operator()<detail::Image::boxes>();
    else
      launch.template operator()<detail::Image::no_copier>();
  } else {
    launch.template operator()<detail::Image::usual>();
  }
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) {
    throw Error(where() + " failed: " + hipGetErrorName(e) + ": " + hipGetErrorString(e));
  }
  if (stream != hipStreamPerThread) detail::track_launch(stream);
}

}  // namespace iris
