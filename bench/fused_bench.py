"""Fused GEMM + communication (<iris/fused.hpp>, issue 15): ours against the plain
.iris GEMM and against torch.matmul + NCCL.

Runs build/bench/fused_bench (bench/fused_bench.cpp: every fused operation and the
plain GEMM of bench/gemm.iris at the same shapes and tiles, every result checked
against that GEMM's) with --ranks N, as threads, rank r on GPU r % GPUs. With N
ranks on N GPUs it then times the peer that issue 17 names, torch.matmul followed
by NCCL's collective (torch.distributed, one process per GPU), on the same shapes:

  mode                              peer (bf16, NCCL through torch.distributed)
  all_scatter, all_scatter_split    matmul(A, B_r) (M x N/N_ranks), all_gather_into_tensor
                                    (the gathered slabs stay stacked: the peer skips
                                    the copy into C's columns that ours does not need)
  all_reduce                        matmul(A_r, B_r) (M x N x K/N_ranks), all_reduce
  reduce_scatter                    matmul(A_r, B_r), reduce_scatter_tensor
  all_gather, all_gather_push       all_gather_into_tensor(A), matmul(A, B_r) (M x N x K)

A shape MxNxK is the whole problem as the operation takes it (m, n, k of
iris::ops; for all_gather, N is each rank's B_r columns). The peer is timed as
bench/gpu_timer.hpp times one operation: three warm-up calls, then the median of
five timings of back-to-back calls between CUDA events, the ranks meeting before
each timing; rank 0's time. TFLOP/s counts one rank's local GEMM. fused_bench
itself times cuBLAS (what torch.matmul calls) at each local GEMM's shape side by
side with ours, in the same rounds after the same warm-up (cublas_ms,
fused/cublas): an H200 lowers its clocks within milliseconds of full load, so
that ratio, not ours over the peer of another process, is the fair one on one GPU.

Writes PREFIX.txt (fused_bench's table), PREFIX.csv (every row, peers joined),
PREFIX.md (per mode and shape the fastest tiles, as a Markdown table) and
PREFIX.png (a plot, if matplotlib is installed). Exits non-zero if a result was
wrong or a step failed. Usage on the GPU machine:
  python3 bench/fused_bench.py --bench build/bench/fused_bench --ranks 1 --out OUT/fused-1gpu
  python3 bench/fused_bench.py --bench build/bench/fused_bench --ranks 4 --out OUT/fused-4gpu --full
"""
import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys

MODES_GEMM = ["all_gather", "all_gather_push", "reduce_scatter", "all_reduce"]
MODES_SCATTER = ["all_scatter", "all_scatter_split"]
PEER_OF = {"all_scatter": "all_scatter", "all_scatter_split": "all_scatter", "all_reduce": "all_reduce",
           "reduce_scatter": "reduce_scatter", "all_gather": "all_gather", "all_gather_push": "all_gather"}
PEER_NAME = {"all_scatter": "matmul + all_gather", "all_reduce": "matmul + all_reduce",
             "reduce_scatter": "matmul + reduce_scatter", "all_gather": "all_gather + matmul"}

# One GPU: the issue's single-GPU shapes. Several: issue 17's, or a short list.
SHAPES_ONE_GPU = "4096x4096x4096,8192x8192x8192,8192x3584x8192"
SHAPES_SHORT = "4096x3584x8192,8192x3584x8192"
SHAPES_FULL = ("4096x3584x8192,8192x3584x8192,16384x3584x8192,4096x1792x4096,8192x1792x4096,16384x1792x4096,"
               "8192x8192x28672,8192x4096x14336")
SCATTER_SHAPES = "8192x4608x36864"


def parse_shapes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",") if s]


def local_gemm(family, M, N, K, world):
    """The GEMM one rank computes (m, n, k), as bench/fused_bench.cpp's table."""
    if family == "all_scatter":
        return M, N // world, K
    if family in ("all_reduce", "reduce_scatter"):
        return M, N, K // world
    return M, N, K


def calls_for(nbytes):
    """Calls per timing, as bench/gpu_timer.hpp's calls_for."""
    return 5 if nbytes >= 64 << 20 else 20 if nbytes >= 1 << 20 else 50


# ---------------------------------------------------------------- ours
def run_ours(args, modes, shapes, log):
    """fused_bench's rows (dicts) for `modes` at `shapes`, and whether it succeeded."""
    cmd = [args.bench, "--ranks", str(args.ranks), "--bench", "--validate", "--shape", shapes]
    if args.tiles:
        cmd += ["--tiles", args.tiles]
    cmd += modes
    print("==", " ".join(cmd), flush=True)
    log.write("$ " + " ".join(cmd) + "\n")
    rows, header = [], None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            log.write(line)
            fields = line.split()
            if fields[:2] == ["mode", "tiles"]:
                header = fields
            elif header and len(fields) == len(header) and fields[0] in PEER_OF:
                rows.append(dict(zip(header, fields)))
    return rows, proc.returncode == 0


def add_builds_in_turn_options(parser, modes):
    """The options that builds_in_turn reads (and --out, --modes with its default `modes`)."""
    parser.add_argument("--out", required=True, help="prefix of the outputs: PREFIX.txt (every run), PREFIX.md")
    parser.add_argument("--modes", default=modes, help="fused_bench modes, comma-separated")
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192", help="MxNxK,...")
    parser.add_argument("--tiles", default="128x256x64", help="fused_bench's --tiles")
    parser.add_argument("--ranks", type=int, default=1, help="ranks (threads; several share one GPU)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each build, in turn")


def print_table(lines, path):
    """Prints a Markdown table's lines and writes them to `path`."""
    text = "\n".join(lines)
    print(text)
    with open(path, "w") as f:
        f.write(text + "\n")


def medians_of(rows_of, builds, mode, shape, ratio):
    """{build: the median over its rounds of ratio(row)} for `mode` at `shape`, from
    builds_in_turn's rows; None where a build has no row there."""
    rows = {name: rows_of.get((name, mode, shape)) for name, _ in builds}
    if not all(rows.values()):
        return None
    return {name: statistics.median(ratio(row) for row in its_rows) for name, its_rows in rows.items()}


def fused_over_cublas(row):
    return float(row["fused/cublas"])


def builds_in_turn(builds, modes, args, log, before_run=None, after_run=None):
    """Runs each build of fused_bench in turn, args.rounds rounds over, on args.shapes,
    args.tiles and args.ranks: ({(build, mode, shape): [its row of each round]}, whether
    every run succeeded). builds: (name, program) pairs. before_run(name, round) runs
    before each run; after_run(name, round), after it, returns False for a failure
    of its own. Alternating the builds round by round gives each the same machine
    (an H200's clocks drift with its power draw)."""
    rows_of, ok = {}, True
    for round_index in range(args.rounds):
        for name, program in builds:
            if before_run:
                before_run(name, round_index)
            run = argparse.Namespace(bench=program, ranks=args.ranks, tiles=args.tiles)
            rows, succeeded = run_ours(run, modes, args.shapes, log)
            if not succeeded or not rows:
                print(f"{os.path.basename(sys.argv[0])}: the {name} run failed", file=sys.stderr)
                ok = False
            for row in rows:
                rows_of.setdefault((name, row["mode"], row["shape"]), []).append(row)
            if after_run and not after_run(name, round_index):
                ok = False
    return rows_of, ok


# ---------------------------------------------------------------- the peer
def peer_worker(rank, world, port, tasks, results):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=device)
    torch.manual_seed(rank)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def median_ms(nbytes, f):
        calls = calls_for(nbytes)
        dist.barrier()
        for _ in range(3):
            f()
        times = []
        for _ in range(5):
            torch.cuda.synchronize()
            dist.barrier()
            start.record()
            for _ in range(calls):
                f()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / calls)
        return statistics.median(times)

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.bfloat16)

    def empty(*shape):
        return torch.empty(*shape, device=device, dtype=torch.bfloat16)

    for family, (M, N, K) in tasks:
        m, n, k = local_gemm(family, M, N, K, world)
        if family == "all_gather":
            a, b, a_full, c = randn(M // world, K), randn(K, N), empty(M, K), empty(M, N)
            gemm = lambda: torch.matmul(a_full, b, out=c)
            step = lambda: (dist.all_gather_into_tensor(a_full, a), gemm())
        else:
            a, b, partial = randn(m, k), randn(k, n), empty(m, n)
            gemm = lambda: torch.matmul(a, b, out=partial)
            if family == "all_scatter":
                gathered = empty(world * m, n)
                step = lambda: (gemm(), dist.all_gather_into_tensor(gathered, partial))
            elif family == "all_reduce":
                step = lambda: (gemm(), dist.all_reduce(partial))
            else:
                out = empty(m // world, n)
                step = lambda: (gemm(), dist.reduce_scatter_tensor(out, partial))
        nbytes = (m * k + k * n + m * n) * 2
        gemm_ms = median_ms(nbytes, gemm)
        total_ms = median_ms(nbytes, step)
        if rank == 0:
            results.append({"family": family, "shape": f"{M}x{N}x{K}", "peer_ms": total_ms,
                            "peer_gemm_ms": gemm_ms})
            print(f"   peer {PEER_NAME[family]:<24} {M}x{N}x{K}: {total_ms:.3f} ms (matmul alone {gemm_ms:.3f})",
                  flush=True)
    dist.destroy_process_group()


def run_peers(world, tasks):
    """{(family, shape): row} of torch.matmul + NCCL, rank 0's times."""
    import torch.multiprocessing as mp

    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with mp.Manager() as manager:
        results = manager.list()
        mp.spawn(peer_worker, args=(world, port, tasks, results), nprocs=world, join=True)
        return {(r["family"], r["shape"]): dict(r) for r in results}


# ---------------------------------------------------------------- report
def summarize(rows, peers):
    """Per mode and shape, the row of the fastest tiles (as an autotuner keeps)."""
    best = {}
    for r in rows:
        key = (r["mode"], r["shape"])
        if r["fused_ms"] != "-" and (key not in best or float(r["fused_ms"]) < float(best[key]["fused_ms"])):
            best[key] = r
    lines = []
    if peers is None:
        lines.append("| mode | M × N × K | tiles | fused ms | TFLOP/s | gemm ms | fused / gemm | persistent ms | "
                     "fused / persistent | cuBLAS ms | fused / cuBLAS | max rel. error |")
        lines.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in best.values():
            lines.append(f"| {r['mode']} | {r['shape'].replace('x', ' × ')} | {r['tiles']} | {r['fused_ms']} | "
                         f"{r['TFLOP/s']} | {r['gemm_ms']} | **{r['fused/gemm']}** | {r['persist_ms']} | "
                         f"{r['fused/persist']} | {r['cublas_ms']} | **{r['fused/cublas']}** | {r['max_rel']} |")
        return lines, list(best.values())
    lines.append("| mode | M × N × K | tiles | fused ms | gemm ms | fused / gemm | fused / cuBLAS (side by side) | "
                 "peer | peer ms | peer matmul ms | ours / peer (time) | ours / torch.matmul | speedup |")
    lines.append("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in best.values():
        peer = peers.get((PEER_OF[r["mode"]], r["shape"]))
        if peer is None:
            continue
        lines.append(f"| {r['mode']} | {r['shape'].replace('x', ' × ')} | {r['tiles']} | {r['fused_ms']} | "
                     f"{r['gemm_ms']} | {r['fused/gemm']} | **{r['fused/cublas']}** | "
                     f"{PEER_NAME[PEER_OF[r['mode']]]} | "
                     f"{peer['peer_ms']:.3f} | {peer['peer_gemm_ms']:.3f} | "
                     f"**{float(r['fused_ms']) / peer['peer_ms']:.3f}** | "
                     f"{float(r['fused_ms']) / peer['peer_gemm_ms']:.3f} | "
                     f"{peer['peer_ms'] / float(r['fused_ms']):.3f} |")
    return lines, list(best.values())


def plot(path, best, peers, ranks):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (the CSV has every figure)")
        return
    modes = list(dict.fromkeys(r["mode"] for r in best))
    shapes = list(dict.fromkeys(r["shape"] for r in best))
    # One rank: against cuBLAS timed side by side in fused_bench, where it was.
    side_by_side = ranks == 1 and all(r["fused/cublas"] != "-" for r in best)
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(modes)
    for i, mode in enumerate(modes):
        xs, ys = [], []
        for j, shape in enumerate(shapes):
            r = next((r for r in best if r["mode"] == mode and r["shape"] == shape), None)
            if r is None:
                continue
            if side_by_side:
                value = float(r["fused/cublas"])
            elif peers is None:
                value = float(r["fused/gemm"])
            else:
                peer = peers.get((PEER_OF[mode], shape))
                if peer is None:
                    continue
                value = float(r["fused_ms"]) / peer["peer_ms"]
            xs.append(j + (i - (len(modes) - 1) / 2) * width)
            ys.append(value)
        ax.bar(xs, ys, width=width, label=mode)
    ax.axhline(1.0, color="black", linewidth=0.8)
    if side_by_side:
        ax.axhline(1.05, color="red", linestyle="--", linewidth=0.8, label="target 1.05 (1.10 role split)")
        ax.set_ylabel("time, ours / cuBLAS (side by side)")
        ax.set_title("Fused GEMM + communication, 1 rank, against cuBLAS timed in the same rounds (lower is better)")
    elif peers is None:
        ax.axhline(1.05, color="red", linestyle="--", linewidth=0.8, label="target 1.05")
        ax.set_ylabel("fused time / plain GEMM time")
        ax.set_title("Fused GEMM + communication, 1 rank: cost over the plain .iris GEMM (same tiles)")
    else:
        ax.set_ylabel("time, ours / torch.matmul + NCCL")
        ax.set_title(f"Fused GEMM + communication on {ranks} ranks against torch.matmul + NCCL (lower is better)")
    ax.set_xticks(range(len(shapes)), shapes, rotation=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default="build/bench/fused_bench", help="the fused_bench program")
    parser.add_argument("--ranks", type=int, default=1, help="ranks, one per visible GPU (more share GPUs)")
    parser.add_argument("--out", required=True, help="prefix of the outputs: PREFIX.txt, .csv, .md, .png")
    parser.add_argument("--shapes", help="MxNxK,... for every mode but the all-scatter ones (default: "
                        f"{SHAPES_ONE_GPU} with one rank, else {SHAPES_SHORT})")
    parser.add_argument("--scatter-shapes", help=f"MxNxK,... for all_scatter(_split) (default: {SCATTER_SHAPES} "
                        "with several ranks, the --shapes with one)")
    parser.add_argument("--full", action="store_true", help=f"issue 17's shapes: {SHAPES_FULL}")
    parser.add_argument("--tiles", help="fused_bench's --tiles (default: every compiled shape)")
    parser.add_argument("--no-peer", action="store_true",
                        help="skip torch.matmul + NCCL (needed when ranks share a GPU: NCCL refuses that)")
    parser.add_argument("--peer", action="store_true",
                        help="time the peer with one rank too (NCCL over one process, whose collective moves "
                             "nothing: proves on one GPU that the peer runs)")
    args = parser.parse_args()

    shapes = args.shapes or (SHAPES_FULL if args.full else SHAPES_ONE_GPU if args.ranks == 1 else SHAPES_SHORT)
    scatter = args.scatter_shapes or (shapes if args.ranks == 1 else SCATTER_SHAPES)
    # One run of fused_bench per list of shapes (each generates its inputs once).
    jobs = [(MODES_SCATTER + MODES_GEMM, shapes)] if scatter == shapes else [(MODES_SCATTER, scatter),
                                                                              (MODES_GEMM, shapes)]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    ok = True
    rows = []
    with open(args.out + ".txt", "w") as log:
        for modes, job_shapes in jobs:
            job_rows, job_ok = run_ours(args, modes, job_shapes, log)
            rows += job_rows
            ok &= job_ok and all(r["check"] == "ok" for r in job_rows)
    peers = None
    if (args.ranks > 1 or args.peer) and not args.no_peer:
        tasks = [(family, shape) for modes, job_shapes in jobs for shape in parse_shapes(job_shapes)
                 for family in dict.fromkeys(PEER_OF[m] for m in modes)]
        print(f"== the peer, torch.matmul + NCCL, {args.ranks} processes", flush=True)
        try:
            peers = run_peers(args.ranks, tasks)
        except Exception as e:  # the table of ours stands without it
            print(f"the peer failed: {e}", file=sys.stderr)
            ok = False
            peers = {}
    if not rows:
        print("fused_bench printed no rows", file=sys.stderr)
        sys.exit(1)

    for r in rows:
        peer = (peers or {}).get((PEER_OF[r["mode"]], r["shape"]))
        r["peer"] = PEER_NAME[PEER_OF[r["mode"]]] if peer else ""
        r["peer_ms"] = f"{peer['peer_ms']:.3f}" if peer else ""
        r["peer_gemm_ms"] = f"{peer['peer_gemm_ms']:.3f}" if peer else ""
        r["ours/peer"] = f"{float(r['fused_ms']) / peer['peer_ms']:.3f}" if peer and r["fused_ms"] != "-" else ""
    with open(args.out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines, best = summarize(rows, peers)
    print_table(lines, args.out + ".md")
    if best:
        plot(args.out + ".png", best, peers, args.ranks)
    if not ok:
        print("fused_bench.py: a result was wrong or a step failed (see above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
