"""Iris from PyTorch: collectives and fused GEMMs over a symmetric heap (docs/python.md).

Every rank is a process, started by mpirun or by whatever started
torch.distributed's processes (torchrun). init() joins the world, empty()
makes tensors on the symmetric heap (on device(): the CPU, or the rank's
GPU), and torch.ops.iris.* run on them, on torch's current stream; every call
is collective (every rank makes the same calls in the same order).
finalize() leaves the world; it also runs at exit.
"""
import atexit

import torch
import torch.distributed as dist

from . import _C  # registers torch.ops.iris.*

__all__ = ["init", "finalize", "rank", "world_size", "device", "empty"]


# The gloo group the world meets through, where it was joined through
# torch.distributed; destroyed by finalize (gloo's threads left at exit may end
# the process with "terminate called without an active exception").
_group = None
# The joined world's size, kept here too so that torch.compile traces
# world_size() (a Python global it guards on) instead of breaking the graph at
# a call into _C; None outside the world.
_world_size = None


def init(heap_bytes=1 << 30):
    """Joins the world, with a symmetric heap of heap_bytes per rank (collective).

    Where torch.distributed's default process group is initialised, every rank
    of it joins, with its rank, and the processes meet through a gloo group
    made of it (they must run on one host). Otherwise the world is the mpirun
    job's. On a GPU build the rank's GPU (its rank on the host modulo the GPUs)
    becomes torch's current device."""
    global _group, _world_size
    if dist.is_available() and dist.is_initialized():
        _group = dist.new_group(backend="gloo")
        _C.init_through(heap_bytes, dist.get_rank(), dist.get_world_size(), _allgather_over(_group))
    else:
        _C.init(heap_bytes)
    _world_size = _C.world_size()
    if device().type == "cuda":
        torch.cuda.set_device(device())


def _allgather_over(group):
    """The world's meetings through torch.distributed: every rank's bytes, in rank order."""
    size = dist.get_world_size()

    def allgather(mine):
        sent = torch.frombuffer(bytearray(mine), dtype=torch.uint8)
        parts = [torch.empty_like(sent) for _ in range(size)]
        dist.all_gather(parts, sent, group=group)
        return b"".join(part.numpy().tobytes() for part in parts)

    return allgather


def finalize():
    """Leaves the world (collective); the heap's tensors must not be used afterwards."""
    global _group, _world_size
    _world_size = None
    _C.finalize()
    if _group is not None:
        dist.destroy_process_group(_group)
        _group = None


def rank():
    return _C.rank()


def world_size():
    """The number of ranks: what the operators whose output's shape depends on it
    take as world_size when torch traces them (docs/python.md)."""
    if _world_size is None:
        return _C.world_size()  # (raises: not in a world)
    return _world_size


def device():
    """Where the heap's tensors live: torch.device("cpu"), or the rank's GPU."""
    return torch.device(_C.device())


def empty(shape, dtype=torch.float32):
    """A tensor of `shape` and `dtype` on the symmetric heap (collective); not initialised."""
    if isinstance(shape, int):
        shape = (shape,)
    return torch.ops.iris.empty(list(shape), dtype)


atexit.register(finalize)
