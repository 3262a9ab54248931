"""Runs the example of docs/python.md (the first python block under "## Example") in
this process, one rank of the mpirun job that started it, and checks that what it
prints is what the page shows below it (the first plain block after the code).

  mpirun -np 4 python3 python/tests/docs_example.py docs/python.md

Lines must match word for word, except the numbers, which may differ by 0.01 (the
printed rounding error of a bf16 product depends on the GPU's or CPU's order of
summation); the page's numbers are what the example printed where it was run
for the page, and the example prints what torch computes without Iris beside
what Iris computed. Only the rank that prints (rank 0) compares; the others
check that they printed nothing.
"""
import contextlib
import io
import os
import re
import sys

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def blocks_of(page):
    """(the example's code, the output shown after it), from the page's text."""
    section = page[page.index("\n## Example\n"):]
    fences = re.findall(r"```(\w*)\n(.*?)```", section, re.S)
    first = next(i for i, (lang, _) in enumerate(fences) if lang == "python")
    code = fences[first][1]
    shown = next(body for lang, body in fences[first + 1:] if lang == "")
    # the shown block starts with the command that ran it
    return code, [line for line in shown.splitlines() if not line.startswith("$ ")]


def same(got, shown):
    """Whether a printed line is the page's, its numbers within 0.01."""
    if NUMBER.sub("#", got) != NUMBER.sub("#", shown):
        return False
    return all(abs(float(a) - float(b)) <= 0.01 for a, b in zip(NUMBER.findall(got), NUMBER.findall(shown)))


def main():
    code, shown = blocks_of(open(sys.argv[1]).read())
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"{sys.argv[1]} (## Example)", "exec"), {"__name__": "__main__"})
    got = printed.getvalue().splitlines()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    expected = shown if rank == 0 else []
    if len(got) != len(expected) or not all(same(g, s) for g, s in zip(got, expected)):
        print(f"docs_example: rank {rank} printed\n  " + "\n  ".join(got) + "\nwhere the page shows\n  " +
              "\n  ".join(expected), file=sys.stderr)
        sys.exit(1)
    if rank == 0:
        print(f"docs_example: the example of {os.path.basename(sys.argv[1])} printed what the page shows")


if __name__ == "__main__":
    main()
