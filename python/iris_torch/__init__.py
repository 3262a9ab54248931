"""Iris from PyTorch: collectives and fused GEMMs over a symmetric heap (docs/python.md).

Every rank is a process started by mpirun. init() joins the world, empty()
makes tensors on the symmetric heap (on device(): the CPU, or the rank's
GPU), and torch.ops.iris.* run on them, on torch's current stream; every call
is collective (every rank makes the same calls in the same order).
finalize() leaves the world; it also runs at exit.
"""
import atexit

import torch

from . import _C  # registers torch.ops.iris.*

__all__ = ["init", "finalize", "rank", "world_size", "device", "empty"]


def init(heap_bytes=1 << 30):
    """Joins the world of the mpirun job, with a symmetric heap of heap_bytes per rank.

    On a GPU build the rank's GPU (its rank on the node modulo the GPUs) becomes
    torch's current device."""
    _C.init(heap_bytes)
    if device().type == "cuda":
        torch.cuda.set_device(device())


def finalize():
    """Leaves the world (collective); the heap's tensors must not be used afterwards."""
    _C.finalize()


def rank():
    return _C.rank()


def world_size():
    return _C.world_size()


def device():
    """Where the heap's tensors live: torch.device("cpu"), or the rank's GPU."""
    return torch.device(_C.device())


def empty(shape, dtype=torch.float32):
    """A tensor of `shape` and `dtype` on the symmetric heap (collective); not initialised."""
    if isinstance(shape, int):
        shape = (shape,)
    return torch.ops.iris.empty(list(shape), dtype)


atexit.register(finalize)
