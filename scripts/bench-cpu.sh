#!/usr/bin/env bash
# CPU-target benchmark, two tables. First every sample's --bench table
# (scripts/bench-samples.sh) with 1, 2 and 4 ranks on small messages (1 KiB and
# 256 KiB per rank), so that it stays quick on two cores. Then four samples with
# 4 ranks on a 1 MiB message per rank (262144 f32), median of 5 runs, plus the
# wall time of the whole process (start-up, allocation, validation included),
# and the same kernel built with irisc --checked (bounds and race checks) and how
# many times slower it is. Usage: scripts/bench-cpu.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
SUFFIX="" SIZES=${SIZES:-256,65536} bash scripts/bench-samples.sh "$build"
echo
elements=262144
# The median kernel time in ms that a sample's --bench table reports.
kernel_ms() { "$1" --ranks 4 --size $elements --bench --repeats 5 | tail -1 | awk '{print $3}'; }
printf '%-18s %6s %10s %14s %14s %14s %8s\n' sample ranks elements "kernel [ms]" "process [s]" "checked [ms]" ratio
for name in all_gather all_reduce atomic_counter message_passing; do
  exe="$build/samples/sample_$name"
  start=$(date +%s.%N)
  plain=$(kernel_ms "$exe")
  end=$(date +%s.%N)
  checked=$(kernel_ms "${exe}_checked")
  printf '%-18s %6d %10d %14s %14.2f %14s %8.1f\n' "$name" 4 $elements "$plain" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" "$checked" \
    "$(awk -v a="$plain" -v b="$checked" 'BEGIN{print b/a}')"
done
