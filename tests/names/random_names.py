#!/usr/bin/env python3
"""Property test: a valid program with any names emits C++ that compiles.

    random_names.py IRISC CXX SOURCE_DIR WORK_DIR

Takes the valid programs of the project (samples/, tests/valid/,
tests/codegen/, tests/names/; not those that import a HIP header, whose parse
by Clang takes a second each), gives every name each one declares (kernels,
device functions, constants, parameters, compile-time parameters, lets, vars,
loop variables) a random new one, consistently, keeps the programs irisc
accepts (a name such as a built-in's is rejected, and that is fine), emits
each with `irisc --emit=cpp` (every other one --checked) and compiles them,
all kernels instantiated, in one translation unit with CXX -fsyntax-only
against the runtime's headers (the CPU target), after the C library headers
whose macros a name may be. The new names are hostile on purpose: C and C++
keywords that are not .iris keywords, macros (NULL, EOF, assert, errno, ...),
what the generated C++ itself names (run, launch, grid, ctx, stream,
iris_program, ...), the names the printer derives (m_2 next to a second m,
x_stages, uniform_runs_body, ...), names C++ reserves (leading underscores),
iris_ and IRIS_ prefixes, and random ones.

A fixed seed and count by default (a few seconds); IRIS_RANDOM_NAMES_SEED and
IRIS_RANDOM_NAMES_COUNT run others, e.g. IRIS_RANDOM_NAMES_COUNT=2000. On a
failure it names each program whose C++ does not compile, with its renaming
and the compiler's first errors, and keeps WORK_DIR.
"""
import glob
import os
import random
import re
import shutil
import subprocess
import sys

BATCH = 40  # programs per translation unit: the runtime's headers are parsed once per batch

# C and C++ keywords and alternative tokens that are not .iris keywords.
CPP_KEYWORDS = """alignas alignof and and_eq asm auto bitand bitor case catch char char8_t char16_t
char32_t class compl concept consteval constexpr constinit const_cast co_await co_return co_yield
decltype default delete do double dynamic_cast enum explicit export extern float friend goto
inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires short signed sizeof static static_assert
static_cast struct switch template this thread_local throw try typedef typeid typename union
unsigned using virtual void volatile wchar_t xor xor_eq final override import module""".split()
# Macros of the C library and the compilers, and names the C library declares.
MACROS = """NULL EOF assert errno stdin stdout stderr EINVAL ERANGE INT_MAX INT_MIN SIZE_MAX
UINT32_MAX CHAR_BIT BUFSIZ FILENAME_MAX RAND_MAX EXIT_SUCCESS EXIT_FAILURE HUGE_VAL INFINITY NAN
FLT_MAX DBL_EPSILON M_PI offsetof va_arg va_start setjmp SIGINT SIG_DFL CLOCKS_PER_SEC
MB_CUR_MAX WEOF linux unix i386 __linux__ __GNUC__ __cplusplus __LINE__ __FILE__ __COUNTER__
__x86_64__ _Pragma __VA_ARGS__ __has_include __restrict printf malloc free exit abort memcpy
size_t ptrdiff_t int32_t int64_t uint8_t uint64_t std iris main""".split()
# What the generated C++ and the runtime name next to the user's names, and
# what the printer derives from them.
GENERATED = """run launch grid ctx stream dynamic_shared_bytes defined iris_program iris_x
iris_kernels iris_end0 iris_end1 iris_step0 iris_shared_bytes_f iris_module_gemm iris_reserved
iris_reservedx IRIS_HD IRIS_DEVICE IRIS_INSTANTIATE_KERNELS Program Grid Stream DeviceContext
Tile Tile2 Blocked Unchecked Checked NoMask NoOther true_type uniform_runs uniform_runs_body
prologue stage tile tile_next tile_stages tile_pointers x_stages x_next m_2 m_3 k_2 acc_stages
acc_next a_pointers stage_2""".split()


def iris_words(source_dir):
    """The .iris keywords, built-in functions and enumerators, and the words
    the grammar reads in context: never given as a new name (a program that
    used one would mostly be rejected, not tested)."""
    words = set("step stages type None in set add mask other sem scope shape value ptr".split())
    for path, pattern in (("compiler/include/irisc/tokens.def", r'KEYWORD\(\w+, "(\w+)"\)'),
                          ("compiler/include/irisc/builtins.def", r'^\w+\(\w+, "(\w+)"'),
                          ("runtime/include/iris/memory_model.def", r"^IRIS_\w+\((\w+)\)")):
        with open(os.path.join(source_dir, path)) as f:
            words |= set(re.findall(pattern, f.read(), re.M))
    return words


TOKEN = re.compile(r"""(?P<space>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>"(?:[^"\\\n]|\\.)*")
                       |(?P<number>[0-9][0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?)
                       |(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>==|.)""", re.S | re.X)


def tokens(text):
    """(kind, text, offset) of every token but space and comments."""
    out = []
    for m in TOKEN.finditer(text):
        if m.lastgroup not in ("space", "comment"):
            out.append((m.lastgroup, m.group(), m.start()))
    return out


def declared_names(toks, keywords):
    """The names the program declares, those it declares twice in one
    function (which the printer numbers: m, m_2), and the kernels."""
    declared, twice, kernels = set(), set(), set()
    in_function = set()
    for i, (kind, text, _) in enumerate(toks):
        if kind != "name" or text in keywords:
            continue
        before = toks[i - 1][1] if i else ""
        after = toks[i + 1][1] if i + 1 < len(toks) else ""
        if before in ("kernel", "device"):
            in_function = set()
        if before in ("kernel", "device", "const", "let", "var", "for") or after == ":":
            declared.add(text)
            if text in in_function:
                twice.add(text)
            in_function.add(text)
            if before == "kernel":
                kernels.add(text)
    return declared, twice, kernels


def renamed_occurrences(toks, names):
    """The offsets of the names to rename: every occurrence of a declared name
    but a named argument (`mask = m` inside a call's parentheses)."""
    depth, out = 0, []
    for i, (kind, text, offset) in enumerate(toks):
        depth += text == "(" and kind == "punct"
        depth -= text == ")" and kind == "punct"
        if kind == "name" and text in names:
            after = toks[i + 1][1] if i + 1 < len(toks) else ""
            if not (depth > 0 and after == "="):
                out.append((offset, text))
    return out


def new_name(rng, program_names, redeclared):
    """A hostile name: listed, derived from another new name of the program
    (as the printer derives m_2 from a second m in a function: most often
    from the new name of a name declared more than once), or random."""
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(rng.choice((CPP_KEYWORDS, MACROS, GENERATED)))
    if roll < 0.65 and redeclared:
        return rng.choice(sorted(redeclared)) + rng.choice(("_2", "_3"))
    if roll < 0.7:
        base = rng.choice(sorted(program_names))
        return base + rng.choice(("_2", "_3", "_", "_stages", "_next", "_body", "_pointers"))
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    name = rng.choice(letters) + "".join(rng.choice(letters + "0123456789_") for _ in range(rng.randrange(6)))
    return rng.choice(("", "", "_", "__", "iris_", "IRIS_", "_iris_")) + name


def rename(text, rng, keywords, used_kernel_names):
    """text with its declared names renamed; the mapping."""
    toks = tokens(text)
    declared, twice, kernels = declared_names(toks, keywords)
    # Names the program uses but does not declare (a module's functions and
    # constants, enumerators): a new name must not capture them.
    kept = {t for kind, t, _ in toks if kind == "name"} - declared
    mapping, taken = {}, set(kept) | keywords
    # The names declared twice first, so that others can derive from theirs.
    for old in sorted(declared, key=lambda name: (name not in twice, name)):
        while True:
            redeclared = {mapping[name] for name in mapping if name in twice}
            new = new_name(rng, set(mapping.values()) or declared, redeclared)
            # Kernels are also named in iris_kernels: one name per translation unit.
            if new not in taken and not (old in kernels and new in used_kernel_names):
                break
        mapping[old] = new
        taken.add(new)
        if old in kernels:
            used_kernel_names.add(new)
    out, last = [], 0
    for offset, old in renamed_occurrences(toks, mapping):
        out += [text[last:offset], mapping[old]]
        last = offset + len(old)
    return "".join(out) + text[last:], mapping


PRELUDE = """// The C library's macros are defined where the generated code is included.
#include <cassert>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <clocale>
#include <cmath>
#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cwchar>
#define IRIS_INSTANTIATE_KERNELS
"""


def compile_headers(cxx, include_dir, work, headers, unit):
    """Compiles the headers in one translation unit; the compiler's output, or ''."""
    path = os.path.join(work, unit)
    with open(path, "w") as f:
        f.write(PRELUDE + "".join(f'#include "{os.path.basename(h)}"\n' for h in headers))
    run = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic",
                          "-Wno-missing-field-initializers", "-Werror", "-I", work, "-I", include_dir, path],
                         capture_output=True, text=True)
    return run.stdout + run.stderr if run.returncode else ""


def main():
    irisc, cxx, source_dir, work = sys.argv[1:5]
    seed = int(os.environ.get("IRIS_RANDOM_NAMES_SEED", "31"))
    count = int(os.environ.get("IRIS_RANDOM_NAMES_COUNT", str(BATCH)))
    rng = random.Random(seed)
    keywords = iris_words(source_dir)
    corpus = []
    for pattern in ("samples/*.iris", "tests/valid/*.iris", "tests/codegen/*.iris", "tests/names/*.iris"):
        for path in sorted(glob.glob(os.path.join(source_dir, pattern))):
            text = open(path, encoding="utf-8").read()
            if not re.search(r'^\s*import\s+"[^"]*\.(hip|h|hpp|cuh)"', text, re.M):
                corpus.append((path, text))
    include_dir = os.path.join(source_dir, "runtime", "include")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    tested = rejected = 0
    failures = []
    batch, used_kernel_names = [], set()
    while tested < count:
        path, text = rng.choice(corpus)
        renamed, mapping = rename(text, rng, keywords, used_kernel_names)
        name = f"p{tested + rejected}_{os.path.basename(path)}"
        source = os.path.join(work, name)
        with open(source, "w", encoding="utf-8") as f:
            f.write(renamed)
        checked = ["--checked"] if tested % 2 else []
        header = source + ".hpp"
        run = subprocess.run([irisc, "--emit=cpp", *checked, "-I", os.path.dirname(path), source, "-o", header],
                             capture_output=True, text=True)
        if run.returncode == 1:  # the new names made it invalid: not a case of the property
            rejected += 1
            if rejected > 10 * count:
                sys.exit(f"irisc rejects almost every renaming, the last {source}:\n{run.stderr[:2000]}")
            continue
        if run.returncode != 0:
            failures.append(f"{source}: irisc ended with status {run.returncode}\n{run.stderr[:2000]}")
            tested += 1
            continue
        batch.append((header, path, mapping))
        tested += 1
        if len(batch) == BATCH or tested == count:
            if compile_headers(cxx, include_dir, work, [h for h, _, _ in batch], f"batch{tested}.cpp"):
                for h, original, names in batch:  # which ones: each alone
                    errors = compile_headers(cxx, include_dir, work, [h], os.path.basename(h) + ".cpp")
                    if errors:
                        shown = "\n".join(line for line in errors.splitlines() if "error" in line)[:3000]
                        failures.append(f"{h[:-4]} (from {original}, renamed {names}):\n{shown}")
            batch, used_kernel_names = [], set()

    print(f"random names: seed {seed}, {tested} programs compiled, {rejected} renamings rejected by irisc")
    if failures:
        sys.exit("C++ that does not compile:\n\n" + "\n\n".join(failures))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
