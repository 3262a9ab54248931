#!/usr/bin/env python3
"""Runs a program that records a trace (IRIS_TRACE) and checks the trace it
writes against what its .iris sources say (docs/debugging.md, "Traces"):

  * the file is valid JSON in the Chrome / Perfetto trace format, with a
    process per rank and a track per program instance;
  * every span names a line of a .iris file that holds what the span says
    (a kernel span its `kernel` line, a wait_until span a `wait_until` call);
  * every span of a program instance lies inside one of its kernel spans
    (where no event was dropped);
  * every wait ends after the start of a signal, to its rank, of the value it
    saw: no wait can end before somebody signals it, which a clock that is not
    aligned across ranks, or a span that records the wrong times, breaks;
  * the kinds of span given with --expect are there;
  * with --capacity N: no rank kept more than N events, some were dropped,
    and each rank's kept and dropped events add up to what the same command
    records with a buffer large enough (run a second time, without --env).

usage: check_trace.py --trace FILE --ranks N [--sources DIR]... [--expect KIND]...
                      [--capacity N] [--env NAME=VALUE]... -- COMMAND...
"""
import argparse
import json
import os
import re
import subprocess
import sys


def fail(message):
    print("check_trace: FAILED: " + message)
    sys.exit(1)


def source_line(dirs, at):
    """The text of a span's .iris line. A path of another machine (a build
    carried to the GPU machine) is found by its last parts under `dirs`."""
    path, line = at.rsplit(":", 1)
    parts = path.split("/")
    for first in range(len(parts)):
        for d in dirs:
            candidate = os.path.join(d, *parts[first:]) if first else os.path.join(d, path)
            if os.path.isfile(candidate):
                with open(candidate) as f:
                    lines = f.read().split("\n")
                return lines[int(line) - 1]
    fail("span at %s: no such file under %s" % (at, dirs))


# What the .iris line of a span of each kind holds.
LINE_HOLDS = {
    "kernel": r"\bkernel\b",
    "wait_until": r"\bwait_until\(",
    "signal": r"\bsignal\(",
    "put_signal": r"\bput_signal\(",
    "store": r"\b(put|store)\(",
    "atomic_rmw": r"\batomic_\w+\(",
    "atomic_cas": r"\batomic_cas\(",
    "atomic_store": r"\batomic_store\(",
    "barrier": r"\bbarrier\(",
    "quiet": r"\bquiet\(",
    "dot_loop": r"\bfor\b",
    "epilogue": r".",
}


def check_order(spans):
    """Every span inside a kernel span of its track; every wait after its signal.
    (Not where a buffer overflowed: the kernel span, recorded last, may be lost.)"""
    kernels = {}
    for e in spans:
        if e["cat"] == "kernel":
            kernels.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for e in spans:
        if e["cat"] == "kernel":
            continue
        inside = any(start <= e["ts"] and e["ts"] + e["dur"] <= end
                     for start, end in kernels.get((e["pid"], e["tid"]), []))
        if not inside:
            fail("span %s of rank %d, program %d, outside its kernels" % (e, e["pid"], e["tid"]))

    # A signal to rank r of the value a wait of rank r saw (the kernels here
    # set their flags to a round number) began before that wait ended.
    signals = {}
    for e in spans:
        if e["cat"] in ("signal", "put_signal") and "peer" in e["args"]:
            signals.setdefault((e["args"]["peer"], e["args"]["value"]), []).append(e["ts"])
    waits = [e for e in spans if e["cat"] == "wait_until"]
    for w in waits:
        if not any(start <= w["ts"] + w["dur"] for start in signals.get((w["pid"], w["args"]["value"]), [])):
            fail("wait %s of rank %d ended before any signal of value %d to rank %d began" %
                 (w, w["pid"], w["args"]["value"], w["pid"]))
    print("check_trace: every span inside its kernel; %d waits, each after its signal" % len(waits))


def record(command, path, settings):
    """Runs `command` with IRIS_TRACE=path and the NAME=VALUE `settings`; the
    trace it wrote."""
    if os.path.exists(path):
        os.remove(path)
    env = dict(os.environ, IRIS_TRACE=path)
    for setting in settings:
        name, value = setting.split("=", 1)
        env[name] = value
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        fail("the program exited with status %d" % run.returncode)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read the trace %s: %s" % (path, e))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--sources", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--capacity", type=int)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    trace = record(args.command, args.trace, args.env)
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    if names != {r: "rank %d" % r for r in range(args.ranks)}:
        fail("processes %s, expected one per rank 0..%d" % (names, args.ranks - 1))
    tracks = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    if not spans:
        fail("no spans")
    for e in spans:
        if (e["pid"], e["tid"]) not in tracks:
            fail("span %s on a track without a name" % e)
        if e["ts"] < 0 or e["dur"] < 0:
            fail("span with a negative time: %s" % e)
        holds = LINE_HOLDS.get(e["cat"])
        if holds is None:
            fail("span of an unknown kind: %s" % e)
        text = source_line(args.sources, e["args"]["at"])
        if not re.search(holds, text):
            fail("span %s at %s, whose line does not hold %s: %r" % (e["name"], e["args"]["at"], e["cat"], text))

    if args.capacity is None:
        check_order(spans)

    kinds = {e["cat"] for e in spans}
    for kind in args.expect:
        if kind not in kinds:
            fail("no span of kind %s (found %s)" % (kind, sorted(kinds)))

    dropped = trace["otherData"]["dropped_events"]
    if args.capacity is not None:
        for r in range(args.ranks):
            kept = sum(1 for e in spans if e["pid"] == r)
            if kept > args.capacity:
                fail("rank %d kept %d events, more than its buffer's %d" % (r, kept, args.capacity))
            if dropped[str(r)] == 0:
                fail("rank %d dropped no events with a buffer of %d" % (r, args.capacity))
        whole = record(args.command, args.trace + ".whole.json", [])
        for r in range(args.ranks):
            recorded = sum(1 for e in whole["traceEvents"] if e["ph"] == "X" and e["pid"] == r)
            kept = sum(1 for e in spans if e["pid"] == r)
            if kept + dropped[str(r)] != recorded:
                fail("rank %d kept %d events and counted %d dropped, but records %d with a buffer large enough" %
                     (r, kept, dropped[str(r)], recorded))
    elif any(dropped.values()):
        fail("events dropped: %s" % dropped)
    print("check_trace: %d spans of %d ranks (%s), %d dropped" %
          (len(spans), args.ranks, ", ".join(sorted(kinds)), sum(dropped.values())))


if __name__ == "__main__":
    main()
