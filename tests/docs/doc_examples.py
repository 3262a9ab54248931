#!/usr/bin/env python3
"""Runs the `.iris` examples of a document through irisc and compares what the
document says irisc prints (docs/language.md promises that every example is a
complete file that was run through irisc).

Usage: doc_examples.py IRISC DOC.md

Each ```iris block is saved as example.iris in a scratch folder and checked:
- followed (after blank lines only) by a ```text block that starts with
  "$ irisc ARGS": that command is run, and its output (stderr, then stdout)
  must be the lines after it;
- followed by a ```text block that starts with "example.iris:": irisc must
  print exactly that block on stderr;
- otherwise irisc must accept it (status 0).
A ```iris or ```c++ block whose first line is "// NAME.iris..." or
"// NAME.hip" (or .h, .hpp) is a file that later examples import: it is saved
under NAME in the same folder instead.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap

SIDE_FILE = re.compile(r"^// (\S+\.(?:iris|hip|h|hpp))(?::.*)?$")


def fenced_blocks(lines):
    """(language, first body line number, last line number, body) of each fenced block."""
    blocks, i = [], 0
    while i < len(lines):
        opening = re.match(r"^\s*```(\S*)\s*$", lines[i])
        if not opening:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        body = textwrap.dedent("\n".join(lines[i + 1:j])).split("\n")
        blocks.append((opening.group(1), i + 2, j + 1, body))
        i = j + 1
    return blocks


def run(irisc, args, folder):
    result = subprocess.run([irisc] + args, cwd=folder, capture_output=True, text=True, timeout=60)
    return result.returncode, result.stderr + result.stdout, result.stderr


def lines_of(text):
    return [line.rstrip() for line in text.rstrip("\n").split("\n")] if text.strip() else []


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    irisc, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    lines = open(doc, encoding="utf-8").read().split("\n")
    blocks = fenced_blocks(lines)
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as folder:
        for k, (language, first, last, body) in enumerate(blocks):
            if language not in ("iris", "c++"):
                continue
            side = SIDE_FILE.match(body[0]) if body else None
            if side and side.group(1) != "example.iris":
                with open(os.path.join(folder, side.group(1)), "w") as f:
                    f.write("\n".join(body) + "\n")
                continue
            if language != "iris":
                continue
            with open(os.path.join(folder, "example.iris"), "w") as f:
                f.write("\n".join(body) + "\n")
            checked += 1
            where = f"{doc}:{first - 1}"
            after = blocks[k + 1] if k + 1 < len(blocks) else None
            shown = None
            if after and after[0] == "text" and all(not l.strip() for l in lines[last:after[1] - 2]):
                shown = after[3]
            if shown and shown[0].startswith("$ irisc"):
                command = shlex.split(shown[0][2:])[1:]
                expected = [l.rstrip() for l in shown[1:]]
                if any(l.startswith("$ ") for l in expected):
                    expected = expected[:next(i for i, l in enumerate(expected) if l.startswith("$ "))]
                _, output, _ = run(irisc, command, folder)
                if lines_of(output) != expected:
                    failures.append(f"{where}: `irisc {' '.join(command)}` printed\n{output}instead of\n"
                                    + "\n".join(expected))
            elif shown and shown[0].startswith("example.iris:"):
                status, _, errors = run(irisc, ["example.iris"], folder)
                if lines_of(errors) != [l.rstrip() for l in shown]:
                    failures.append(f"{where}: irisc printed (status {status})\n{errors}instead of\n"
                                    + "\n".join(shown))
            else:
                status, output, _ = run(irisc, ["example.iris"], folder)
                if status != 0:
                    failures.append(f"{where}: irisc refused the example (status {status}):\n{output}")
    for failure in failures:
        print(f"FAILED: {failure}\n")
    print(f"{doc}: {checked} examples, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
