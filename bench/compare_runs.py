#!/usr/bin/env python3
"""Before/after table of two builds' benchmark logs, measured side by side.

Reads logs written by scripts/gpu-compare.sh: each holds, for one build and one
round, sections that start with a line `== <what>` followed by the tables the
programs print (a header naming a `time [ms]` or `ms` column, then rows). A
row is identified by its section and the fields left of the time; its time is
the median over the rounds. Prints, per row, the median time of the baseline
and of the change and their ratio (change / baseline), then the geometric mean
of the ratios.

Usage: compare_runs.py BASE_LOG [BASE_LOG...] -- NEW_LOG [NEW_LOG...]
"""
import math
import statistics
import sys


def parse(path):
    """{(section, key fields): time in ms} of one log."""
    times = {}
    section, time_col = None, None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("== "):
            section, time_col = line[3:].strip(), None
            continue
        if section is None:
            continue
        if "time [ms]" in line or (" ms " in f" {line} " and "GB/s" in line):
            # Column names are separated by two or more spaces or are single words.
            names = line.replace("time [ms]", "time_ms").split()
            time_col = names.index("time_ms") if "time_ms" in names else names.index("ms")
            key_width = time_col
            continue
        if time_col is None:
            continue
        fields = line.split()
        # copy_bench's variant names have spaces: the time is the third field from the end.
        if section.startswith("copy_bench") and len(fields) >= 4:
            try:
                t = float(fields[-3])
            except ValueError:
                continue
            times[(section, " ".join(fields[:-3]))] = t
            continue
        if len(fields) <= time_col:
            continue
        try:
            t = float(fields[time_col].replace(",", ""))
        except ValueError:
            continue
        times[(section, " ".join(fields[:key_width]))] = t
    return times


def medians(paths):
    runs = [parse(p) for p in paths]
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    base, new = medians(argv[:split]), medians(argv[split + 1:])
    keys = [k for k in base if k in new]
    if not keys:
        sys.exit("compare_runs: no row is in both sets of logs")
    print(f"{'benchmark':<58} {'row':<34} {'base ms':>10} {'new ms':>10} {'new/base':>9}")
    ratios = []
    for section, row in keys:
        b, n = base[(section, row)], new[(section, row)]
        ratio = n / b if b > 0 else float("nan")
        if b > 0:
            ratios.append(ratio)
        print(f"{section[:58]:<58} {row[:34]:<34} {b:>10.3f} {n:>10.3f} {ratio:>9.3f}")
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{len(ratios)} rows; geometric mean of new/base: {geo:.3f}; "
          f"range {min(ratios):.3f} .. {max(ratios):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
