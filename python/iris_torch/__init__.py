"""Iris from PyTorch: collectives and fused GEMMs over a symmetric heap (docs/python.md).

Every rank is a process started by mpirun. init() joins the world, empty()
makes tensors on the symmetric heap, and torch.ops.iris.* run on them; every
call is collective (every rank makes the same calls in the same order).
finalize() leaves the world; it also runs at exit.
"""
import atexit

import torch

from . import _C  # registers torch.ops.iris.*

__all__ = ["init", "finalize", "rank", "world_size", "empty"]


def init(heap_bytes=1 << 30):
    """Joins the world of the mpirun job, with a symmetric heap of heap_bytes per rank."""
    _C.init(heap_bytes)


def finalize():
    """Leaves the world (collective); the heap's tensors must not be used afterwards."""
    _C.finalize()


def rank():
    return _C.rank()


def world_size():
    return _C.world_size()


def empty(shape, dtype=torch.float32):
    """A tensor of `shape` and `dtype` on the symmetric heap (collective); not initialised."""
    if isinstance(shape, int):
        shape = (shape,)
    return torch.ops.iris.empty(list(shape), dtype)


atexit.register(finalize)
