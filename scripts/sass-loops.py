#!/usr/bin/env python3
"""Spills and K loops in a cubin's SASS, per kernel of a fused or GEMM build.

For every 128x256x64 kernel of the fused operations and the plain GEMMs in CUBIN
(nvcc --keep of bench/fused_bench.cpp for sm_90a), prints its instructions, its
local-memory loads and stores (LDL, STL: spills) in all, and for its K loop (the
innermost loop holding HGMMA) the loop's length and the spills inside it.
Needs cuobjdump (the GPU machine has it). Usage: scripts/sass-loops.py CUBIN
"""
import re
import subprocess
import sys

KERNELS = r"(gemm_all_scatter_split|gemm_all_scatter|gemm_all_reduce|gemm_reduce_scatter_atomic|" \
          r"gemm_reduce_scatter|all_gather_gemm_pull|all_gather_gemm_push|matmul_persistent|matmul)"


def count(ins, first, last, op):
    return sum(1 for j in range(first, last + 1) if re.match(r"(@!?U?P\w+\s+)?" + op + r"\b", ins[j][1]))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sass = subprocess.run(["cuobjdump", "-sass", sys.argv[1]], capture_output=True, text=True, check=True).stdout
    for function in re.split(r"\n\s+Function : ", sass)[1:]:
        name = function.split("\n", 1)[0].strip()
        kernel = re.search(KERNELS, name)
        tiles = re.search(r"ILi(\d+)ELi(\d+)ELi(\d+)", name)
        if not kernel or not tiles or tiles.groups() != ("128", "256", "64"):
            continue
        ins = [(int(m.group(1), 16), m.group(2))
               for m in (re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line) for line in function.split("\n")) if m]
        index = {address: i for i, (address, _) in enumerate(ins)}
        loops = []  # (first, last) of each backward branch's loop
        for i, (address, text) in enumerate(ins):
            target = re.search(r"BRA.*?(0x[0-9a-f]+)", text)
            if target and int(target.group(1), 16) < address and int(target.group(1), 16) in index:
                loops.append((index[int(target.group(1), 16)], i))
        k_loops = [(s, e) for s, e in loops if any("HGMMA" in ins[j][1] for j in range(s, e + 1))]
        line = (f"{kernel.group(1):28s} instr {len(ins):6d} LDL {count(ins, 0, len(ins) - 1, 'LDL'):4d} "
                f"STL {count(ins, 0, len(ins) - 1, 'STL'):4d}")
        if k_loops:
            s, e = min(k_loops, key=lambda loop: loop[1] - loop[0])
            line += (f" | K loop {e - s + 1:4d} instr, LDL {count(ins, s, e, 'LDL')}, STL {count(ins, s, e, 'STL')}, "
                     f"HGMMA {count(ins, s, e, 'HGMMA')}")
        print(line)


if __name__ == "__main__":
    main()
