"""What the tests of iris_torch under mpirun share: a tensor copied onto the
symmetric heap, and a test's main run so that a failure ends the job at once.
"""
import os
import sys
import traceback

import iris_torch


def on_heap(t):
    """A copy of `t` on the symmetric heap (collective)."""
    h = iris_torch.empty(t.shape, t.dtype)
    h.copy_(t)
    return h


def run(main):
    """Runs main(). A failure prints the traceback and ends the process at once,
    without MPI's end, which makes mpirun end the job instead of leaving the
    other ranks waiting in a collective."""
    try:
        main()
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
