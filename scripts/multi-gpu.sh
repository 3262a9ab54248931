#!/usr/bin/env bash
# Issue 7 (and the GPU tables of issue 5) on a machine with N >= 2 GPUs, from a
# build tree made with nvcc (docs/gpu.md). Writes everything into OUT:
#   topology.txt          the GPUs, driver, nvidia-smi topo -m, torch/NCCL/NVSHMEM versions
#   check-<n>gpu.txt      gpu-check.sh with n ranks, each on its own GPU, in both
#                         start-up modes (threads with peer access; mpirun, CUDA IPC)
#   nccl-<n>gpu.txt/.png  bench/nccl_bench: the .iris collectives, and iris::ccl's
#                         calls with every algorithm and the automatic choice
#                         (<iris/ccl.hpp>: what its selection table is measured
#                         from), against NCCL
#   fused-<n>gpu.txt/.csv/.md/.png
#                         bench/fused_bench.py: the fused GEMM + communication
#                         operations (<iris/fused.hpp>, build/bench/fused_bench)
#                         against the plain .iris GEMM and against torch.matmul
#                         followed by NCCL's collective (torch.distributed), bf16
#   p2p.txt, p2p.png      bench/p2p_bench (+ NVSHMEM's put, bench/nvshmem_put.cu,
#                         when the machine's python3 has the nvidia-nvshmem package
#                         and nvcc: compiled here against it), GPUs 0 and 1
#   samples-1gpu.txt      every sample's --bench with 1, 2 and 4 ranks on GPU 0
# for n = 2 and every larger power of two up to N (each on GPUs 0 .. n-1).
#
# Usage: scripts/multi-gpu.sh [OUT]   (default build/multi-gpu)
# Environment: PARTS (default "check nccl fused p2p samples": which of the above to
# run), MAX_BYTES (largest size of nccl_bench and p2p_bench, default 1 GiB),
# FUSED_ARGS (options of bench/fused_bench.py, default none: a short list of
# shapes; "--full" for issue 17's), BUILD_DIR (default build). NCCL and NVSHMEM
# come from the machine's PyTorch install.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:-build/multi-gpu}
build=${BUILD_DIR:-build}
parts=${PARTS:-check nccl fused p2p samples}
max_bytes=${MAX_BYTES:-1073741824}
mkdir -p "$out"
# NVLink multicast stays off: it can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
package_dir() { python3 -c "import nvidia.$1, os; print(list(nvidia.$1.__path__)[0])" 2>/dev/null; }
nccl_dir=$(package_dir nccl)
[ -n "$nccl_dir" ] && export LD_LIBRARY_PATH="$nccl_dir/lib:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L | wc -l)
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nvidia-smi topo -m
  python3 -m pip list 2>/dev/null | grep -i -E "^(torch|nvidia-nccl|nvidia-nvshmem)"; } > "$out/topology.txt" 2>&1
counts=""
for ((n = 2; n <= gpus; n *= 2)); do counts="$counts $n"; done
status=0
want() { [[ " $parts " == *" $1 "* ]]; }
first_gpus() { seq -s, 0 $(($1 - 1)); }

# NVSHMEM's put is compiled here, in the background while the rest runs.
nvshmem_dir=$(package_dir nvshmem)
nvshmem_exe=$build/bench/nvshmem_put
if want p2p && [ -n "$nvshmem_dir" ] && command -v nvcc >/dev/null; then
  # NVSHMEM's initialisation lives in its device library, so every build links it
  # (-rdc); the device put (nvshmemx_putmem_block in a kernel) is left out if it
  # does not build, and the driver library added if the link asks for it.
  nvshmem_flags=(-rdc=true -std=c++17 -arch=sm_90 -I"$nvshmem_dir/include" bench/nvshmem_put.cu
                 -o "$nvshmem_exe" -L"$nvshmem_dir/lib" -lnvshmem_device -l:libnvshmem_host.so.3
                 -Xlinker -rpath="$nvshmem_dir/lib")  # (the wheel has no unversioned libnvshmem_host.so)
  driver=(-L/usr/local/cuda/lib64/stubs -lcuda)
  log=$out/nvshmem-build.txt
  ( for extra in "-DNVSHMEM_DEVICE_PUT" "-DNVSHMEM_DEVICE_PUT ${driver[*]}" "" "${driver[*]}"; do
      echo "== nvcc ${nvshmem_flags[*]} $extra" >> "$log"
      # shellcheck disable=SC2086 # $extra is a list of flags
      if nvcc "${nvshmem_flags[@]}" $extra >> "$log" 2>&1; then
        echo "nvshmem_put: built with $extra" >> "$log"
        exit 0
      fi
    done
    exit 1 ) &
  nvshmem_build=$!
fi

for n in $counts; do
  CUDA_VISIBLE_DEVICES=$(first_gpus "$n")
  export CUDA_VISIBLE_DEVICES
  if want check; then
    echo "== validation, $n ranks on $n GPUs ($CUDA_VISIBLE_DEVICES), threads and mpirun"
    RANKS=$n bash scripts/gpu-check.sh > "$out/check-${n}gpu.txt" 2>&1 || status=1
    tail -n 3 "$out/check-${n}gpu.txt"
  fi
  if want nccl; then
    echo "== .iris collectives and iris::ccl against NCCL, $n GPUs"
    "$build/bench/nccl_bench" "$n" "$max_bytes" > "$out/nccl-${n}gpu.txt" 2>&1 || status=1
    cat "$out/nccl-${n}gpu.txt"
    python3 bench/plot_bench.py "$out/nccl-${n}gpu.png" "$out/nccl-${n}gpu.txt" || status=1
  fi
  if want fused; then
    echo "== fused GEMM + communication against torch.matmul + NCCL, $n GPUs"
    # shellcheck disable=SC2086 # FUSED_ARGS is a list of options
    python3 bench/fused_bench.py --bench "$build/bench/fused_bench" --ranks "$n" --out "$out/fused-${n}gpu" \
      ${FUSED_ARGS:-} > "$out/fused-${n}gpu.log" 2>&1 || status=1
    cat "$out/fused-${n}gpu.md" 2>/dev/null || tail -n 20 "$out/fused-${n}gpu.log"
  fi
done

if want p2p; then
  export CUDA_VISIBLE_DEVICES=0,1
  echo "== point to point, GPU 0 -> GPU 1"
  "$build/bench/p2p_bench" "$max_bytes" > "$out/p2p.txt" 2>&1 || status=1
  tables=("$out/p2p.txt")
  if [ -n "${nvshmem_build:-}" ]; then
    if wait "$nvshmem_build"; then
      echo "== NVSHMEM put: $(tail -n 1 "$out/nvshmem-build.txt")"
      idfile=$(mktemp -u)
      export LD_LIBRARY_PATH="$nvshmem_dir/lib:$LD_LIBRARY_PATH"
      export NVSHMEM_SYMMETRIC_SIZE=$((2 * max_bytes + (64 << 20))) NVSHMEM_REMOTE_TRANSPORT=none
      timeout 120 "$nvshmem_exe" 1 "$idfile" "$max_bytes" > "$out/nvshmem-pe1.txt" 2>&1 &
      pe1=$!
      timeout 120 "$nvshmem_exe" 0 "$idfile" "$max_bytes" > "$out/p2p-nvshmem.txt" 2>&1 || status=1
      wait "$pe1" || status=1
      rm -f "$idfile"
      tables+=("$out/p2p-nvshmem.txt")
    else
      echo "== NVSHMEM put not built (see nvshmem-build.txt)"
      status=1
    fi
  fi
  cat "${tables[@]}"
  python3 bench/plot_bench.py "$out/p2p.png" "${tables[@]}" || status=1
fi

if want samples; then
  echo "== every sample's --bench, 1, 2 and 4 ranks on GPU 0"
  CUDA_VISIBLE_DEVICES=0 SUFFIX=_gpu SIZES=256,65536,4194304,67108864 ATOMIC_SIZES=256,65536,1048576 \
    STRESS=1000 ROUNDS=1000 HEAP=$((4 << 30)) bash scripts/bench-samples.sh "$build" \
    > "$out/samples-1gpu.txt" 2>&1 || status=1
  grep -c '^==' "$out/samples-1gpu.txt"
fi
exit $status
