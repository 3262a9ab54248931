"""What hang reports cost: unchecked builds nothing, checked builds their checks (issue 33;
docs/debugging.md, "What checking costs").

Runs three builds of bench/fused_bench.cpp in turn, round after round, on the same
shapes and tiles:

  before    fused_bench built at the commit before GPU hang reports (b5f8a06^),
            unchecked: the kernels as they were
  now       fused_bench of this tree, unchecked: its waits must still be the plain spin
  checked   fused_bench_checked (iris_add_kernels CHECKED): every heap access
            checked, every wait timed against IRIS_HANG_TIMEOUT

Each run times the fused operations and the plain GEMM of bench/gemm.iris side by
side with cuBLAS in one process, so their ratios to cuBLAS are free of the clock
changes between processes. A build's cost is the median of its ratios over the
rounds against another build's, minus one: "now" against "before" is what
unchecked builds pay (the target: nothing beyond noise), "checked" against "now"
what checking costs.

  python3 bench/checked_overhead.py --before before/build/bench/fused_bench \\
      --now build/bench/fused_bench --checked build/bench/fused_bench_checked --out OUT/checked-overhead
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fused_bench import add_builds_in_turn_options, builds_in_turn, fused_over_cublas, medians_of, print_table  # noqa: E402  (fused_bench's runs and the one parser of its table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="fused_bench built before GPU hang reports")
    parser.add_argument("--now", default="build/bench/fused_bench", help="fused_bench of this tree")
    parser.add_argument("--checked", default="build/bench/fused_bench_checked", help="fused_bench built CHECKED")
    add_builds_in_turn_options(parser, modes="all_scatter,all_reduce")
    args = parser.parse_args()

    builds = [("before", args.before), ("now", args.now), ("checked", args.checked)]
    modes = args.modes.split(",")
    with open(args.out + ".txt", "w") as log:
        rows_of, ok = builds_in_turn(builds, modes, args, log)

    def gemm(row):
        return float(row["gemm_ms"]) / float(row["cublas_ms"])

    lines = [f"Hang reports' cost, {args.ranks} rank(s), tiles {args.tiles}: time / cuBLAS's, median of "
             f"{args.rounds} runs of each build in turn", "",
             "| kernel | shape | before | now | checked | now / before | checked / now |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    # The plain GEMM (gemm.iris's matmul at the same tiles) is timed with every mode: its
    # row is the first mode's.
    kernels = [("GEMM", modes[0], gemm)] + [(mode, mode, fused_over_cublas) for mode in modes]
    for shape in args.shapes.split(","):
        for kernel, mode, ratio in kernels:
            m = medians_of(rows_of, builds, mode, shape, ratio)
            if m is None:
                continue
            lines.append(f"| {kernel} | {shape} | {m['before']:.3f} | {m['now']:.3f} | {m['checked']:.3f} | "
                         f"{m['now'] / m['before'] - 1:+.1%} | {m['checked'] / m['now'] - 1:+.1%} |")
    print_table(lines, args.out + ".md")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
