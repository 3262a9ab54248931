#!/usr/bin/env bash
# Every sample's --bench table (issue 5), for 1, 2 and 4 ranks, on the CPU
# target or on one GPU: all ranks of a run share the target (threads of one
# process; on a GPU machine put CUDA_VISIBLE_DEVICES=0 in front to keep them on
# one GPU). Each table is the sample's own: size, median time of --repeats runs
# and bandwidth (or operations per second); "process" is the wall time of the
# whole program (start-up, allocation and filling included).
#
# Usage: scripts/bench-samples.sh [build-dir]; exits non-zero if a program failed.
# Environment (defaults in brackets):
#   SUFFIX        "" for the CPU programs, _gpu for the GPU ones [""]
#   RANKS         rank counts ["1 2 4"]
#   SIZES         elements per rank of the data samples [256,65536]
#   ATOMIC_SIZES  elements (one program instance per 256) of atomic_counter and atomics [$SIZES]
#   STRESS        messages of message_passing --stress, on its largest size [200]
#   ROUNDS        rounds of the barrier sample [200]
#   GEMM_SHAPES   gemm's --shape list, MxNxK[+P],... [scripts/samples.sh: the ctest shapes, 1000x1000x40]
#   REPEATS       timed runs per size [5]
#   HEAP          symmetric heap per rank in bytes [1073741824]
#   TIMEOUT       seconds per program [300]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
suffix=${SUFFIX:-}
sizes=${SIZES:-256,65536}
atomic_sizes=${ATOMIC_SIZES:-$sizes}
common=(--bench --repeats "${REPEATS:-5}" --heap "${HEAP:-1073741824}")
source scripts/samples.sh
args_of() { sample_args "$1" "$sizes" "$atomic_sizes" "${sizes##*,}" "${STRESS:-200}" "${ROUNDS:-200}"; }
status=0
for name in "${samples[@]}"; do
  read -r -a args <<< "$(args_of "$name")"
  for ranks in ${RANKS:-1 2 4}; do
    echo "== $name, $ranks ranks: ${args[*]}"
    start=$(date +%s.%N)
    timeout --kill-after=10 "${TIMEOUT:-300}" "$build/samples/sample_${name%%.*}$suffix" --ranks "$ranks" \
      "${args[@]}" "${common[@]}" || { echo "FAILED (exit status $?)"; status=1; }
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "process: %.2f s\n", b - a }'
  done
done
exit $status
