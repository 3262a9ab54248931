"""The peer of the .iris copy benchmark: the same copy kernel in Triton, and
torch's device-to-device copy (cudaMemcpyAsync), on 1 GiB of f32.

Prints one line per variant: name, median milliseconds, GB/s counting the
bytes read plus the bytes written. Run on the GPU machine (PyTorch and Triton
are installed there): python3 bench/copy_triton.py [--gib 1] [--block 4096]
"""
import argparse

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--block", type=int, default=4096)
    args = parser.parse_args()
    n = int(args.gib * (1 << 30)) // 4
    src = torch.rand(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    grid = (triton.cdiv(n, args.block),)

    def triton_copy():
        copy_kernel[grid](src, dst, n, BLOCK=args.block)

    triton_copy()
    torch.cuda.synchronize()
    assert torch.equal(src, dst), "triton copy is wrong"
    dst.zero_()
    dst.copy_(src)
    torch.cuda.synchronize()
    assert torch.equal(src, dst), "torch copy is wrong"

    bytes_moved = 2 * n * 4
    for name, fn in (("triton copy", triton_copy), ("torch copy_ (cudaMemcpy)", lambda: dst.copy_(src))):
        ms = do_bench(fn, warmup=100, rep=2000, return_mode="median")
        print(f"{name:28s} {ms:10.3f} ms {bytes_moved / ms / 1e6:10.1f} GB/s")


if __name__ == "__main__":
    main()
