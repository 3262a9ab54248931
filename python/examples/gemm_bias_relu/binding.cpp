// torch.ops.iris_example.gemm_bias_relu(a, b, bias) = relu(a @ b + bias) for
// bf16 tensors on the symmetric heap, by the kernel of gemm_bias_relu.iris:
// a user's own kernel bound to a torch operator over iris_torch's world
// (iris_torch/world.hpp; docs/python.md, "A kernel of your own"). Every rank
// computes its own product; the kernel reaches no other rank.
#include <torch/extension.h>
#include <torch/library.h>

#include "gemm_bias_relu.iris.hpp"
#include "iris_torch/world.hpp"

namespace {

// Small tiles, which the CPU needs and the example's small shapes suit on a
// GPU too (the kernel's defaults are for large GEMMs on a GPU).
constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32;

iris::bfloat16* bf16_data(const at::Tensor& t) { return static_cast<iris::bfloat16*>(t.data_ptr()); }

at::Tensor gemm_bias_relu(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  constexpr const char* op = "iris_example.gemm_bias_relu";
  for (const at::Tensor& t : {a, b, bias}) {
    TORCH_CHECK(t.scalar_type() == at::kBFloat16 && t.is_contiguous(), op, ": takes contiguous bfloat16 tensors");
  }
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && bias.dim() == 1 && a.size(1) == b.size(0) && bias.size(0) == b.size(1),
              op, ": a (M×K), b (K×N) and bias (N) do not fit: ", a.sizes(), ", ", b.sizes(), ", ", bias.sizes());
  const int m = static_cast<int>(a.size(0)), n = static_cast<int>(b.size(1)), k = static_cast<int>(a.size(1));
  return iris_torch::on_rank(op, [&](iris::Rank& rank, iris::Workspace&) {
    iris_torch::require_on_heap(rank, op, "a", a);
    iris_torch::require_on_heap(rank, op, "b", b);
    iris_torch::require_on_heap(rank, op, "bias", bias);
    at::Tensor c = iris_torch::heap_tensor(rank, {m, n}, at::kBFloat16);
    const int tiles = ((m + kBlockM - 1) / kBlockM) * ((n + kBlockN - 1) / kBlockN);
    iris_kernels::gemm_bias_relu<kBlockM, kBlockN, kBlockK>::launch(
        {tiles}, rank.device_context(), bf16_data(a), bf16_data(b), bf16_data(bias), bf16_data(c), m, n, k,
        iris_torch::current_stream());
    return c;
  });
}

}  // namespace

TORCH_LIBRARY(iris_example, m) { m.def("gemm_bias_relu(Tensor a, Tensor b, Tensor bias) -> Tensor"); }
// On the heap's device: the CPU, or CUDA where iris_torch runs on the GPU target.
TORCH_LIBRARY_IMPL(iris_example, IRIS_TORCH_HEAP_KEY, m) { m.impl("gemm_bias_relu", &gemm_bias_relu); }

// Importing the module registers the operator.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.doc() = "torch.ops.iris_example.gemm_bias_relu"; }
