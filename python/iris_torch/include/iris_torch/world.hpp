// iris_torch's world: the one iris_torch.init() joins (a world of processes
// held open, iris::WorldHandle) and the tensors of its symmetric heap. In
// libiris_torch.so, with the runtime, so that the module iris_torch._C (the
// operators torch.ops.iris.*) and a user's extension with kernels of its own
// (iris_torch_add_extension, docs/python.md) share one world and one copy
// of the runtime (the rank's thread's state is the runtime's).
//
// Every call of an extension's operator is collective: it runs its work on
// the rank's thread (run), where it makes its output tensors (heap_tensor)
// and launches its kernels with the rank's device context.
#pragma once

#include <torch/extension.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "iris/host.hpp"
#include "iris/library.hpp"

namespace iris_torch {

// Collective: joins the world with a heap of heap_bytes per rank, and makes
// the workspace of the collectives and fused operations. The processes meet
// through `bootstrap` (torch.distributed's, from Python), or through MPI (the
// mpirun job) where it is null.
void init(std::size_t heap_bytes, std::unique_ptr<iris::Bootstrap> bootstrap);
// Collective: frees what is left and leaves the world; nothing where init()
// has not been called.
void finalize();

// The rank, the world size; `op` names the caller where init() has not been called.
int rank(const char* op);
int world_size(const char* op);

// work(rank, workspace) on the rank's thread (WorldHandle::run); what it
// throws is rethrown here (a RuntimeError in Python).
void run(const char* op, const std::function<void(iris::Rank&, iris::Workspace&)>& work);

// run's work with a result: the result.
template <class Work>
auto on_rank(const char* op, Work&& work) {
  decltype(work(std::declval<iris::Rank&>(), std::declval<iris::Workspace&>())) result;
  run(op, [&](iris::Rank& rank, iris::Workspace& workspace) { result = work(rank, workspace); });
  return result;
}

// Where the heap's tensors live: the rank's GPU where the package runs on the
// GPU target (IRIS_TORCH_GPU), else the CPU. IRIS_TORCH_HEAP_KEY is the
// dispatch key of operators on them: TORCH_LIBRARY_IMPL(ns, IRIS_TORCH_HEAP_KEY, m).
#if IRIS_TORCH_GPU
inline constexpr c10::DeviceType heap_device_type = c10::kCUDA;
#define IRIS_TORCH_HEAP_KEY CUDA
#else
inline constexpr c10::DeviceType heap_device_type = c10::kCPU;
#define IRIS_TORCH_HEAP_KEY CPU
#endif
// In run's work: the heap's device (with the rank's GPU's index).
c10::Device heap_device();
// In run's work: the stream the operators launch on, torch's current stream
// on the rank's GPU (the CPU target has none: its kernels run in the call).
iris::Stream current_stream();
// In run's work: copies `bytes` from `from` to `to` on the heap's device, in
// current_stream()'s order.
void copy_on_stream(void* to, const void* from, std::size_t bytes);

// In run's work: a new tensor of `sizes` and `dtype` on the heap
// (collective). Its block is freed after the tensor is gone, at the next
// heap_tensor or at finalize (the deleter cannot make a collective call).
at::Tensor heap_tensor(iris::Rank& rank, at::IntArrayRef sizes, at::ScalarType dtype);

// In run's work: throws, naming `op` and the argument `name`, where `t` is not
// on this rank's heap.
inline void require_on_heap(const iris::Rank& rank, const char* op, const char* name, const at::Tensor& t) {
  const char* first = static_cast<const char*>(t.data_ptr());
  const char* last = first + std::max<std::size_t>(t.nbytes(), 1) - 1;
  TORCH_CHECK(iris::library::in_heap(rank, first) && iris::library::in_heap(rank, last), op, ": ", name,
              " is not on the symmetric heap: make it with iris_torch.empty (or take an iris operator's output)");
}

}  // namespace iris_torch
