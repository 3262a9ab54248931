#!/usr/bin/env bash
# The main job: set up, build irisc and the runtime, compile a sample with
# irisc and run it with 4 ranks, validating every element: on the GPU when one
# is visible and the build found nvcc, otherwise in the CPU emulation (every
# rank a thread of one process). Usage: scripts/main.sh [sample]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
sample=${1:-all_gather}
echo "== irisc samples/$sample.iris"
./build/compiler/irisc "samples/$sample.iris"
echo "== generated C++: build/samples/iris_generated/sample_$sample/$sample.iris.hpp"
exe="./build/samples/sample_$sample"
target="the CPU emulation"
if [ -x "${exe}_gpu" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  exe="${exe}_gpu"
  target="the GPU"
fi
echo "== run on $target (4 ranks)"
"$exe" --ranks 4 --size 1000,1048576 --validate
"$exe" --ranks 4 --size 1048576 --bench --repeats 3
