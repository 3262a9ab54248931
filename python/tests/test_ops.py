"""torch.ops.iris.* under mpirun, or under torchrun with the argument
`torch.distributed` (the world joined through torch.distributed's gloo), each
compared with torch's own result.

Every rank makes its inputs from a seed (the rank's own, or one shared by all
ranks), so that every rank can also make every other rank's inputs and compute
the expected result with torch alone. Values are small integers, which every
dtype holds exactly and every sum and product keeps exact, so the comparisons
are exact. The Meta kernels' shapes and dtypes, and, with the argument
`tracing`, what torch traces (torch.compile from torch 2.0). Then the errors: a tensor not on the heap,
a wrong dtype, a wrong shape. A failure ends the job at once (harness.run).
"""
import importlib
import sys

import torch
import torch.distributed

import iris_torch
from harness import on_heap, run

checks = 0


def inputs(seed, shape, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-8, 9, shape, generator=g).to(dtype)


def expect_equal(what, got, expected):
    global checks
    checks += 1
    got = got.cpu()  # the expected values are computed on the CPU
    if got.shape != expected.shape or got.dtype != expected.dtype or not torch.equal(got, expected):
        raise AssertionError(f"rank {iris_torch.rank()}: {what}: got {got}, expected {expected}")


def expect_error(what, call, *words):
    global checks
    checks += 1
    try:
        call()
    except RuntimeError as e:
        message = str(e)
        for word in words:
            if word not in message:
                raise AssertionError(f"{what}: the message does not name {word!r}: {message}")
        return
    raise AssertionError(f"{what}: no error")


def check_collectives(me, world):
    rows = 4 * world  # a multiple of the world size: reduce_scatter and all_to_all split the rows
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64):
        every = [inputs(100 + r, (rows, 5), dtype) for r in range(world)]
        mine = on_heap(every[me])
        stacked = torch.stack(every)
        for op, reduce in (("sum", lambda t: t.sum(0, dtype=dtype)), ("max", lambda t: t.amax(0)),
                           ("min", lambda t: t.amin(0))):
            expect_equal(f"all_reduce {op} {dtype}", torch.ops.iris.all_reduce(mine, op), reduce(stacked))
        expect_equal(f"all_gather {dtype}", torch.ops.iris.all_gather(mine), torch.cat(every))
        expect_equal(f"all_gather {dtype}, world_size given", torch.ops.iris.all_gather(mine, world_size=world),
                     torch.cat(every))
        block = rows // world
        expect_equal(f"reduce_scatter {dtype}", torch.ops.iris.reduce_scatter(mine, "sum"),
                     stacked.sum(0, dtype=dtype)[me * block:(me + 1) * block])
        expect_equal(f"all_to_all {dtype}", torch.ops.iris.all_to_all(mine),
                     torch.cat([every[q][me * block:(me + 1) * block] for q in range(world)]))
        root = world - 1
        expect_equal(f"broadcast {dtype}", torch.ops.iris.broadcast(mine, root), every[root])


def check_fused(me, world):
    m, n, k = 24 * world, 20 * world, 16 * world  # partial tiles, each split a multiple of the world size
    bf16 = torch.bfloat16
    a = inputs(7, (m, k), bf16)  # the same on every rank
    b = inputs(8, (k, n), bf16)
    product = (a.float() @ b.float()).to(bf16)

    def part(t, dim, parts):
        return t.chunk(parts, dim)[me].contiguous()

    expect_equal("matmul_all_scatter", torch.ops.iris.matmul_all_scatter(on_heap(a), on_heap(part(b, 1, world))),
                 product)
    a_cols, b_rows = on_heap(part(a, 1, world)), on_heap(part(b, 0, world))
    expect_equal("matmul_all_reduce", torch.ops.iris.matmul_all_reduce(a_cols, b_rows), product)
    expect_equal("matmul_reduce_scatter", torch.ops.iris.matmul_reduce_scatter(a_cols, b_rows),
                 part(product, 0, world))
    own_b = inputs(200 + me, (k, n), bf16)  # every rank its own B
    expect_equal("all_gather_matmul", torch.ops.iris.all_gather_matmul(on_heap(part(a, 0, world)), on_heap(own_b)),
                 (a.float() @ own_b.float()).to(bf16))


def check_meta(me, world):
    # The Meta kernels: each operator's output shape and dtype on meta tensors,
    # compared with those of torch's result of the same operation.
    global checks
    rows, bf16 = 4 * world, torch.bfloat16

    def meta(*shape, dtype=torch.float32):
        return torch.empty(*shape, dtype=dtype, device="meta")

    def expect_like(what, got, expected):
        global checks
        checks += 1
        if not got.is_meta or got.shape != expected.shape or got.dtype != expected.dtype:
            raise AssertionError(f"{what}: got {got.shape} {got.dtype}, expected {expected.shape} {expected.dtype}")

    every = [torch.zeros(rows, 3, dtype=torch.int64) for _ in range(world)]
    x = meta(rows, 3, dtype=torch.int64)
    expect_like("all_reduce", torch.ops.iris.all_reduce(x, "max"), every[0])
    # (the operators whose output's shape depends on the world size are traced with it)
    expect_like("all_gather", torch.ops.iris.all_gather(x, world), torch.cat(every))
    expect_like("reduce_scatter", torch.ops.iris.reduce_scatter(x, "sum", world), every[0].chunk(world)[me])
    expect_like("all_to_all", torch.ops.iris.all_to_all(x), every[0])
    expect_like("broadcast", torch.ops.iris.broadcast(x, 0), every[0])
    m, n, k = 8 * world, 4 * world, 2 * world
    product = torch.zeros(m, k, dtype=bf16) @ torch.zeros(k, n, dtype=bf16)
    expect_like("matmul_all_scatter",
                torch.ops.iris.matmul_all_scatter(meta(m, k, dtype=bf16), meta(k, n // world, dtype=bf16), world), product)
    a_cols, b_rows = meta(m, k // world, dtype=bf16), meta(k // world, n, dtype=bf16)
    expect_like("matmul_all_reduce", torch.ops.iris.matmul_all_reduce(a_cols, b_rows), product)
    expect_like("matmul_reduce_scatter", torch.ops.iris.matmul_reduce_scatter(a_cols, b_rows, world),
                product.chunk(world)[me])
    expect_like("all_gather_matmul",
                torch.ops.iris.all_gather_matmul(meta(m // world, k, dtype=bf16), meta(k, n, dtype=bf16), world), product)
    if world > 1:  # (every row count splits among one rank)
        expect_error("meta rows not split", lambda: torch.ops.iris.reduce_scatter(meta(rows + 1, 3), "sum", world),
                     "iris.reduce_scatter", "multiple of the world size")
        expect_error("meta fused rows not split",
                     lambda: torch.ops.iris.matmul_reduce_scatter(meta(m + 1, k // world, dtype=bf16), b_rows, world),
                     "iris.matmul_reduce_scatter", "a's rows (%d) must be a multiple of the world size" % (m + 1))
    # Traced without the world size, whose value a compiled graph would not hold.
    for op, call in (("all_gather", lambda: torch.ops.iris.all_gather(x)),
                     ("reduce_scatter", lambda: torch.ops.iris.reduce_scatter(x)),
                     ("matmul_all_scatter", lambda: torch.ops.iris.matmul_all_scatter(a_cols, b_rows)),
                     ("matmul_reduce_scatter", lambda: torch.ops.iris.matmul_reduce_scatter(a_cols, b_rows)),
                     ("all_gather_matmul", lambda: torch.ops.iris.all_gather_matmul(a_cols, b_rows))):
        expect_error(f"meta {op} without world_size", call, f"iris.{op}: traced without world_size")
    expect_error("meta world_size 0", lambda: torch.ops.iris.all_gather(x, 0), "iris.all_gather: world_size must be positive")


def check_tracing(me, world):
    # What torch traces: torch.fx (symbolic, and make_fx with fake tensors,
    # which runs the Meta kernels), TorchScript and, from torch 2.0, torch.compile;
    # the traced program run on the heap is compared with torch's result.
    from torch.fx.experimental.proxy_tensor import make_fx

    def program(x, world: int):
        return torch.ops.iris.all_gather(torch.ops.iris.all_reduce(x, "sum"), world) * 2

    def program_asking_the_world(x):  # what a user compiles: world_size() is traced, not a graph break
        return torch.ops.iris.all_gather(torch.ops.iris.all_reduce(x, "sum"), iris_torch.world_size()) * 2

    every = [inputs(300 + r, (2, 3)) for r in range(world)]
    expected = torch.cat([torch.stack(every).sum(0)] * world) * 2
    x = on_heap(every[me])
    expect_equal("torch.fx.symbolic_trace", torch.fx.symbolic_trace(program)(x, world), expected)
    expect_equal("torch.jit.script", torch.jit.script(program)(x, world), expected)
    traced = make_fx(program, tracing_mode="fake")(torch.empty(2, 3), world)
    targets = [str(node.target) for node in traced.graph.nodes]
    global checks
    checks += 1
    if "iris.all_reduce.default" not in targets or "iris.all_gather.default" not in targets:
        raise AssertionError(f"make_fx (fake): the graph lacks the iris operators: {targets}")
    if compiles():  # dynamo, whole (no graph break), then AOT with fake tensors
        expect_equal("torch.compile (aot_eager)", torch.compile(program, backend="aot_eager", fullgraph=True)(x, world),
                     expected)
        expect_equal("torch.compile (inductor)", torch.compile(program_asking_the_world, fullgraph=True)(x), expected)


def compiles():
    """Whether this torch's torch.compile works here: it came with torch 2.0, and
    dynamo refuses some Pythons (torch 2.0 to 2.3 on Python 3.12)."""
    if not hasattr(torch, "compile"):
        return False
    return importlib.import_module("torch._dynamo").is_dynamo_supported()


def check_heap_reuse():
    # Forty tensors of a quarter of the heap, one after the other: each block
    # must be freed once its tensor is gone.
    quarter = (1 << 22) // 4 // 4
    for i in range(40):
        t = iris_torch.empty(quarter, torch.float32)
        t.fill_(i)
        expect_equal("heap tensor reused", torch.ops.iris.all_reduce(t, "max"), torch.full((quarter,), float(i)))
        del t


def check_inputs_torch_just_wrote(me, world):
    # Inputs that torch's own kernels write right before the call (on the GPU,
    # queued on the stream and maybe still running when the call starts): every
    # rank's must be complete before any rank reads it (the operators' barrier),
    # and a sum shows a stale or half-written element where a max would not.
    n = 1 << 18
    x = iris_torch.empty(n, torch.float32)
    for round in range(1, 6):
        x.fill_(0)
        x.add_(round * (me + 1))
        expect_equal(f"all_reduce of an input torch just wrote, round {round}", torch.ops.iris.all_reduce(x, "sum"),
                     torch.full((n,), float(round * world * (world + 1) // 2)))


def check_errors(world):
    heap_device = iris_torch.device()
    expect_error("input not on the heap", lambda: torch.ops.iris.all_reduce(torch.ones(4, device=heap_device)),
                 "iris.all_reduce", "input", "not on the symmetric heap")
    expect_error("b not on the heap",
                 lambda: torch.ops.iris.matmul_all_reduce(iris_torch.empty((4, 4), torch.bfloat16),
                                                          torch.ones(4, 4, dtype=torch.bfloat16, device=heap_device)),
                 "iris.matmul_all_reduce", "b", "not on the symmetric heap")
    expect_error("fused dtype", lambda: torch.ops.iris.matmul_all_scatter(iris_torch.empty((4, 4)),
                                                                          iris_torch.empty((4, 4))),
                 "iris.matmul_all_scatter", "a has dtype Float", "bfloat16")
    expect_error("collective dtype", lambda: torch.ops.iris.all_gather(iris_torch.empty(4, torch.float64)),
                 "iris.all_gather", "dtype Double")
    expect_error("world_size not the world's", lambda: torch.ops.iris.all_gather(iris_torch.empty(4), world_size=world + 1),
                 "iris.all_gather", f"world_size is {world + 1}, but the world has {world} ranks")
    expect_error("fused world_size not the world's",
                 lambda: torch.ops.iris.all_gather_matmul(iris_torch.empty((4, 4), torch.bfloat16),
                                                          iris_torch.empty((4, 4), torch.bfloat16), world + 1),
                 "iris.all_gather_matmul", f"world_size is {world + 1}, but the world has {world} ranks")
    if world > 1:
        expect_error("rows not split", lambda: torch.ops.iris.reduce_scatter(iris_torch.empty((4 * world + 1, 2))),
                     "iris.reduce_scatter", "multiple of the world size")
        expect_error("fused rows not split",
                     lambda: torch.ops.iris.matmul_reduce_scatter(iris_torch.empty((4 * world + 1, 4), torch.bfloat16),
                                                                  iris_torch.empty((4, 4), torch.bfloat16)),
                     "iris.matmul_reduce_scatter", "must be a multiple of the world size")


def main():
    if "torch.distributed" in sys.argv[1:]:
        torch.distributed.init_process_group("gloo")  # torchrun's rank, world size and rendezvous
    # A heap of 4 MiB: check_heap_reuse relies on its size.
    iris_torch.init(heap_bytes=1 << 22)
    me, world = iris_torch.rank(), iris_torch.world_size()
    check_collectives(me, world)
    check_fused(me, world)
    check_meta(me, world)
    if "tracing" in sys.argv[1:]:
        check_tracing(me, world)
    check_heap_reuse()
    check_inputs_torch_just_wrote(me, world)
    check_errors(world)
    iris_torch.finalize()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    if me == 0:
        print(f"iris_torch: {checks} checks on {world} ranks passed")


if __name__ == "__main__":
    run(main)
