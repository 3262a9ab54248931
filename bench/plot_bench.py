"""Plots the tables of nccl_bench, p2p_bench and nvshmem_put: bandwidth against
size, one panel per operation (first column), one line per implementation
(the words between it and the size). The bandwidth plotted is the last number
of a row: busbw for nccl_bench, GB/s for the point-to-point tables. Rows whose
check column is not "ok" are left out.
Usage: python3 bench/plot_bench.py out.png TABLE [TABLE...]"""
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    """(panel, who, size, bandwidth) for every checked row of a table."""
    for line in open(path):
        parts = line.split()
        sizes = [i for i, p in enumerate(parts) if i > 1 and p.isdigit()]
        if not sizes or parts[-1] != "ok":
            continue
        at = sizes[0]
        yield parts[0], " ".join(parts[1:at]), int(parts[at]), float(parts[-2])


def main():
    out, tables = sys.argv[1], sys.argv[2:]
    series = defaultdict(lambda: defaultdict(list))
    for table in tables:
        for panel, who, size, bandwidth in rows(table):
            series[panel][who].append((size, bandwidth))
    fig, axes = plt.subplots(1, len(series), figsize=(5 * len(series), 4), squeeze=False)
    ylabel = "bus bandwidth [GB/s]" if "all_reduce" in series else "bandwidth [GB/s]"
    for ax, (panel, by_who) in zip(axes[0], sorted(series.items())):
        for who, points in sorted(by_who.items()):
            xs, ys = zip(*sorted(points))
            ax.plot(xs, ys, marker="o", markersize=3, label=who)
        ax.set_xscale("log", base=2)
        ax.set_title(panel)
        ax.set_xlabel("size [bytes]")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
