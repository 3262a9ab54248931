// iris_torch's world (include/iris_torch/world.hpp).
//
// Heap tensors own a block of the heap. Freeing one is collective, but a
// tensor dies where Python drops its last reference, at any point: its deleter
// only records the block, and the blocks recorded are freed at the next
// allocation (and at finalize), on every rank in the same order. Where the
// ranks have dropped different tensors by then, the heap's allocator finds the
// calls different and every rank throws.
#include "iris_torch/world.hpp"

#if IRIS_TORCH_GPU
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace iris_torch {
namespace {

// The world's calls may wait in a bootstrap whose allgather runs Python
// (torch.distributed's) on the rank's thread: a caller holding the GIL lets
// it go meanwhile. (torch's operators are called without it.)
class WithoutGil {
 public:
  WithoutGil() {
    if (PyGILState_Check() != 0) released_.emplace();
  }

 private:
  std::optional<pybind11::gil_scoped_release> released_;
};

std::unique_ptr<iris::WorldHandle> join(std::size_t heap_bytes, std::unique_ptr<iris::Bootstrap> bootstrap) {
  if (bootstrap) return std::make_unique<iris::WorldHandle>(heap_bytes, std::move(bootstrap));
  return std::make_unique<iris::WorldHandle>(heap_bytes);
}

// The world this process has joined, between init and finalize.
struct Session {
  Session(std::size_t heap_bytes, std::unique_ptr<iris::Bootstrap> bootstrap)
      : world(join(heap_bytes, std::move(bootstrap))) {
    world->run([&](iris::Rank& rank) { workspace.emplace(rank); });
  }

  std::unique_ptr<iris::WorldHandle> world;
  std::optional<iris::Workspace> workspace;  // the collectives' and the fused operations' (lives on the rank's thread)

  // Blocks of heap tensors that are gone, to be freed at the next allocation.
  std::mutex released_mutex;
  std::vector<void*> released;

  // Frees the blocks released so far, lowest address first (the same order on
  // every rank that released the same blocks). On the rank's thread.
  void free_released(iris::Rank& rank) {
    std::vector<void*> blocks;
    {
      const std::lock_guard lock(released_mutex);
      blocks.swap(released);
    }
    std::sort(blocks.begin(), blocks.end());
    for (void* p : blocks) rank.free(p);
  }
};

// Never destroyed at the end of the process, where it would make collective
// calls on a thread that is not the rank's: finalize ends it, collectively.
Session* session = nullptr;

Session& joined(const char* op) {
  TORCH_CHECK(session != nullptr, op, ": iris_torch.init() has not been called (or finalize() has)");
  return *session;
}

}  // namespace

void init(std::size_t heap_bytes, std::unique_ptr<iris::Bootstrap> bootstrap) {
  TORCH_CHECK(session == nullptr, "iris_torch.init: already joined the world (call finalize() first)");
  const WithoutGil unlocked;
  session = new Session(heap_bytes, std::move(bootstrap));
}

void finalize() {
  if (session == nullptr) return;
  const WithoutGil unlocked;
  Session& s = *session;
  s.world->run([&](iris::Rank& rank) {
    s.workspace.reset();
    s.free_released(rank);
  });
  s.world->close();
  delete std::exchange(session, nullptr);
}

int rank(const char* op) { return joined(op).world->rank(); }
int world_size(const char* op) { return joined(op).world->world_size(); }

void run(const char* op, const std::function<void(iris::Rank&, iris::Workspace&)>& work) {
  Session& s = joined(op);
  const WithoutGil unlocked;
  s.world->run([&](iris::Rank& rank) { work(rank, *s.workspace); });
}

#if IRIS_TORCH_GPU
namespace {
// The rank's GPU, which run() has made the current device (cudaSetDevice; not
// torch's own idea of it, which may lag behind).
c10::DeviceIndex rank_device() {
  int device = 0;
  C10_CUDA_CHECK(cudaGetDevice(&device));
  return static_cast<c10::DeviceIndex>(device);
}
}  // namespace

c10::Device heap_device() { return {c10::kCUDA, rank_device()}; }
iris::Stream current_stream() {
  // torch's default stream is the legacy one, which it names null; a null
  // iris::Stream would be this thread's own stream instead.
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(rank_device()).stream();
  return stream == nullptr ? cudaStreamLegacy : stream;
}
void copy_on_stream(void* to, const void* from, std::size_t bytes) {
  C10_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, current_stream()));
}
#else
c10::Device heap_device() { return c10::kCPU; }
iris::Stream current_stream() { return {}; }
void copy_on_stream(void* to, const void* from, std::size_t bytes) { std::memcpy(to, from, bytes); }
#endif

at::Tensor heap_tensor(iris::Rank& rank, at::IntArrayRef sizes, at::ScalarType dtype) {
  session->free_released(rank);
  std::size_t bytes = c10::elementSize(dtype);
  for (const std::int64_t size : sizes) bytes *= static_cast<std::size_t>(size);
  // A block of at least one byte, so that an empty tensor owns a block too.
  void* block = rank.allocate(std::max<std::size_t>(bytes, 1));
  const auto release = [](void* p) {
    if (session == nullptr) return;  // the heap is gone already (finalize)
    const std::lock_guard lock(session->released_mutex);
    session->released.push_back(p);
  };
  return torch::from_blob(block, sizes, release, at::TensorOptions().dtype(dtype).device(heap_device()));
}

}  // namespace iris_torch
