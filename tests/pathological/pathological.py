#!/usr/bin/env python3
"""Generates one pathological input and checks that irisc survives it.

    pathological.py IRISC CASE WORKDIR

The input is written to WORKDIR/CASE.iris (and removed after a pass). irisc,
with the case's options (else it prints the summary), must finish within the
time limit with the expected exit status: 0 for a huge but valid input, 1 for
an invalid one with a located error
(`CASE.iris:LINE:COL: error: ...`) first on stderr. A crash (a signal, or
status 3 for an internal error), a stack overflow or a hang fails the test.
"""
import os
import random
import re
import subprocess
import sys

TIME_LIMIT = 50  # seconds; CTest's TIMEOUT is a little longer

KERNEL = """kernel all_gather_{i}<BLOCK: i32 = 1024>(src: *f32, dst: sym *f32, n: i32) {{
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    let mask = offs < n;
    let x = load(src + offs, mask);
    for r in 0 .. world_size() {{
        store(dst + rank() * n + offs @ r, x, mask);
    }}
}}
"""


def kernel_with(body):
    return b"kernel k(n: i32) {\n" + body + b"\n}\n"


def million_tokens():
    # all_gather has 111 tokens; enough copies for a million.
    return "".join(KERNEL.format(i=i) for i in range(1_000_000 // 111 + 1)).encode()


def million_lets():
    return kernel_with("\n".join(f"let v{i} = {i};" for i in range(1_000_000)).encode())


def doubling_lets():
    # Each `let` doubles its compile-time expression (the text of a symbolic
    # constant would grow as 2^n without a cap).
    lines = ["let a0 = B;"] + [f"let a{i} = a{i - 1} + a{i - 1};" for i in range(1, 200)]
    return b"kernel k<B: i32 = 2>() {\n" + "\n".join(lines).encode() + b"\n}\n"


def doubling_tile_lets():
    # Each `let` of a pointer tile's offsets reads the one before twice: the
    # analysis of a store of dot's result must read each let once (it read
    # the tree through the lets 2^60 times).
    lines = ["let r = arange(16);", "let t = load(a + r[:, None] * 16 + r[None, :]);", "let acc = dot(t, t);",
             "let x0 = r[None, :];"]
    lines += [f"let x{i} = x{i - 1} + x{i - 1};" for i in range(1, 61)]
    lines += ["store(a + r[:, None] * 16 + x60, acc as bf16);"]
    return b"kernel k(a: *bf16) {\n" + "\n".join(lines).encode() + b"\n}\n"


def call_cycle():
    # 60,000 device functions, each calling the next, the last the first:
    # walks that recurse down the calls overflow the stack.
    n = 60_000
    functions = "".join(f"device g{i}(x: i32) -> i32 {{ return g{(i + 1) % n}(x); }}\n" for i in range(n))
    return (functions + "kernel k(p: *i32) { store(p, g0(1)); }\n").encode()


def doubling_calls():
    # Each function calls the one before twice: the kernel makes 2^70 stores,
    # through 71 bodies (the summary's counts must not walk each call).
    lines = ["device g0(p: *i32) { store(p, 1); }"]
    lines += [f"device g{i}(p: *i32) {{ g{i - 1}(p); g{i - 1}(p + 1); }}" for i in range(1, 71)]
    return ("\n".join(lines) + "\nkernel k(p: *i32) { g70(p); }\n").encode()


def nested_loops():
    # The memory-model check walks a loop's body twice: twice in each of 200
    # nested loops would be 2^200 walks.
    opens = "".join(f"for v{i} in 0 .. 2 {{\n" for i in range(200))
    body = "store(p @ v0, 1);\nsignal(f @ v0, v199, sem = release, scope = sys);\n"
    return ("kernel k(p: sym *i32, f: sym *i32) {\n" + opens + body + "}\n" * 200 + "}\n").encode()


def doubling_ranks():
    # Ranks and flags through lets that each use the one before twice: the
    # memory-model check compares the ranks of a store and a flag, and
    # collects the names a flag depends on, in a loop that may set it again.
    lines = ["let a0 = rank();", "let b0 = rank() + 1;"]
    lines += [f"let a{i} = a{i - 1} + a{i - 1};" for i in range(1, 200)]
    lines += [f"let b{i} = b{i - 1} + b{i - 1};" for i in range(1, 200)]
    lines += ["for r in 0 .. 2 {", "store(p @ a199, 1);", "signal(f + a199 @ b199, 1, sem = relaxed, scope = sys);", "}"]
    return ("kernel k(p: sym *i32, f: sym *i32) {\n" + "\n".join(lines) + "\n}\n").encode()


# name: (expected status, generator[, irisc's options])
CASES = {
    "nested_parens": (1, lambda: kernel_with(b"let x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b";")),
    "nested_blocks": (1, lambda: kernel_with(b"{" * 10_000 + b"}" * 10_000)),
    "nested_unary": (1, lambda: kernel_with(b"let x = " + b"-" * 10_000 + b"1;")),
    "nested_calls": (1, lambda: kernel_with(b"let x = " + b"sum(" * 10_000 + b"1" + b")" * 10_000 + b";")),
    "nested_tiles": (1, lambda: kernel_with(b"let x = 1 as " + b"tile<f32, " * 10_000 + b"4" + b">" * 10_000 + b";")),
    "nested_else_if": (1, lambda: kernel_with(b"if true {} " + b"else if true {} " * 10_000)),
    "long_expression": (1, lambda: kernel_with(b"let x = 1" + b" + 1" * 1_000_000 + b";")),
    "unclosed_parens": (1, lambda: kernel_with(b"let x = " + b"(" * 1_000_000)),
    "unclosed_blocks": (1, lambda: b"kernel k() " + b"{" * 1_000_000),
    "million_tokens": (0, million_tokens),
    "million_lets": (0, million_lets),
    "toplevel_lets": (1, lambda: b"let x = 1;\n" * 1_000_000),
    "doubling_lets": (0, doubling_lets),
    "doubling_tile_lets": (0, doubling_tile_lets, ["--emit=cpp"]),
    "random_bytes_50mb": (1, lambda: random.Random(1).randbytes(50 * 1024 * 1024)),
    "nul_bytes": (1, lambda: kernel_with(b"let x = 1;\0\0\0 // \0\n") + b"\0" * 100_000),
    "invalid_utf8": (1, lambda: kernel_with(b"// \xff\xfe\xc3(\n let s = 1; /* \xed\xa0\x80 */") + b"\x80" * 1000),
    "unterminated_comment": (1, lambda: kernel_with(b"let x = 1;") + b"/* never closed " * 1000),
    "unterminated_string": (1, lambda: b'import "' + b"a" * 100_000),
    "long_line": (1, lambda: b"kernel " + b"k" * 10_000_000 + b"( {}"),
    "call_cycle": (0, call_cycle),
    "call_cycle_cpp": (0, call_cycle, ["--emit=cpp"]),
    "doubling_calls": (0, doubling_calls),
    "nested_loops": (0, nested_loops),
    "doubling_ranks": (0, doubling_ranks),
}


def main():
    irisc, case, workdir = sys.argv[1:4]
    expected, generate, *options = CASES[case]
    path = os.path.join(workdir, case + ".iris")
    with open(path, "wb") as f:
        f.write(generate())
    try:
        run = subprocess.run([irisc, *(options[0] if options else []), path], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        sys.exit(f"{case}: irisc did not finish within {TIME_LIMIT}s (kept {path})")
    err = run.stderr.decode("utf-8", "replace")
    if run.returncode != expected:
        what = f"signal {-run.returncode}" if run.returncode < 0 else f"status {run.returncode}"
        sys.exit(f"{case}: irisc ended with {what}, expected status {expected} (kept {path})\n"
                 + err[:4000])
    if expected == 1 and not re.match(rf"{re.escape(path)}:\d+:\d+: error: ", err):
        sys.exit(f"{case}: the first diagnostic is not a located error (kept {path}):\n" + err[:4000])
    os.remove(path)
    print(f"{case}: status {run.returncode} as expected; {err.splitlines()[0][len(path):][:200] if err else ''}")


if __name__ == "__main__":
    main()
