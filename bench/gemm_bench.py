"""The .iris GEMM against cuBLAS (torch.matmul) and Triton's tl.dot, on one GPU.

For each element type (bf16, f16) and shape M x N x K, on the same inputs in
one process:
  * cuBLAS through torch.matmul, the reference for correctness;
  * Triton: a tl.dot matmul with grouped tile order, autotuned over the
    configurations of Triton's tutorial (it uses wgmma on Hopper);
  * Triton TMA: a persistent Triton matmul (one program per multiprocessor)
    whose tiles come through tensor descriptors (TMA on Hopper) in a
    flattened tile x K loop, so that a tile's epilogue overlaps the next
    tile's loads (the schedule of Triton's persistent matmul tutorial),
    autotuned over its tile sizes;
  * the .iris GEMM (bench/gemm.iris, loaded from libiris_gemm_bench.so), each
    tile-size configuration (one program per tile, or persistent: a name
    ending in "p"; --config picks some) timed once, each time printed, and the
    --finalists fastest (two by default) kept, as the autotuner does.
Then, in --rounds rounds, cuBLAS, both Tritons and the finalists are timed in
turn; a time is the median over rounds, a ratio the median of the rounds'
ratios (measured side by side: the GPU's clock drifts with its power draw).
Each finalist's medians are printed; the table holds the one with the lowest
median time.
Every output is checked against cuBLAS: |x - ref| <= 2^-7 |ref| + K 2^-22 max|a||b|
elementwise (two bf16 roundings of the result, and f32 accumulation in
either order, with room for truncating hardware; f16's rounding is finer, so
the same bound holds). Each timing is a median of
triton.testing.do_bench; TFLOP/s counts 2 M N K.

Prints a table (TFLOP/s and ratios) and under each row the configs that
Triton's two autotuners picked, writes them as CSV, and a plot if
matplotlib is installed. Run on the GPU machine:
  python3 bench/gemm_bench.py --lib build/bench/libiris_gemm_bench.so --out OUT
"""
import argparse
import csv
import ctypes
import os
import statistics

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

# The element types, in the order of iris_gemm's dtype argument.
DTYPES = [torch.bfloat16, torch.float16]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 3584, 8192), (16384, 2048, 16384),
          (8192, 4608, 36864)]


def triton_configs():
    def cfg(bm, bn, bk, stages, warps):
        return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                             num_stages=stages, num_warps=warps)
    return [cfg(128, 256, 64, 3, 8), cfg(64, 256, 32, 4, 4), cfg(128, 128, 32, 4, 4),
            cfg(128, 64, 32, 4, 4), cfg(64, 128, 32, 4, 4), cfg(128, 32, 32, 4, 4),
            cfg(128, 256, 64, 4, 8), cfg(256, 128, 64, 3, 8), cfg(128, 128, 64, 4, 8)]


@triton.autotune(configs=triton_configs(), key=["M", "N", "K"])
@triton.jit
def triton_matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    t = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * tiles_n
    first = t // width * GROUP_M
    height = min(tiles_m - first, GROUP_M)
    rows = (first + t % width % height) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (t % width // height) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc.to(c.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def triton_tma_configs():
    def cfg(bm, bn, bk, stages, warps):
        return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                             num_stages=stages, num_warps=warps, pre_hook=set_block_shapes)
    return [cfg(128, 256, 64, 3, 8), cfg(128, 256, 64, 4, 8), cfg(128, 128, 64, 4, 8), cfg(128, 128, 64, 3, 4),
            cfg(256, 128, 64, 3, 8), cfg(128, 256, 32, 4, 8)]


def set_block_shapes(nargs):
    # The descriptors' block shapes are the tile sizes of the config being run.
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bk, bn]
    nargs["c_desc"].block_shape = [bm, bn]


@triton.autotune(configs=triton_tma_configs(), key=["M", "N", "K"])
@triton.jit
def triton_tma_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr, BF16: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    width = GROUP_M * tiles_n
    # flatten: one software-pipelined loop over (tile, K step), so that the
    # next tile's first loads are in flight during this tile's store.
    for t in tl.range(tl.program_id(0), tiles_m * tiles_n, PROGRAMS, flatten=True):
        first = t // width * GROUP_M
        height = min(tiles_m - first, GROUP_M)
        off_m = (first + t % width % height) * BLOCK_M
        off_n = (t % width // height) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_tiles):
            acc = tl.dot(a_desc.load([off_m, kt * BLOCK_K]), b_desc.load([kt * BLOCK_K, off_n]), acc)
        c_desc.store([off_m, off_n], acc.to(tl.bfloat16 if BF16 else tl.float16))


def triton_tma_matmul(a, b, c):
    from triton.tools.tensor_descriptor import TensorDescriptor
    M, K = a.shape
    N = b.shape[1]
    programs = torch.cuda.get_device_properties(a.device).multi_processor_count
    # Placeholder block shapes: set_block_shapes sets each config's.
    a_desc = TensorDescriptor.from_tensor(a, [1, 1])
    b_desc = TensorDescriptor.from_tensor(b, [1, 1])
    c_desc = TensorDescriptor.from_tensor(c, [1, 1])
    grid = lambda meta: (min(programs, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    triton_tma_kernel[grid](a_desc, b_desc, c_desc, M, N, K, PROGRAMS=programs, BF16=a.dtype == torch.bfloat16)


def config_name(kernel):
    """The config the autotuner of `kernel` picked for the last shape it ran,
    named as ours are (BMxBNxBK/stages) with its warps."""
    c = kernel.best_config
    return (f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']}x{c.kwargs['BLOCK_K']}/{c.num_stages}, "
            f"{c.num_warps} warps")


def triton_matmul(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    triton_matmul_kernel[grid](a, b, c, M, N, K)


class IrisGemm:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.iris_gemm_config_name.restype = ctypes.c_char_p
        self.lib.iris_gemm_error.restype = ctypes.c_char_p
        self.lib.iris_gemm.argtypes = [ctypes.c_int] * 2 + [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3 + [ctypes.c_void_p]
        self.configs = [self.lib.iris_gemm_config_name(i).decode() for i in range(self.lib.iris_gemm_configs())]

    def run(self, config, a, b, c):
        M, K = a.shape
        N = b.shape[1]
        stream = torch.cuda.current_stream().cuda_stream
        dtype = DTYPES.index(a.dtype)
        if self.lib.iris_gemm(config, dtype, a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K, stream) != 0:
            raise RuntimeError(self.lib.iris_gemm_error().decode())


def check(name, got, ref, a, b):
    K = a.shape[1]
    bound = a.abs().max().float() * b.abs().max().float() * K * 2.0 ** -22
    err = (got.float() - ref.float()).abs()
    ok = err <= ref.float().abs() * 2.0 ** -7 + bound
    if not bool(ok.all()):
        bad = int((~ok).sum())
        raise SystemExit(f"{name}: {bad} elements outside the tolerance (max error {float(err.max()):.4g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="libiris_gemm_bench.so")
    parser.add_argument("--out", default=".", help="folder for gemm_bench.csv and gemm_bench.png")
    parser.add_argument("--shapes", default=None, help="MxNxK,... (default: the issue's five shapes)")
    parser.add_argument("--rep", type=int, default=200, help="milliseconds per measurement (do_bench rep)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds in which cuBLAS, Triton and the finalists are timed in turn (default 5)")
    parser.add_argument("--finalists", type=int, default=2,
                        help="how many of the fastest configs go on to the rounds (default 2): with --config, all of "
                             "them for medians of every one, side by side")
    parser.add_argument("--iris-only", action="store_true", help="run the .iris GEMM once per config (for a profiler)")
    parser.add_argument("--config", default=None,
                        help="only these .iris configs, comma-separated (e.g. 128x256x64/4p,128x256x64/3p), "
                             "timed or, with --iris-only, run")
    parser.add_argument("--dtypes", default="bf16,f16", help="element types: bf16, f16 or both (default)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.finalists < 1:
        parser.error("--finalists must be at least 1")
    shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    names = {"bf16": torch.bfloat16, "f16": torch.float16}
    dtypes = [names[d] for d in args.dtypes.split(",")]
    iris = IrisGemm(args.lib)
    chosen = lambda name: args.config is None or name in args.config.split(",")
    torch.manual_seed(0)
    if args.iris_only:
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dtypes[0])
            b = torch.randn(K, N, device="cuda", dtype=dtypes[0])
            c = torch.empty(M, N, device="cuda", dtype=dtypes[0])
            for i, name in enumerate(iris.configs):
                if chosen(name):
                    iris.run(i, a, b, c)
        torch.cuda.synchronize()
        return
    rows = []
    print(f"{'type':>4} {'shape':>20} {'cuBLAS':>8} {'Triton':>8} {'TMA':>8} {'iris':>8} {'iris/cuBLAS':>11} "
          f"{'iris/Triton':>11} {'iris/TMA':>8}  iris config")
    for dtype, (M, N, K) in [(d, shape) for d in dtypes for shape in shapes]:
        type_name = "bf16" if dtype == torch.bfloat16 else "f16"
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        ref = torch.matmul(a, b)
        flops = 2.0 * M * N * K
        tflops = lambda ms: flops / ms / 1e9
        c = torch.empty_like(ref)
        triton_matmul(a, b, c)
        check("triton", c, ref, a, b)
        c.fill_(float("nan"))
        triton_tma_matmul(a, b, c)
        check("triton tma", c, ref, a, b)
        # Every config checked and timed once; the fastest go on to the rounds.
        first = []
        for i, name in enumerate(iris.configs):
            if not chosen(name):
                continue
            c.fill_(float("nan"))
            iris.run(i, a, b, c)
            torch.cuda.synchronize()
            check(f"iris {name}", c, ref, a, b)
            first.append((do_bench(lambda: iris.run(i, a, b, c), rep=args.rep, return_mode="median"), i))
            print(f"  {type_name} {M}x{N}x{K} {name}: {first[-1][0]:.4f} ms, {tflops(first[-1][0]):.1f} TFLOP/s",
                  flush=True)
        finalists = [i for _, i in sorted(first)[:args.finalists]]
        # Rounds: cuBLAS, Triton and the finalists timed in turn, so that each
        # ratio compares times taken side by side (the GPU's clock drifts with
        # its power draw between measurements); medians over the rounds.
        runs = {"cuBLAS": lambda: torch.matmul(a, b, out=c), "Triton": lambda: triton_matmul(a, b, c),
                "TMA": lambda: triton_tma_matmul(a, b, c)}
        runs.update({i: (lambda i=i: iris.run(i, a, b, c)) for i in finalists})
        times = {key: [] for key in runs}
        for _ in range(args.rounds):
            for key, run in runs.items():
                times[key].append(do_bench(run, rep=args.rep, return_mode="median"))
        median = {key: statistics.median(t) for key, t in times.items()}
        best = min(finalists, key=lambda i: median[i])
        median_ratio = lambda peer, i=best: statistics.median(p / m for p, m in zip(times[peer], times[i]))
        if len(finalists) > 1:
            for i in sorted(finalists, key=lambda i: median[i]):
                print(f"  {type_name} {M}x{N}x{K} {iris.configs[i]}: median {median[i]:.4f} ms, "
                      f"{tflops(median[i]):.1f} TFLOP/s, /cuBLAS {median_ratio('cuBLAS', i):.3f}, "
                      f"/Triton TMA {median_ratio('TMA', i):.3f}", flush=True)
        row = {"M": M, "N": N, "K": K, "dtype": type_name, "cublas_tflops": tflops(median["cuBLAS"]),
               "triton_tflops": tflops(median["Triton"]), "tma_tflops": tflops(median["TMA"]),
               "iris_tflops": tflops(median[best]), "iris_config": iris.configs[best],
               "iris_vs_cublas": median_ratio("cuBLAS"), "iris_vs_triton": median_ratio("Triton"),
               "iris_vs_tma": median_ratio("TMA"), "triton_config": config_name(triton_matmul_kernel),
               "tma_config": config_name(triton_tma_kernel)}
        rows.append(row)
        print(f"{type_name:>4} {M:>6}x{N:>6}x{K:>6} {row['cublas_tflops']:8.1f} {row['triton_tflops']:8.1f} "
              f"{row['tma_tflops']:8.1f} {row['iris_tflops']:8.1f} {row['iris_vs_cublas']:11.3f} "
              f"{row['iris_vs_triton']:11.3f} {row['iris_vs_tma']:8.3f}  {row['iris_config']}", flush=True)
        print(f"  {type_name} {M}x{N}x{K}: the autotuners picked Triton {row['triton_config']}, "
              f"Triton TMA {row['tma_config']}", flush=True)
        del a, b, ref, c
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm_bench.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"geometric means: iris/cuBLAS {statistics.geometric_mean(r['iris_vs_cublas'] for r in rows):.3f}, "
          f"iris/Triton {statistics.geometric_mean(r['iris_vs_triton'] for r in rows):.3f}, "
          f"iris/Triton TMA {statistics.geometric_mean(r['iris_vs_tma'] for r in rows):.3f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (bench/plot_bench.py can draw one from the CSV)")
        return
    # Above: TFLOP/s of each; below: the .iris GEMM's ratios, whose distance
    # from 1.0 is what the bars above cannot show. Legends sit above each panel,
    # clear of the bars.
    labels = [f"{r['dtype']} {r['M']}x{r['N']}x{r['K']}" for r in rows]
    x = range(len(rows))
    fig, (speed, ratio) = plt.subplots(2, 1, figsize=(12, 7), sharex=True, gridspec_kw={"height_ratios": (3, 2)})
    series = (("cublas_tflops", "cuBLAS"), ("triton_tflops", "Triton"), ("tma_tflops", "Triton TMA persistent"),
              ("iris_tflops", "iris"))
    for offset, (key, name) in enumerate(series):
        speed.bar([i + (offset - 1.5) * 0.2 for i in x], [r[key] for r in rows], width=0.2, label=name)
    speed.set_ylabel("TFLOP/s")
    speed.set_title("GEMM on one GPU", pad=28)
    speed.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False)
    ratios = (("iris_vs_triton", "iris / Triton"), ("iris_vs_tma", "iris / Triton TMA"), ("iris_vs_cublas", "iris / cuBLAS"))
    for offset, (key, name) in enumerate(ratios):
        ratio.bar([i + (offset - 1) * 0.27 for i in x], [r[key] for r in rows], width=0.27, label=name,
                  color=("tab:orange", "tab:green", "tab:blue")[offset])
    ratio.axhline(1.0, color="black", linewidth=0.8)
    low = min(min(r[key] for key, _ in ratios) for r in rows)
    high = max(max(r[key] for key, _ in ratios) for r in rows)
    ratio.set_ylim(min(0.8, low - 0.02), max(1.2, high + 0.02))
    ratio.set_ylabel("speed ratio")
    ratio.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    ratio.set_xticks(list(x), labels, rotation=15)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "gemm_bench.png"), dpi=120)


if __name__ == "__main__":
    main()
