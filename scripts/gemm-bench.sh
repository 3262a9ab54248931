#!/usr/bin/env bash
# The GEMM benchmark on one GPU: the .iris GEMM (bench/gemm.iris, built into
# build/bench/libiris_gemm_bench.so) against cuBLAS (torch.matmul) and Triton's
# tl.dot on the same inputs, every output checked against cuBLAS, then a
# profile of the .iris kernel at 8192^3 with Nsight Compute where ncu is found.
# Usage: scripts/gemm-bench.sh OUT [shapes]   (shapes: MxNxK,...; default the
# issue's five). Writes OUT/gemm_bench.csv, OUT/gemm_bench.png, OUT/ncu.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gemm-bench.sh OUT [shapes]}
mkdir -p "$out"
lib=${BUILD_DIR:-build}/bench/libiris_gemm_bench.so
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
python3 bench/gemm_bench.py --lib "$lib" --out "$out" ${2:+--shapes "$2"}
if command -v ncu >/dev/null 2>&1; then
  # One launch of the .iris kernel (kernel_entry<matmul<...>>, bf16) in the
  # config that was fastest at 8192^3 in bf16, or the first config.
  config=$(awk -F, '$1 == 8192 && $2 == 8192 && $3 == 8192 && $4 == "bf16" { print $8 }' "$out/gemm_bench.csv" 2>/dev/null)
  ncu --kernel-name kernel_entry --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
      python3 bench/gemm_bench.py --lib "$lib" --out "$out/ncu" --shapes 8192x8192x8192 --rep 1 --iris-only \
      ${config:+--config "$config"} > "$out/ncu.txt" 2>&1 || echo "ncu failed: see $out/ncu.txt"
fi
