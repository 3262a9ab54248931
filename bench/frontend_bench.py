#!/usr/bin/env python3
"""Front-end benchmark: times `irisc FILE` (check + summary) and `irisc
--emit=cpp FILE` (lowering and the C++ printer too) on realistic inputs and
prints a table.

    frontend_bench.py IRISC [RUNS]

Inputs: samples/all_gather.iris (the typical kernel) and generated files of
about 1k, 10k and 100k lines made of copies of every sample, their kernel,
device-function and constant names suffixed per copy. Each file is run RUNS
times (more for the small ones); the table shows the median wall time, the
median CPU time (user + system: steadier than wall time on a busy machine),
the peak resident memory of one run and lines per second (by wall time). The first rows,
/bin/true and `irisc --version`, are the cost of starting any process and of
starting irisc, included in every other row.
Two more rows time the typical kernel with an `import` (issue: imports cost
a Clang parse): of a typical HIP header (it includes <hip/hip_runtime.h>) and
of a small one (only <cstdint>). irisc runs irisc-import-hip, found next to it,
only for such a file; the benchmark checks with ldd that irisc itself loads no
Clang or shared LLVM, so kernels without imports pay no Clang start-up.
Exits non-zero if a file fails to check, if irisc links Clang, or if the CPU
time per line of either command grows more than 2x from 10k to 100k lines
(both should be linear).
"""
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


STRING = re.compile(r'("(?:[^"\\\n]|\\.)*")')


def generate(lines_wanted, path):
    """Copies of all samples, renamed, until the file has lines_wanted lines.
    Names are renamed outside string literals only: an import's path
    ("iris/gemm.iris") names a file, not the sample's kernel gemm."""
    samples = [open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, "samples", "*.iris")))]
    defined = [re.findall(r"^\s*(?:kernel|device|const)\s+(\w+)", s, re.M) for s in samples]
    out, lines, copy = [], 0, 0
    while lines < lines_wanted:
        for text, names in zip(samples, defined):
            if names:
                name = re.compile(r"\b(%s)\b" % "|".join(names))
                text = "".join(part if i % 2 else name.sub(rf"\1_{copy}", part)
                               for i, part in enumerate(STRING.split(text)))
            out.append(text)
            lines += text.count("\n")
        copy += 1
    with open(path, "w") as f:
        f.write("".join(out))


def run_once(cmd):
    """Wall and CPU (user + system) seconds of one run of cmd, which must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: status {os.waitstatus_to_exitcode(status)}\n{err.decode()[:2000]}")
    return wall, usage.ru_utime + usage.ru_stime


def peak_rss_mib(cmd):
    """Peak resident memory of one run. GNU time forks cmd from a small
    process; without it, wait4's figure also counts the pages a child inherits
    from this Python process (an upper bound, marked with '<')."""
    if os.path.exists("/usr/bin/time"):
        with tempfile.NamedTemporaryFile("r") as out:
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            return f"{int(out.read().split()[-1]) / 1024:.1f}"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return f"<{usage.ru_maxrss / 1024:.1f}"


HEADERS = {
    "typical.hip": "#include <hip/hip_runtime.h>\n#include <cstdint>\n"
                   "__device__ inline float scale(float x, float s) { return x * s; }\n"
                   "__device__ inline int32_t clamp_i32(int32_t x, int32_t lo, int32_t hi) "
                   "{ return x < lo ? lo : x > hi ? hi : x; }\n",
    "small.hip": "#include <cstdint>\n"
                 "__device__ inline float scale(float x, float s) { return x * s; }\n",
}


def with_import(tmp, header):
    """The typical kernel, importing `header` and calling its scale() on every tile."""
    with open(os.path.join(tmp, header), "w") as f:
        f.write(HEADERS[header])
    text = open(os.path.join(ROOT, "samples", "all_gather.iris")).read()
    text = text.replace("store(dst + rank() * n + offs @ r, x, mask);",
                        "store(dst + rank() * n + offs @ r, scale(x, 2.0), mask);")
    assert "scale(x" in text, "all_gather.iris changed: update with_import"
    path = os.path.join(tmp, f"import_{header.split('.')[0]}.iris")
    with open(path, "w") as f:
        f.write(f'import "{header}";\n' + text)
    return path


def shared_libraries(binary):
    """The shared libraries ldd says `binary` loads."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def main():
    tmp = tempfile.mkdtemp(prefix="iris-bench-")
    try:
        bench(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench(tmp):
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    # A private copy, as installed: a build running meanwhile may replace the
    # original, and the package's modules (import "iris/gemm.iris") are found
    # in the include folder beside irisc's folder.
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    irisc = shutil.copy(sys.argv[1], bindir)
    shutil.copy(os.path.join(os.path.dirname(sys.argv[1]), "irisc-import-hip"), bindir)
    os.symlink(os.path.join(ROOT, "runtime", "include"), os.path.join(tmp, "include"))
    clang = [lib for lib in shared_libraries(irisc) if "clang" in lib or "libLLVM" in lib]
    print(f"irisc loads Clang or shared LLVM: {', '.join(clang) if clang else 'no'} "
          f"(ldd: {len(shared_libraries(irisc))} libraries)")
    if clang:
        sys.exit(1)
    typical = os.path.join(ROOT, "samples", "all_gather.iris")
    # (name, command, input file, runs)
    inputs = [("process spawn (/bin/true)", ["/bin/true"], None, runs * 4),
              ("startup (irisc --version)", [irisc, "--version"], None, runs * 4),
              ("typical kernel (all_gather)", [irisc], typical, runs * 4),
              ("  --emit=cpp", [irisc, "--emit=cpp"], typical, runs * 4),
              ("  + import of a HIP header", [irisc], with_import(tmp, "typical.hip"), runs),
              ("  + import of a small header", [irisc], with_import(tmp, "small.hip"), runs)]
    for n in (1_000, 10_000, 100_000):
        path = os.path.join(tmp, f"bench_{n}.iris")
        generate(n, path)
        n_runs = runs if n == 100_000 else runs * 2
        inputs.append((f"generated {n // 1000}k", [irisc], path, n_runs))
        inputs.append((f"generated {n // 1000}k --emit=cpp", [irisc, "--emit=cpp"], path, n_runs))

    print(f"{'input':<28} {'lines':>8} {'bytes':>10} {'wall ms':>9} {'CPU ms':>8} {'peak RSS MiB':>13} {'lines/s':>10}")
    per_line = {}
    for name, cmd, path, n in inputs:
        cmd = cmd + [path] if path else cmd
        data = open(path, "rb").read() if path else b""
        lines = data.count(b"\n")
        results = [run_once(cmd) for _ in range(n)]
        wall = statistics.median(w for w, _ in results)
        cpu = statistics.median(c for _, c in results)
        rate = f"{lines / wall:,.0f}" if lines else "-"
        per_line[name] = cpu / max(lines, 1)
        print(f"{name:<28} {lines:>8} {len(data):>10} {wall * 1e3:>9.2f} {cpu * 1e3:>8.2f} "
              f"{peak_rss_mib(cmd):>13} {rate:>10}")

    superlinear = False
    for emit in ("", " --emit=cpp"):
        growth = per_line[f"generated 100k{emit}"] / per_line[f"generated 10k{emit}"]
        superlinear |= growth >= 2
        print(f"CPU time per line{emit or ' (summary)'}, 100k vs 10k: x{growth:.2f} "
              f"({'linear' if growth < 2 else 'SUPER-LINEAR'})")
    if superlinear:
        sys.exit(1)


if __name__ == "__main__":
    main()
