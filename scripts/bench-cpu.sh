#!/usr/bin/env bash
# CPU-target benchmark: every sample with 4 ranks on a 1 MiB message per rank
# (262144 f32), median of 5 runs, plus the wall time of the whole process
# (start-up, allocation, validation included). Usage: scripts/bench-cpu.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
elements=262144
printf '%-18s %6s %10s %14s %14s\n' sample ranks elements "kernel [ms]" "process [s]"
for name in all_gather all_reduce atomic_counter message_passing; do
  exe="$build/samples/sample_$name"
  start=$(date +%s.%N)
  line=$("$exe" --ranks 4 --size $elements --bench --repeats 5 | tail -1)
  end=$(date +%s.%N)
  kernel_ms=$(echo "$line" | awk '{print $3}')
  printf '%-18s %6d %10d %14s %14.2f\n' "$name" 4 $elements "$kernel_ms" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')"
done
