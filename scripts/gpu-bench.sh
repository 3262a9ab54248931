#!/usr/bin/env bash
# GPU copy benchmark, all in one run on one GPU: hipMemcpy, the .iris copy at
# several tile sizes, copy through `@ r` (own rank and another rank on the same
# GPU), then Triton's copy and torch's cudaMemcpy on the same machine.
# Needs the build tree (build/bench/copy_bench) and, for the Triton rows,
# python3 with torch and triton. Usage: scripts/gpu-bench.sh [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-20}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
echo "== .iris copy benchmark, 2 ranks as threads (median of $repeats runs)"
build/bench/copy_bench "$repeats"
if [ -x build/bench/copy_bench_mpi ] && command -v mpirun >/dev/null; then
  echo "== .iris copy benchmark, 2 processes under mpirun: the other heap mapped through CUDA IPC"
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 build/bench/copy_bench_mpi "$repeats"
fi
if python3 -c "import torch, triton" 2>/dev/null; then
  echo "== peers on the same GPU (median, triton.testing.do_bench)"
  python3 bench/copy_triton.py
else
  echo "== peers skipped: python3 has no torch/triton here"
fi
