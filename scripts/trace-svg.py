#!/usr/bin/env python3
"""Draws a trace that a run wrote (IRIS_TRACE; docs/debugging.md) as an SVG
timeline, for a page or a report where Perfetto is not at hand: a band per
rank, a lane per program instance, a bar per span, nested spans below the
spans that hold them, coloured by kind.

usage: trace-svg.py TRACE.json OUT.svg [--from US] [--to US] [--ranks N] [--programs N] [--title TEXT]
  --from, --to   the window, in microseconds of the trace (default: all of it)
  --ranks N      the first N ranks only; --programs N: each rank's first N program instances
"""
import argparse
import html
import json

COLOURS = {
    "kernel": "#c7d7ea", "dot_loop": "#4c78a8", "epilogue": "#f2b65a", "wait_until": "#e45756",
    "signal": "#54a24b", "put_signal": "#54a24b", "store": "#9d755d", "atomic_rmw": "#b279a2",
    "atomic_cas": "#b279a2", "atomic_store": "#b279a2", "barrier": "#eeca3b", "quiet": "#bab0ac",
}
LANE = 14      # height of one nesting level of a lane
GAP = 6        # between lanes
LEFT = 120     # room for the labels
WIDTH = 1100


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--from", dest="start", type=float)
    parser.add_argument("--to", dest="end", type=float)
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--programs", type=int)
    parser.add_argument("--title", default="")
    args = parser.parse_args()

    with open(args.trace) as f:
        spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    if args.ranks is not None:
        spans = [e for e in spans if e["pid"] < args.ranks]
    if args.programs is not None:
        spans = [e for e in spans if e["tid"] < args.programs]
    start = args.start if args.start is not None else min(e["ts"] for e in spans)
    end = args.end if args.end is not None else max(e["ts"] + e["dur"] for e in spans)
    spans = [e for e in spans if e["ts"] + e["dur"] >= start and e["ts"] <= end]
    scale = (WIDTH - LEFT - 20) / max(end - start, 1e-9)

    # Each span's depth in its lane: one more than the spans that hold it.
    lanes = {}
    for e in sorted(spans, key=lambda e: (e["ts"], -e["dur"])):
        stack = lanes.setdefault((e["pid"], e["tid"]), {"open": [], "spans": [], "depth": 1})
        while stack["open"] and stack["open"][-1] < e["ts"] + e["dur"]:
            stack["open"].pop()
        stack["spans"].append((len(stack["open"]), e))
        stack["open"].append(e["ts"] + e["dur"])
        stack["depth"] = max(stack["depth"], len(stack["open"]))

    body, y = [], 40
    for (pid, tid) in sorted(lanes):
        lane = lanes[(pid, tid)]
        body.append('<text x="4" y="%d" font-size="11">rank %d, program %d</text>' % (y + 11, pid, tid))
        for depth, e in lane["spans"]:
            x0 = LEFT + (max(e["ts"], start) - start) * scale
            x1 = LEFT + (min(e["ts"] + e["dur"], end) - start) * scale
            tip = "%s at %s, %.3f us%s" % (e["name"], e["args"]["at"], e["dur"],
                                          "".join(", %s %s" % (k, v) for k, v in e["args"].items() if k != "at"))
            body.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="#555" stroke-width="0.3">'
                        '<title>%s</title></rect>' % (x0, y + depth * LANE, max(x1 - x0, 0.6), LANE - 2,
                                                      COLOURS.get(e["cat"], "#999"), html.escape(tip)))
        y += lane["depth"] * LANE + GAP
    # The time axis, in microseconds from the window's start.
    step = 10 ** len(str(int(max(end - start, 1)))) / 10
    while (end - start) / step < 4:
        step /= 2
    ticks, t = [], 0.0
    while t <= end - start:
        x = LEFT + t * scale
        ticks.append('<line x1="%.1f" y1="30" x2="%.1f" y2="%d" stroke="#ddd"/>'
                     '<text x="%.1f" y="26" font-size="10" text-anchor="middle">%g us</text>' % (x, x, y, x, t))
        t += step
    legend, x = [], LEFT
    # (signal and put_signal share a colour)
    for kind, label in (("kernel", "kernel"), ("dot_loop", "dot_loop"), ("epilogue", "epilogue"), ("store", "store"),
                        ("signal", "signal, put_signal"), ("wait_until", "wait_until"), ("barrier", "barrier")):
        legend.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>'
                      % (x, y + 6, COLOURS[kind], x + 14, y + 15, label))
        x += 24 + 7 * len(label)
    height = y + 26
    with open(args.out, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n' %
                (WIDTH, height))
        f.write('<rect width="100%" height="100%" fill="white"/>\n')
        f.write('<text x="4" y="14" font-size="13" font-weight="bold">%s</text>\n' % html.escape(args.title))
        f.write("\n".join(ticks + body + legend))
        f.write("\n</svg>\n")


if __name__ == "__main__":
    main()
