#!/usr/bin/env python3
"""Where a kernel's warps wait, from ncu's warp-state samples per SASS instruction.

Reads the CSV that ncu writes for a report's source page, e.g. on the GPU machine:
  ncu --section SourceCounters --section WarpStateStats -k regex:kernel_entry -s 1 -c 1 -o prof python3 run.py
  ncu -i prof.ncu-rep --page source --csv --print-source sass > sass.csv
and prints three tables:
  - the stall reasons over every sample of the kernel;
  - the instructions by how often each ran: instructions that ran equally often
    are mostly one loop's body (a GEMM's consumer and copier loops show apart);
  - the instructions with the most samples, each with its two main reasons.
Samples whose reason the CSV does not name count as "(unnamed)".

Usage: scripts/sass-stalls.py SASS.CSV [--top N]   (N defaults to 25)
"""
import argparse
import csv
import sys
from collections import defaultdict

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    return int(text) if text.strip().isdigit() else 0


def read(path):
    """The header and instruction rows of an ncu source-page CSV (a kernel-name line may come first)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for i, row in enumerate(rows):
        if "Source" in row and SAMPLES in row:
            return row, [r for r in rows[i + 1:] if len(r) == len(row)]
    sys.exit(f"sass-stalls: {path} has no header with 'Source' and '{SAMPLES}' "
             "(write it with ncu -i REPORT --page source --csv --print-source sass)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--top", type=int, default=25, help="instructions to list (default 25)")
    args = parser.parse_args()
    header, rows = read(args.csv)
    source, samples, executed = header.index("Source"), header.index(SAMPLES), header.index(EXECUTED)
    reasons = [(i, h) for i, h in enumerate(header) if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(number(r[samples]) for r in rows) or 1

    print(f"{len(rows)} instructions, {total} samples\n\nstall reason        samples      %")
    by_reason = {h: sum(number(r[i]) for r in rows) for i, h in reasons}
    # ncu's CSV names no reason for some samples (on Hopper most of those at HGMMA).
    by_reason["stall_(unnamed)"] = total - sum(by_reason.values())
    for name, count in sorted(by_reason.items(), key=lambda item: -item[1]):
        if count:
            print(f"{name[6:]:18s} {count:8d} {100 * count / total:6.1f}")

    groups = defaultdict(lambda: [0, 0])  # times run -> [instructions, samples]
    for r in rows:
        groups[number(r[executed])][0] += 1
        groups[number(r[executed])][1] += number(r[samples])
    print("\nran (times)  instructions  samples      %")
    for times, (count, sampled) in sorted(groups.items(), key=lambda item: -item[1][1])[:8]:
        print(f"{times:11d} {count:13d} {sampled:8d} {100 * sampled / total:6.1f}")

    print(f"\n{'address':>8s}  {'instruction':60s} {'samples':>7s} {'ran':>9s}  main reasons")
    for r in sorted(rows, key=lambda r: -number(r[samples]))[:args.top]:
        named = [(number(r[i]), h[6:]) for i, h in reasons]
        named.append((number(r[samples]) - sum(count for count, _ in named), "(unnamed)"))
        main_reasons = sorted(named, reverse=True)[:2]
        said = ", ".join(f"{name} {count}" for count, name in main_reasons if count)
        print(f"{r[0][-8:]:>8s}  {r[source].strip()[:60]:60s} {number(r[samples]):7d} {number(r[executed]):9d}  {said}")


if __name__ == "__main__":
    main()
