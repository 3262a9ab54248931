"""iris_torch's operators against what a PyTorch program writes without them, timed side by side.

Under mpirun, every rank a process (docs/python.md, "Benchmark"):

  PYTHONPATH=build/python mpirun -np N python3 bench/torch_ops.py [--shapes 4096x4096x4096] [--counts 1048576]

For each fused operation and shape M×N×K (the global GEMM, split among the ranks as the
operation splits it), "ours" is torch.ops.iris.<op> on heap tensors and "peer" is
torch.matmul on the same local operands plus the torch.distributed collective that
completes it (NCCL where torch has CUDA, else gloo):

  matmul_all_scatter     a @ b_cols, then all_gather of the column blocks
  matmul_all_reduce      a_cols @ b_rows, then all_reduce
  matmul_reduce_scatter  a_cols @ b_rows, then reduce_scatter (gloo has none: all_reduce, then its rows)

(gloo, in torch 1.13, has no bfloat16: there the peer sends float32.)
  all_gather_matmul      all_gather of a's row blocks, then @ b

and all_reduce of COUNT float32 elements against torch.distributed.all_reduce. With one
rank the peer's collective is skipped (nothing to exchange). Every operation is first
checked against its peer's result. Each repeat times ours, then the peer, each after a
barrier (CUDA events on the GPU, the wall clock on the CPU), twice:

  one call        from an idle GPU: the time includes the host's work for the call (its
                  dispatch, checks, heap allocation and launches), during which the GPU waits
  a burst         --burst calls back to back, per call: the host prepares each call while the
                  GPU runs the ones before, as in a training loop, so only the GPU's time shows
                  where the host keeps ahead

The table gives the medians and ours / peer, the median of the repeats' ratios. On the CPU the
times are those of the CPU emulation, which checks the script, not the speed.
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist

import iris_torch


def parse_shape(text):
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def on_heap(t):
    h = iris_torch.empty(t.shape, t.dtype)
    h.copy_(t)
    return h


class Timer:
    """Seconds per call of `calls` calls back to back: CUDA events on the heap's GPU, else the wall clock."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def __call__(self, call, calls=1):
        dist.barrier()
        if self.cuda:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000 / calls
        begin = time.perf_counter()
        for _ in range(calls):
            call()
        return (time.perf_counter() - begin) / calls


def fused_cases(shape, me, world, device, backend):
    """(name, ours, peer) of each fused operation at the global shape M×N×K: calls that return C's local part."""
    m, n, k = shape
    g = torch.Generator().manual_seed(1)  # the same global A and B on every rank
    a_full = torch.randn(m, k, generator=g).bfloat16()
    b_full = torch.randn(k, n, generator=g).bfloat16()
    cols = n // world
    a = a_full.to(device)
    b_cols = b_full[:, me * cols:(me + 1) * cols].contiguous().to(device)
    a_cols = a_full[:, me * (k // world):(me + 1) * (k // world)].contiguous().to(device)
    b_rows = b_full[me * (k // world):(me + 1) * (k // world)].contiguous().to(device)
    a_rows = a_full[me * (m // world):(me + 1) * (m // world)].contiguous().to(device)
    b = b_full.to(device)
    heap = {name: on_heap(t) for name, t in
            (("a", a), ("b_cols", b_cols), ("a_cols", a_cols), ("b_rows", b_rows), ("a_rows", a_rows), ("b", b))}
    single = world == 1
    # gloo (torch 1.13) has no bfloat16: there the peer communicates float32.
    wire = torch.bfloat16 if backend == "nccl" else torch.float32

    def gathered(t):
        parts = [torch.empty(t.shape, dtype=wire, device=device) for _ in range(world)]
        dist.all_gather(parts, t.to(wire))
        return [p.to(t.dtype) for p in parts]

    def reduced(t):
        w = t.to(wire)
        dist.all_reduce(w)
        return w.to(t.dtype)

    def all_scatter_peer():
        part = a @ b_cols
        return part if single else torch.cat(gathered(part), 1)

    def all_reduce_peer():
        c = a_cols @ b_rows
        return c if single else reduced(c)

    def reduce_scatter_peer():
        c = a_cols @ b_rows
        if single:
            return c
        if backend == "nccl":
            out = torch.empty(m // world, n, dtype=c.dtype, device=device)
            dist.reduce_scatter_tensor(out, c)
            return out
        return reduced(c)[me * (m // world):(me + 1) * (m // world)]

    def all_gather_peer():
        return a_rows @ b if single else torch.cat(gathered(a_rows)) @ b

    return [
        ("matmul_all_scatter", lambda: torch.ops.iris.matmul_all_scatter(heap["a"], heap["b_cols"]), all_scatter_peer),
        ("matmul_all_reduce", lambda: torch.ops.iris.matmul_all_reduce(heap["a_cols"], heap["b_rows"]),
         all_reduce_peer),
        ("matmul_reduce_scatter", lambda: torch.ops.iris.matmul_reduce_scatter(heap["a_cols"], heap["b_rows"]),
         reduce_scatter_peer),
        ("all_gather_matmul", lambda: torch.ops.iris.all_gather_matmul(heap["a_rows"], heap["b"]), all_gather_peer),
    ]


def all_reduce_case(count, me, device):
    x = torch.randint(-8, 9, (count,), generator=torch.Generator().manual_seed(10 + me)).float().to(device)
    x_heap = on_heap(x)

    def peer():
        y = x.clone()
        if dist.get_world_size() > 1:
            dist.all_reduce(y)
        return y

    return ("all_reduce", lambda: torch.ops.iris.all_reduce(x_heap, "sum"), peer)


def check(name, ours, peer, tolerance):
    """Raises where ours differs from the peer's result beyond `tolerance` (relative to its largest value)."""
    got, expected = ours().float().cpu(), peer().float().cpu()
    if got.shape != expected.shape:
        raise AssertionError(f"{name}: shape {tuple(got.shape)}, the peer's {tuple(expected.shape)}")
    error = (got - expected).abs().max().item() / max(expected.abs().max().item(), 1e-6)
    if error > tolerance:
        raise AssertionError(f"{name}: relative error {error:.3g} against the peer's result (limit {tolerance})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192", help="global MxNxK of the fused operations")
    parser.add_argument("--counts", default=str(1 << 24), help="all_reduce's float32 element counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats (after one warm-up)")
    parser.add_argument("--burst", type=int, default=10, help="calls back to back in a burst")
    parser.add_argument("--heap", type=int, default=4 << 30, help="heap bytes per rank")
    parser.add_argument("--port", default="29513", help="torch.distributed's rendezvous port (MASTER_PORT)")
    args = parser.parse_args()

    iris_torch.init(heap_bytes=args.heap)
    me, world, device = iris_torch.rank(), iris_torch.world_size(), iris_torch.device()
    backend = "nccl" if device.type == "cuda" else "gloo"
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", args.port)
    dist.init_process_group(backend, rank=me, world_size=world)
    timer = Timer(device)

    cases = []
    for text in args.shapes.split(","):
        shape = parse_shape(text)
        if any(x % world for x in shape):
            raise SystemExit(f"torch_ops: {text}: every dimension must split among {world} ranks")
        cases += [(f"{name} {text}", ours, peer, 2e-2) for name, ours, peer in fused_cases(shape, me, world, device,
                                                                                             backend)]
    for count in args.counts.split(","):
        name, ours, peer = all_reduce_case(int(count), me, device)
        cases.append((f"{name} {count}", ours, peer, 0.0))

    rows = []
    for name, ours, peer, tolerance in cases:
        check(name, ours, peer, tolerance)  # also the warm-up (autotuning runs in the first call)
        row = [name]
        for calls in (1, args.burst):
            ours_s, peer_s, ratios = [], [], []
            for _ in range(args.repeats):
                t_ours, t_peer = timer(ours, calls), timer(peer, calls)
                ours_s.append(t_ours)
                peer_s.append(t_peer)
                ratios.append(t_ours / t_peer)
            row += [statistics.median(ours_s), statistics.median(peer_s), statistics.median(ratios)]
        rows.append(row)
        if me == 0:
            print(f"torch_ops: {name} done", flush=True)

    if me == 0:
        what = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU emulation"
        print(f"\n{world} rank(s), {what}, torch {torch.__version__}, {backend}; medians of {args.repeats} repeats; "
              f"ms per call, of one call and of a burst of {args.burst}\n")
        print("| operation | ours, one | torch, one | ours / torch | ours, burst | torch, burst | ours / torch |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, ours_1, peer_1, ratio_1, ours_n, peer_n, ratio_n in rows:
            print(f"| {name} | {ours_1 * 1e3:.3f} | {peer_1 * 1e3:.3f} | {ratio_1:.3f} | {ours_n * 1e3:.3f} | "
                  f"{peer_n * 1e3:.3f} | {ratio_n:.3f} |")
    dist.destroy_process_group()
    iris_torch.finalize()


if __name__ == "__main__":
    main()
