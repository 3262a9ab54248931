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
import statistics
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fused_bench import run_ours  # noqa: E402  (the one parser of fused_bench's table)

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
    parser.add_argument("--out", required=True, help="prefix of the outputs: PREFIX.txt (every run), PREFIX.md")
    parser.add_argument("--modes", default="all_scatter", help="fused_bench modes, comma-separated")
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192", help="MxNxK,...")
    parser.add_argument("--tiles", default="128x256x64", help="fused_bench's --tiles")
    parser.add_argument("--ranks", type=int, default=1, help="ranks (threads; several share one GPU)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each build, in turn")
    args = parser.parse_args()

    builds = [("plain", args.plain, False), ("off", args.traced, False), ("on", args.traced, True)]
    modes = args.modes.split(",")
    ratios = {}  # (build, mode, shape) -> [fused / cublas per round]
    traces = []
    failed = False
    scratch = tempfile.mkdtemp(prefix="trace-overhead-")
    with open(args.out + ".txt", "w") as log:
        for round_index in range(args.rounds):
            for build, program, record in builds:
                trace_path = os.path.join(scratch, f"round{round_index}.json")
                os.environ.pop("IRIS_TRACE", None)
                if record:
                    os.environ["IRIS_TRACE"] = trace_path
                    os.environ["IRIS_TRACE_EVENTS"] = str(1 << 22)
                run = types.SimpleNamespace(bench=program, ranks=args.ranks, tiles=args.tiles)
                rows, ok = run_ours(run, modes, args.shapes, log)
                if not ok or not rows:
                    print(f"trace_overhead: the {build} run failed (see {args.out}.txt)", file=sys.stderr)
                    failed = True
                for row in rows:
                    key = (build, row["mode"], row["shape"])
                    ratios.setdefault(key, []).append(float(row["fused/cublas"]))
                if record:
                    if not os.path.exists(trace_path):
                        print(f"trace_overhead: IRIS_TRACE={trace_path} wrote no trace", file=sys.stderr)
                        failed = True
                        continue
                    counts, dropped = trace_summary(trace_path)
                    traces.append((counts, dropped))
                    missing = EXPECTED_SPANS - counts.keys()
                    if missing:
                        print(f"trace_overhead: the trace has no {', '.join(sorted(missing))} span", file=sys.stderr)
                        failed = True
    os.environ.pop("IRIS_TRACE", None)

    lines = [f"Tracing overhead, {args.ranks} rank(s), tiles {args.tiles}: fused / cuBLAS, median of "
             f"{args.rounds} runs of each build in turn; overhead against the plain build", "",
             "| mode | shape | plain | traced, off | traced, on | overhead off | overhead on |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for mode in modes:
        for shape in args.shapes.split(","):
            medians = {b: statistics.median(ratios[(b, mode, shape)]) for b, _, _ in builds
                       if (b, mode, shape) in ratios}
            if len(medians) < 3:
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
    text = "\n".join(lines)
    print(text)
    with open(args.out + ".md", "w") as f:
        f.write(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
