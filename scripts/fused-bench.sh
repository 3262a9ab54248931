#!/usr/bin/env bash
# The fused GEMM + communication benchmark on one GPU (issue 15), through
# bench/fused_bench.py: every operation of <iris/fused.hpp> against the plain
# .iris GEMM at the same shapes and tiles, every result checked against the
# GEMM's.
#   1 rank           the single-GPU cost of the communication path, and each operation
#                    against cuBLAS (what torch.matmul calls) at its shape, timed side by
#                    side in fused_bench (fused/cublas; target <= 1.05), and against
#                    torch.matmul + a one-process NCCL collective in another process (--peer)
#   2 ranks, 1 GPU   the multi-rank path runs and is right (the ranks share the GPU,
#                    so their times say little; no torch.matmul + NCCL peer: NCCL
#                    takes one rank per GPU)
# Needs the build tree's bench/fused_bench (BUILD_DIR, default build) and
# python3; matplotlib for the plots. Runs on GPU 0 unless CUDA_VISIBLE_DEVICES says.
# Usage: scripts/fused-bench.sh OUT [shapes]   (shapes: MxNxK,... of the 1-rank run;
# default 4096^3, 8192^3, 8192x3584x8192). Writes OUT/fused-1gpu.{txt,csv,md,png}
# and OUT/fused-2ranks-1gpu.{txt,csv,md,png}.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: scripts/fused-bench.sh OUT [shapes]}
bench=${BUILD_DIR:-build}/bench/fused_bench
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
status=0
python3 bench/fused_bench.py --bench "$bench" --ranks 1 --peer --out "$out/fused-1gpu" ${2:+--shapes "$2"} || status=1
python3 bench/fused_bench.py --bench "$bench" --ranks 2 --no-peer --out "$out/fused-2ranks-1gpu" \
  --shapes 4096x3584x8192 --scatter-shapes 4096x3584x8192 || status=1
exit $status
