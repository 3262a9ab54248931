#!/usr/bin/env bash
# Packs the GPU programs of a build tree into one xz tarball, for a GPU machine
# that has no compiler and no irisc (docs/gpu.md, "A GPU machine without a
# compiler"): what scripts/gpu-check.sh runs and the fused and GEMM benchmarks.
# Binaries are stripped (debug info would make the tarball several times
# larger). Unpack it at the repository root of a checkout of the same commit.
#   scripts/gpu-bundle.sh OUT.tar.xz
# Environment: BUILD_DIR (default build), relative to the repository root.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/gpu-bundle.sh OUT.tar.xz" >&2
  exit 2
fi
out=$(realpath -m "$1")
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
shopt -s nullglob
count=0
for program in "$build"/tests/gpu/* "$build"/tests/tile/tile_unit_tests_gpu \
               "$build"/tests/package/fused_nvidia/fused_consumer "$build"/samples/sample_*_gpu \
               "$build"/samples/sample_*_gpu_mpi "$build"/bench/fused_bench "$build"/bench/fused_bench_traced \
               "$build"/bench/fused_bench_checked \
               "$build"/bench/libiris_gemm_bench.so; do
  [ -f "$program" ] && [ -x "$program" ] || continue
  mkdir -p "$stage/$(dirname "$program")"
  strip -o "$stage/$program" "$program"
  count=$((count + 1))
done
if [ "$count" -eq 0 ]; then
  echo "gpu-bundle: no GPU program in $build (build them first: docs/gpu.md)" >&2
  exit 1
fi
tar -C "$stage" -cJf "$out" .
echo "gpu-bundle: $count programs, $(du -h "$out" | cut -f1) in $out"
