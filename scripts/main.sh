#!/usr/bin/env bash
# The main job: set up, build irisc, the runtime and one sample (nothing else),
# compile the sample with irisc and run it with 4 ranks, validating every
# element: on the GPU when one is visible and the build found nvcc, otherwise in
# the CPU emulation (every rank a thread of one process).
#   scripts/main.sh [sample]        default all_gather
# It shares build/ with scripts/test.sh: either one after the other rebuilds
# only what the first did not build.
set -euo pipefail
cd "$(dirname "$0")/.."
sample=${1:-all_gather}
build=${BUILD_DIR:-build}
start=$SECONDS

echo "== setup: Debian packages (scripts/setup.sh)"
bash scripts/setup.sh
# The sample's GPU build exists where configuration found nvcc.
targets=(irisc "sample_$sample" "sample_${sample}_gpu?")
echo "== configure and build ${targets[*]}"
bash scripts/build.sh --quiet "${targets[@]}"

echo "== irisc samples/$sample.iris"
"./$build/compiler/irisc" "samples/$sample.iris"
echo "== generated C++: $build/samples/iris_generated/sample_$sample/$sample.iris.hpp"
exe="./$build/samples/sample_$sample"
target="the CPU emulation"
if [ -x "${exe}_gpu" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  exe="${exe}_gpu"
  target="the GPU"
fi
echo "== run on $target (4 ranks)"
"$exe" --ranks 4 --size 1000,1048576 --validate
"$exe" --ranks 4 --size 1048576 --bench --repeats 3
echo "== main: done in $((SECONDS - start)) s"
