#!/usr/bin/env bash
# Issue 7 on a machine with N >= 2 GPUs, from a build tree made with nvcc:
# validates every GPU sample with ranks on separate GPUs (both start-up modes,
# through gpu-check.sh with RANKS=N), then benchmarks the .iris collectives
# against NCCL (build/bench/nccl_bench) and plots bus bandwidth against size.
# Usage: scripts/multi-gpu.sh [out-dir]   (NCCL from the machine's PyTorch install)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/multi-gpu}
mkdir -p "$out"
# NVLink multicast stays off: it can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nccl_lib=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$nccl_lib:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L | wc -l)
echo "== $gpus GPUs"
RANKS="$gpus" bash scripts/gpu-check.sh | tee "$out/check.txt" | tail -12
echo "== .iris collectives against NCCL, $gpus GPUs"
build/bench/nccl_bench "$gpus" "${MAX_BYTES:-1073741824}" | tee "$out/nccl.txt"
python3 bench/plot_nccl.py "$out/nccl.txt" "$out/nccl.png" && echo "plot: $out/nccl.png"
