"""What device traces cost the fused operations (issue 33; docs/debugging.md, "Traces").

Runs three builds of bench/fused_bench.cpp in turn, round after round, on the same
shapes and tiles:

  plain     build/bench/fused_bench: kernels made without --trace
  off       build/bench/fused_bench_traced (iris_add_kernels TRACE: the fused
            operations' traced kernels), IRIS_TRACE unset: each span reads the clock
            and finds no buffer
  on        the same with IRIS_TRACE set: thread 0 of each program records every span

Each run times every operation side by side with cuBLAS in one process, so its
fused / cuBLAS ratio is free of the clock changes between processes; the overhead of
a build is the median of its ratios over the rounds against the plain build's, minus
one. The "on" runs must write a trace that holds the fused kernels' spans (kernel,
dot_loop, epilogue), or the script fails: a trace that records nothing costs nothing.

  python3 bench/trace_overhead.py --plain build/bench/fused_bench \
      --traced build/bench/fused_bench_traced --out OUT/trace-overhead
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fused_bench import add_builds_in_turn_options, builds_in_turn, fused_over_cublas, medians_of, print_table  # noqa: E402  (fused_bench's runs and the one parser of its table)

EXPECTED_SPANS = {"kernel", "dot_loop", "epilogue"}  # span kinds: the events' cat


def trace_summary(path):
    """(span kinds and their counts, dropped events) of the trace written at `path`."""
    with open(path) as f:
        trace = json.load(f)
    counts = {}
    for event in trace["traceEvents"]:
        if event.get("ph") == "X":
            counts[event["cat"]] = counts.get(event["cat"], 0) + 1
    return counts, sum(trace["otherData"]["dropped_events"].values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plain", default="build/bench/fused_bench", help="fused_bench built without TRACE")
    parser.add_argument("--traced", default="build/bench/fused_bench_traced", help="fused_bench built with TRACE")
    add_builds_in_turn_options(parser, modes="all_scatter")
    args = parser.parse_args()

    builds = [("plain", args.plain), ("off", args.traced), ("on", args.traced)]
    modes = args.modes.split(",")
    traces = []
    scratch = tempfile.mkdtemp(prefix="trace-overhead-")

    def trace_path(round_index):
        return os.path.join(scratch, f"round{round_index}.json")

    def before_run(build, round_index):
        os.environ.pop("IRIS_TRACE", None)
        if build == "on":
            os.environ["IRIS_TRACE"] = trace_path(round_index)
            os.environ["IRIS_TRACE_EVENTS"] = str(1 << 22)

    def after_run(build, round_index):
        if build != "on":
            return True
        path = trace_path(round_index)
        if not os.path.exists(path):
            print(f"trace_overhead: IRIS_TRACE={path} wrote no trace", file=sys.stderr)
            return False
        counts, dropped = trace_summary(path)
        traces.append((counts, dropped))
        missing = EXPECTED_SPANS - counts.keys()
        if missing:
            print(f"trace_overhead: the trace has no {', '.join(sorted(missing))} span", file=sys.stderr)
            return False
        return True

    with open(args.out + ".txt", "w") as log:
        rows_of, ok = builds_in_turn(builds, modes, args, log, before_run, after_run)
    os.environ.pop("IRIS_TRACE", None)

    lines = [f"Tracing overhead, {args.ranks} rank(s), tiles {args.tiles}: fused / cuBLAS, median of "
             f"{args.rounds} runs of each build in turn; overhead against the plain build", "",
             "| mode | shape | plain | traced, off | traced, on | overhead off | overhead on |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for mode in modes:
        for shape in args.shapes.split(","):
            medians = medians_of(rows_of, builds, mode, shape, fused_over_cublas)
            if medians is None:
                continue
            plain = medians["plain"]
            lines.append(f"| {mode} | {shape} | {plain:.3f} | {medians['off']:.3f} | {medians['on']:.3f} | "
                         f"{medians['off'] / plain - 1:+.1%} | {medians['on'] / plain - 1:+.1%} |")
    if traces:
        counts, dropped = traces[-1]
        recorded = sum(counts.values())
        lines += ["", f"Last trace: {recorded} spans recorded ("
                  + ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
                  + f"), {dropped} dropped when the buffer of {1 << 22} events was full"]
    print_table(lines, args.out + ".md")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
