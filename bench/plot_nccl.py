"""Plots nccl_bench's table: bus bandwidth against message size, .iris and
NCCL, one panel per operation. Usage: python3 bench/plot_nccl.py table.txt out.png"""
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    table, out = sys.argv[1], sys.argv[2]
    series = defaultdict(lambda: defaultdict(list))
    for line in open(table):
        parts = line.split()
        if len(parts) < 7 or not parts[-5].isdigit():
            continue
        op, who = parts[0], " ".join(parts[1:-5])
        size, busbw = int(parts[-5]), float(parts[-2])
        series[op][who].append((size, busbw))
    fig, axes = plt.subplots(1, len(series), figsize=(5 * len(series), 4), squeeze=False)
    for ax, (op, by_who) in zip(axes[0], sorted(series.items())):
        for who, points in sorted(by_who.items()):
            xs, ys = zip(*sorted(points))
            ax.plot(xs, ys, marker="o", label=who)
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_xlabel("bytes")
        ax.set_ylabel("bus bandwidth [GB/s]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
