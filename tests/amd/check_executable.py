"""Checks that programs built for AMD GPUs are linked programs with device code.

For each program: an ELF executable (it asks for a program interpreter) that
needs the HIP runtime (libamdhip64); its .hip_fatbin section starts with an
offload bundle (clang-offload-bundler --list) that holds a code object for
every architecture asked for, and each code object is an AMDGPU ELF of that
architecture with at least one kernel (a kernel descriptor, symbol `<name>.kd`).

The section holds one bundle per object with device code, in link order; the
first is that of the program's first object, its own code, which has kernels
(the runtime's objects come later, from their libraries).

Usage: check_executable.py <llvm-readelf> <llvm-objcopy> <clang-offload-bundler>
                           <architectures, comma-separated> <program>...
"""
import pathlib
import re
import subprocess
import sys
import tempfile


def output(*command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failure(f"{' '.join(command)} failed: {result.stderr.strip()}")
    return result.stdout


class Failure(Exception):
    pass


def check(program, readelf, objcopy, bundler, architectures, work):
    elf = output(readelf, "--file-header", "--program-headers", "--dynamic", "--sections", program)
    if "Requesting program interpreter" not in elf:
        raise Failure("not an executable (no program interpreter)")
    hip = re.search(r"\(NEEDED\)\s+Shared library: \[(libamdhip64\.so[^\]]*)\]", elf)
    if not hip:
        raise Failure("does not need the HIP runtime (no NEEDED libamdhip64.so)")
    if not re.search(r"\s\.hip_fatbin\s", elf):
        raise Failure("has no device code (no .hip_fatbin section)")
    fatbin = work / "fatbin"
    output(objcopy, f"--dump-section=.hip_fatbin={fatbin}", program, str(work / "copy"))
    bundled = output(bundler, "--list", "--type=o", f"--input={fatbin}").split()
    summary = [f"executable, needs {hip.group(1)}"]
    for arch in architectures:
        triple = f"hipv4-amdgcn-amd-amdhsa--{arch}"
        if triple not in bundled:
            raise Failure(f"no code object for {arch}: the bundle holds {', '.join(bundled)}")
        code_object = work / f"{arch}.co"
        output(bundler, "--unbundle", "--type=o", f"--targets={triple}", f"--input={fatbin}",
               f"--output={code_object}")
        header = output(readelf, "--file-header", "--dyn-symbols", str(code_object))
        if not re.search(r"Machine:\s+EM_AMDGPU$", header, re.M) or \
                not re.search(rf"Flags:.*, {arch}(,|$)", header, re.M):
            raise Failure(f"the code object for {arch} is not an AMDGPU ELF for {arch}")
        kernels = len(re.findall(r"\S\.kd$", header, re.M))
        if kernels == 0:
            raise Failure(f"the code object for {arch} has no kernel")
        summary.append(f"{arch}: {kernels} kernel{'s' if kernels > 1 else ''}")
    return "; ".join(summary)


def main(readelf, objcopy, bundler, architectures, *programs):
    failed = 0
    for program in programs:
        with tempfile.TemporaryDirectory() as work:
            try:
                print(f"{program}: {check(program, readelf, objcopy, bundler, architectures.split(','), pathlib.Path(work))}")
            except Failure as failure:
                print(f"{program}: FAILED: {failure}", file=sys.stderr)
                failed += 1
    return 1 if failed or not programs else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
