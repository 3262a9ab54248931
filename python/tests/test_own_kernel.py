"""A user's own kernel from Python: torch.ops.iris_example.gemm_bias_relu
(python/examples/gemm_bias_relu, built by iris_torch_add_extension) under
mpirun, against torch's relu(a @ b + bias) of the same inputs, with partial
tiles; then an operand that is not on the heap. Small integers keep every sum
exact in f32 and in bf16. A failure ends the job at once (harness.run).
"""
import torch

import iris_torch
import gemm_bias_relu  # noqa: F401 (registers torch.ops.iris_example.gemm_bias_relu)
from harness import on_heap, run


def main():
    iris_torch.init(heap_bytes=1 << 22)
    me = iris_torch.rank()
    g = torch.Generator().manual_seed(50 + me)
    m, n, k = 70, 90, 40
    a, b, bias = (torch.randint(-2, 3, shape, generator=g).bfloat16() for shape in ((m, k), (k, n), (n,)))
    got = torch.ops.iris_example.gemm_bias_relu(on_heap(a), on_heap(b), on_heap(bias)).cpu()
    expected = torch.relu(a.float() @ b.float() + bias.float()).bfloat16()
    if not torch.equal(got, expected):
        raise AssertionError(f"rank {me}: gemm_bias_relu differs from torch in {(got != expected).sum()} elements")
    try:
        torch.ops.iris_example.gemm_bias_relu(on_heap(a), on_heap(b), bias.to(iris_torch.device()))
        raise AssertionError("a bias not on the heap: no error")
    except RuntimeError as e:
        if "iris_example.gemm_bias_relu: bias is not on the symmetric heap" not in str(e):
            raise
    iris_torch.finalize()
    if me == 0:
        print(f"gemm_bias_relu: {iris_torch.__name__} extension matches torch on {m}x{n}x{k}")


if __name__ == "__main__":
    run(main)
